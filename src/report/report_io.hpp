// Reading and writing attnbench's JSON documents: atomic writes (core/file_writer.hpp) and reads that
// check the schema tag.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/file_writer.hpp"  // check_writable

namespace ab {

inline constexpr const char* kReportSchema = "attnbench.report/1";
inline constexpr const char* kCacheSchema = "attnbench.cache/1";

// Writes through core/file_writer.hpp (private temporary file, fsync, rename; pipes and devices in place).
// Throws UsageError when it cannot; the target is untouched on any failure.
void write_json_atomic(const std::string& path, const nlohmann::json& doc);
// Reads a JSON document (core/json_file.hpp: bounded depth and size, strict) and checks doc["schema"] ==
// schema, and a report's field types (report_check.hpp); throws UsageError naming the file and problem.
nlohmann::json read_json_document(const std::string& path, const std::string& schema);
// The checks read_json_document makes after parsing, on a document from elsewhere; `origin` names it.
void check_json_document(const nlohmann::json& doc, const std::string& schema, const std::string& origin);

}  // namespace ab
