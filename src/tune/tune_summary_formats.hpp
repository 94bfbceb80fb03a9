// The tune summary as data: one row per tuned GEMM shape and per fused problem, rendered as JSON
// (attnbench.tune-summary/1), markdown or CSV for `attnbench tune --json/--md/--csv`.
#pragma once
#include <string>

#include "tune/tune_types.hpp"

namespace ab {

inline constexpr const char* kTuneSummarySchema = "attnbench.tune-summary/1";

// "json" | "md" | "csv" (ends with a newline); throws std::invalid_argument for another format.
std::string render_tune_summary(const TuneOutcome& out, const std::string& format);

}  // namespace ab
