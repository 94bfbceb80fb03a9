// The one place a result row becomes report JSON and back (field names: docs/report-format.md).
#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "run/result_row.hpp"

namespace ab {

using nlohmann::json;

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Field readers for rows this binary wrote: a missing or mistyped field is a UsageError naming it.
struct Reader {
  const std::string& origin;
  const json& at(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) throw UsageError(fmt::format("{}: {}{} is missing", origin, where, key));
    return j[key];
  }
  std::string str(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_string()) throw UsageError(fmt::format("{}: {}{} must be a string", origin, where, key));
    return v.get<std::string>();
  }
  std::int64_t integer(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_number_integer()) throw UsageError(fmt::format("{}: {}{} must be an integer", origin, where, key));
    return v.get<std::int64_t>();
  }
  double number(const json& j, const char* key, const std::string& where) const {  // null: NaN
    const json& v = at(j, key, where);
    if (v.is_null()) return NAN;
    if (!v.is_number()) throw UsageError(fmt::format("{}: {}{} must be a number", origin, where, key));
    return v.get<double>();
  }
  bool boolean(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_boolean()) throw UsageError(fmt::format("{}: {}{} must be true or false", origin, where, key));
    return v.get<bool>();
  }
  Stats stats(const json& j, const std::string& where) const {
    Stats s;
    s.median = number(j, "median", where);
    s.mean = number(j, "mean", where);
    s.min = number(j, "min", where);
    s.max = number(j, "max", where);
    s.stdev = number(j, "stdev", where);
    s.noise = number(j, "noise", where);
    s.samples = integer(j, "samples", where);
    return s;
  }
  std::vector<double> numbers(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_array()) throw UsageError(fmt::format("{}: {}{} must be a list", origin, where, key));
    std::vector<double> out;
    for (const json& x : v) {
      if (!x.is_number()) throw UsageError(fmt::format("{}: {}{} must hold numbers", origin, where, key));
      out.push_back(x.get<double>());
    }
    return out;
  }
};

RowTiming timing_from_json(const Reader& r, const json& row) {
  RowTiming t;
  t.time_ms = r.stats(r.at(row, "time_ms", ""), "time_ms.");
  t.host_ms = r.stats(r.at(row, "host_ms", ""), "host_ms.");
  t.timer = r.str(row, "timer", "");
  t.stop_reason = r.str(row, "stop_reason", "");
  t.noise_met = r.boolean(row, "noise_met", "");
  t.sm_clock_mhz = static_cast<int>(r.integer(row, "sm_clock_mhz", ""));
  t.clock_low = r.boolean(row, "clock_low", "");
  if (row.contains("rounds")) {
    const json& j = row["rounds"];
    t.rounds = RoundsSummary{r.integer(j, "count", "rounds."), r.numbers(j, "medians_ms", "rounds."),
                             r.number(j, "spread", "rounds."), r.integer(j, "kept", "rounds."),
                             r.number(j, "error", "rounds.")};
  }
  if (row.contains("samples_ms")) t.samples_ms = r.numbers(row, "samples_ms", "");
  return t;
}

RowLaunches launches_from_json(const Reader& r, const json& l) {
  RowLaunches out;
  const json& e = r.at(l, "expected", "launches.");
  out.expected_gemm = r.integer(e, "gemm", "launches.expected.");
  out.expected_kernels = r.integer(e, "kernels", "launches.expected.");
  out.formula = r.str(e, "formula", "launches.expected.");
  if (l.contains("measured")) {
    const json& m = l["measured"];
    MeasuredLaunches ml;
    ml.kernels = r.integer(m, "kernels", "launches.measured.");
    ml.gemm_calls = r.integer(m, "gemm_calls", "launches.measured.");
    ml.other_kernels = r.integer(m, "other_kernels", "launches.measured.");
    ml.source = r.str(m, "source", "launches.measured.");
    for (const json& n : r.at(m, "kernel_names", "launches.measured."))
      if (n.is_string()) ml.kernel_names.push_back(n.get<std::string>());
    out.measured = ml;
    out.match = r.boolean(l, "match", "launches.");
    if (l.contains("explained")) out.explained = r.str(l, "explained", "launches.");
  }
  return out;
}

}  // namespace

