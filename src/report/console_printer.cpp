// The console printer: an aligned fmt table, one block per problem, '*' on the fastest ok row.
#include <algorithm>

#include <fmt/format.h>

#include "core/text_table.hpp"
#include "report/cells.hpp"
#include "report/printers.hpp"
#include "report/result_columns.hpp"

namespace ab {

static constexpr int kStatusW = 11;

void ConsolePrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  columns_ = table_columns();
  label_width_ = std::string("problem").size();
  strategy_width_ = std::string("strategy").size();
  std::vector<std::size_t> widths;
  for (const ResultColumn* c : columns_) widths.push_back(c->table.width);
  for (const ProblemGroup& g : groups) {
    label_width_ = std::max(label_width_, g.label.size());
    for (const RowView& r : g.rows) {
      strategy_width_ = std::max(strategy_width_, r.strategy.size());
      any_peer_ = any_peer_ || r.peer;
      for (std::size_t i = 0; i < columns_.size(); ++i)
        if (columns_[i]->table.grows) widths[i] = std::max(widths[i], table_cell(*columns_[i], ColumnRow{report, g, r}).size() + 1);
    }
  }
  strategy_width_ += 2;  // the "* " mark
  warnings_ = report.warnings;
  report_ = &report;

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
  columns.push_back(fixed("status", Align::left, kStatusW));
  for (std::size_t i = 0; i < columns_.size(); ++i)
    columns.push_back(fixed(columns_[i]->table.heading, columns_[i]->table.left ? Align::left : Align::right, widths[i],
                            columns_[i]->table.left ? 2 : 1));
  table_ = std::make_unique<TextTable>(std::move(columns));
  first_group_ = true;
}

void ConsolePrinter::do_group(const ProblemGroup& group) {
  (void)group;
  if (!first_group_) table_->add_break();
  first_group_ = false;
}

void ConsolePrinter::do_row(const ProblemGroup& group, const RowView& r) {
  const ColumnRow row{*report_, group, r};
  const bool first = &r == &group.rows.front();
  const bool marked_own = group.fastest_own >= 0 && row.fastest_own();  // a peer is faster
  std::string strategy = std::string(row.fastest() ? "* " : marked_own ? "+ " : "  ") + r.strategy;
  std::vector<std::string> cells = {first ? group.label : "", strategy};
  if (device_column_) cells.push_back(r.row->device >= 0 ? std::to_string(r.row->device) : "");
  cells.push_back(r.status);
  if (!r.ok()) {  // the reason in place of the numbers
    table_->add_row(std::move(cells), cell_reason(r));
    return;
  }
  for (const ResultColumn* c : columns_) cells.push_back(table_cell(*c, row));  // untimed (--profile): "-" but launches, check
  table_->add_row(std::move(cells));
}

void ConsolePrinter::do_end() {
  out_ += table_->render();
  out_ += fmt::format(
      "\n* fastest ok row of its problem; vs best = median / fastest median; noise = stdev / mean (~ above its target:\n"
      "  a time or sample limit stopped it); @ the SM clock was below 80% of its maximum;\n"
      "  GB/s = problem bytes (Q, O, K/V of the KV heads) / median; %copy = GB/s / the device's measured copy bandwidth;\n"
      "  launches = measured/expected kernels per forward (! mismatch, ^ extra split-K reductions, ? not measured); rel-err = verify rel L2 "
      "error (! failed);\n  tile = the fused tile that ran (a decode tile's -sN: its KV splits){}\n",
      any_peer_ ? ";\n  peer:* rows are other libraries' attention: in-process peers (--peers) or PyTorch SDPA timed by "
                  "scripts/peer_torch.py;\n  + fastest attnbench strategy when a peer is faster"
                : "");
  if (show_warnings_)
    for (const std::string& w : warnings_) out_ += "warning: " + w + "\n";
}

}  // namespace ab
