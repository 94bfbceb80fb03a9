// The one table of a result row's columns (the problem's own columns come from the axis table,
// core/problem_axes.hpp): each column's name (the CSV header and the flat JSON key), its hint (how a person
// reads it) and its getter (the typed value), plus, for the columns the console and markdown tables show,
// the heading and how a cell is shown there. The CSV, flat JSON, console and markdown printers all loop over
// it, so a column is declared once and every format writes the same value under the same name.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report_view.hpp"

namespace ab {

// A cell's value: missing (CSV "", JSON null), text, true/false, a whole number, or a finite number.
using CellValue = std::variant<std::monostate, std::string, bool, std::int64_t, double>;

// What a column's values are, for a person: text, a flag, a count, a time in ms, a fraction (shown as a
// percentage), a rate (TFLOP/s, GB/s), a ratio, an error (a small number in e-notation).
enum class ColumnHint { text, flag, count, ms, fraction, rate, ratio, error };

// The row a getter reads: its report, its problem group and its view.
struct ColumnRow {
  const Report& report;
  const ProblemGroup& group;
  const RowView& row;
  bool fastest() const;      // the fastest timed row of its problem
  // The fastest attnbench (non-peer) row: the fastest row unless a peer is faster, then the fastest own row.
  bool fastest_own() const;
};

// How the console and markdown tables show a column (a column without a heading is not in them).
struct TableCell {
  const char* heading = nullptr;                       // "median ms"; nullptr: not in the tables
  int place = 0;                                       // its place among the table's columns, from 1
  std::string (*shown)(const ColumnRow&) = nullptr;    // the cell ("0.0699@", "4/4!")
  std::size_t width = 0;                               // console: right-aligned in at least this many characters
  bool grows = false;                                  // console: widened to its longest cell + 1
  bool timed = true;                                   // "-" on a row without a time (else shown on every row that ran)
  bool emphasised = false;                             // markdown: bold on the fastest row, italic on the fastest own
  bool left = false;                                   // console: left-aligned (text) instead of right-aligned
};

struct ResultColumn {
  const char* name;                       // CSV header, flat JSON key
  ColumnHint hint;
  CellValue (*get)(const ColumnRow&);
  bool in_csv = true;                     // false: flat JSON only (the row's index, label and keys)
  TableCell table = {};
};

// Every column in CSV order (after the problem's columns); the flat JSON rows carry every one.
const std::vector<ResultColumn>& result_columns();
// The columns the console and markdown tables show, in their table order.
std::vector<const ResultColumn*> table_columns();

// A value as a CSV field (unescaped): "" missing, "true"/"false", integers in decimal, numbers at full precision.
std::string csv_value(const CellValue& v);
// A value as JSON: null, a string, a boolean, an integer or a number.
nlohmann::json json_value(const CellValue& v);
// A column's cell in the console and markdown tables: "-" for a timed column on a row without a time, else
// its `shown` text, else its value formatted by its hint (report/cells.hpp; "-" when missing).
std::string table_cell(const ResultColumn& column, const ColumnRow& r);

}  // namespace ab
