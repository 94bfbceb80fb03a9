// Reading attnbench.report/1 files: the schema-tag check (core/json_document.hpp), then the typed reader
// (run/run_report.hpp's report_from_json, which also checks every field's type). Writing goes through
// core/json_document.hpp's write_json_atomic.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_document.hpp"  // write_json_atomic, read_json_document, check_schema_tag
#include "run/run_report.hpp"       // kReportSchema, Report, report_from_json

namespace ab {

// The document of a report file, schema tag checked ("'PATH': schema is 'X', expected 'attnbench.report/1'").
nlohmann::json read_report_document(const std::string& path);
// A report file as a typed Report; throws UsageError naming the file and the first bad field.
Report read_report(const std::string& path);

}  // namespace ab