json to_json(const RowLaunches& l) {
  json j;
  j["expected"] = {{"gemm", l.expected_gemm}, {"kernels", l.expected_kernels}, {"total", l.expected_total()},
                   {"formula", l.formula}};
  if (l.measured) {
    const MeasuredLaunches& m = *l.measured;
    j["measured"] = {{"kernels", m.kernels},       {"gemm_calls", m.gemm_calls}, {"other_kernels", m.other_kernels},
                     {"kernel_names", m.kernel_names}, {"source", m.source}};
    j["match"] = l.match;
    if (!l.explained.empty()) j["explained"] = l.explained;
  }
  return j;
}

json to_json(const RowVerification& v) {
  return {{"reference", v.reference}, {"max_abs_err", v.max_abs_err}, {"rel_l2_err", number_or_null(v.rel_l2_err)},
          {"tolerance", v.tolerance}, {"nonfinite", v.nonfinite},     {"passed", v.passed}};
}

json to_json(const InjectedSlowdown& s) {
  return {{"fraction", s.fraction}, {"delay_ms", s.delay_ms}, {"base_ms", s.base_ms}, {"achieved", s.achieved}};
}

json to_json(const ResultRow& row) {
  json j;
  j["problem"] = problem_to_json(row.problem);
  j["strategy"] = row.strategy;
  j["status"] = to_string(row.disposition);
  j["reason"] = row.reason;
  j["launches"] = to_json(row.launches);
  if (row.config) j["config"] = *row.config;
  if (row.verify) j["verify"] = to_json(*row.verify);
  if (row.injected_slowdown) j["injected_slowdown"] = to_json(*row.injected_slowdown);
  if (row.timing) {
    json t = to_json(*row.timing);
    for (auto it = t.begin(); it != t.end(); ++it) j[it.key()] = it.value();
    j["tflops"] = row.tflops;
    j["gbps"] = row.gbps;
  }
  return j;
}

ResultRow result_row_from_json(const json& j, const std::string& origin) {
  Reader r{origin};
  if (!j.is_object()) throw UsageError(fmt::format("{}: a result row must be an object", origin));
  ResultRow row;
  row.problem = problem_from_json(r.at(j, "problem", ""), origin);
  row.strategy = r.str(j, "strategy", "");
  std::string status = r.str(j, "status", "");
  auto d = disposition_from_string(status);
  if (!d) throw UsageError(fmt::format("{}: status '{}' is not ok, unsupported, incorrect or failed", origin, status));
  row.disposition = *d;
  row.reason = r.str(j, "reason", "");
  row.launches = launches_from_json(r, r.at(j, "launches", ""));
  if (j.contains("config")) row.config = j["config"];
  if (j.contains("verify")) {
    const json& v = j["verify"];
    row.verify = RowVerification{r.str(v, "reference", "verify."), r.number(v, "max_abs_err", "verify."),
                                 r.number(v, "rel_l2_err", "verify."), r.number(v, "tolerance", "verify."),
                                 r.integer(v, "nonfinite", "verify."), r.boolean(v, "passed", "verify.")};
  }
  if (j.contains("injected_slowdown")) {
    const json& s = j["injected_slowdown"];
    row.injected_slowdown = InjectedSlowdown{r.number(s, "fraction", "injected_slowdown."),
                                             r.number(s, "delay_ms", "injected_slowdown."),
                                             r.number(s, "base_ms", "injected_slowdown."),
                                             r.number(s, "achieved", "injected_slowdown.")};
  }
  if (j.contains("time_ms")) {
    row.timing = timing_from_json(r, j);
    row.tflops = r.number(j, "tflops", "");
    row.gbps = r.number(j, "gbps", "");
  }
  return row;
}

}  // namespace ab
