// --where: keep the problems of a grid or suite whose axis satisfies a comparison ("batch<=16",
// "kv_layout=paged", "causal=true"), the one filter grammar of run, tune and grid.
#pragma once
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace ab {

struct ProblemFilter {
  std::string axis;   // a name of the axis table (core/problem_axes.hpp)
  std::string op;     // "=", "!=", "<", "<=", ">", ">="
  std::string value;  // as written; a number for the ordering operators
  std::string text;   // the whole filter as given, for messages
};

// "AXIS OP VALUE" (spaces allowed around OP; "==" reads as "="). Throws UsageError ("--where: ...", one line)
// for an unknown axis, a missing operator or value, or an ordering operator on an axis that is not a number.
ProblemFilter parse_problem_filter(const std::string& text);

// Whether the problem's value of the axis (as its JSON has it) satisfies the filter. An axis the problem
// leaves out (kv_lens of an even batch) equals nothing: only "!=" holds.
bool problem_passes(const ProblemFilter& f, const Problem& p);

// The problems that pass every filter, in order. Throws UsageError when none is left.
std::vector<Problem> filter_problems(const std::vector<Problem>& problems, const std::vector<ProblemFilter>& filters);

}  // namespace ab
