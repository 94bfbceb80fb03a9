// Human-readable renderings of a typed report (run/run_report.hpp): an nvbench-style Printer base class with
// do_* hooks and three printers (console table, markdown, CSV), plus two free entry points.
#pragma once
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/csv.hpp"
#include "core/text_table.hpp"
#include "report/report_view.hpp"

namespace ab {

struct ResultColumn;  // report/result_columns.hpp: the one table of a row's columns, which every printer loops over

// Drives a report through the hooks: do_begin once (with every group, for column widths), do_group once per problem (rows grouped by problem in
// first-seen order), do_row once per row of that group, do_end once. Output is appended to a string.
class Printer {
 public:
  virtual ~Printer() = default;
  std::string print(const Report& report);

 protected:
  virtual void do_begin(const Report& report, const std::vector<ProblemGroup>& groups) = 0;
  virtual void do_group(const ProblemGroup& group) { (void)group; }
  virtual void do_row(const ProblemGroup& group, const RowView& row) = 0;
  virtual void do_end() = 0;
  std::string out_;
};

// Aligned fixed-width table for a terminal (fmt). One block per problem; '*' marks the fastest ok row.
class ConsolePrinter : public Printer {
 public:
  // `show_warnings`: list the report's warnings under the table (off when the run already printed them).
  explicit ConsolePrinter(bool show_warnings = true) : show_warnings_(show_warnings) {}

 protected:
  void do_begin(const Report& report, const std::vector<ProblemGroup>& groups) override;
  void do_group(const ProblemGroup& group) override;
  void do_row(const ProblemGroup& group, const RowView& row) override;
  void do_end() override;

 private:
  std::size_t label_width_ = 0, strategy_width_ = 0;
  const Report* report_ = nullptr;
  std::vector<const ResultColumn*> columns_;  // the table's columns after status (table_columns())
  std::unique_ptr<TextTable> table_;  // filled by do_group / do_row, printed by do_end
  std::vector<std::string> warnings_;
  bool show_warnings_ = true, first_group_ = true, any_peer_ = false;
  bool device_column_ = false;  // rows from several devices (--devices): a dev column after strategy
};

// GitHub-flavoured markdown, for a PR or a wiki: a header with the device and one table.
class MarkdownPrinter : public Printer {
 protected:
  void do_begin(const Report& report, const std::vector<ProblemGroup>& groups) override;
  void do_row(const ProblemGroup& group, const RowView& row) override;
  void do_end() override;

 private:
  std::vector<std::string> warnings_;
  const Report* report_ = nullptr;
  std::vector<const ResultColumn*> columns_;  // the table's columns after status (table_columns())
};

// RFC 4180 CSV (core/csv.hpp): a header line, then one line per row with every problem field in its own column
// and every CSV column of the result column table.
class CsvPrinter : public Printer {
 protected:
  void do_begin(const Report& report, const std::vector<ProblemGroup>& groups) override;
  void do_row(const ProblemGroup& group, const RowView& row) override;
  void do_end() override;

 private:
  const Report* report_ = nullptr;
  std::unique_ptr<CsvWriter> csv_;  // the header from do_begin, a line per do_row
};

// Makes the printer for "console", "md" (or "markdown") or "csv"; throws UsageError for anything else.
std::unique_ptr<Printer> make_printer(const std::string& format);
// The flat rows of `report --json` (docs/report-format.md): one object per row in group order, with the
// problem and every column of the result column table.
nlohmann::json report_flat_json(const Report& report);
// Renders `report` in `format` (console | md | csv | json); throws UsageError for an unknown format.
std::string render_report(const Report& report, const std::string& format);
// The console table, written to `out` (what `attnbench run` prints after a run).
void print_console_table(const Report& report, std::FILE* out);

}  // namespace ab
