// The one typed reader on every committed report (docs/results and docs/perf-log/data: reports of earlier versions, peer rows
// of scripts/peer_torch.py and of in-process peers) and on sparse rows: what each row reads as, and one line for a wrong
// type.
#include <cmath>
#include <filesystem>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "report/printers.hpp"
#include "report/report_io.hpp"
#include "testing.hpp"

using nlohmann::json;
using namespace ab;

// The committed reports of this source tree (this file is tests/cpu/test_report_reading.cpp): the current
// ones (docs/results) and the dated ones of earlier versions (docs/perf-log/data).
static std::vector<std::filesystem::path> committed_reports() {
  const auto docs = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs";
  std::vector<std::filesystem::path> out;
  for (const auto& dir : {docs / "results", docs / "perf-log" / "data"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
      if (e.path().extension() == ".json") out.push_back(e.path());
  return out;
}

TEST(ReportReading, every_committed_report_reads_and_renders) {
  int reports = 0;
  for (const std::filesystem::path& path : committed_reports()) {
    json doc = read_json_file(path.string());
    if (doc.value("schema", "") != kReportSchema) continue;
    Report r = read_report(path.string());
    ++reports;
    ASSERT_FALSE(r.rows.empty()) << path;
    int peers = 0;
    for (const ResultRow& row : r.rows) {
      // Every committed row is timed but a refusal (unsupported, with its reason): an in-process peer's (with its
      // library's version) or a strategy's can_implement (nested past its launch limit on a suite's B=256 row).
      if (row.disposition == Disposition::unsupported) {
        if (row.peer()) EXPECT_FALSE(row.library_version.empty()) << path << " " << row.strategy;
        EXPECT_FALSE(row.reason.empty()) << path << " " << row.strategy;
        EXPECT_FALSE(row.timing.has_value()) << path << " " << row.strategy;
        continue;
      }
      EXPECT_TRUE(row.timing.has_value()) << path << " " << row.strategy;
      // noise_met: in this binary's rows (in-process peers' too) of a report as new as the copy bandwidth
      // (h100-default.json), never in older reports or in the script peers' rows (no library_version).
      const bool script_peer = row.peer() && row.library_version.empty();
      const bool new_writer = doc["device"].contains("copy_bandwidth_gbps") && !script_peer;
      EXPECT_EQ(row.timing->noise_met.has_value(), new_writer) << path << " " << row.strategy;
      if (row.peer()) {
        ++peers;
        EXPECT_FALSE(row.launches.has_contract);
      }
    }
    if (doc.contains("peers")) EXPECT_GT(peers, 0) << path;
    for (const char* f : {"console", "md", "csv", "json"}) EXPECT_FALSE(render_report(r, f).empty());
  }
  EXPECT_GE(reports, 7);
}

static json peer_row(json extra) {
  json row = {{"problem", {{"batch", 2}, {"heads", 4}, {"seq_len", 128}, {"head_dim", 64}, {"pages", 1},
                           {"page_size", 128}, {"pages_requested", 1}, {"kv_layout", "contiguous"},
                           {"dtype", "fp16"}, {"causal", false}}},
              {"strategy", "peer:torch-flash"}, {"status", "ok"}, {"reason", ""}};
  for (auto it = extra.begin(); it != extra.end(); ++it) row[it.key()] = it.value();
  return row;
}

TEST(ReportReading, sparse_rows_read_as_absent) {
  ResultRow unsupported = result_row_from_json(peer_row({{"status", "unsupported"}, {"reason", "no kernel"}}), "'p'");
  EXPECT_TRUE(unsupported.disposition == Disposition::unsupported);
  EXPECT_FALSE(unsupported.timing || unsupported.verify || unsupported.config || unsupported.launches.measured);
  EXPECT_FALSE(unsupported.launches.has_contract);
  ResultRow timed = result_row_from_json(
      peer_row({{"time_ms", {{"median", 0.5}, {"noise", 0.01}, {"samples", 50}}},
                {"launches", {{"measured", {{"kernels", 1}, {"kernel_names", {"flash x1"}}, {"source", "torch.profiler"}}}}},
                {"verify", {{"rel_l2_err", 0.001}, {"passed", true}}}}),
      "'p'");
  ASSERT_TRUE(timed.timing.has_value());
  EXPECT_EQ(timed.timing->time_ms.median, 0.5);
  EXPECT_TRUE(std::isnan(timed.timing->time_ms.min));
  EXPECT_TRUE(std::isnan(timed.tflops));
  EXPECT_FALSE(timed.timing->rounds.has_value());
  EXPECT_EQ(timed.launches.measured->kernels, 1);
  EXPECT_EQ(timed.launches.measured->gemm_calls, -1);
  EXPECT_TRUE(timed.launches.match);  // no contract: nothing to break
  EXPECT_TRUE(std::isnan(timed.verify->max_abs_err));
  // Rounds of the first --rounds version (no kept, no error).
  ResultRow rounds = result_row_from_json(
      peer_row({{"time_ms", {{"median", 0.5}}}, {"rounds", {{"count", 5}, {"medians_ms", {0.5, 0.6}}, {"spread", 0.1}}}}), "'p'");
  EXPECT_EQ(rounds.timing->rounds->count, 5);
  EXPECT_TRUE(std::isnan(rounds.timing->rounds->error));
}

TEST(ReportReading, a_wrong_type_is_one_line_naming_file_row_and_field) {
  json doc = {{"schema", kReportSchema}, {"results", json::array({peer_row({}), peer_row({{"time_ms", {{"median", 0.5}}}, {"noise_met", "yes"}})})}};
  try {
    report_from_json(doc, "'r.json'");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "'r.json': results[1].noise_met must be true or false");
  }
  doc["results"][1] = peer_row({{"launches", {{"expected", {{"gemm", "two"}}}}}});
  EXPECT_THROW(report_from_json(doc, "'r.json'"), UsageError);
  doc["schema"] = "attnbench.cache/1";
  try {
    report_from_json(doc, "'r.json'");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "'r.json': schema is 'attnbench.cache/1', expected 'attnbench.report/1'");
  }
}
