// The CSV printer: one line per result with every problem field, time statistic and check in its own column,
// written through the one CSV writer (core/csv.hpp) by column name.
#include <cmath>

#include <fmt/format.h>

#include "core/problem_axes.hpp"
#include "report/cells.hpp"
#include "report/extra_columns.hpp"
#include "report/printers.hpp"

namespace ab {

namespace {

// The columns between the problem's and the extra ones, in order.
const char* const kReportCsvColumns[] = {
    "strategy",          "status",           "reason",         "median_ms",   "mean_ms",     "min_ms",
    "max_ms",            "stdev_ms",         "noise",          "samples",     "tflops",      "gbps",
    "copy_fraction",     "vs_best",          "fastest",        "fastest_own", "launches_expected",
    "launches_measured", "launches_match",   "rel_l2_err",     "verify_passed", "timer",     "stop_reason",
    "noise_met",         "rounds",           "round_spread",   "sm_clock_mhz", "clock_low",  "device",
    "device_index"};

std::string report_csv_bool(bool b) { return b ? "true" : "false"; }
std::string report_csv_tri(int v) { return v < 0 ? "" : report_csv_bool(v == 1); }
std::string report_csv_count(std::int64_t v) { return v >= 0 ? std::to_string(v) : std::string(); }

}  // namespace

void CsvPrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  (void)groups;
  std::vector<std::string> columns = problem_csv_columns();
  columns.insert(columns.end(), std::begin(kReportCsvColumns), std::end(kReportCsvColumns));
  for (const std::string& c : extra_column_names()) columns.push_back(c);
  csv_ = std::make_unique<CsvWriter>(std::move(columns));
  report_ = &report;
}

void CsvPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  std::vector<CsvWriter::Cell> cells;
  std::vector<std::string> problem_columns = problem_csv_columns(), problem_cells = problem_csv_cells(group.problem);
  for (std::size_t i = 0; i < problem_columns.size(); ++i) cells.push_back({problem_columns[i], problem_cells[i]});
  const std::optional<RowTiming>& timing = r.row->timing;
  Stats t;  // no time: every cell empty
  t.median = t.mean = t.min = t.max = t.stdev = t.noise = NAN;
  if (timing) t = timing->time_ms;
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  bool fastest_own = group.fastest_own >= 0 ? &r == &group.rows[group.fastest_own] : fastest && !r.peer;
  bool launches_known = r.launches_expected >= 0 && r.launches_measured >= 0;
  std::vector<CsvWriter::Cell> named = {
      {"strategy", r.strategy},
      {"status", r.status},
      {"reason", r.reason},
      {"median_ms", csv_num(t.median)},
      {"mean_ms", csv_num(t.mean)},
      {"min_ms", csv_num(t.min)},
      {"max_ms", csv_num(t.max)},
      {"stdev_ms", csv_num(t.stdev)},
      {"noise", csv_num(t.noise)},
      {"samples", report_csv_count(r.samples)},
      {"tflops", csv_num(r.tflops)},
      {"gbps", csv_num(r.gbps)},
      {"copy_fraction", csv_num(r.copy_fraction)},
      {"vs_best", r.timed() ? csv_num(r.median_ms / group.best_ms()) : std::string()},
      {"fastest", report_csv_bool(fastest)},
      {"fastest_own", report_csv_bool(fastest_own)},
      {"launches_expected", report_csv_count(r.launches_expected)},
      {"launches_measured", report_csv_count(r.launches_measured)},
      {"launches_match", launches_known ? report_csv_bool(!r.launches_mismatch) : std::string()},
      {"rel_l2_err", csv_num(r.rel_err)},
      {"verify_passed", report_csv_tri(r.verify_passed)},
      {"timer", timing ? timing->timer : ""},
      {"stop_reason", timing ? timing->stop_reason : ""},
      {"noise_met", report_csv_tri(r.noise_met)},
      {"rounds", std::to_string(r.rounds)},
      {"round_spread", csv_num(r.round_spread)},
      {"sm_clock_mhz", r.sm_clock_mhz > 0 ? std::to_string(r.sm_clock_mhz) : std::string()},
      {"clock_low", report_csv_bool(r.clock_low)},
      {"device", row_device_name(*report_, *r.row)},
      {"device_index", report_csv_count(r.row->device)}};
  cells.insert(cells.end(), named.begin(), named.end());
  std::vector<std::string> extra_names = extra_column_names(), extra_cells = extra_column_cells(*r.row);
  for (std::size_t i = 0; i < extra_names.size(); ++i) cells.push_back({extra_names[i], extra_cells[i]});
  csv_->add_row(cells);
}

void CsvPrinter::do_end() { out_ = csv_->text(); }

}  // namespace ab
