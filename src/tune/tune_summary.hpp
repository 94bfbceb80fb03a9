// The tuner's closing summary: one row per tuned GEMM shape and per fused problem, gain statistics,
// and the notes (unsupported strategies, shapes with no correct candidate).
#pragma once
#include <string>
#include <vector>

#include "tune/tune_types.hpp"

namespace ab {

// "m512 n512 k64 NT fp16>fp32 strided x384" — a GemmShape in one short cell.
std::string gemm_shape_label(const GemmShape& s);

// A shape's screen stage by stage, for a person: "[groups (4 calls) 83993 -> 2400 probes of representatives ->
// 31000 in the groups within the margin; ]probe (4 calls) 83993 -> 31920 within the cutoff -> 7980; 1 sample
// (32 calls) 7980 -> 1995; ...; final 8 x 3 samples (32 calls): 8 kept; N GEMM calls, P% of the M a screen
// without [grouping or ]halving takes".
std::string screen_stages_label(const std::vector<ScreenStage>& stages);
// The same in one cell: the candidates that entered each stage, "83993>7980>1995>499>125>32>8" ("" for none).
std::string screen_stages_cell(const std::vector<ScreenStage>& stages);

struct GainStats {
  int count = 0;        // records with a known gain
  int improved = 0;     // gain > 1.02
  double min = 0, median = 0, max = 0, geomean = 0;
};
GainStats gain_stats(const std::vector<double>& gains);

// The plain-text summary (ends with a newline).
std::string format_tune_summary(const TuneOutcome& out);

}  // namespace ab
