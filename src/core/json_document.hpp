// attnbench's JSON documents (reports, caches) at the file edge: one atomic writer (through
// core/file_writer.hpp) and one reader that checks the document's schema tag. Document-specific field
// checks (report/report_io.hpp for reports) run on top of these.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

// Serialises `doc` (two-space indent, invalid UTF-8 replaced) and writes it with write_file_atomic (private
// temporary file, fsync, rename; pipes and devices in place). Throws UsageError when it cannot; the target
// is untouched on any failure.
void write_json_atomic(const std::string& path, const nlohmann::json& doc);
// Reads a JSON document (core/json_file.hpp: bounded depth and size, strict) and checks its schema tag;
// throws UsageError naming the file and the problem.
nlohmann::json read_json_document(const std::string& path, const std::string& schema);
// The schema-tag check alone, on a document from elsewhere; `origin` names it ("'PATH'").
// Throws "ORIGIN: not an attnbench document (no schema tag)" or "ORIGIN: schema is 'X', expected 'Y'".
void check_schema_tag(const nlohmann::json& doc, const std::string& schema, const std::string& origin);

}  // namespace ab
