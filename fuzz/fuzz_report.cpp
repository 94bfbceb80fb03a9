// libFuzzer target: the report reader (bounded JSON, schema and field-type checks) and everything that
// reads a report afterwards: grouping, the console/markdown/CSV printers and compare against itself.
// Any exception other than UsageError, and any sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "report/compare.hpp"
#include "report/printers.hpp"
#include "report/report_io.hpp"
#include "report/report_view.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ab::Report report;
  try {
    report = ab::report_from_json(ab::parse_json_text(text, "fuzz"), "fuzz");
  } catch (const ab::UsageError&) {
    return 0;  // refused at read: the readers below never see it
  }
  try {
    ab::group_rows(report);
    for (const char* format : {"console", "md", "csv", "json"}) ab::render_report(report, format);
    ab::CompareOptions opt;
    ab::CompareResult r = ab::compare_reports(report, report, opt, "a", "b");
    for (const char* format : {"console", "md", "csv", "json"}) ab::render_compare(r, format);
  } catch (const ab::UsageError&) {
  }
  return 0;
}
