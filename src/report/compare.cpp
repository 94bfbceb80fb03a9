// Matching rows of two reports and giving each a verdict; device checks; the regression decision.
#include "report/compare.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "report/report_view.hpp"

namespace ab {

using nlohmann::json;

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::ambiguous: return "ambiguous";
    case Verdict::worse: return "worse";
    case Verdict::better: return "better";
    case Verdict::changed: return "changed";
    case Verdict::not_applicable: return "n/a";
  }
  return "?";
}

int status_rank(const std::string& s) {
  if (s == "ok") return 3;
  if (s == "unsupported") return 2;  // a shape that ran before and is now refused is a coverage regression
  return 1;                          // incorrect, failed, anything unknown
}

// The verdict rule. With Δ = (new − base) / base, the relative change of the median time, and
// N = k · sqrt(noise_base² + noise_new²), the combined relative noise (each run's stdev / mean; k = 2 by
// default, a missing noise counts as 0):
//   |Δ| <= threshold                 → same       the change is too small to matter, however certain it is
//   |Δ| >  threshold and |Δ| >  N    → slower (Δ > 0) or faster (Δ < 0)
//   |Δ| >  threshold and |Δ| <= N    → ambiguous  big enough to matter, but inside what the runs' noise explains
// i.e. faster/slower exactly when |Δ| > max(threshold, N). Only `slower` fails the gate, so noise never does.
// A row timed with fewer than kMinSamplesForNoise samples in either run has an unknown noise (N = +inf): it
// can be `same` or `ambiguous`, never `slower`.
Verdict timing_verdict(double base_ms, double new_ms, double base_noise, double new_noise, const CompareOptions& opt,
                       double* change, double* combined_noise, double* limit) {
  double a = std::isnan(base_noise) ? 0 : base_noise, b = std::isnan(new_noise) ? 0 : new_noise;  // inf stays inf
  double d = (new_ms - base_ms) / base_ms;
  double n = std::sqrt(a * a + b * b);
  double lim = std::max(opt.threshold, opt.noise_k * n);
  if (change) *change = d;
  if (combined_noise) *combined_noise = n;
  if (limit) *limit = lim;
  if (std::fabs(d) <= opt.threshold) return Verdict::same;
  if (std::fabs(d) <= opt.noise_k * n) return Verdict::ambiguous;
  return d > 0 ? Verdict::slower : Verdict::faster;
}

int CompareResult::count(Verdict v) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](const CompareRow& r) { return r.verdict == v; }));
}

bool CompareResult::regressed() const {
  return count(Verdict::slower) > 0 || count(Verdict::worse) > 0 || (options.fail_on_missing && !missing.empty());
}

static json info_of(const json& report) {
  json info = json::object();
  for (const char* k : {"device", "tool", "created", "command"})
    if (report.contains(k)) info[k] = report[k];
  return info;
}

static CompareSide side_of(const RowView& v) {
  bool too_few = v.samples >= 0 && v.samples < kMinSamplesForNoise;
  return {v.status, v.reason, v.median_ms, too_few ? INFINITY : v.noise, v.samples};
}

static LoneRow lone_of(const RowView& v) {
  return {v.row->value("problem", json::object()), v.label, v.strategy, v.status, v.median_ms};
}

// Rows keyed by (problem, strategy); a repeated key keeps its first row and adds a warning.
static std::vector<RowView> unique_rows(const json& report, const std::string& name, std::vector<std::string>* warnings) {
  if (!report.is_object() || !report.contains("results") || !report["results"].is_array())
    throw UsageError(fmt::format("'{}': report has no 'results' array", name));
  std::vector<RowView> rows;
  std::map<std::string, bool> seen;
  for (const json& row : report["results"]) {
    RowView v = view_row(row);
    if (seen.count(v.key)) {
      warnings->push_back(fmt::format("'{}': duplicate row {} {} (the first one is compared)", name, v.label, v.strategy));
      continue;
    }
    seen[v.key] = true;
    rows.push_back(v);
  }
  return rows;
}

static void check_devices(const json& base, const json& next, const CompareOptions& opt, const std::string& bn,
                          const std::string& nn, std::vector<std::string>* warnings) {
  json bd = base.value("device", json::object()), nd = next.value("device", json::object());
  std::string bname = json_str(bd, "name", "?"), nname = json_str(nd, "name", "?");
  std::string bback = json_str(bd, "backend"), nback = json_str(nd, "backend");
  bool differ = bname != nname || (!bback.empty() && !nback.empty() && bback != nback);
  if (!differ) return;
  std::string what = fmt::format("devices differ: '{}' has {}{}, '{}' has {}{}", bn, bname,
                                 bback.empty() ? "" : " (" + bback + ")", nn, nname,
                                 nback.empty() ? "" : " (" + nback + ")");
  if (!opt.ignore_device) throw UsageError(what + " (use --ignore_device to compare anyway)");
  warnings->push_back(what + "; compared anyway (--ignore_device)");
}

// Settings that change what is measured; a difference is worth a warning above the table.
static void check_settings(const json& base, const json& next, std::vector<std::string>* warnings) {
  json bs = base.value("settings", json::object()), ns = next.value("settings", json::object());
  if (!bs.is_object() || !ns.is_object()) return;
  for (const char* k : {"hot", "l2_flush", "timer", "score_dtype"}) {
    if (bs.contains(k) && ns.contains(k) && bs[k] != ns[k])
      warnings->push_back(fmt::format("settings differ: {} is {} in the baseline and {} in the new run", k,
                                      bs[k].dump(), ns[k].dump()));
  }
}

CompareResult compare_reports(const json& base, const json& next, const CompareOptions& opt,
                              const std::string& base_name, const std::string& new_name) {
  CompareResult r;
  r.options = opt;
  r.base_name = base_name;
  r.new_name = new_name;
  check_devices(base, next, opt, base_name, new_name, &r.warnings);
  check_settings(base, next, &r.warnings);
  r.base_info = info_of(base);
  r.new_info = info_of(next);
  std::vector<RowView> brows = unique_rows(base, base_name, &r.warnings);
  std::vector<RowView> nrows = unique_rows(next, new_name, &r.warnings);
  std::map<std::string, const RowView*> by_key;
  for (const RowView& v : nrows) by_key[v.key] = &v;
  std::map<std::string, bool> matched;
  for (const RowView& b : brows) {
    auto it = by_key.find(b.key);
    if (it == by_key.end()) {
      r.missing.push_back(lone_of(b));
      continue;
    }
    const RowView& n = *it->second;
    matched[b.key] = true;
    CompareRow row;
    row.problem = b.row->value("problem", json::object());
    row.label = b.label;
    row.strategy = b.strategy;
    row.base = side_of(b);
    row.next = side_of(n);
    if (b.status != n.status) {
      int rb = status_rank(b.status), rn = status_rank(n.status);
      row.verdict = rn < rb ? Verdict::worse : rn > rb ? Verdict::better : Verdict::changed;
    } else if (b.timed() && n.timed()) {
      row.verdict = timing_verdict(b.median_ms, n.median_ms, row.base.noise, row.next.noise, opt, &row.change,
                                   &row.noise, &row.limit);
    }
    r.rows.push_back(std::move(row));
  }
  for (const RowView& n : nrows)
    if (!matched.count(n.key)) r.added.push_back(lone_of(n));
  return r;
}

}  // namespace ab
