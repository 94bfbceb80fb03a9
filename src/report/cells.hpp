// Cell text shared by the printers and compare: times, percentages, rates, launch counts, errors ("-" when
// a value is missing), plus markdown escaping; CSV fields are escaped by core/csv.hpp's csv_field.
#pragma once
#include <string>

#include "core/csv.hpp"
#include "report/report_view.hpp"

namespace ab {

std::string cell_ms(double ms);            // "0.0861", "12.345", "1234.5"
std::string cell_pct(double fraction);     // 0.013 -> "1.3%", 0.0004 -> "0.04%"
std::string cell_signed_pct(double frac);  // 0.071 -> "+7.1%", -0.2 -> "-20.0%"
std::string cell_rate(double v);           // TFLOP/s or GB/s: "299.2", "12.40"
std::string cell_ratio(double r);          // "1.00x", "3.61x"
std::string cell_launches(const RowView& r);  // measured/expected: "4/4", "5/4!" (mismatch), "?/4"; "1" (no contract)
std::string cell_rel_err(const RowView& r);
// The noise column of a report row: "1.2%", with "~" when a time or sample limit ended it above its target.
std::string cell_noise(const RowView& r);
// The median column: cell_ms, with "@" when the row's SM clock was low (RowView::clock_low).
std::string cell_median(const RowView& r);   // "9.1e-04", "3.1e-01!" (failed verification), "-"
// What a non-ok row shows instead of numbers: the reason, plus the verification error when present.
std::string cell_reason(const RowView& r);
std::string md_escape(const std::string& s);   // escapes '|' and newlines for a table cell
std::string csv_num(double v);                 // full precision, empty when missing

}  // namespace ab
