// The markdown printer: a heading with the device, the run's settings, and one GitHub table (fastest in bold).
#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/printers.hpp"

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
  out_ += "\n| problem | strategy | status | median ms | noise | vs best | TFLOP/s | GB/s | %copy | launches | rel-err |\n";
  out_ += "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
}

void MarkdownPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  bool first = &r == &group.rows.front();
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  bool fastest_own = group.fastest_own >= 0 && &r == &group.rows[group.fastest_own];
  auto bold = [&](const std::string& s) { return fastest ? "**" + s + "**" : fastest_own ? "*" + s + "*" : s; };
  std::string status = r.ok() ? "ok" : r.status + ": " + md_escape(cell_reason(r));
  std::string label = first ? "**" + md_escape(group.label) + "**" : "";
  if (r.timed()) {
    out_ += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", label, bold(md_escape(r.strategy)),
                        status, bold(cell_median(r)), cell_noise(r),
                        bold(cell_ratio(r.median_ms / group.best_ms())), cell_rate(r.tflops), cell_rate(r.gbps),
                        cell_pct(r.copy_fraction), cell_launches(r), cell_rel_err(r));
  } else {
    out_ += fmt::format("| {} | {} | {} | - | - | - | - | - | - | {} | {} |\n", label, md_escape(r.strategy), status,
                        cell_launches(r), cell_rel_err(r));
  }
}

void MarkdownPrinter::do_end() {
  out_ += "\n**Bold**: fastest ok row of its problem; *italic*: fastest attnbench strategy when a peer is faster. "
          "*vs best* = median / fastest median; *%copy* = GB/s / the device's measured copy bandwidth; *noise* = stdev / mean (~ above its target); @ SM clock below 80% of its maximum; "
          "*launches* = measured/expected kernels per forward (! mismatch, ^ extra split-K reductions, ? not measured); *rel-err* = relative "
          "L2 error against the reference (! failed).\n";
  for (const std::string& w : warnings_) out_ += "\n> warning: " + md_escape(w) + "\n";
}

}  // namespace ab
