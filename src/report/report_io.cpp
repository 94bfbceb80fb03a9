// Schema- and type-checked report reads.
#include "report/report_io.hpp"

#include <fmt/format.h>

#include "core/json_file.hpp"
#include "report/report_check.hpp"

namespace ab {

nlohmann::json read_report_document(const std::string& path) {
  nlohmann::json j = read_json_file(path);
  check_report_document(j, fmt::format("'{}'", path));
  return j;
}

void check_report_document(const nlohmann::json& j, const std::string& origin) {
  check_schema_tag(j, kReportSchema, origin);
  check_report_types(j, origin);
}

}  // namespace ab
