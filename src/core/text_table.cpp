// Aligned text tables.
#include "core/text_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace ab {

void TextTable::add_row(std::vector<std::string> cells, std::string tail) {
  rows_.push_back(Row{std::move(cells), std::move(tail), false});
}

void TextTable::add_break() { rows_.push_back(Row{{}, "", true}); }

std::vector<std::size_t> TextTable::widths() const {
  std::vector<std::size_t> w;
  for (std::size_t c = 0; c < cols_.size(); ++c) {
    std::size_t width = cols_[c].width;
    if (cols_[c].fit) {
      width = std::max(width, cols_[c].header.size());
      for (const Row& r : rows_)
        if (c < r.cells.size()) width = std::max(width, r.cells[c].size());
    }
    w.push_back(width);
  }
  return w;
}

std::string TextTable::line(const std::vector<std::string>& cells, const std::string& tail,
                            const std::vector<std::size_t>& w) const {
  std::string s;
  std::size_t c = 0;
  for (; c < cells.size() && c < cols_.size(); ++c) {
    if (c) s += std::string(cols_[c].gap, ' ');
    if (w[c] == 0) s += cells[c];
    else if (cols_[c].align == Align::left) s += fmt::format("{:<{}}", cells[c], w[c]);
    else s += fmt::format("{:>{}}", cells[c], w[c]);
  }
  if (!tail.empty()) s += std::string(c < cols_.size() ? cols_[c].gap : 1, ' ') + tail;
  while (!s.empty() && s.back() == ' ') s.pop_back();  // padding's trailing spaces are noise in logs and diffs
  return s;
}

std::string TextTable::header_line() const {
  std::vector<std::string> heads;
  for (const TableColumn& c : cols_) heads.push_back(c.header);
  return line(heads, "", widths());
}

std::string TextTable::rule_line() const { return std::string(header_line().size() + rule_extra_, '-'); }

std::string TextTable::body() const {
  std::vector<std::size_t> w = widths();
  std::string out;
  for (const Row& r : rows_) out += (r.is_break ? "" : line(r.cells, r.tail, w)) + "\n";
  return out;
}

std::string TextTable::render() const { return header_line() + "\n" + rule_line() + "\n" + body(); }

}  // namespace ab
