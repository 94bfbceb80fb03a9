// `attnbench compare` and `attnbench report` through the real binary, on reports the tool writes itself
// (CPU backend) and edited copies of them: regression -> 1, noise -> 0, status changes, missing rows, exit 2 on
// unusable input; one-round reports (issue 49); the text of `list` and of a CPU report's header.
#include <sys/wait.h>

#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <sstream>

#include "report/report_io.hpp"
#include "testing.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

static const std::string kDir = "compare_cli_work";

struct Result {
  int code = -1;
  std::string out;
};

// Runs the attnbench binary with `args`; returns its exit code and its stdout + stderr.
static Result attnbench(const std::string& args) {
  fs::create_directories(kDir);
  std::string log = kDir + "/last_output.txt";
  std::string cmd = std::string("'") + ATTNBENCH_BINARY + "' " + args + " > " + log + " 2>&1";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  r.out = ss.str();
  return r;
}

static std::string path(const std::string& name) { return kDir + "/" + name; }

// A report written by the tool: two problems (pages 1 and 2), every strategy, verified.
static const json& tool_report() {
  static json doc = [] {
    Result r = attnbench("--backend=cpu --batch=1 --heads=2 --seq_len=64 --head_dim=32 --pages=1,2 --verify "
                         "--max_time=0.05 -q --json=" + path("base.json"));
    if (r.code != 0) std::fprintf(stderr, "run failed (%d): %s\n", r.code, r.out.c_str());
    return ab::read_report_document(path("base.json"));
  }();
  return doc;
}

static std::string save(const std::string& name, const json& doc) {
  ab::write_json_atomic(path(name), doc);
  return path(name);
}

// Sets every ok row's noise to `noise` so the verdict depends only on the edit under test.
// Every ok row of `doc` with this noise, and enough samples for compare to use it: a real run under a
// sanitizer on a loaded machine can reach --max_time with fewer than kMinSamplesForNoise samples, and
// compare rightly calls such a row ambiguous whatever the edit.
// The rows are also marked as measured in 20 rounds whose center is known to `noise` (rounds.error), so the
// threshold-and-noise rule decides alone: a one-round row is slower/faster only beyond kOneRoundAllowance
// (one_round_rows_are_ambiguous_unless_far_apart tests that).
static json with_noise(json doc, double noise) {
  doc["settings"]["rounds"] = 20;
  for (json& r : doc["results"])
    if (r["status"] == "ok") {
      r["time_ms"]["noise"] = noise;
      r["time_ms"]["samples"] = std::max<std::int64_t>(r["time_ms"].value("samples", std::int64_t{0}), 10);
      r["rounds"] = {{"count", 20}, {"error", noise}};
    }
  return doc;
}

// Every ok row with this noise, as one round (the tool's own default), with enough samples.
static json one_round(json doc, double noise) {
  for (json& r : doc["results"])
    if (r["status"] == "ok") {
      r["time_ms"]["noise"] = noise;
      r["time_ms"]["samples"] = std::max<std::int64_t>(r["time_ms"].value("samples", std::int64_t{0}), 10);
      r.erase("rounds");
    }
  return doc;
}

static json& find_row(json& doc, const std::string& strategy, int pages) {
  for (json& r : doc["results"])
    if (r["strategy"] == strategy && r["problem"]["pages"] == pages) return r;
  throw std::runtime_error("no row " + strategy);
}

// The verdict of (strategy, pages) in `compare --json=-` output.
static std::string verdict_of(const std::string& base, const std::string& next, const std::string& strategy, int pages,
                              const std::string& extra = "") {
  Result r = attnbench("compare " + base + " " + next + " --json=- " + extra);
  json j = json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return "unparsable: " + r.out;
  for (const json& row : j["rows"])
    if (row["strategy"] == strategy && row["problem"]["pages"] == pages) return row["verdict"];
  return "absent";
}

