// The Printer driver (hooks in order) and the format dispatch: make_printer, render_report, print_console_table.
#include <fmt/format.h>

#include "core/errors.hpp"
#include "report/printers.hpp"

namespace ab {

std::string Printer::print(const Report& report) {
  out_.clear();
  std::vector<ProblemGroup> groups = group_rows(report);
  do_begin(report, groups);
  for (const ProblemGroup& g : groups) {
    do_group(g);
    for (const RowView& r : g.rows) do_row(g, r);
  }
  do_end();
  return std::move(out_);
}

std::unique_ptr<Printer> make_printer(const std::string& format) {
  if (format == "console") return std::make_unique<ConsolePrinter>();
  if (format == "md" || format == "markdown") return std::make_unique<MarkdownPrinter>();
  if (format == "csv") return std::make_unique<CsvPrinter>();
  throw UsageError(fmt::format("--format: '{}' is not one of console, md, csv", format));
}

std::string render_report(const Report& report, const std::string& format) {
  if (format == "json") return report_flat_json(report).dump(2) + "\n";
  return make_printer(format)->print(report);
}

void print_console_table(const Report& report, std::FILE* out) {
  ConsolePrinter p(/*show_warnings=*/false);
  std::string s = p.print(report);
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

}  // namespace ab
