// The CSV field escaper and table writer (core/csv.hpp).
#include "core/csv.hpp"

#include <stdexcept>

namespace ab {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

CsvWriter::CsvWriter(std::vector<std::string> columns) : columns_(std::move(columns)) {
  for (std::size_t i = 0; i < columns_.size(); ++i)
    if (!index_.emplace(columns_[i], i).second) throw std::logic_error("csv: column '" + columns_[i] + "' twice");
  append_line(columns_);
}

void CsvWriter::add_row(const std::vector<Cell>& cells) {
  std::vector<std::string> line(columns_.size());
  std::vector<bool> given(columns_.size(), false);
  for (const Cell& c : cells) {
    auto it = index_.find(c.first);
    if (it == index_.end()) throw std::logic_error("csv: no column '" + c.first + "'");
    if (given[it->second]) throw std::logic_error("csv: column '" + c.first + "' given twice in a row");
    given[it->second] = true;
    line[it->second] = c.second;
  }
  append_line(line);
}

void CsvWriter::add_ordered_row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_.size())
    throw std::logic_error("csv: a row of " + std::to_string(cells.size()) + " cells for " +
                           std::to_string(columns_.size()) + " columns");
  append_line(cells);
}

void CsvWriter::append_line(const std::vector<std::string>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) text_ += (i ? "," : "") + csv_field(cells[i]);
  text_ += "\n";
}

}  // namespace ab
