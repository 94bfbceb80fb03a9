// The CSV printer: one line per result with every problem field, time statistic and check in its own column.
#include <fmt/format.h>

#include "core/problem_axes.hpp"
#include "report/cells.hpp"
#include "report/printers.hpp"

namespace ab {

void CsvPrinter::do_begin(const nlohmann::json& report, const std::vector<ProblemGroup>& groups) {
  (void)report;
  (void)groups;
  for (const std::string& c : problem_csv_columns()) out_ += c + ",";
  out_ += "strategy,status,reason,"
          "median_ms,mean_ms,min_ms,max_ms,stdev_ms,noise,samples,tflops,gbps,vs_best,fastest,fastest_own,"
          "launches_expected,launches_measured,launches_match,rel_l2_err,max_abs_err,verify_passed,timer,stop_reason,"
          "noise_met,rounds,round_spread,sm_clock_mhz,clock_low,device\n";
  device_ = csv_field(json_str(report.value("device", nlohmann::json::object()), "name"));
}

void CsvPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  const nlohmann::json& p = group.problem;
  std::string line;
  for (const std::string& cell : problem_csv_cells_of_json(p)) line += csv_field(cell) + ",";
  line += csv_field(r.strategy) + "," + csv_field(r.status) + "," + csv_field(r.reason) + ",";
  nlohmann::json t = r.row ? r.row->value("time_ms", nlohmann::json::object()) : nlohmann::json::object();
  for (const char* k : {"median", "mean", "min", "max", "stdev", "noise"}) line += csv_num(json_num(t, k)) + ",";
  line += (r.samples >= 0 ? std::to_string(r.samples) : std::string()) + ",";
  line += csv_num(r.tflops) + "," + csv_num(r.gbps) + ",";
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  line += (r.timed() ? csv_num(r.median_ms / group.best_ms()) : std::string()) + ",";
  bool fastest_own = group.fastest_own >= 0 ? &r == &group.rows[group.fastest_own] : fastest && !r.peer;
  line += std::string(fastest ? "true" : "false") + "," + (fastest_own ? "true" : "false") + ",";
  line += (r.launches_expected >= 0 ? std::to_string(r.launches_expected) : std::string()) + ",";
  line += (r.launches_measured >= 0 ? std::to_string(r.launches_measured) : std::string()) + ",";
  line += std::string(r.launches_expected >= 0 && r.launches_measured >= 0 ? (r.launches_mismatch ? "false" : "true")
                                                                           : "") + ",";
  nlohmann::json v = r.row ? r.row->value("verify", nlohmann::json::object()) : nlohmann::json::object();
  line += csv_num(r.rel_err) + "," + csv_num(json_num(v, "max_abs_err")) + ",";
  line += std::string(r.verify_passed < 0 ? "" : (r.verify_passed ? "true" : "false")) + ",";
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& row = r.row ? *r.row : kEmpty;
  line += csv_field(json_str(row, "timer")) + "," + csv_field(json_str(row, "stop_reason")) + ",";
  line += std::string(r.noise_met < 0 ? "" : (r.noise_met ? "true" : "false")) + ",";
  line += std::to_string(r.rounds) + "," + csv_num(r.round_spread) + ",";
  line += (r.sm_clock_mhz > 0 ? std::to_string(r.sm_clock_mhz) : std::string()) + ",";
  line += std::string(r.clock_low ? "true" : "false") + ",";
  line += device_ + "\n";
  out_ += line;
}

}  // namespace ab
