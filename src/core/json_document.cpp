// Atomic JSON writes and schema-tag-checked reads.
#include "core/json_document.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/file_writer.hpp"
#include "core/json_file.hpp"

namespace ab {

void write_json_atomic(const std::string& path, const nlohmann::json& doc) {
  // Serialise first (invalid UTF-8, e.g. in a recorded command line, is replaced, never thrown), so
  // that nothing is created when serialising fails.
  write_file_atomic(path, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

nlohmann::json read_json_document(const std::string& path, const std::string& schema) {
  nlohmann::json j = read_json_file(path);
  check_schema_tag(j, schema, fmt::format("'{}'", path));
  return j;
}

void check_schema_tag(const nlohmann::json& j, const std::string& schema, const std::string& origin) {
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string())
    throw UsageError(fmt::format("{}: not an attnbench document (no schema tag)", origin));
  if (j["schema"] != schema)
    throw UsageError(fmt::format("{}: schema is '{}', expected '{}'", origin, j["schema"].get<std::string>(), schema));
}

}  // namespace ab
