// Reading and writing attnbench's JSON documents: atomic writes (temporary file, then rename) and reads
// that check the schema tag.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

inline constexpr const char* kReportSchema = "attnbench.report/1";
inline constexpr const char* kCacheSchema = "attnbench.cache/1";

// Throws UsageError when the directory is not writable; the target is untouched on any failure.
void write_json_atomic(const std::string& path, const nlohmann::json& doc);
// Checks up front that `path` can be created (so a run fails before doing work); throws UsageError.
void check_writable(const std::string& path);
// Reads a JSON document (core/json_file.hpp: bounded depth and size, strict) and checks doc["schema"] ==
// schema, and a report's field types (report_check.hpp); throws UsageError naming the file and problem.
nlohmann::json read_json_document(const std::string& path, const std::string& schema);

}  // namespace ab
