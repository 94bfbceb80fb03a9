// The CSV printer: one line per result, the problem's columns (the axis table) and then every column of the
// result column table (report/result_columns.hpp), written through the one CSV writer (core/csv.hpp).
#include "core/problem_axes.hpp"
#include "report/printers.hpp"
#include "report/result_columns.hpp"

namespace ab {

void CsvPrinter::do_begin(const Report& report, const std::vector<ProblemGroup>& groups) {
  (void)groups;
  std::vector<std::string> columns = problem_csv_columns();
  for (const ResultColumn& c : result_columns())
    if (c.in_csv) columns.push_back(c.name);
  csv_ = std::make_unique<CsvWriter>(std::move(columns));
  report_ = &report;
}

void CsvPrinter::do_row(const ProblemGroup& group, const RowView& r) {
  std::vector<CsvWriter::Cell> cells;
  std::vector<std::string> problem_columns = problem_csv_columns(), problem_cells = problem_csv_cells(group.problem);
  for (std::size_t i = 0; i < problem_columns.size(); ++i) cells.push_back({problem_columns[i], problem_cells[i]});
  const ColumnRow row{*report_, group, r};
  for (const ResultColumn& c : result_columns())
    if (c.in_csv) cells.push_back({c.name, csv_value(c.get(row))});
  csv_->add_row(cells);
}

void CsvPrinter::do_end() { out_ = csv_->text(); }

}  // namespace ab
