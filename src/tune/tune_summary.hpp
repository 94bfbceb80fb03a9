// The tuner's closing summary: one row per tuned GEMM shape and per fused problem, gain statistics,
// and the notes (unsupported strategies, shapes with no correct candidate).
#pragma once
#include <string>
#include <vector>

#include "tune/tune_types.hpp"

namespace ab {

// "m512 n512 k64 NT fp16>fp32 strided x384" — a GemmShape in one short cell.
std::string gemm_shape_label(const GemmShape& s);

struct GainStats {
  int count = 0;        // records with a known gain
  int improved = 0;     // gain > 1.02
  double min = 0, median = 0, max = 0, geomean = 0;
};
GainStats gain_stats(const std::vector<double>& gains);

// The plain-text summary (ends with a newline).
std::string format_tune_summary(const TuneOutcome& out);

}  // namespace ab
