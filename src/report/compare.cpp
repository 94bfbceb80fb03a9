// Matching rows of two reports and giving each a verdict; device checks; the regression decision.
#include "report/compare.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "measure/rounds.hpp"
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
// B = k · sqrt(u_base² + u_new²), the noise band from both sides' uncertainties (CompareSide::uncertainty;
// k = 2 by default, a missing uncertainty counts as 0):
//   |Δ| >  max(threshold, B)         → slower (Δ > 0) or faster (Δ < 0): big enough to matter, beyond noise
//   |Δ| <= threshold and B <= threshold → same: too small to matter, and the runs could have told
//   otherwise                        → ambiguous: the noise band reaches past the threshold, so the runs
//                                      cannot say whether the row changed by more than the threshold
// Only `slower` fails the gate, so noise never does. A row with an unknown uncertainty (too few samples)
// is always ambiguous.
Verdict timing_verdict(double base_ms, double new_ms, double base_noise, double new_noise, const CompareOptions& opt,
                       double* change, double* combined_noise, double* limit) {
  double a = std::isnan(base_noise) ? 0 : base_noise, b = std::isnan(new_noise) ? 0 : new_noise;  // inf stays inf
  double d = (new_ms - base_ms) / base_ms;
  double n = std::sqrt(a * a + b * b);
  double band = opt.noise_k * n;
  double lim = std::max(opt.threshold, band);
  if (change) *change = d;
  if (combined_noise) *combined_noise = n;
  if (limit) *limit = lim;
  if (std::fabs(d) > lim) return d > 0 ? Verdict::slower : Verdict::faster;
  if (std::fabs(d) <= opt.threshold && band <= opt.threshold) return Verdict::same;
  return Verdict::ambiguous;
}

std::string one_round_note() {
  return fmt::format("one round: between-process spread unknown; rerun with --rounds>={}", kMinRoundsForSpread);
}

// The one-round rule (compare.hpp, kOneRoundAllowance): with one round on a side, a change is slower or faster
// only beyond the between-process allowance; within it the threshold-and-noise rule's slower/faster is
// ambiguous. `same` and `ambiguous` stand, and so does every verdict with two or more rounds on both sides.
Verdict one_round_verdict(Verdict v, double base_ms, double new_ms, std::int64_t base_rounds, std::int64_t new_rounds,
                          const CompareOptions& opt, double* limit) {
  if (!(opt.one_round_allowance > 1) || (base_rounds > 1 && new_rounds > 1)) return v;
  double a = opt.one_round_allowance;
  if (limit) *limit = std::max(*limit, new_ms >= base_ms ? a - 1 : 1 - 1 / a);  // |change| beyond the allowance
  if (v != Verdict::slower && v != Verdict::faster) return v;
  double ratio = new_ms >= base_ms ? new_ms / base_ms : base_ms / new_ms;
  return ratio > a ? v : Verdict::ambiguous;
}

int CompareResult::count(Verdict v) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](const CompareRow& r) { return r.verdict == v; }));
}

int CompareResult::one_round_ambiguous() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) {
    return r.verdict == Verdict::ambiguous && !r.verdict_reason.empty();
  }));
}

bool CompareResult::regressed() const {
  return count(Verdict::slower) > 0 || count(Verdict::worse) > 0 || (options.fail_on_missing && !missing.empty());
}

static Report header_of(const Report& report) {
  Report h = report;
  h.rows.clear();
  return h;
}

static CompareSide side_of(const RowView& v) {
  CompareSide s;
  s.status = v.status;
  s.reason = v.reason;
  s.median_ms = v.median_ms;
  s.noise = v.noise;
  s.samples = v.samples;
  s.rounds = v.rounds;
  s.spread = v.round_spread;
  s.noise_met = v.noise_met;
  s.sm_clock_mhz = v.sm_clock_mhz;
  s.clock_low = v.clock_low;
  s.library_version = v.row->library_version;
  bool too_few = v.samples >= 0 && v.samples < kMinSamplesForNoise;
  if (v.rounds >= kMinRoundsForSpread && std::isfinite(v.round_error))
    s.uncertainty = v.round_error;
  else
    s.uncertainty = too_few ? INFINITY : v.noise;
  return s;
}

static LoneRow lone_of(const RowView& v) {
  return {v.row->problem, v.label, v.strategy, v.status, v.median_ms};
}

