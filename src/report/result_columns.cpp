// The result column table (report/result_columns.hpp): every column's name, hint, getter and table cell.
#include "report/result_columns.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/problem_axes.hpp"
#include "report/cells.hpp"

namespace ab {

namespace {

CellValue missing() { return CellValue(); }
CellValue number(double v) { return std::isfinite(v) ? CellValue(std::in_place_type<double>, v) : missing(); }
CellValue count(std::int64_t v) { return v >= 0 ? CellValue(std::in_place_type<std::int64_t>, v) : missing(); }
CellValue flag(bool b) { return CellValue(std::in_place_type<bool>, b); }
CellValue tri(int v) { return v < 0 ? missing() : flag(v == 1); }  // 1, 0, or -1 unknown
CellValue flag_or_missing(const std::optional<bool>& b) { return b ? flag(*b) : missing(); }
CellValue text(const std::string& s) { return CellValue(std::in_place_type<std::string>, s); }
CellValue text_or_missing(const std::string& s) { return s.empty() ? missing() : text(s); }

// The row's time statistics, or nullptr when it has no time.
const Stats* time_ms(const ColumnRow& c) { return c.row.row->timing ? &c.row.row->timing->time_ms : nullptr; }
CellValue stat(const ColumnRow& c, double Stats::*field) { return time_ms(c) ? number(time_ms(c)->*field) : missing(); }
const RowConfig* config(const ColumnRow& c) { return c.row.row->config ? &*c.row.row->config : nullptr; }
const MeasuredLaunches* measured(const ColumnRow& c) {
  return c.row.row->launches.measured ? &*c.row.row->launches.measured : nullptr;
}

// "shape=algo (source); ..." for every GEMM plan of the row.
std::string gemm_algos(const RowConfig& c) {
  std::string s;
  for (const GemmPlanChoice& g : c.gemm_algos)
    s += (s.empty() ? "" : "; ") + g.shape + "=" + g.algo + (g.source.empty() ? "" : " (" + g.source + ")");
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

double vs_best(const ColumnRow& c) { return c.row.timed() ? c.row.median_ms / c.group.best_ms() : NAN; }

// The console and markdown cells that carry a mark beside the number.
std::string shown_median(const ColumnRow& c) { return cell_median(c.row); }
std::string shown_noise(const ColumnRow& c) { return cell_noise(c.row); }
std::string shown_launches(const ColumnRow& c) { return cell_launches(c.row); }
std::string shown_rel_err(const ColumnRow& c) { return cell_rel_err(c.row); }

using R = const ColumnRow&;
using H = ColumnHint;

std::vector<ResultColumn> make_columns() {
  return {
      {"strategy", H::text, [](R c) { return text(c.row.strategy); }},
      {"status", H::text, [](R c) { return text(c.row.status); }},
      {"reason", H::text, [](R c) { return text(c.row.reason); }},
      {"median_ms", H::ms, [](R c) { return stat(c, &Stats::median); }, true,
       {"median ms", 1, &shown_median, 10, false, true, true}},
      {"mean_ms", H::ms, [](R c) { return stat(c, &Stats::mean); }},
      {"min_ms", H::ms, [](R c) { return stat(c, &Stats::min); }},
      {"max_ms", H::ms, [](R c) { return stat(c, &Stats::max); }},
      {"stdev_ms", H::ms, [](R c) { return stat(c, &Stats::stdev); }},
      {"noise", H::fraction, [](R c) { return number(c.row.noise); }, true, {"noise", 2, &shown_noise, 7}},
      {"samples", H::count, [](R c) { return count(c.row.samples); }},
      {"tflops", H::rate, [](R c) { return number(c.row.tflops); }, true, {"TFLOP/s", 4, nullptr, 8}},
      {"gbps", H::rate, [](R c) { return number(c.row.gbps); }, true, {"GB/s", 5, nullptr, 8}},
      {"copy_fraction", H::fraction, [](R c) { return number(c.row.copy_fraction); }, true, {"%copy", 6, nullptr, 7}},
      {"vs_best", H::ratio, [](R c) { return number(vs_best(c)); }, true,
       {"vs best", 3, nullptr, 8, false, true, true}},
      {"fastest", H::flag, [](R c) { return flag(c.fastest()); }},
      {"fastest_own", H::flag, [](R c) { return flag(c.fastest_own()); }},
      {"launches_expected", H::count, [](R c) { return count(c.row.launches_expected); }},
      {"launches_measured", H::count, [](R c) { return count(c.row.launches_measured); }, true,
       {"launches", 7, &shown_launches, 9, true, false}},
      // A verdict only where both counts are known (nothing measured, or no contract: no verdict).
      {"launches_match", H::flag, [](R c) {
         return c.row.launches_expected >= 0 && c.row.launches_measured >= 0 ? flag(!c.row.launches_mismatch) : missing();
       }},
      {"rel_l2_err", H::error, [](R c) { return number(c.row.rel_err); }, true, {"rel-err", 8, &shown_rel_err, 9, false, false}},
      {"verify_passed", H::flag, [](R c) { return tri(c.row.verify_passed); }},
      {"timer", H::text, [](R c) { return c.row.row->timing ? text(c.row.row->timing->timer) : missing(); }},
      {"stop_reason", H::text, [](R c) { return c.row.row->timing ? text(c.row.row->timing->stop_reason) : missing(); }},
      {"noise_met", H::flag, [](R c) { return tri(c.row.noise_met); }},
      {"rounds", H::count, [](R c) { return count(c.row.rounds); }},
      {"round_spread", H::fraction, [](R c) { return number(c.row.round_spread); }},
      {"sm_clock_mhz", H::count, [](R c) { return c.row.sm_clock_mhz > 0 ? count(c.row.sm_clock_mhz) : missing(); }},
      {"clock_low", H::flag, [](R c) { return flag(c.row.clock_low); }},
      {"device", H::text, [](R c) { return text(row_device_name(c.report, *c.row.row)); }},
      {"device_index", H::count, [](R c) { return count(c.row.row->device); }},
      {"host_median_ms", H::ms, [](R c) { return c.row.row->timing ? number(c.row.row->timing->host_ms.median) : missing(); }},
      {"round_error", H::fraction, [](R c) { return number(c.row.round_error); }},
      {"tolerance", H::error, [](R c) { return number(c.row.tolerance); }},
      {"max_abs_err", H::error, [](R c) { return c.row.row->verify ? number(c.row.row->verify->max_abs_err) : missing(); }},
      // The fused tile that ran (a decode tile's name ends in its split count: "decode-ws-s4"), the plan a row of
      // fused shows in every output; "-" for the other strategies.
      {"tile", H::text, [](R c) {
         return config(c) && config(c)->strategy.tile ? text(config(c)->strategy.tile->name()) : missing();
       }, true, {"tile", 9, nullptr, 4, true, false, false, true}},
      {"tile_source", H::text, [](R c) { return config(c) ? text_or_missing(config(c)->strategy.tile_source) : missing(); }},
      {"config_source", H::text, [](R c) { return config(c) ? text_or_missing(config(c)->source) : missing(); }},
      {"score_dtype", H::text, [](R c) {
         return config(c) && config(c)->strategy.score_dtype ? text(dtype_name(*config(c)->strategy.score_dtype)) : missing();
       }},
      {"gathered_pages", H::flag, [](R c) { return config(c) ? flag_or_missing(config(c)->strategy.gathered_pages) : missing(); }},
      {"gqa_packed", H::flag, [](R c) { return config(c) ? flag_or_missing(config(c)->strategy.gqa_packed) : missing(); }},
      {"padded_fraction", H::fraction, [](R c) {
         return config(c) && config(c)->strategy.padded_fraction ? number(*config(c)->strategy.padded_fraction) : missing();
       }},
      {"gemm_algos", H::text, [](R c) { return config(c) ? text_or_missing(gemm_algos(*config(c))) : missing(); }},
      {"launch_formula", H::text, [](R c) {
         return c.row.row->launches.has_contract ? text_or_missing(c.row.row->launches.formula) : missing();
       }},
      {"launch_source", H::text, [](R c) { return measured(c) ? text_or_missing(measured(c)->source) : missing(); }},
      {"kernel_names", H::text, [](R c) { return measured(c) ? text_or_missing(joined(measured(c)->kernel_names)) : missing(); }},
      {"injected_slowdown", H::fraction, [](R c) {
         return c.row.row->injected_slowdown ? number(c.row.row->injected_slowdown->achieved) : missing();
       }},
      // A plugin's or in-process peer's library version (its table's `version`); missing for the built-in
      // strategies, script peers and reports before it.
      {"library_version", H::text, [](R c) { return text_or_missing(c.row.row->library_version); }},
      // The flat rows' own: the row's place in the report's results, its label, keys and whether a peer ran it.
      {"index", H::count, [](R c) { return count(c.row.row - c.report.rows.data()); }, false},
      {"label", H::text, [](R c) { return text(c.row.label); }, false},
      {"key", H::text, [](R c) { return text(c.group.key); }, false},
      {"cache_key", H::text, [](R c) { return text(problem_cache_key_of_json(problem_to_json(c.row.row->problem))); }, false},
      {"peer", H::flag, [](R c) { return flag(c.row.peer); }, false},
  };
}

}  // namespace

bool ColumnRow::fastest() const { return group.fastest >= 0 && &row == &group.rows[group.fastest]; }

bool ColumnRow::fastest_own() const {
  return group.fastest_own >= 0 ? &row == &group.rows[group.fastest_own] : fastest() && !row.peer;
}

const std::vector<ResultColumn>& result_columns() {
  static const std::vector<ResultColumn> columns = make_columns();
  return columns;
}

std::vector<const ResultColumn*> table_columns() {
  std::vector<const ResultColumn*> out;
  for (const ResultColumn& c : result_columns())
    if (c.table.heading) out.push_back(&c);
  std::sort(out.begin(), out.end(), [](const ResultColumn* a, const ResultColumn* b) { return a->table.place < b->table.place; });
  return out;
}

std::string csv_value(const CellValue& v) {
  struct {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return csv_num(d); }
  } visit;
  return std::visit(visit, v);
}

nlohmann::json json_value(const CellValue& v) {
  struct {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(const std::string& s) const { return s; }
    nlohmann::json operator()(bool b) const { return b; }
    nlohmann::json operator()(std::int64_t i) const { return i; }
    nlohmann::json operator()(double d) const { return d; }
  } visit;
  return std::visit(visit, v);
}

std::string table_cell(const ResultColumn& column, const ColumnRow& r) {
  if (column.table.timed && !r.row.timed()) return "-";
  if (column.table.shown) return column.table.shown(r);
  const CellValue v = column.get(r);
  if (std::holds_alternative<std::monostate>(v)) return "-";
  if (const double* d = std::get_if<double>(&v)) {
    switch (column.hint) {
      case ColumnHint::ms: return cell_ms(*d);
      case ColumnHint::fraction: return cell_pct(*d);
      case ColumnHint::rate: return cell_rate(*d);
      case ColumnHint::ratio: return cell_ratio(*d);
      case ColumnHint::error: return fmt::format("{:.1e}", *d);
      default: break;
    }
  }
  return csv_value(v);
}

}  // namespace ab