TEST(CompareCli, tool_report_is_usable) {
  const json& doc = tool_report();
  ASSERT_TRUE(doc["results"].size() == 10u);
  for (const json& r : doc["results"]) EXPECT_EQ(r["status"].get<std::string>(), std::string("ok"));
}

TEST(CompareCli, identical_reports_exit_0) {
  std::string b = save("same.json", tool_report());
  Result r = attnbench("compare " + b + " " + b);
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.out.find("10 rows matched: 0 slower") != std::string::npos);
  EXPECT_TRUE(r.out.find("no regression") != std::string::npos);
}

TEST(CompareCli, a_real_rerun_matches_every_row) {
  Result run = attnbench("--backend=cpu --batch=1 --heads=2 --seq_len=64 --head_dim=32 --pages=1,2 --verify "
                         "--max_time=0.05 -q --json=" + path("rerun.json"));
  ASSERT_TRUE(run.code == 0);
  save("base_for_rerun.json", tool_report());
  Result r = attnbench("compare " + path("base_for_rerun.json") + " " + path("rerun.json") + " --json=-");
  EXPECT_TRUE(r.code == 0 || r.code == 1);  // real timings: whatever they say, the input is usable
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(!j.is_discarded());
  EXPECT_EQ(j["rows"].size(), 10u);
  EXPECT_EQ(j["missing"].size(), 0u);
  EXPECT_EQ(j["new_rows"].size(), 0u);
}

TEST(CompareCli, regression_beyond_threshold_and_noise_exits_1) {
  json base = with_noise(tool_report(), 0.005), next = base;
  find_row(next, "fused", 2)["time_ms"]["median"] = find_row(base, "fused", 2)["time_ms"]["median"].get<double>() * 1.25;
  std::string b = save("reg_base.json", base), n = save("reg_new.json", next);
  Result r = attnbench("compare " + b + " " + n);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.find("REGRESSION") != std::string::npos);
  EXPECT_TRUE(r.out.find("! fused") != std::string::npos);
  EXPECT_EQ(verdict_of(b, n, "fused", 2), std::string("slower"));
  EXPECT_EQ(verdict_of(b, n, "fused", 1), std::string("same"));
  // The same edit with a 30% threshold is not a regression.
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --threshold=30%").code, 0);
  // Faster is not a regression.
  EXPECT_EQ(attnbench("compare " + n + " " + b).code, 0);
  EXPECT_EQ(verdict_of(n, b, "fused", 2), std::string("faster"));
}

TEST(CompareCli, change_within_the_noise_exits_0) {
  json base = with_noise(tool_report(), 0.2), next = base;
  find_row(next, "nested", 1)["time_ms"]["median"] = find_row(base, "nested", 1)["time_ms"]["median"].get<double>() * 1.25;
  std::string b = save("noise_base.json", base), n = save("noise_new.json", next);
  EXPECT_EQ(attnbench("compare " + b + " " + n).code, 0);
  EXPECT_EQ(verdict_of(b, n, "nested", 1), std::string("ambiguous"));
  // With a noise factor of 0 the noise no longer excuses it.
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --noise_k=0").code, 1);
}

TEST(CompareCli, change_within_the_threshold_exits_0) {
  json base = with_noise(tool_report(), 0.001), next = base;
  find_row(next, "ptr_array", 2)["time_ms"]["median"] =
      find_row(base, "ptr_array", 2)["time_ms"]["median"].get<double>() * 1.02;
  std::string b = save("thr_base.json", base), n = save("thr_new.json", next);
  EXPECT_EQ(attnbench("compare " + b + " " + n).code, 0);  // +2% within the default 3%
  EXPECT_EQ(verdict_of(b, n, "ptr_array", 2), std::string("same"));
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --threshold=1.5%").code, 1);
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --threshold=0.015").code, 1);
}

