// The typed report and its JSON.
#include "run/run_report.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json_document.hpp"
#include "git_info.hpp"  // ATTNBENCH_GIT, generated at build time

namespace ab {

ToolInfo this_tool() { return ToolInfo{"attnbench", ATTNBENCH_VERSION, ATTNBENCH_GIT}; }

nlohmann::json to_json(const Report& r) {
  nlohmann::json j;
  j["schema"] = kReportSchema;
  j["tool"] = {{"name", r.tool.name}, {"version", r.tool.version}, {"git", r.tool.git}};
  j["command"] = r.command;
  j["created"] = r.created;
  j["device"] = r.device;
  j["settings"] = r.settings;
  j["warnings"] = r.warnings;
  j["results"] = nlohmann::json::array();
  for (const ResultRow& row : r.rows) j["results"].push_back(to_json(row));
  return j;
}

namespace {

std::string string_field(const nlohmann::json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (!it->is_string()) throw UsageError(fmt::format("{}: {} must be a string", origin, key));
  return it->get<std::string>();
}

}  // namespace

Report report_from_json(const nlohmann::json& doc, const std::string& origin) {
  check_schema_tag(doc, kReportSchema, origin);
  Report r;
  if (doc.contains("tool")) {
    const nlohmann::json& t = doc["tool"];
    if (!t.is_object()) throw UsageError(fmt::format("{}: tool must be an object", origin));
    r.tool = ToolInfo{string_field(t, "name", origin), string_field(t, "version", origin), string_field(t, "git", origin)};
  }
  r.command = string_field(doc, "command", origin);
  r.created = string_field(doc, "created", origin);
  r.device = doc.value("device", nlohmann::json::object());
  r.settings = doc.value("settings", nlohmann::json::object());
  for (const auto& w : doc.value("warnings", nlohmann::json::array())) {
    if (!w.is_string()) throw UsageError(fmt::format("{}: warnings must be strings", origin));
    r.warnings.push_back(w.get<std::string>());
  }
  if (!doc.contains("results") || !doc["results"].is_array())
    throw UsageError(fmt::format("{}: no 'results' list", origin));
  const nlohmann::json& rows = doc["results"];
  for (std::size_t i = 0; i < rows.size(); ++i)
    r.rows.push_back(result_row_from_json(rows[i], fmt::format("{} results[{}]", origin, i)));
  return r;
}

int count_errors(const std::vector<ResultRow>& rows) {
  int n = 0;
  for (const ResultRow& row : rows) n += is_error(row.disposition);
  return n;
}

}  // namespace ab
