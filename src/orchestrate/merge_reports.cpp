// Merging reports: the checks that the inputs belong together, then their rows in grid order.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "orchestrate/grid_journal.hpp"
#include "orchestrate/merge.hpp"
#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/shard.hpp"
#include "core/utc_timestamp.hpp"
#include "run/run_report.hpp"

namespace ab {

namespace {

std::string quoted(const std::string& path) { return fmt::format("'{}'", path); }

// The first top-level key whose value differs between two objects ("" when equal).
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.items()) keys.insert(k);
  for (const auto& [k, v] : b.items()) keys.insert(k);
  for (const std::string& k : keys)
    if (a.value(k, nlohmann::json()) != b.value(k, nlohmann::json())) return k;
  return "";
}

std::string brief(const nlohmann::json& j) {
  std::string s = j.is_null() ? "absent" : j.is_string() ? j.get<std::string>() : j.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Checks input `r` (from `path`) against the first, `base` (from `base_path`).
void check_belongs(const Report& base, const std::string& base_path, const Report& r, const std::string& path) {
  if (r.tool.version != base.tool.version || r.tool.git != base.tool.git)
    throw UsageError(fmt::format("merge: {} comes from attnbench {} ({}), {} from {} ({}): reports of different tool "
                                 "versions do not merge",
                                 quoted(path), r.tool.version, r.tool.git, quoted(base_path), base.tool.version, base.tool.git));
  if (std::string k = first_difference(base.settings, r.settings); !k.empty())
    throw UsageError(fmt::format("merge: {} and {} were run with different settings ({}: {} vs {})", quoted(base_path),
                                 quoted(path), k, brief(base.settings.value(k, nlohmann::json())),
                                 brief(r.settings.value(k, nlohmann::json()))));
  for (const char* k : {"backend", "name"})
    if (base.device.value(k, nlohmann::json()) != r.device.value(k, nlohmann::json()))
      throw UsageError(fmt::format("merge: {} ran on {} and {} on {}: numbers of different devices do not compare",
                                   quoted(base_path), brief(base.device.value("name", nlohmann::json())), quoted(path),
                                   brief(r.device.value("name", nlohmann::json()))));
  if (base.shard.is_null() != r.shard.is_null())
    throw UsageError(fmt::format("merge: {} is {}a shard report and {} is {}", quoted(base_path),
                                 base.shard.is_null() ? "not " : "", quoted(path), r.shard.is_null() ? "not" : "one"));
  if (!base.shard.is_null() && (base.shard["count"] != r.shard["count"] || base.shard.value("grid_size", -1) != r.shard.value("grid_size", -1) ||
                                base.shard.value("grid", nlohmann::json()) != r.shard.value("grid", nlohmann::json())))
    throw UsageError(fmt::format("merge: {} is shard {}/{} of a {}-problem grid and {} shard {}/{} of a {}-problem grid "
                                 "(or of another grid of that size)",
                                 quoted(base_path), brief(base.shard["index"]), brief(base.shard["count"]),
                                 brief(base.shard.value("grid_size", nlohmann::json())), quoted(path), brief(r.shard["index"]),
                                 brief(r.shard["count"]), brief(r.shard.value("grid_size", nlohmann::json()))));
}

// A shard header must say which shard of which grid it is and which problems it ran: an index below the
// count, the grid's fingerprint, and a strictly increasing list of grid indices below its size.
void check_shard_header(const Report& r, const std::string& path) {
  const nlohmann::json& s = r.shard;
  const long long index = s["index"].get<long long>(), count = s["count"].get<long long>();
  if (count < 1 || count > kMaxShards || index < 0 || index >= count)
    throw UsageError(fmt::format("merge: {} says it is shard {} of {}, which no grid has", quoted(path), index, count));
  const nlohmann::json grid = s.value("grid", nlohmann::json());
  if (!s.value("grid_size", nlohmann::json()).is_number_unsigned() || !grid.is_object() ||
      grid.value("size", nlohmann::json()) != s["grid_size"] || !grid.value("hash", nlohmann::json()).is_string())
    throw UsageError(fmt::format("merge: {} has no fingerprint of its grid (grid_size and grid.hash; written by an "
                                 "older attnbench?): run the shard again", quoted(path)));
  const nlohmann::json list = s.value("problems", nlohmann::json());
  const std::size_t size = s["grid_size"].get<std::size_t>();
  bool ok = list.is_array();
  for (std::size_t i = 0; ok && i < list.size(); ++i)
    ok = list[i].is_number_unsigned() && list[i].get<std::size_t>() < size &&
         (i == 0 || list[i].get<std::size_t>() > list[i - 1].get<std::size_t>());
  if (!ok)
    throw UsageError(fmt::format("merge: {}'s list of problems is not increasing grid indices below its grid size {}",
                                 quoted(path), size));
}

// Each row's grid index, from the shard's list of problems (rows come grouped by problem, in grid order).
// UsageError when the rows are not one group per listed problem.
std::vector<std::size_t> grid_indices(const Report& r, const std::string& path) {
  const nlohmann::json& list = r.shard["problems"];
  std::vector<std::size_t> out;
  std::size_t group = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (i > 0 && !(r.rows[i].problem == r.rows[i - 1].problem)) ++group;
    if (group >= list.size()) break;
    out.push_back(list[group].get<std::size_t>());
  }
  if (out.size() != r.rows.size() || (!r.rows.empty() && group + 1 != list.size()) || (r.rows.empty() && !list.empty()))
    throw UsageError(fmt::format("merge: {}'s rows are not one group per problem its shard header lists", quoted(path)));
  return out;
}

