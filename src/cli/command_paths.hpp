// The files a run or tune reads (its cache, the suite file of --config, plugins, --kv_lens files) and writes
// (--json/--md/--csv, the cache of a tune, their journals), named by the flag that gave them, so that one
// check (core/file_identity.hpp) refuses an output that is an input or another output before any work.
#pragma once
#include <string>
#include <vector>

#include "cli/report_outputs.hpp"
#include "cli/shared_flags.hpp"
#include "core/file_identity.hpp"
#include "core/problem.hpp"

namespace ab {

// The files the grid and plugin flags of `f` read: the suite file, every plugin, and every lengths file
// (file:PATH) that a problem of `problems` was read from, whether --kv_lens or a suite named it.
std::vector<RolePath> grid_input_paths(const SharedFlags& f, const std::vector<Problem>& problems);
// --json/--md/--csv as files (stdout skipped), the journal beside --json when `json_journal`.
std::vector<RolePath> report_output_paths(const ReportOutputs& out, bool json_journal);

}  // namespace ab