TEST(CompareCli, status_change_is_caught) {
  json base = tool_report(), next = base;
  json& row = find_row(next, "head_batched", 2);
  row["status"] = "incorrect";
  row["reason"] = "rel_l2_err 0.31 > tolerance 0.005";
  row.erase("time_ms");
  std::string b = save("st_base.json", base), n = save("st_new.json", next);
  Result r = attnbench("compare " + b + " " + n);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.find("ok -> incorrect") != std::string::npos);
  EXPECT_TRUE(r.out.find("rel_l2_err 0.31") != std::string::npos);
  EXPECT_EQ(verdict_of(b, n, "head_batched", 2), std::string("worse"));
  // The other way round (incorrect -> ok) is better, not a regression.
  EXPECT_EQ(attnbench("compare " + n + " " + b).code, 0);
  EXPECT_EQ(verdict_of(n, b, "head_batched", 2), std::string("better"));
}

TEST(CompareCli, missing_and_new_rows_are_reported) {
  json base = tool_report(), next = base;
  json kept = json::array();
  for (const json& r : next["results"])
    if (!(r["strategy"] == "fully_batched" && r["problem"]["pages"] == 1)) kept.push_back(r);
  next["results"] = kept;
  std::string b = save("miss_base.json", base), n = save("miss_new.json", next);
  Result r = attnbench("compare " + b + " " + n);
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.out.find("missing from the new run (1)") != std::string::npos);
  EXPECT_TRUE(r.out.find("fully_batched") != std::string::npos);
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --fail_on_missing").code, 1);
  Result back = attnbench("compare " + n + " " + b);
  EXPECT_EQ(back.code, 0);
  EXPECT_TRUE(back.out.find("new in the new run (1)") != std::string::npos);
}

TEST(CompareCli, unusable_input_exits_2) {
  json other = tool_report();
  other["schema"] = "attnbench.report/2";
  std::string b = save("u_base.json", tool_report()), o = save("u_schema.json", other);
  Result r = attnbench("compare " + b + " " + o);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.find("schema") != std::string::npos);
  EXPECT_EQ(attnbench("compare " + o + " " + b).code, 2);
  EXPECT_EQ(attnbench("compare " + b + " " + path("does_not_exist.json")).code, 2);
  { std::ofstream(path("broken.json")) << "{\"schema\": \"attnbench.report/1\", \"results\": ["; }
  EXPECT_EQ(attnbench("compare " + b + " " + path("broken.json")).code, 2);
  json no_results = tool_report();
  no_results.erase("results");
  EXPECT_EQ(attnbench("compare " + b + " " + save("u_nores.json", no_results)).code, 2);
  json cache = {{"schema", "attnbench.cache/1"}, {"entries", json::array()}};
  EXPECT_EQ(attnbench("compare " + b + " " + save("u_cache.json", cache)).code, 2);
  EXPECT_EQ(attnbench("compare " + b + " " + b + " --threshold=5").code, 2);
  EXPECT_EQ(attnbench("compare " + b + " " + b + " --threshold=abc").code, 2);
  EXPECT_EQ(attnbench("compare " + b + " " + b + " --format=html").code, 2);
  EXPECT_EQ(attnbench("compare " + b).code, 2);
}

TEST(CompareCli, different_device_exits_2_unless_ignored) {
  json other = tool_report();
  other["device"]["name"] = "NVIDIA H100 80GB HBM3";
  std::string b = save("d_base.json", tool_report()), o = save("d_other.json", other);
  Result r = attnbench("compare " + b + " " + o);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.find("--ignore_device") != std::string::npos);
  Result ok = attnbench("compare " + b + " " + o + " --ignore_device");
  EXPECT_EQ(ok.code, 0);
  EXPECT_TRUE(ok.out.find("devices differ") != std::string::npos);
}

// Runs `attnbench compare ARGS` that writes `file` (removed first); returns the run and the file's text.
static std::pair<Result, std::string> compare_into(const std::string& args, const std::string& file) {
  fs::remove(path(file));
  Result r = attnbench("compare " + args);
  std::ifstream f(path(file));
  std::stringstream ss;
  ss << f.rdbuf();
  return {r, ss.str()};
}