// With every shard there, the problems at grid indices 0..N-1 must be the grid the shards name.
void check_whole_grid(const std::map<std::size_t, Problem>& by_index, const nlohmann::json& shard) {
  const std::size_t size = shard["grid_size"].get<std::size_t>();
  std::vector<Problem> grid;
  for (std::size_t i = 0; i < size; ++i) {
    auto it = by_index.find(i);
    if (it == by_index.end())
      throw UsageError(fmt::format("merge: every shard is here but no shard ran problem {} of the {}-problem grid", i, size));
    grid.push_back(it->second);
  }
  if (grid_fingerprint(grid) != shard["grid"])
    throw UsageError("merge: the shards' problems do not make up the grid their headers name (shards of different grids?)");
}

struct PlacedRow {
  std::size_t grid_index = 0, input = 0, position = 0;
  nlohmann::json row;
};

}  // namespace

nlohmann::json merge_reports(const std::vector<MergeInput>& inputs, const std::string& command,
                             std::vector<std::string>* notes) {
  std::vector<Report> reports;
  for (const MergeInput& in : inputs) {
    reports.push_back(report_from_json(in.doc, quoted(in.path)));
    if (!reports.back().interrupted.empty())
      throw UsageError(fmt::format("merge: {} is an interrupted run ({}); finish it with --resume first", quoted(in.path),
                                   reports.back().interrupted));
    if (!reports.back().shard.is_null()) check_shard_header(reports.back(), in.path);
    check_belongs(reports.front(), inputs.front().path, reports.back(), in.path);
  }
  std::map<nlohmann::json, std::size_t> shard_seen;  // shard index -> input
  std::map<std::string, std::size_t> row_seen;        // problem JSON | strategy -> input
  std::map<std::size_t, Problem> problem_at;          // shards: grid index -> its problem
  std::map<std::size_t, std::size_t> index_from;      // shards: grid index -> input
  std::vector<PlacedRow> placed;
  std::set<nlohmann::json> devices;  // distinct devices, as identified by their fixed fields
  bool ordered = true;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    const Report& r = reports[k];
    nlohmann::json identity = r.device;  // a measured rate is not part of which device it was
    identity.erase("copy_bandwidth_gbps");
    devices.insert(identity);
    if (!r.shard.is_null()) {
      auto [it, fresh] = shard_seen.emplace(r.shard["index"], k);
      if (!fresh)
        throw UsageError(fmt::format("merge: {} and {} are both shard {}/{}", quoted(inputs[it->second].path),
                                     quoted(inputs[k].path), brief(r.shard["index"]), brief(r.shard["count"])));
    }
    std::vector<std::size_t> index = r.shard.is_null() ? std::vector<std::size_t>() : grid_indices(r, inputs[k].path);
    ordered = ordered && index.size() == r.rows.size();
    for (std::size_t i = 0; i < index.size(); ++i) {
      auto [at, fresh] = index_from.emplace(index[i], k);
      if (!fresh && at->second != k)
        throw UsageError(fmt::format("merge: {} and {} both ran problem {} of the grid", quoted(inputs[at->second].path),
                                     quoted(inputs[k].path), index[i]));
      problem_at.emplace(index[i], r.rows[i].problem);
    }
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      std::string key = problem_to_json(r.rows[i].problem).dump() + "|" + r.rows[i].strategy;
      auto [it, fresh] = row_seen.emplace(key, k);
      if (!fresh)
        throw UsageError(fmt::format("merge: {} and {} both have the row {} / {} (overlapping shards, or one report twice)",
                                     quoted(inputs[it->second].path), quoted(inputs[k].path), r.rows[i].problem.label(),
                                     r.rows[i].strategy));
      placed.push_back({index.empty() ? 0 : index[i], k, i, inputs[k].doc["results"][i]});
    }
  }
  if (ordered)
    std::stable_sort(placed.begin(), placed.end(),
                     [](const PlacedRow& a, const PlacedRow& b) { return a.grid_index < b.grid_index; });

  nlohmann::json out = inputs.front().doc;
  out.erase("shard");
  out.erase("journal");
  out["created"] = utc_timestamp();
  out["merged_from"] = nlohmann::json::array();
  std::vector<std::string> warnings;
  auto warn = [&warnings](const std::string& w) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  };
  for (std::size_t k = 0; k < reports.size(); ++k) {
    out["merged_from"].push_back({{"file", inputs[k].path}, {"command", reports[k].command},
                                  {"shard", reports[k].shard.is_null() ? nlohmann::json() : reports[k].shard["index"]}});
    for (const std::string& w : reports[k].warnings) warn(w);
  }
  if (!reports.front().shard.is_null()) {
    int count = reports.front().shard["count"].get<int>();
    std::vector<int> missing;
    for (int i = 0; i < count; ++i)
      if (!shard_seen.count(i)) missing.push_back(i);
    if (missing.empty()) check_whole_grid(problem_at, reports.front().shard);
    if (!missing.empty()) {
      std::string list;
      for (int i : missing) list += (list.empty() ? "" : ", ") + fmt::format("{}/{}", i, count);
      std::string w = fmt::format("merged {} of {} shards: shard(s) {} missing, so the grid is incomplete",
                                  count - static_cast<int>(missing.size()), count, list);
      warn(w);
      notes->push_back(w);
    }
  }
  const bool several_devices = devices.size() > 1;
  if (several_devices) out["devices"] = nlohmann::json(std::vector<nlohmann::json>(devices.begin(), devices.end()));
  out["warnings"] = warnings;
  out["command"] = command;
  out["results"] = nlohmann::json::array();
  for (PlacedRow& p : placed) {
    if (several_devices && !p.row.contains("device")) p.row["device"] = reports[p.input].device;
    out["results"].push_back(std::move(p.row));
  }
  return out;
}

}  // namespace ab