// Rows keyed by (problem, strategy); a repeated key keeps its first row and adds a warning.
static std::vector<RowView> unique_rows(const Report& report, const std::string& name, std::vector<std::string>* warnings) {
  std::vector<RowView> rows;
  std::map<std::string, bool> seen;
  for (const ResultRow& row : report.rows) {
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

// A string field of a report's device (report_from_json checked its type), or `fallback`.
static std::string device_field(const Report& r, const char* key, const std::string& fallback = "") {
  auto it = r.device.find(key);
  return it == r.device.end() ? fallback : it->get<std::string>();
}

static void check_devices(const Report& base, const Report& next, const CompareOptions& opt, const std::string& bn,
                          const std::string& nn, std::vector<std::string>* warnings) {
  std::string bname = device_field(base, "name", "?"), nname = device_field(next, "name", "?");
  std::string bback = device_field(base, "backend"), nback = device_field(next, "backend");
  bool differ = bname != nname || (!bback.empty() && !nback.empty() && bback != nback);
  if (!differ) return;
  std::string what = fmt::format("devices differ: '{}' has {}{}, '{}' has {}{}", bn, bname,
                                 bback.empty() ? "" : " (" + bback + ")", nn, nname,
                                 nback.empty() ? "" : " (" + nback + ")");
  if (!opt.ignore_device) throw UsageError(what + " (use --ignore_device to compare anyway)");
  warnings->push_back(what + "; compared anyway (--ignore_device)");
}

// Settings that change what is measured; a difference is worth a warning above the table.
static void check_settings(const Report& base, const Report& next, std::vector<std::string>* warnings) {
  const json &bs = base.settings, &ns = next.settings;
  for (const char* k : {"hot", "l2_flush", "timer", "score_dtype"}) {
    if (bs.contains(k) && ns.contains(k) && bs[k] != ns[k])
      warnings->push_back(fmt::format("settings differ: {} is {} in the baseline and {} in the new run", k,
                                      bs[k].dump(), ns[k].dump()));
  }
  json br = bs.value("rounds", json(1)), nr = ns.value("rounds", json(1));  // reports before rounds had one
  if (br != nr)
    warnings->push_back(fmt::format("settings differ: rounds is {} in the baseline and {} in the new run", br.dump(), nr.dump()));
  // Reports before start_delay_ms started every sample on an idle GPU (0).
  json bd = bs.value("start_delay_ms", json(0.0)), nd = ns.value("start_delay_ms", json(0.0));
  if (bd != nd)
    warnings->push_back(fmt::format("settings differ: start_delay_ms is {} in the baseline and {} in the new run "
                                    "(a short GPU-bound forward times faster behind a start delay)",
                                    bd.dump(), nd.dump()));
  for (const auto* side : {&bs, &ns})
    if (side->contains("injected_slowdown"))
      warnings->push_back(fmt::format("the {} was deliberately slowed (ATTNBENCH_INJECT_SLOWDOWN={})",
                                      side == &bs ? "baseline" : "new run", (*side)["injected_slowdown"].dump()));
}

// The median SM clock over a report's timed rows (0 when none is known).
static int median_clock(const std::vector<RowView>& rows) {
  std::vector<int> c;
  for (const RowView& v : rows)
    if (v.timed() && v.sm_clock_mhz > 0) c.push_back(v.sm_clock_mhz);
  if (c.empty()) return 0;
  std::nth_element(c.begin(), c.begin() + c.size() / 2, c.end());
  return c[c.size() / 2];
}

// Clocks: the two runs at different SM clocks, or rows that ran with a low clock, explain changes that are
// not the code's.
static void check_clocks(const std::vector<RowView>& brows, const std::vector<RowView>& nrows,
                         const std::vector<CompareRow>& rows, std::vector<std::string>* warnings) {
  int bc = median_clock(brows), nc = median_clock(nrows);
  if (bc > 0 && nc > 0 && std::abs(bc - nc) > 0.02 * std::max(bc, nc))
    warnings->push_back(fmt::format("SM clocks differ: the baseline ran at {} MHz and the new run at {} MHz "
                                    "(median over rows); timing changes may come from the clocks", bc, nc));
  int low = 0;
  for (const CompareRow& r : rows) low += r.base.clock_low || r.next.clock_low;
  if (low > 0)
    warnings->push_back(fmt::format("{} row(s) ran with the SM clock below {:.0f}% of its maximum (clock_low): "
                                    "the GPU may have been throttling", low, kLowClockFraction * 100));
}

// Library versions: a plugin's or peer's rows ran another build of its library in the new run. One warning per
// strategy and pair of versions, with its count of rows.
static void check_library_versions(const std::vector<CompareRow>& rows, std::vector<std::string>* warnings) {
  struct Change {
    std::string strategy, base, next;
    int rows = 0;
  };
  std::vector<Change> changes;
  for (const CompareRow& r : rows) {
    if (!r.library_changed()) continue;
    auto it = std::find_if(changes.begin(), changes.end(), [&](const Change& c) {
      return c.strategy == r.strategy && c.base == r.base.library_version && c.next == r.next.library_version;
    });
    if (it == changes.end()) changes.push_back({r.strategy, r.base.library_version, r.next.library_version, 1});
    else ++it->rows;
  }
  for (const Change& c : changes)
    warnings->push_back(fmt::format("library versions differ: {} is '{}' in the baseline and '{}' in the new run ({} "
                                    "row{}); its changes may come from the library",
                                    c.strategy, c.base, c.next, c.rows, c.rows == 1 ? "" : "s"));
}

CompareResult compare_reports(const Report& base, const Report& next, const CompareOptions& opt,
                              const std::string& base_name, const std::string& new_name) {
  CompareResult r;
  r.options = opt;
  r.base_name = base_name;
  r.new_name = new_name;
  check_devices(base, next, opt, base_name, new_name, &r.warnings);
  check_settings(base, next, &r.warnings);
  r.base_header = header_of(base);
  r.new_header = header_of(next);
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
    row.problem = b.row->problem;
    row.label = b.label;
    row.strategy = b.strategy;
    row.base = side_of(b);
    row.next = side_of(n);
    if (b.status != n.status) {
      int rb = status_rank(b.status), rn = status_rank(n.status);
      row.verdict = rn < rb ? Verdict::worse : rn > rb ? Verdict::better : Verdict::changed;
    } else if (b.timed() && n.timed()) {
      Verdict v = timing_verdict(b.median_ms, n.median_ms, row.base.uncertainty, row.next.uncertainty, opt,
                                 &row.change, &row.noise, &row.limit);
      row.verdict = one_round_verdict(v, b.median_ms, n.median_ms, row.base.rounds, row.next.rounds, opt, &row.limit);
      if (row.verdict != v) row.verdict_reason = one_round_note();
    }
    r.rows.push_back(std::move(row));
  }
  for (const RowView& n : nrows)
    if (!matched.count(n.key)) r.added.push_back(lone_of(n));
  check_clocks(brows, nrows, r.rows, &r.warnings);
  check_library_versions(r.rows, &r.warnings);
  return r;
}

}  // namespace ab
