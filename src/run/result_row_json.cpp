// The one place a result row becomes report JSON and back (field names: docs/report-format.md).
#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "run/result_row.hpp"

namespace ab {

using nlohmann::json;

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Field reads of a report row. `need` fields must be there; `opt` fields may be absent (reports before
// the field existed, peer rows) and then give the fallback. A present field of the wrong type is always a
// UsageError "ORIGIN: WHEREfield must be TYPE" (WHERE: "results[3].", then the section's path).
struct Reader {
  const std::string& origin;
  const std::string& where;  // "results[3]." or ""
  [[noreturn]] void fail(const std::string& path, const char* key, const char* what) const {
    throw UsageError(fmt::format("{}: {}{}{} {}", origin, where, path, key, what));
  }
  const json* find(const json& j, const char* key) const {
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  const json& need(const json& j, const char* key, const std::string& path) const {
    const json* v = find(j, key);
    if (!v) fail(path, key, "is missing");
    return *v;
  }
  // An object field (nullptr when absent).
  const json* object(const json& j, const char* key, const std::string& path) const {
    const json* v = find(j, key);
    if (v && !v->is_object()) fail(path, key, "must be an object");
    return v;
  }
  std::string str(const json* v, const std::string& path, const char* key) const {
    if (!v->is_string()) fail(path, key, "must be a string");
    return v->get<std::string>();
  }
  std::string opt_str(const json& j, const char* key, const std::string& path, const std::string& fallback = "") const {
    const json* v = find(j, key);
    return v ? str(v, path, key) : fallback;
  }
  std::int64_t opt_int(const json& j, const char* key, const std::string& path, std::int64_t fallback) const {
    const json* v = find(j, key);
    if (!v) return fallback;
    if (!v->is_number_integer()) fail(path, key, "must be an integer");
    return v->get<std::int64_t>();
  }
  double opt_num(const json& j, const char* key, const std::string& path) const {  // null or absent: NaN
    const json* v = find(j, key);
    if (!v || v->is_null()) return NAN;
    if (!v->is_number()) fail(path, key, "must be a number or null");
    return v->get<double>();
  }
  std::optional<bool> opt_bool(const json& j, const char* key, const std::string& path) const {
    const json* v = find(j, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(path, key, "must be true or false");
    return v->get<bool>();
  }
  Stats stats(const json& j, const std::string& path) const {  // absent numbers: NaN, samples -1
    Stats s;
    s.median = opt_num(j, "median", path);
    s.mean = opt_num(j, "mean", path);
    s.min = opt_num(j, "min", path);
    s.max = opt_num(j, "max", path);
    s.stdev = opt_num(j, "stdev", path);
    s.noise = opt_num(j, "noise", path);
    s.samples = opt_int(j, "samples", path, -1);
    return s;
  }
  std::vector<double> numbers(const json& j, const char* key, const std::string& path) const {
    std::vector<double> out;
    const json* v = find(j, key);
    if (!v) return out;
    if (!v->is_array()) fail(path, key, "must be a list");
    for (const json& x : *v) {
      if (!x.is_number()) fail(path, key, "must hold numbers");
      out.push_back(x.get<double>());
    }
    return out;
  }
  std::vector<std::string> strings(const json& j, const char* key, const std::string& path) const {
    std::vector<std::string> out;
    const json* v = find(j, key);
    if (!v) return out;
    if (!v->is_array()) fail(path, key, "must be a list");
    for (const json& x : *v) {
      if (!x.is_string()) fail(path, key, "must hold strings");
      out.push_back(x.get<std::string>());
    }
    return out;
  }
};

RowTiming timing_from_json(const Reader& r, const json& row) {
  RowTiming t;
  t.time_ms = r.stats(*r.object(row, "time_ms", ""), "time_ms.");
  const json* host = r.object(row, "host_ms", "");
  t.host_ms = host ? r.stats(*host, "host_ms.") : r.stats(json::object(), "host_ms.");
  t.timer = r.opt_str(row, "timer", "");
  t.stop_reason = r.opt_str(row, "stop_reason", "");
  t.noise_met = r.opt_bool(row, "noise_met", "");
  t.sm_clock_mhz = static_cast<int>(r.opt_int(row, "sm_clock_mhz", "", 0));
  t.clock_low = r.opt_bool(row, "clock_low", "").value_or(false);
  if (const json* j = r.object(row, "rounds", "")) {
    t.rounds = RoundsSummary{r.opt_int(*j, "count", "rounds.", 1), r.numbers(*j, "medians_ms", "rounds."),
                             r.opt_num(*j, "spread", "rounds."), r.opt_int(*j, "kept", "rounds.", 0),
                             r.opt_num(*j, "error", "rounds.")};
  }
  if (row.contains("samples_ms")) t.samples_ms = r.numbers(row, "samples_ms", "");
  return t;
}

StrategyConfig strategy_config_from_json(const Reader& r, const json& c) {
  StrategyConfig s;
  if (const json* d = r.find(c, "score_dtype")) {
    s.score_dtype = dtype_from_name(r.str(d, "config.", "score_dtype"));
    if (!s.score_dtype) r.fail("config.", "score_dtype", "is not a known dtype");
  }
  s.gathered_pages = r.opt_bool(c, "gathered_pages", "config.");
  s.gqa_packed = r.opt_bool(c, "gqa_packed", "config.");
  if (r.find(c, "padded_fraction")) s.padded_fraction = r.opt_num(c, "padded_fraction", "config.");
  if (const json* t = r.object(c, "tile", "config.")) {
    s.tile = FusedTile::from_json(*t, [&](const std::string& field, const std::string& what) {
      r.fail("config.tile.", field.c_str(), what.c_str());
    });
  }
  s.tile_source = r.opt_str(c, "tile_source", "config.");
  s.plugin_config = r.opt_str(c, "plugin_config", "config.");
  return s;
}

GemmPlanChoice plan_choice_from_json(const Reader& r, const json& g) {
  if (!g.is_object()) r.fail("config.", "gemm_algos", "must hold objects");
  GemmPlanChoice c;
  c.shape = r.opt_str(g, "shape", "config.gemm_algos[].");
  c.algo = r.opt_str(g, "algo", "config.gemm_algos[].");
  c.source = r.opt_str(g, "source", "config.gemm_algos[].");
  if (const json* a = r.find(g, "attrs")) c.attrs = *a;  // the backend's own attributes, kept as they are
  c.workspace_bytes = r.opt_int(g, "workspace_bytes", "config.gemm_algos[].", -1);
  c.note = r.opt_str(g, "note", "config.gemm_algos[].");
  return c;
}

RowConfig config_from_json(const Reader& r, const json& c) {
  RowConfig out;
  out.strategy = strategy_config_from_json(r, c);
  if (const json* g = r.find(c, "gemm_algos")) {
    if (!g->is_array()) r.fail("config.", "gemm_algos", "must be a list");
    for (const json& x : *g) out.gemm_algos.push_back(plan_choice_from_json(r, x));
  }
  out.source = r.opt_str(c, "source", "config.");
  return out;
}

RowLaunches launches_from_json(const Reader& r, const json* l) {
  RowLaunches out;
  out.has_contract = false;
  if (!l) return out;
  if (const json* e = r.object(*l, "expected", "launches.")) {
    out.has_contract = true;
    out.expected_gemm = r.opt_int(*e, "gemm", "launches.expected.", 0);
    out.expected_kernels = r.opt_int(*e, "kernels", "launches.expected.", 0);
    r.opt_int(*e, "total", "launches.expected.", 0);  // derived (expected_total); its type is still checked
    out.formula = r.opt_str(*e, "formula", "launches.expected.");
  }
  if (const json* m = r.object(*l, "measured", "launches.")) {
    MeasuredLaunches ml;
    ml.kernels = r.opt_int(*m, "kernels", "launches.measured.", -1);
    ml.gemm_calls = r.opt_int(*m, "gemm_calls", "launches.measured.", -1);
    ml.other_kernels = r.opt_int(*m, "other_kernels", "launches.measured.", -1);
    ml.source = r.opt_str(*m, "source", "launches.measured.");
    ml.kernel_names = r.strings(*m, "kernel_names", "launches.measured.");
    out.measured = ml;
  }
  // The runner's verdict when the report has one (extra split-K reductions are no mismatch); else the
  // counts must agree where both are known.
  std::optional<bool> match = r.opt_bool(*l, "match", "launches.");
  bool both = out.has_contract && out.measured && out.measured->kernels >= 0;
  out.match = match ? *match : !(both && out.measured->kernels != out.expected_total());
  out.explained = r.opt_str(*l, "explained", "launches.");
  return out;
}

RowVerification verify_from_json(const Reader& r, const json& v) {
  RowVerification out;
  out.reference = r.opt_str(v, "reference", "verify.");
  out.max_abs_err = r.opt_num(v, "max_abs_err", "verify.");
  out.rel_l2_err = r.opt_num(v, "rel_l2_err", "verify.");
  out.tolerance = r.opt_num(v, "tolerance", "verify.");
  out.nonfinite = r.opt_int(v, "nonfinite", "verify.", 0);
  std::optional<bool> passed = r.opt_bool(v, "passed", "verify.");
  if (!passed) r.fail("verify.", "passed", "is missing");
  out.passed = *passed;
  return out;
}

// The problem's fields have the types of the axis table; then problem_from_json makes the Problem (and
// says what is missing or inconsistent). pages_requested 0 (early reports: "not spelled") is left out.
Problem problem_of_row(const Reader& r, const json& p) {
  static const char* const kWords[] = {"an integer", "a string", "true or false"};
  for (const ProblemAxis& a : problem_axes()) {
    const json* v = r.find(p, a.name);
    bool ok = !v || (a.type == AxisType::integer ? v->is_number_integer()
                     : a.type == AxisType::word  ? v->is_string()
                                                 : v->is_boolean());
    if (!ok) r.fail("problem.", a.name, fmt::format("must be {}", kWords[static_cast<int>(a.type)]).c_str());
  }
  r.opt_int(p, "pages_requested", "problem.", 0);
  json copy = p;
  if (copy.value("pages_requested", json(1)) == json(0)) copy.erase("pages_requested");
  return problem_from_json(copy, fmt::format("{}: {}", r.origin, r.where.empty() ? std::string("row") : r.where.substr(0, r.where.size() - 1)));
}

}  // namespace

json to_json(const RowLaunches& l) {
  json j = json::object();
  if (l.has_contract)
    j["expected"] = {{"gemm", l.expected_gemm}, {"kernels", l.expected_kernels}, {"total", l.expected_total()},
                     {"formula", l.formula}};
  if (l.measured) {
    const MeasuredLaunches& m = *l.measured;
    j["measured"] = {{"kernels", m.kernels},       {"gemm_calls", m.gemm_calls}, {"other_kernels", m.other_kernels},
                     {"kernel_names", m.kernel_names}, {"source", m.source}};
    if (l.has_contract) j["match"] = l.match;  // no contract, no verdict
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

json to_json(const GemmPlanChoice& g) {
  json j = {{"shape", g.shape}, {"algo", g.algo}, {"source", g.source}};
  if (!g.attrs.is_null()) j["attrs"] = g.attrs;
  if (g.workspace_bytes >= 0) j["workspace_bytes"] = g.workspace_bytes;
  if (!g.note.empty()) j["note"] = g.note;
  return j;
}

json to_json(const RowConfig& c) {
  json j = json::object();
  if (c.strategy.score_dtype) j["score_dtype"] = dtype_name(*c.strategy.score_dtype);
  if (c.strategy.gathered_pages) j["gathered_pages"] = *c.strategy.gathered_pages;
  if (c.strategy.gqa_packed) j["gqa_packed"] = *c.strategy.gqa_packed;
  if (c.strategy.padded_fraction) j["padded_fraction"] = *c.strategy.padded_fraction;
  if (c.strategy.tile) j["tile"] = c.strategy.tile->to_json();
  if (!c.strategy.tile_source.empty()) j["tile_source"] = c.strategy.tile_source;
  if (!c.strategy.plugin_config.empty()) j["plugin_config"] = c.strategy.plugin_config;
  json plans = json::array();
  for (const GemmPlanChoice& g : c.gemm_algos) plans.push_back(to_json(g));
  j["gemm_algos"] = plans;
  j["source"] = c.source;
  return j;
}

json to_json(const ResultRow& row) {
  json j;
  j["problem"] = problem_to_json(row.problem);
  j["strategy"] = row.strategy;
  j["status"] = to_string(row.disposition);
  j["reason"] = row.reason;
  if (row.device >= 0) j["device"] = row.device;
  if (!row.library_version.empty()) j["library_version"] = row.library_version;
  j["launches"] = to_json(row.launches);
  if (row.config) j["config"] = to_json(*row.config);
  if (row.verify) j["verify"] = to_json(*row.verify);
  if (row.injected_slowdown) j["injected_slowdown"] = to_json(*row.injected_slowdown);
  if (row.timing) {
    json t = to_json(*row.timing);
    for (auto it = t.begin(); it != t.end(); ++it) j[it.key()] = it.value();
    j["tflops"] = row.tflops;
    j["gbps"] = row.gbps;
    if (std::isfinite(row.copy_fraction)) j["copy_fraction"] = row.copy_fraction;
  }
  return j;
}

ResultRow result_row_from_json(const json& j, const std::string& origin, const std::string& where) {
  if (!j.is_object())
    throw UsageError(fmt::format("{}: {} must be an object", origin, where.empty() ? std::string("a result row")
                                                                                   : where.substr(0, where.size() - 1)));
  Reader r{origin, where};
  ResultRow row;
  const json* problem = r.object(j, "problem", "");
  if (!problem) r.fail("", "problem", "is missing");
  row.problem = problem_of_row(r, *problem);
  row.strategy = r.str(&r.need(j, "strategy", ""), "", "strategy");
  std::string status = r.str(&r.need(j, "status", ""), "", "status");
  auto d = disposition_from_string(status);
  if (!d) r.fail("", "status", fmt::format("'{}' is not ok, unsupported, incorrect or failed", status).c_str());
  row.disposition = *d;
  row.reason = r.opt_str(j, "reason", "");
  const std::int64_t device = r.opt_int(j, "device", "", -1);
  if (j.contains("device") && (device < 0 || device > 1 << 20)) r.fail("", "device", "must be a device index (0 or more)");
  row.device = static_cast<int>(device);
  row.library_version = r.opt_str(j, "library_version", "");
  row.launches = launches_from_json(r, r.object(j, "launches", ""));
  if (const json* c = r.object(j, "config", "")) row.config = config_from_json(r, *c);
  if (const json* v = r.object(j, "verify", "")) row.verify = verify_from_json(r, *v);
  if (const json* s = r.object(j, "injected_slowdown", "")) {
    row.injected_slowdown = InjectedSlowdown{r.opt_num(*s, "fraction", "injected_slowdown."),
                                             r.opt_num(*s, "delay_ms", "injected_slowdown."),
                                             r.opt_num(*s, "base_ms", "injected_slowdown."),
                                             r.opt_num(*s, "achieved", "injected_slowdown.")};
  }
  row.tflops = r.opt_num(j, "tflops", "");
  row.gbps = r.opt_num(j, "gbps", "");
  row.copy_fraction = r.opt_num(j, "copy_fraction", "");
  if (r.object(j, "time_ms", "")) row.timing = timing_from_json(r, j);
  return row;
}

}  // namespace ab
