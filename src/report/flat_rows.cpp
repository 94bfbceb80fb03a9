// `attnbench report FILE --format=json`: the typed rows as flat objects for scripts and plots
// (docs/report-format.md, "Flat rows"), so no script rebuilds labels or keys from report JSON.
#include "report/printers.hpp"

#include <cmath>

#include "core/problem_axes.hpp"
#include "report/extra_columns.hpp"

namespace ab {

namespace {

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
nlohmann::json count(std::int64_t v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }
nlohmann::json tri(int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v == 1); }

// The extra columns (report/extra_columns.hpp): numbers as numbers, flags as booleans, "" as null.
void add_extra_columns(const ResultRow& row, nlohmann::json& j) {
  std::vector<std::string> names = extra_column_names(), cells = extra_column_cells(row);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& c = cells[i];
    if (c.empty()) j[names[i]] = nullptr;
    else if (c == "true" || c == "false") j[names[i]] = c == "true";
    else if (nlohmann::json::accept(c) && nlohmann::json::parse(c).is_number()) j[names[i]] = nlohmann::json::parse(c);
    else j[names[i]] = c;
  }
}

nlohmann::json flat_row(const Report& report, const ProblemGroup& g, const RowView& r) {
  bool fastest = g.fastest >= 0 && &r == &g.rows[g.fastest];
  nlohmann::json j = {{"index", r.row - report.rows.data()},  // the row's place in the report's results
          {"label", r.label},
          {"key", g.key},
          {"cache_key", problem_cache_key_of_json(problem_to_json(r.row->problem))},
          {"problem", problem_to_json(r.row->problem)},
          {"strategy", r.strategy},
          {"peer", r.peer},
          {"status", r.status},
          {"reason", r.reason},
          {"device_index", r.row->device >= 0 ? nlohmann::json(r.row->device) : nlohmann::json(nullptr)},
          {"median_ms", num(r.median_ms)},
          {"noise", num(r.noise)},
          {"samples", count(r.samples)},
          {"noise_met", tri(r.noise_met)},
          {"rounds", r.rounds},
          {"round_spread", num(r.round_spread)},
          {"round_error", num(r.round_error)},
          {"sm_clock_mhz", r.sm_clock_mhz},
          {"clock_low", r.clock_low},
          {"tflops", num(r.tflops)},
          {"gbps", num(r.gbps)},
          {"copy_fraction", num(r.copy_fraction)},
          {"vs_best", r.timed() ? num(r.median_ms / g.best_ms()) : nlohmann::json(nullptr)},
          {"fastest", fastest},
          {"launches_expected", count(r.launches_expected)},
          {"launches_measured", count(r.launches_measured)},
          {"launches_match", !r.launches_mismatch},
          {"rel_l2_err", num(r.rel_err)},
          {"verify_passed", tri(r.verify_passed)},
          {"injected_slowdown",
           r.row->injected_slowdown ? num(r.row->injected_slowdown->achieved) : nlohmann::json(nullptr)},
          {"timer", r.row->timing ? nlohmann::json(r.row->timing->timer) : nlohmann::json(nullptr)},
          {"stop_reason", r.row->timing ? nlohmann::json(r.row->timing->stop_reason) : nlohmann::json(nullptr)}};
  add_extra_columns(*r.row, j);
  return j;
}

}  // namespace

nlohmann::json report_flat_json(const Report& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ProblemGroup& g : group_rows(report))
    for (const RowView& r : g.rows) rows.push_back(flat_row(report, g, r));
  return {{"schema", "attnbench.rows/1"},
          {"tool", {{"name", report.tool.name}, {"version", report.tool.version}, {"git", report.tool.git}}},
          {"device", report.device},
          {"devices", report.devices},
          {"settings", report.settings},
          {"rows", rows}};
}

}  // namespace ab
