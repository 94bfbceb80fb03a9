// A typed report (docs/report-format.md): the tool, the command, when, the device, the settings, the
// warnings and the typed rows. to_json writes the attnbench.report/1 document; report_from_json reads one
// of any version, from this binary or scripts/peer_torch.py (the one reader: run's fresh-process rows,
// report, compare, the plots' flat view).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/result_row.hpp"

namespace ab {

inline constexpr const char* kReportSchema = "attnbench.report/1";

struct ToolInfo {
  std::string name = "attnbench", version, git;  // version "" : the report did not say
};

struct Report {
  ToolInfo tool;
  std::string command, created;  // created: utc_timestamp()
  nlohmann::json device;         // DeviceInfo::to_json: the backend's own fields
  std::vector<nlohmann::json> devices;  // every device that ran rows: DeviceInfo::to_json plus "index" (the
                                        // rows' `device`); empty in reports before it
  nlohmann::json settings;       // MeasureSettings::to_json plus the run's choices (verify, seed, cache...)
  std::vector<std::string> warnings;
  std::vector<ResultRow> rows;
  // A shard's report (--shard, Slurm arrays): {"index", "count", "grid_size", "problems": [grid indices]},
  // null otherwise. `attnbench merge` orders the shards' rows by those indices.
  nlohmann::json shard;
  // Set when SIGINT or SIGTERM stopped the run: the signal's name ("SIGTERM"); the rows are the problems
  // that finished. "" for a complete run.
  std::string interrupted;
  // Set when the run resumed a journal: {"path", "resumed_problems", "dropped_lines" (lines that did not check
  // and ran again), "complete" (every problem of the grid or shard is in the report)}; null otherwise.
  nlohmann::json journal;
};

// This build's name, version and commit.
ToolInfo this_tool();
nlohmann::json to_json(const Report& r);
// Throws UsageError naming `origin` (schema, a mistyped header field, or the first bad row: "ORIGIN:
// results[3].problem.causal must be true or false"). `device` and `settings` stay JSON, their printed
// fields type-checked; unknown top-level keys (peer_torch's "peers") are ignored.
Report report_from_json(const nlohmann::json& doc, const std::string& origin);
// Rows that make `run` exit 1 (incorrect or failed).
int count_errors(const std::vector<ResultRow>& rows);

}  // namespace ab
