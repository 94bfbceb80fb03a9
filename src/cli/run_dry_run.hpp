// `attnbench run --dry_run`: the grid the run would measure, with each problem's strategies, launches and an
// estimated time (run/run_estimate.hpp), and the whole run's; nothing is allocated, timed or written.
#pragma once
#include <cstdio>

#include "core/backend.hpp"
#include "run/runner.hpp"

namespace ab {

void print_dry_run(Backend& backend, const RunOptions& opt, std::FILE* out);

}  // namespace ab
