// --where filters over the axis table's JSON view of a problem.
#include "core/problem_filter.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/text_excerpt.hpp"
#include "core/text_split.hpp"

namespace ab {

namespace {

std::string axis_names() {
  std::string out;
  for (const ProblemAxis& a : problem_axes()) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

bool whole_number(const std::string& s, long long* v) {
  std::size_t used = 0;
  try {
    *v = std::stoll(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return !s.empty() && used == s.size();
}

template <typename T>
bool compare(const T& a, const std::string& op, const T& b) {
  if (op == "=") return a == b;
  if (op == "!=") return !(a == b);
  if (op == "<") return a < b;
  if (op == "<=") return a < b || a == b;
  if (op == ">") return b < a;
  return b < a || a == b;  // ">="
}

}  // namespace

ProblemFilter parse_problem_filter(const std::string& text) {
  const std::string shown = quoted_excerpt(text);
  const std::size_t at = text.find_first_of("<>!=");
  if (at == std::string::npos)
    throw UsageError(fmt::format("--where: {} has no comparison (AXIS=VALUE, AXIS!=VALUE, AXIS<=VALUE, ...)", shown));
  ProblemFilter f;
  f.text = text;
  f.axis = trim_text(text.substr(0, at));
  std::size_t len = 1;
  const std::string two = text.substr(at, 2);
  if (two == "<=" || two == ">=" || two == "!=" || two == "==") len = 2;
  f.op = text.substr(at, len);
  if (f.op == "==") f.op = "=";
  if (f.op == "!") throw UsageError(fmt::format("--where: {}: '!' must be followed by '='", shown));
  f.value = trim_text(text.substr(at + len));
  const ProblemAxis* axis = find_problem_axis(f.axis);
  if (!axis) throw UsageError(fmt::format("--where: {}: no axis {} (axes: {})", shown, quoted_excerpt(f.axis), axis_names()));
  if (f.value.empty()) throw UsageError(fmt::format("--where: {} compares {} with nothing", shown, f.axis));
  long long number = 0;
  if (axis->type == AxisType::integer && !whole_number(f.value, &number))
    throw UsageError(fmt::format("--where: {}: {} is a whole number, not {}", shown, f.axis, quoted_excerpt(f.value)));
  if (axis->type == AxisType::boolean && f.value != "true" && f.value != "false")
    throw UsageError(fmt::format("--where: {}: {} is true or false", shown, f.axis));
  if (axis->type != AxisType::integer && f.op != "=" && f.op != "!=")
    throw UsageError(fmt::format("--where: {}: {} is not a number; use = or !=", shown, f.axis));
  return f;
}

bool problem_passes(const ProblemFilter& f, const Problem& p) {
  const nlohmann::json j = problem_to_json(p);
  if (!j.contains(f.axis)) {  // a boolean variant absent from the problem (sinks) is false; another axis: no value
    const ProblemAxis* axis = find_problem_axis(f.axis);
    if (axis && axis->type == AxisType::boolean) return compare<std::string>("false", f.op, f.value);
    return f.op == "!=";
  }
  const nlohmann::json& v = j[f.axis];
  if (v.is_number_integer()) {
    long long want = 0;
    return whole_number(f.value, &want) && compare<long long>(v.get<long long>(), f.op, want);
  }
  if (v.is_boolean()) return compare<std::string>(v.get<bool>() ? "true" : "false", f.op, f.value);
  if (v.is_string()) return compare<std::string>(v.get<std::string>(), f.op, f.value);
  return f.op == "!=";
}

std::vector<Problem> filter_problems(const std::vector<Problem>& problems, const std::vector<ProblemFilter>& filters) {
  if (filters.empty()) return problems;
  std::vector<Problem> out;
  for (const Problem& p : problems) {
    bool keep = true;
    for (const ProblemFilter& f : filters) keep = keep && problem_passes(f, p);
    if (keep) out.push_back(p);
  }
  if (out.empty()) {
    std::string all;
    for (const ProblemFilter& f : filters) all += (all.empty() ? "" : " and ") + quoted_excerpt(f.text);
    throw UsageError(fmt::format("--where: no problem of the {} satisfies {}", problems.size() == 1 ? "problem" : "grid", all));
  }
  return out;
}

}  // namespace ab