TEST(CompareCli, output_file_gets_the_format_and_stdout_the_table) {
  json base = with_noise(tool_report(), 0.005), next = base;
  find_row(next, "fused", 1)["time_ms"]["median"] = find_row(base, "fused", 1)["time_ms"]["median"].get<double>() * 2;
  std::string b = save("o_base.json", base), n = save("o_new.json", next);
  auto [r, md] = compare_into(b + " " + n + " --format=md --output=" + path("cmp.md"), "cmp.md");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.find("base ms") != std::string::npos);
  EXPECT_TRUE(md.find("### attnbench compare: **REGRESSION**") != std::string::npos);
  EXPECT_TRUE(md.find("**slower**") != std::string::npos);
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --output=" + path("no_such_dir/x.md")).code, 2);
  // The one grammar: --md=FILE writes what the old --format=md --output=FILE wrote, the table still on stdout.
  auto [r2, md2] = compare_into(b + " " + n + " --md=" + path("cmp2.md"), "cmp2.md");
  EXPECT_EQ(r2.code, 1);
  EXPECT_TRUE(r2.out.find("base ms") != std::string::npos);
  EXPECT_EQ(md2, md);
  EXPECT_EQ(attnbench("compare " + b + " " + n + " --md=" + path("no_such_dir/x.md")).code, 2);
}

TEST(CompareCli, report_renders_md_and_csv) {
  std::string b = save("r_base.json", tool_report());
  Result md = attnbench("report " + b + " --md=-");
  EXPECT_EQ(md.code, 0);
  EXPECT_TRUE(md.out.find("| problem | strategy | status |") != std::string::npos);
  for (const char* s : {"nested", "head_batched", "fully_batched", "ptr_array", "fused"})
    EXPECT_TRUE(md.out.find(std::string("| ") + s) != std::string::npos || md.out.find(std::string("**") + s) != std::string::npos);
  Result csv = attnbench("report " + b + " --csv=-");
  EXPECT_EQ(csv.code, 0);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 11);  // header + 10 rows
  Result console = attnbench("report " + b);
  EXPECT_EQ(console.code, 0);
  EXPECT_TRUE(console.out.find("* ") != std::string::npos);
  EXPECT_EQ(attnbench("report " + b + " --format=html").code, 2);
  // --json=-: the flat rows, one per row of the report, with the binary's label and key.
  Result flat = attnbench("report " + b + " --json=-");
  EXPECT_EQ(flat.code, 0);
  json rows = json::parse(flat.out)["rows"];
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[0]["label"].get<std::string>().rfind("B=", 0), 0u);
  EXPECT_TRUE(rows[0]["key"].is_string() && rows[0]["problem"].is_object() && rows[0]["status"].is_string());
  EXPECT_EQ(attnbench("report " + path("does_not_exist.json")).code, 2);
  json other = tool_report();
  other["schema"] = "something/1";
  EXPECT_EQ(attnbench("report " + save("r_schema.json", other)).code, 2);
}


