// Reading attnbench.report/1 documents: the schema-tag check (core/json_document.hpp) plus the report's
// field types (report_check.hpp). Writing goes through core/json_document.hpp's write_json_atomic.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_document.hpp"  // write_json_atomic, read_json_document, check_schema_tag
#include "run/run_report.hpp"       // kReportSchema

namespace ab {


// Reads a report: read_json_document(path, kReportSchema), then its field types; throws UsageError naming
// the file and the problem ("'PATH': schema is 'X', expected 'attnbench.report/1'").
nlohmann::json read_report_document(const std::string& path);
// The checks read_report_document makes after parsing, on a document from elsewhere; `origin` names it.
void check_report_document(const nlohmann::json& doc, const std::string& origin);

}  // namespace ab
