// The typed report and its JSON.
#include "run/run_report.hpp"

#include <initializer_list>
#include <utility>

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
  if (!r.devices.empty()) j["devices"] = r.devices;
  j["settings"] = r.settings;
  j["warnings"] = r.warnings;
  if (!r.shard.is_null()) j["shard"] = r.shard;
  if (!r.interrupted.empty()) j["interrupted"] = r.interrupted;
  if (!r.journal.is_null()) j["journal"] = r.journal;
  j["results"] = nlohmann::json::array();
  for (const ResultRow& row : r.rows) j["results"].push_back(to_json(row));
  return j;
}

namespace {

// A string field of `j` ("" when absent); any other type is a UsageError "ORIGIN: WHEREkey must be a string".
std::string string_field(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& where = "") {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (!it->is_string()) throw UsageError(fmt::format("{}: {}{} must be a string", origin, where, key));
  return it->get<std::string>();
}

// An object field as it is (an empty object when absent), its listed fields type-checked: the device and
// settings stay JSON (their fields are the backend's and the run's own), but the fields the printers and
// compare read must have their types.
nlohmann::json object_field(const nlohmann::json& doc, const char* key, const std::string& origin,
                            std::initializer_list<std::pair<const char*, nlohmann::json::value_t>> typed) {
  auto it = doc.find(key);
  if (it == doc.end()) return nlohmann::json::object();
  if (!it->is_object()) throw UsageError(fmt::format("{}: {} must be an object", origin, key));
  for (const auto& [name, type] : typed) {
    auto f = it->find(name);
    if (f == it->end()) continue;
    using V = nlohmann::json::value_t;
    bool ok = type == V::string ? f->is_string()
              : type == V::boolean ? f->is_boolean()
              : type == V::number_integer ? f->is_number_integer()
                                          : f->is_number();
    const char* words = type == V::string ? "a string" : type == V::boolean ? "true or false"
                        : type == V::number_integer ? "an integer" : "a number";
    if (!ok) throw UsageError(fmt::format("{}: {}.{} must be {}", origin, key, name, words));
  }
  return *it;
}

// The header's device list: objects, each with an integer "index" and a string "name" when present.
std::vector<nlohmann::json> devices_field(const nlohmann::json& doc, const std::string& origin) {
  std::vector<nlohmann::json> devices;
  auto it = doc.find("devices");
  if (it == doc.end()) return devices;
  if (!it->is_array()) throw UsageError(fmt::format("{}: devices must be a list", origin));
  for (std::size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& d = (*it)[i];
    if (!d.is_object()) throw UsageError(fmt::format("{}: devices[{}] must be an object", origin, i));
    auto index = d.find("index");
    if (index == d.end() || !index->is_number_integer() || index->get<std::int64_t>() < 0)
      throw UsageError(fmt::format("{}: devices[{}].index must be a device index (0 or more)", origin, i));
    auto name = d.find("name");
    if (name != d.end() && !name->is_string())
      throw UsageError(fmt::format("{}: devices[{}].name must be a string", origin, i));
    devices.push_back(d);
  }
  return devices;
}

}  // namespace

Report report_from_json(const nlohmann::json& doc, const std::string& origin) {
  using V = nlohmann::json::value_t;
  check_schema_tag(doc, kReportSchema, origin);
  Report r;
  if (doc.contains("tool")) {
    const nlohmann::json& t = doc["tool"];
    if (!t.is_object()) throw UsageError(fmt::format("{}: tool must be an object", origin));
    r.tool = ToolInfo{string_field(t, "name", origin, "tool."), string_field(t, "version", origin, "tool."),
                      string_field(t, "git", origin, "tool.")};
    if (!t.contains("name")) r.tool.name = "attnbench";
  } else {
    r.tool = ToolInfo{"attnbench", "", ""};
  }
  r.command = string_field(doc, "command", origin);
  r.created = string_field(doc, "created", origin);
  r.device = object_field(doc, "device", origin,
                          {{"name", V::string}, {"backend", V::string}, {"cc", V::string},
                           {"sm_count", V::number_integer}, {"driver", V::string}, {"cuda_runtime", V::string},
                           {"copy_bandwidth_gbps", V::number_float}, {"peak_tflops", V::number_float}});
  r.settings = object_field(doc, "settings", origin,
                            {{"hot", V::boolean}, {"verify", V::boolean}, {"timer", V::string},
                             {"warmup", V::number_integer}, {"min_samples", V::number_integer},
                             {"max_noise", V::number_float}});
  r.devices = devices_field(doc, origin);
  r.interrupted = string_field(doc, "interrupted", origin);
  if (doc.contains("journal")) {
    r.journal = doc["journal"];
    if (!r.journal.is_object() || !r.journal.value("complete", nlohmann::json()).is_boolean())
      throw UsageError(fmt::format("{}: journal must be an object with a true or false complete", origin));
  }
  if (doc.contains("shard")) {
    r.shard = doc["shard"];
    if (!r.shard.is_object() || !r.shard.value("index", nlohmann::json()).is_number_integer() ||
        !r.shard.value("count", nlohmann::json()).is_number_integer())
      throw UsageError(fmt::format("{}: shard must be an object with an integer index and count", origin));
  }
  if (doc.contains("warnings")) {
    const nlohmann::json& w = doc["warnings"];
    if (!w.is_array()) throw UsageError(fmt::format("{}: warnings must be a list", origin));
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!w[i].is_string()) throw UsageError(fmt::format("{}: warnings[{}] must be a string", origin, i));
      r.warnings.push_back(w[i].get<std::string>());
    }
  }
  if (!doc.contains("results")) throw UsageError(fmt::format("{}: no 'results' list", origin));
  const nlohmann::json& rows = doc["results"];
  if (!rows.is_array()) throw UsageError(fmt::format("{}: results must be a list", origin));
  for (std::size_t i = 0; i < rows.size(); ++i)
    r.rows.push_back(result_row_from_json(rows[i], origin, fmt::format("results[{}].", i)));
  return r;
}

int count_errors(const std::vector<ResultRow>& rows) {
  int n = 0;
  for (const ResultRow& row : rows) n += is_error(row.disposition);
  return n;
}

}  // namespace ab
