// Report files: schema-checked document reads and typed reads.
#include "report/report_io.hpp"

#include <fmt/format.h>

namespace ab {

nlohmann::json read_report_document(const std::string& path) { return read_json_document(path, kReportSchema); }

Report read_report(const std::string& path) { return report_from_json(read_report_document(path), fmt::format("'{}'", path)); }

}  // namespace ab
