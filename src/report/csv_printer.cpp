// The CSV printer: one line per result with every problem field, time statistic and check in its own column.
#include <cmath>

#include <fmt/format.h>

#include "core/problem_axes.hpp"
#include "report/cells.hpp"
#include "report/extra_columns.hpp"
#include "report/printers.hpp"

namespace ab {

void CsvPrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  (void)report;
  (void)groups;
  for (const std::string& c : problem_csv_columns()) out_ += c + ",";
  out_ += "strategy,status,reason,"
          "median_ms,mean_ms,min_ms,max_ms,stdev_ms,noise,samples,tflops,gbps,copy_fraction,vs_best,fastest,fastest_own,"
          "launches_expected,launches_measured,launches_match,rel_l2_err,verify_passed,timer,stop_reason,"
          "noise_met,rounds,round_spread,sm_clock_mhz,clock_low,device,device_index";
  for (const std::string& c : extra_column_names()) out_ += "," + c;
  out_ += "\n";
  report_ = &report;
}

void CsvPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  std::string line;
  for (const std::string& cell : problem_csv_cells(group.problem)) line += csv_field(cell) + ",";
  line += csv_field(r.strategy) + "," + csv_field(r.status) + "," + csv_field(r.reason) + ",";
  const std::optional<RowTiming>& timing = r.row->timing;
  Stats t;  // no time: every cell empty
  t.median = t.mean = t.min = t.max = t.stdev = t.noise = NAN;
  if (timing) t = timing->time_ms;
  for (double x : {t.median, t.mean, t.min, t.max, t.stdev, t.noise}) line += csv_num(x) + ",";
  line += (r.samples >= 0 ? std::to_string(r.samples) : std::string()) + ",";
  line += csv_num(r.tflops) + "," + csv_num(r.gbps) + "," + csv_num(r.copy_fraction) + ",";
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  line += (r.timed() ? csv_num(r.median_ms / group.best_ms()) : std::string()) + ",";
  bool fastest_own = group.fastest_own >= 0 ? &r == &group.rows[group.fastest_own] : fastest && !r.peer;
  line += std::string(fastest ? "true" : "false") + "," + (fastest_own ? "true" : "false") + ",";
  line += (r.launches_expected >= 0 ? std::to_string(r.launches_expected) : std::string()) + ",";
  line += (r.launches_measured >= 0 ? std::to_string(r.launches_measured) : std::string()) + ",";
  line += std::string(r.launches_expected >= 0 && r.launches_measured >= 0 ? (r.launches_mismatch ? "false" : "true")
                                                                           : "") + ",";
  line += csv_num(r.rel_err) + ",";
  line += std::string(r.verify_passed < 0 ? "" : (r.verify_passed ? "true" : "false")) + ",";
  line += csv_field(timing ? timing->timer : "") + "," + csv_field(timing ? timing->stop_reason : "") + ",";
  line += std::string(r.noise_met < 0 ? "" : (r.noise_met ? "true" : "false")) + ",";
  line += std::to_string(r.rounds) + "," + csv_num(r.round_spread) + ",";
  line += (r.sm_clock_mhz > 0 ? std::to_string(r.sm_clock_mhz) : std::string()) + ",";
  line += std::string(r.clock_low ? "true" : "false") + ",";
  line += csv_field(row_device_name(*report_, *r.row)) + ",";
  line += (r.row->device >= 0 ? std::to_string(r.row->device) : std::string());
  for (const std::string& cell : extra_column_cells(*r.row)) line += "," + csv_field(cell);
  line += "\n";
  out_ += line;
}

}  // namespace ab
