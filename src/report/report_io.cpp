// Atomic JSON writes and schema-checked reads.
#include "report/report_io.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "report/report_check.hpp"

namespace ab {

namespace fs = std::filesystem;

static std::string temp_name(const std::string& path) {
  return fmt::format("{}.tmp.{}", path, static_cast<long>(getpid()));
}

void check_writable(const std::string& path) {
  if (path.empty()) throw UsageError("--json: empty path");
  if (fs::is_directory(path)) throw UsageError(fmt::format("--json: '{}' is a directory", path));
  std::string tmp = temp_name(path);
  {
    std::ofstream f(tmp);
    if (!f) throw UsageError(fmt::format("cannot write '{}': directory missing or not writable", path));
  }
  std::remove(tmp.c_str());
}

void write_json_atomic(const std::string& path, const nlohmann::json& doc) {
  // Serialise first (invalid UTF-8, e.g. in a recorded command line, is replaced, never thrown), so
  // that nothing is created when serialising fails.
  std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string tmp = temp_name(path);
  {
    std::ofstream f(tmp);
    if (!f) throw UsageError(fmt::format("cannot write '{}': directory missing or not writable", path));
    f << text << "\n";
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw UsageError(fmt::format("cannot write '{}': write failed", path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw UsageError(fmt::format("cannot write '{}': {}", path, ec.message()));
  }
}

nlohmann::json read_json_document(const std::string& path, const std::string& schema) {
  nlohmann::json j = read_json_file(path);
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string())
    throw UsageError(fmt::format("'{}': not an attnbench document (no schema tag)", path));
  if (j["schema"] != schema)
    throw UsageError(fmt::format("'{}': schema is '{}', expected '{}'", path, j["schema"].get<std::string>(), schema));
  if (schema == kReportSchema) check_report_types(j, fmt::format("'{}'", path));
  return j;
}

}  // namespace ab
