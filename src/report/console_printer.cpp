// The console printer: an aligned fmt table, one block per problem, '*' on the fastest ok row.
#include <algorithm>

#include <fmt/format.h>

#include "core/text_table.hpp"
#include "report/cells.hpp"
#include "report/printers.hpp"

namespace ab {

// Widths of the numeric columns, right-aligned: median ms, noise, vs best, TFLOP/s, GB/s, launches (at least;
// widened to the longest cell), rel-err, %copy.
static constexpr int kW[] = {10, 7, 8, 8, 8, 9, 9, 7};
static constexpr int kStatusW = 11;

void ConsolePrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  label_width_ = std::string("problem").size();
  strategy_width_ = std::string("strategy").size();
  launches_width_ = kW[5];
  for (const ProblemGroup& g : groups) {
    label_width_ = std::max(label_width_, g.label.size());
    for (const RowView& r : g.rows) {
      strategy_width_ = std::max(strategy_width_, r.strategy.size());
      launches_width_ = std::max(launches_width_, cell_launches(r).size() + 1);
      any_peer_ = any_peer_ || r.peer;
    }
  }
  strategy_width_ += 2;  // the "* " mark
  warnings_ = report.warnings;

  out_ += fmt::format("{} | {}\n", device_line(report.device), tool_line(report.tool, report.created));
  device_column_ = !devices_line(report).empty();
  if (device_column_) out_ += devices_line(report) + "; dev = the device that ran the row\n";
  std::string settings = settings_line(report.settings, report.device);
  if (!settings.empty()) out_ += settings + "\n";
  auto fixed = [](const char* head, Align a, std::size_t w, std::size_t gap = 1) {
    return TableColumn{head, a, w, false, gap};
  };
  std::vector<TableColumn> columns = {fixed("problem", Align::left, label_width_, 0),
                                      fixed("strategy", Align::left, strategy_width_, 2)};
  if (device_column_) columns.push_back(fixed("dev", Align::right, 3));
  for (TableColumn c : {
      fixed("status", Align::left, kStatusW), fixed("median ms", Align::right, kW[0]),
      fixed("noise", Align::right, kW[1]), fixed("vs best", Align::right, kW[2]),
      fixed("TFLOP/s", Align::right, kW[3]), fixed("GB/s", Align::right, kW[4]),
      fixed("%copy", Align::right, kW[7]),
      fixed("launches", Align::right, launches_width_), fixed("rel-err", Align::right, kW[6])})
    columns.push_back(c);
  table_ = std::make_unique<TextTable>(std::move(columns));
  first_group_ = true;
}

void ConsolePrinter::do_group(const ProblemGroup& group) {
  (void)group;
  if (!first_group_) table_->add_break();
  first_group_ = false;
}

void ConsolePrinter::do_row(const ProblemGroup& group, const RowView& r) {
  bool first = &r == &group.rows.front();
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  bool fastest_own = group.fastest_own >= 0 && &r == &group.rows[group.fastest_own];
  std::string strategy = std::string(fastest ? "* " : fastest_own ? "+ " : "  ") + r.strategy;
  std::vector<std::string> cells = {first ? group.label : "", strategy};
  if (device_column_) cells.push_back(r.row->device >= 0 ? std::to_string(r.row->device) : "");
  cells.push_back(r.status);
  if (r.ok() && !r.timed()) {  // ran but was not timed (--profile): its launches and check, no times
    for (std::string cell : {"-", "-", "-", "-", "-", "-"}) cells.push_back(std::move(cell));
    cells.push_back(cell_launches(r));
    cells.push_back(cell_rel_err(r));
    table_->add_row(std::move(cells));
    return;
  }
  if (!r.timed()) {
    table_->add_row(std::move(cells), cell_reason(r));
    return;
  }
  for (std::string cell : {cell_median(r), cell_noise(r), cell_ratio(r.median_ms / group.best_ms()), cell_rate(r.tflops),
                           cell_rate(r.gbps), cell_pct(r.copy_fraction), cell_launches(r), cell_rel_err(r)})
    cells.push_back(std::move(cell));
  table_->add_row(std::move(cells));
}

void ConsolePrinter::do_end() {
  out_ += table_->render();
  out_ += fmt::format(
      "\n* fastest ok row of its problem; vs best = median / fastest median; noise = stdev / mean (~ above its target:\n"
      "  a time or sample limit stopped it); @ the SM clock was below 80% of its maximum;\n"
      "  GB/s = problem bytes (Q, O, K/V of the KV heads) / median; %copy = GB/s / the device's measured copy bandwidth;\n"
      "  launches = measured/expected kernels per forward (! mismatch, ^ extra split-K reductions, ? not measured); rel-err = verify rel L2 "
      "error (! failed){}\n",
      any_peer_ ? ";\n  peer:* rows are PyTorch SDPA timed by scripts/peer_torch.py; + fastest attnbench strategy when a "
                  "peer is faster"
                : "");
  if (show_warnings_)
    for (const std::string& w : warnings_) out_ += "warning: " + w + "\n";
}

}  // namespace ab
