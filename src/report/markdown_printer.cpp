// The markdown printer: a heading with the device, the run's settings, and one GitHub table (fastest in bold).
#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/printers.hpp"
#include "report/result_columns.hpp"

namespace ab {

void MarkdownPrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  (void)groups;
  out_ += fmt::format("### attnbench on {}\n\n", md_escape(device_line(report.device)));
  if (!devices_line(report).empty()) out_ += md_escape(devices_line(report)) + "\n\n";
  out_ += md_escape(tool_line(report.tool, report.created));
  std::string settings = settings_line(report.settings, report.device);
  if (!settings.empty()) out_ += "; " + md_escape(settings);
  out_ += "\n";
  if (!report.command.empty()) out_ += fmt::format("\n`{}`\n", report.command);
  warnings_ = report.warnings;
  report_ = &report;
  columns_ = table_columns();
  out_ += "\n| problem | strategy | status |";
  for (const ResultColumn* c : columns_) out_ += fmt::format(" {} |", c->table.heading);
  out_ += "\n|---|---|---|";
  for (const ResultColumn* c : columns_) out_ += c->table.left ? "---|" : "--:|";
  out_ += "\n";
}

void MarkdownPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  const ColumnRow row{*report_, group, r};
  const bool first = &r == &group.rows.front();
  const bool fastest = row.fastest(), marked_own = group.fastest_own >= 0 && row.fastest_own();
  auto emphasis = [&](const std::string& s) { return fastest ? "**" + s + "**" : marked_own ? "*" + s + "*" : s; };
  std::string status = r.ok() ? "ok" : r.status + ": " + md_escape(cell_reason(r));
  std::string label = first ? "**" + md_escape(group.label) + "**" : "";
  out_ += fmt::format("| {} | {} | {} |", label, emphasis(md_escape(r.strategy)), status);
  for (const ResultColumn* c : columns_) {
    std::string cell = table_cell(*c, row);
    out_ += fmt::format(" {} |", c->table.emphasised && r.timed() ? emphasis(cell) : md_escape(cell));
  }
  out_ += "\n";
}

void MarkdownPrinter::do_end() {
  out_ += "\n**Bold**: fastest ok row of its problem; *italic*: fastest attnbench strategy when a peer is faster. "
          "*vs best* = median / fastest median; *%copy* = GB/s / the device's measured copy bandwidth; *noise* = stdev / mean (~ above its target); @ SM clock below 80% of its maximum; "
          "*launches* = measured/expected kernels per forward (! mismatch, ^ extra split-K reductions, ? not measured); *rel-err* = relative "
          "L2 error against the reference (! failed).\n";
  for (const std::string& w : warnings_) out_ += "\n> warning: " + md_escape(w) + "\n";
}

}  // namespace ab
