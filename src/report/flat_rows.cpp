// `attnbench report FILE --json=FILE|-`: the typed rows as flat objects for scripts and plots
// (docs/report-format.md, "Flat rows"), so no script rebuilds labels or keys from report JSON: the problem
// (the axis table's JSON) and every column of the result column table (report/result_columns.hpp), typed.
#include "core/problem_axes.hpp"
#include "report/printers.hpp"
#include "report/result_columns.hpp"

namespace ab {

namespace {

nlohmann::json flat_row(const Report& report, const ProblemGroup& g, const RowView& r) {
  nlohmann::json j = {{"problem", problem_to_json(r.row->problem)}};
  const ColumnRow row{report, g, r};
  for (const ResultColumn& c : result_columns()) j[c.name] = json_value(c.get(row));
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
