// Continuing a run in a fresh process after a device error that could not be recovered in-process: this
// binary again, told where to resume, its report read back and its rows appended.
#pragma once
#include <string>
#include <vector>

#include "run/runner.hpp"

namespace ab {

// The arguments joined with single spaces (the command line as the report records it).
std::string join_arguments(const std::vector<std::string>& args);

// Runs the rest of the grid (from `at`) in a fresh process and appends its rows and warnings. Returns false
// when the child produced no report (a warning says why).
bool continue_in_fresh_process(const std::vector<std::string>& argv, const ResumePoint& at,
                               std::vector<ResultRow>* rows, std::vector<std::string>* warnings);

}  // namespace ab
