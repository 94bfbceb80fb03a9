// RFC 4180 CSV: the one field escaper and the one table writer behind every CSV attnbench writes (run and
// report --csv, compare --format=csv, the tune summary's --csv). Lines end in "\n".
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ab {

// A field as RFC 4180 writes it: unchanged, or quoted when it holds a comma, a double quote, CR or LF, with
// every double quote doubled.
std::string csv_field(const std::string& s);

// A CSV text with named columns: the header line from the column names, then one line per row. A row gives
// its cells by column name, in any order; a column it does not name is an empty cell. Naming a column the
// table lacks, or naming one twice, is a programming error (std::logic_error), so the header and every line
// always have the same cells under the same names.
class CsvWriter {
 public:
  using Cell = std::pair<std::string, std::string>;  // {column name, unescaped text}

  explicit CsvWriter(std::vector<std::string> columns);
  // A row by name; absent columns are empty.
  void add_row(const std::vector<Cell>& cells);
  // A row that gives every column, in the table's order (std::logic_error when the count differs).
  void add_ordered_row(const std::vector<std::string>& cells);

  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& text() const { return text_; }  // the header line and the rows so far

 private:
  void append_line(const std::vector<std::string>& cells);
  std::vector<std::string> columns_;
  std::map<std::string, std::size_t> index_;
  std::string text_;
};

}  // namespace ab
