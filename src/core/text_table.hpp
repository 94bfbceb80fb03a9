// The one renderer of the aligned text tables attnbench prints (the run/report console table, the compare
// table, the tune summaries): columns with a header, an alignment, a width and the gap before them; a
// header line, a rule of dashes, rows (blank lines between groups). Cells are padded with fmt (so a
// multi-byte cell such as "±1.2%" pads by its display width, as before) and lines lose trailing spaces.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace ab {

enum class Align { left, right };

struct TableColumn {
  std::string header;
  Align align = Align::left;
  std::size_t width = 0;  // the column's width (0 with fit = false: no padding)
  bool fit = true;        // widen to the header and the longest cell (their sizes in bytes)
  std::size_t gap = 1;    // spaces before the column (ignored for the first)
};

class TextTable {
 public:
  explicit TextTable(std::vector<TableColumn> columns) : cols_(std::move(columns)) {}
  // A row of at most one cell per column; `tail`, when not empty, follows the last cell given (after the
  // next column's gap) unpadded, e.g. a reason in place of the numbers.
  void add_row(std::vector<std::string> cells, std::string tail = "");
  // An empty line between groups of rows.
  void add_break();
  // The rule is the header line's length plus this many dashes.
  void set_rule_extra(std::size_t n) { rule_extra_ = n; }

  // The header line, the rule and the rows, each ending in '\n'.
  std::string render() const;
  std::string header_line() const;  // without '\n'
  std::string rule_line() const;    // without '\n'
  std::string body() const;         // the rows (and breaks), each ending in '\n'

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string tail;
    bool is_break = false;
  };
  std::vector<std::size_t> widths() const;
  std::string line(const std::vector<std::string>& cells, const std::string& tail,
                   const std::vector<std::size_t>& w) const;
  std::vector<TableColumn> cols_;
  std::vector<Row> rows_;
  std::size_t rule_extra_ = 0;
};

}  // namespace ab
