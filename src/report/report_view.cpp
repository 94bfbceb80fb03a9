// Flattening typed report rows for printers and compare: the shown numbers, grouping, header lines.
#include "report/report_view.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/problem_axes.hpp"

namespace ab {

using nlohmann::json;

RowView view_row(const ResultRow& row) {
  RowView v;
  v.row = &row;
  v.label = problem_label(row.problem);
  v.strategy = row.strategy;
  v.key = problem_key(row.problem) + "|" + v.strategy;
  v.status = to_string(row.disposition);
  v.reason = row.reason;
  v.peer = row.peer();
  if (row.timing) {
    const RowTiming& t = *row.timing;
    v.median_ms = t.time_ms.median;
    v.noise = t.time_ms.noise;
    v.samples = t.time_ms.samples;
    if (t.rounds) {
      v.rounds = std::max<std::int64_t>(1, t.rounds->count);
      v.round_spread = t.rounds->spread;
      v.round_error = t.rounds->error;
    }
    if (t.noise_met) v.noise_met = *t.noise_met ? 1 : 0;
    v.sm_clock_mhz = t.sm_clock_mhz;
    v.clock_low = t.clock_low;
  }
  v.tflops = row.tflops;
  v.gbps = row.gbps;
  v.copy_fraction = row.copy_fraction;
  const RowLaunches& l = row.launches;
  if (l.has_contract) v.launches_expected = l.expected_total();
  if (l.measured) v.launches_measured = l.measured->kernels;
  v.launches_mismatch = l.measured && !l.match;  // nothing measured (--profile, a row that never ran): no verdict
  v.launches_explained = v.launches_expected >= 0 && v.launches_measured > v.launches_expected && !v.launches_mismatch;
  if (row.verify) {
    v.rel_err = row.verify->rel_l2_err;
    v.tolerance = row.verify->tolerance;
    v.verify_passed = row.verify->passed ? 1 : 0;
  }
  return v;
}

std::vector<ProblemGroup> group_rows(const Report& report) {
  std::vector<ProblemGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const ResultRow& row : report.rows) {
    std::string key = problem_key(row.problem);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      groups.push_back(ProblemGroup{key, problem_label(row.problem), row.problem, {}, -1});
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

namespace {

// The device and settings objects keep their own fields; report_from_json checked the types of these.
std::string str_of(const json& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  return it == j.end() ? fallback : it->get<std::string>();
}

std::int64_t int_of(const json& j, const char* key, std::int64_t fallback) {
  auto it = j.find(key);
  return it == j.end() ? fallback : it->get<std::int64_t>();
}

}  // namespace

std::string devices_line(const Report& report) {
  if (report.devices.size() < 2) return "";
  std::string s;
  for (const json& d : report.devices)
    s += fmt::format("{}{}: {}", s.empty() ? "devices " : ", ", d.value("index", -1), str_of(d, "name", "unknown device"));
  return s;
}

std::string row_device_name(const Report& report, const ResultRow& row) {
  for (const json& d : report.devices)
    if (d.value("index", -1) == row.device) return str_of(d, "name", "");
  return str_of(report.device, "name", "");
}

std::string device_line(const json& d) {
  std::string s = str_of(d, "name", "unknown device");
  std::vector<std::string> parts;
  if (!str_of(d, "backend").empty()) parts.push_back(str_of(d, "backend"));
  if (!str_of(d, "cc").empty() && str_of(d, "cc") != "0.0") parts.push_back("cc " + str_of(d, "cc"));
  // The CPU backend records its hardware threads (std::thread::hardware_concurrency) as sm_count.
  if (int_of(d, "sm_count", 0) > 0)
    parts.push_back(fmt::format("{} {}", int_of(d, "sm_count", 0),
                                str_of(d, "backend") == "cpu" ? "hardware threads" : "SMs"));
  if (!str_of(d, "driver").empty()) parts.push_back("driver " + str_of(d, "driver"));
  if (!str_of(d, "cuda_runtime").empty()) parts.push_back("CUDA " + str_of(d, "cuda_runtime"));
  auto copy = d.find("copy_bandwidth_gbps");
  if (copy != d.end() && copy->get<double>() > 0) parts.push_back(fmt::format("copy {:.0f} GB/s", copy->get<double>()));
  auto peak = d.find("peak_tflops");
  if (peak != d.end() && peak->get<double>() > 0) parts.push_back(fmt::format("GEMM {:.0f} TFLOP/s", peak->get<double>()));
  if (!parts.empty()) s += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  return s;
}

std::string tool_line(const ToolInfo& t, const std::string& created) {
  std::string s = fmt::format("{} {}", t.name, t.version.empty() ? "?" : t.version);
  if (!t.git.empty()) s += " (" + t.git + ")";
  if (!created.empty()) s += ", " + created;
  return s;
}

std::string settings_line(const json& s, const json& device) {
  if (!s.is_object() || s.empty()) return "";
  std::vector<std::string> parts;
  bool cpu = device.is_object() && str_of(device, "backend") == "cpu";
  // The CPU backend's flush_l2 does nothing: its rows run with whatever the caches hold, --hot or not.
  if (cpu) parts.push_back("caches not flushed (cpu backend)");
  else if (s.contains("hot")) parts.push_back(s["hot"].get<bool>() ? "hot L2" : "L2 flushed");
  if (!str_of(s, "timer").empty()) parts.push_back(str_of(s, "timer") + " timer");
  if (int_of(s, "warmup", -1) >= 0) parts.push_back(fmt::format("warm-up {}", int_of(s, "warmup", -1)));
  if (int_of(s, "min_samples", -1) >= 0) parts.push_back(fmt::format(">={} samples", int_of(s, "min_samples", -1)));
  if (s.contains("max_noise")) parts.push_back(fmt::format("noise target {:g}%", s["max_noise"].get<double>() * 100));
  if (s.contains("verify") && s["verify"].get<bool>()) parts.push_back("verified");
  if (s.contains("profile") && s["profile"].is_boolean() && s["profile"].get<bool>())
    parts.push_back("profiling mode (one forward per row, not timed)");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace ab
