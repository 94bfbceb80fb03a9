// Flattening report rows for printers and compare: tolerant field access, labels, keys, grouping.
#include "report/report_view.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"

namespace ab {

using nlohmann::json;

double json_num(const json& j, const char* key) {
  if (!j.is_object()) return NAN;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return NAN;
  return it->get<double>();
}

std::int64_t json_int(const json& j, const char* key, std::int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  double d = it->get<double>();  // in range before the cast (a cast of 1e300 is undefined)
  return d >= -9.2e18 && d <= 9.2e18 ? static_cast<std::int64_t>(d) : fallback;
}

std::string json_str(const json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

static const json& member(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it == j.end() ? empty : *it;
}

std::string problem_label(const json& p) { return problem_label_of_json(p); }

std::string problem_key(const json& p) { return problem_key_of_json(p); }

RowView view_row(const json& row) {
  RowView v;
  v.row = &row;
  const json& problem = member(row, "problem");
  v.label = problem_label(problem);
  v.strategy = json_str(row, "strategy", "?");
  v.key = problem_key(problem) + "|" + v.strategy;
  v.status = json_str(row, "status", "?");
  v.reason = json_str(row, "reason");
  v.peer = v.strategy.rfind("peer:", 0) == 0;
  const json& t = member(row, "time_ms");
  v.median_ms = json_num(t, "median");
  v.noise = json_num(t, "noise");
  v.samples = json_int(t, "samples");
  const json& rounds = member(row, "rounds");
  v.rounds = std::max<std::int64_t>(1, json_int(rounds, "count", 1));
  v.round_spread = json_num(rounds, "spread");
  v.round_error = json_num(rounds, "error");
  if (row.is_object() && row.contains("noise_met") && row["noise_met"].is_boolean())
    v.noise_met = row["noise_met"].get<bool>() ? 1 : 0;
  v.sm_clock_mhz = static_cast<int>(json_int(row, "sm_clock_mhz", 0));
  v.clock_low = row.is_object() && row.contains("clock_low") && row["clock_low"].is_boolean() && row["clock_low"].get<bool>();
  v.tflops = json_num(row, "tflops");
  v.gbps = json_num(row, "gbps");
  const json& launches = member(row, "launches");
  const json& expected = member(launches, "expected");
  v.launches_expected = json_int(expected, "total");
  if (v.launches_expected < 0) {
    std::int64_t g = json_int(expected, "gemm"), k = json_int(expected, "kernels");
    if (g >= 0 && k >= 0) v.launches_expected = g + k;
  }
  v.launches_measured = json_int(member(launches, "measured"), "kernels");
  // The runner's verdict wins: extra kernels explained as cuBLASLt split-K reductions are no mismatch.
  if (launches.is_object() && launches.contains("match") && launches["match"].is_boolean())
    v.launches_mismatch = !launches["match"].get<bool>();
  else
    v.launches_mismatch = v.launches_expected >= 0 && v.launches_measured >= 0 &&
                          v.launches_expected != v.launches_measured;
  v.launches_explained = v.launches_expected >= 0 && v.launches_measured > v.launches_expected && !v.launches_mismatch;
  const json& verify = member(row, "verify");
  v.rel_err = json_num(verify, "rel_l2_err");
  if (verify.is_object() && verify.contains("passed") && verify["passed"].is_boolean())
    v.verify_passed = verify["passed"].get<bool>() ? 1 : 0;
  return v;
}

std::vector<ProblemGroup> group_rows(const json& report) {
  if (!report.is_object() || !report.contains("results") || !report["results"].is_array())
    throw UsageError("report has no 'results' array");
  std::vector<ProblemGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const json& row : report["results"]) {
    const json& problem = member(row, "problem");
    std::string key = problem_key(problem);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      groups.push_back(ProblemGroup{key, problem_label(problem), problem, {}, -1});
    }
    groups[it->second].rows.push_back(view_row(row));
  }
  for (ProblemGroup& g : groups) {
    int own = -1;
    for (int i = 0; i < static_cast<int>(g.rows.size()); ++i) {
      const RowView& r = g.rows[i];
      if (!r.timed()) continue;
      if (g.fastest < 0 || r.median_ms < g.rows[g.fastest].median_ms) g.fastest = i;
      if (!r.peer && (own < 0 || r.median_ms < g.rows[own].median_ms)) own = i;
    }
    if (g.fastest >= 0 && g.rows[g.fastest].peer) g.fastest_own = own;
  }
  return groups;
}

std::string device_line(const json& report) {
  const json& d = member(report, "device");
  std::string s = json_str(d, "name", "unknown device");
  std::vector<std::string> parts;
  if (!json_str(d, "backend").empty()) parts.push_back(json_str(d, "backend"));
  if (!json_str(d, "cc").empty() && json_str(d, "cc") != "0.0") parts.push_back("cc " + json_str(d, "cc"));
  if (json_int(d, "sm_count", 0) > 0) parts.push_back(fmt::format("{} SMs", json_int(d, "sm_count")));
  if (!json_str(d, "driver").empty()) parts.push_back("driver " + json_str(d, "driver"));
  if (!json_str(d, "cuda_runtime").empty()) parts.push_back("CUDA " + json_str(d, "cuda_runtime"));
  if (!parts.empty()) s += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  return s;
}

std::string tool_line(const json& report) {
  const json& t = member(report, "tool");
  std::string s = fmt::format("{} {}", json_str(t, "name", "attnbench"), json_str(t, "version", "?"));
  if (!json_str(t, "git").empty()) s += " (" + json_str(t, "git") + ")";
  if (!json_str(report, "created").empty()) s += ", " + json_str(report, "created");
  return s;
}

std::string settings_line(const json& report) {
  const json& s = member(report, "settings");
  if (!s.is_object() || s.empty()) return "";
  std::vector<std::string> parts;
  if (s.contains("hot") && s["hot"].is_boolean()) parts.push_back(s["hot"].get<bool>() ? "hot L2" : "L2 flushed");
  if (!json_str(s, "timer").empty()) parts.push_back(json_str(s, "timer") + " timer");
  if (json_int(s, "warmup") >= 0) parts.push_back(fmt::format("warm-up {}", json_int(s, "warmup")));
  if (json_int(s, "min_samples") >= 0) parts.push_back(fmt::format(">={} samples", json_int(s, "min_samples")));
  double noise = json_num(s, "max_noise");
  if (noise == noise) parts.push_back(fmt::format("noise target {:g}%", noise * 100));
  if (s.contains("verify") && s["verify"].is_boolean() && s["verify"].get<bool>()) parts.push_back("verified");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace ab