// Issue 49: two runs with default settings (one round) are compared without crying wolf: a change that a
// second process can give (here +20%) is ambiguous with its reason and exit 0; a change beyond the one-round
// allowance (2x) is still slower, exit 1.
TEST(CompareCli, one_round_rows_are_ambiguous_unless_far_apart) {
  ASSERT_EQ(tool_report()["settings"].value("rounds", 1), 1);  // the tool's default is one round
  json base = one_round(tool_report(), 0.005), next = base;
  double m = find_row(base, "nested", 1)["time_ms"]["median"].get<double>();
  find_row(next, "nested", 1)["time_ms"]["median"] = m * 1.2;
  std::string b = save("one_base.json", base), n = save("one_new.json", next);
  Result r = attnbench("compare " + b + " " + n);
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.out.find("ambiguous*") != std::string::npos);
  EXPECT_TRUE(r.out.find("* one round: between-process spread unknown; rerun with --rounds>=4") != std::string::npos);
  EXPECT_TRUE(r.out.find("no regression (exit 0)") != std::string::npos);
  EXPECT_EQ(verdict_of(b, n, "nested", 1), std::string("ambiguous"));
  EXPECT_EQ(verdict_of(n, b, "nested", 1), std::string("ambiguous"));  // -17%: not faster either
  Result csv = attnbench("compare " + b + " " + n + " --csv=-");
  EXPECT_EQ(csv.code, 0);
  EXPECT_TRUE(csv.out.find(",ambiguous,,one round: between-process spread unknown; rerun with --rounds>=4") !=
              std::string::npos);
  Result md = attnbench("compare " + b + " " + n + " --md=-");
  EXPECT_TRUE(md.out.find("one round: between-process spread unknown") != std::string::npos);
  json j = json::parse(attnbench("compare " + b + " " + n + " --json=-").out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["counts"]["ambiguous_one_round"].get<int>(), 1);
  EXPECT_EQ(j["exit_code"].get<int>(), 0);
  // 2x in one round is beyond what a second process gives: slower, exit 1.
  find_row(next, "nested", 1)["time_ms"]["median"] = m * 2;
  save("one_new.json", next);
  EXPECT_EQ(attnbench("compare " + b + " " + n).code, 1);
  EXPECT_EQ(verdict_of(b, n, "nested", 1), std::string("slower"));
  EXPECT_EQ(verdict_of(n, b, "nested", 1), std::string("faster"));
}

// Issue 49's cosmetics: `list` aligns its strategy table and says "1 launch"; a CPU report's header says
// hardware threads, not SMs, and that no cache is flushed (the CPU backend's flush_l2 does nothing).
TEST(CompareCli, list_aligns_and_a_cpu_header_says_what_it_did) {
  Result list = attnbench("list");
  ASSERT_EQ(list.code, 0);
  std::stringstream ss(list.out);
  std::vector<std::string> strategies;
  bool in = false;
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("strategies", 0) == 0) in = true;
    else if (!line.empty() && line[0] != ' ') in = false;
    else if (in) strategies.push_back(line);
  }
  ASSERT_EQ(strategies.size(), 5u);
  // Columns by character (the formulas hold the two-byte "·"): the description and the "->" start in one
  // column on every line.
  auto column_of = [](const std::string& line, std::size_t byte) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < byte; ++i) chars += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    return chars;
  };
  std::size_t arrow = column_of(strategies[0], strategies[0].find(" -> "));
  std::size_t what = strategies[0].find_first_not_of(' ', strategies[0].find(' ', 2));
  for (const std::string& l : strategies) {
    EXPECT_EQ(column_of(l, l.find(" -> ")), arrow) << l;
    EXPECT_EQ(l.find_first_not_of(' ', l.find(' ', 2)), what) << l;
    EXPECT_EQ(l.find(" 1 launches"), std::string::npos) << l;
  }
  EXPECT_TRUE(list.out.find("-> 1 launch\n") != std::string::npos || list.out.find("->    1 launch\n") != std::string::npos)
      << list.out;
  Result report = attnbench("report " + save("cpu_header.json", tool_report()));
  ASSERT_EQ(report.code, 0);
  std::string head = report.out.substr(0, report.out.find("problem"));
  EXPECT_TRUE(head.find("(cpu, ") != std::string::npos && head.find("hardware threads") != std::string::npos) << head;
  EXPECT_EQ(head.find("SMs"), std::string::npos) << head;
  EXPECT_EQ(head.find("L2 flushed"), std::string::npos) << head;
  EXPECT_TRUE(head.find("caches not flushed (cpu backend)") != std::string::npos) << head;
}
