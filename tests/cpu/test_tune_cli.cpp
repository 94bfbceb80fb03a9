// `attnbench tune` end to end through the binary: it writes and merges a cache, rejects bad input with exit 2
// and one line, and `attnbench run --cache` then reports its GEMMs and fused tile as coming from the cache
// (and warns about entries from another environment instead of applying them).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tune/heuristic_cache.hpp"
#include "testing.hpp"

using namespace ab;
namespace fs = std::filesystem;

namespace {

fs::path dir() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("attnbench_test_tune_cli_" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

struct Result {
  int rc = -1;
  std::string out, err;
};

Result run(const std::string& args) {
  fs::path o = dir() / "stdout.txt", e = dir() / "stderr.txt";
  std::string cmd = std::string(ATTNBENCH_BINARY) + " " + args + " >" + o.string() + " 2>" + e.string();
  int st = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_text(o);
  r.err = read_text(e);
  return r;
}

const std::string kBase = " --backend=cpu --batch=1 --heads=2 --head_dim=16 --max_time=0.05 --quiet";
const std::string kGrid = kBase + " --seq_len=32";

bool one_error_line(const Result& r) {
  return r.rc == 2 && r.err.rfind("attnbench: error: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1;
}

}  // namespace

TEST(TuneCli, tune_writes_then_merges_a_cache) {
  std::string cache = (dir() / "cli.json").string();
  Result r = run("tune --cache=" + cache + kGrid + " --pages=1,2");
  if (r.rc != 0) std::fprintf(stderr, "%s%s", r.out.c_str(), r.err.c_str());
  ASSERT_TRUE(r.rc == 0);
  EXPECT_TRUE(r.out.find("GEMM shape") != std::string::npos);
  EXPECT_TRUE(r.out.find("fused problem") != std::string::npos);
  HeuristicCache first = HeuristicCache::load(cache);
  EXPECT_TRUE(first.gemm_entries().size() >= 8);
  EXPECT_EQ(first.fused_entries().size(), std::size_t(2));

  // A second tune of other problems keeps the first one's entries.
  r = run("tune --cache=" + cache + kBase + " --seq_len=48 --strategies=head_batched,fused");
  if (r.rc != 0) std::fprintf(stderr, "%s%s", r.out.c_str(), r.err.c_str());
  ASSERT_TRUE(r.rc == 0);
  HeuristicCache both = HeuristicCache::load(cache);
  EXPECT_EQ(both.gemm_entries().size(), first.gemm_entries().size() + 2);
  EXPECT_EQ(both.fused_entries().size(), std::size_t(3));
  for (const auto& e : first.gemm_entries()) EXPECT_TRUE(both.find_gemm(e.key, both.environments()[0]) != nullptr);
}

TEST(TuneCli, dry_run_lists_without_timing_or_writing) {
  std::string cache = (dir() / "dry.json").string();
  Result r = run("tune --dry_run --search=exhaustive --cache=" + cache + kGrid + " --pages=1,2");
  if (r.rc != 0) std::fprintf(stderr, "%s%s", r.out.c_str(), r.err.c_str());
  ASSERT_TRUE(r.rc == 0);
  EXPECT_TRUE(r.out.find("candidates over") != std::string::npos);
  EXPECT_TRUE(r.out.find("tiles that can implement it") != std::string::npos);
  EXPECT_TRUE(r.out.find("no cache was written") != std::string::npos);
  EXPECT_TRUE(!fs::exists(cache));
  // Without --cache, too.
  EXPECT_EQ(run("tune --dry_run" + kGrid).rc, 0);
}

TEST(TuneCli, tune_rejects_bad_input_with_one_line) {
  std::string corrupt = (dir() / "corrupt.json").string();
  {
    std::ofstream f(corrupt);
    f << "{\"schema\": \"attnbench.cache/1\", \"gemm\": [ {";
  }
  Result r = run("tune --cache=" + corrupt + kGrid);
  EXPECT_TRUE(one_error_line(r));
  EXPECT_TRUE(r.err.find(corrupt) != std::string::npos);
  EXPECT_EQ(read_text(corrupt), std::string("{\"schema\": \"attnbench.cache/1\", \"gemm\": [ {"));

  std::string report = (dir() / "report.json").string();
  {
    std::ofstream f(report);
    f << "{\"schema\": \"attnbench.report/1\", \"results\": []}";
  }
  r = run("tune --cache=" + report + kGrid);
  EXPECT_TRUE(one_error_line(r));
  EXPECT_TRUE(r.err.find("attnbench.cache/1") != std::string::npos);

  std::string fresh = (dir() / "fresh.json").string();
  EXPECT_TRUE(one_error_line(run("tune" + kGrid)));  // no --cache
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --search=greedy")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --top=0")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --finalists=0")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --screen_samples=0")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --screen_cutoff=0.5")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --probe_calls=-1")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --screen_calls=-1")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --halving_keep=1")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --halving_keep=-0.5")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --halving_final=0")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --halving_band=-0.01")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --group_margin=0.5")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --group_margin=-1")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --max_candidates=-1")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --timer=sundial")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + fresh + kGrid + " --strategies=nested,nope")));
  EXPECT_TRUE(one_error_line(run("tune --cache=" + (dir() / "missing_dir" / "c.json").string() + kGrid)));
  EXPECT_TRUE(!fs::exists(fresh));
  // run --cache with a missing file is a clear error too.
  Result m = run("run --cache=" + (dir() / "nope.json").string() + kGrid);
  EXPECT_TRUE(one_error_line(m));
  EXPECT_TRUE(m.err.find("nope.json") != std::string::npos);
}

TEST(TuneCli, the_grouped_probe_flags_are_taken_and_the_header_says_so) {
  // Exhaustive and halving: the header names the grouped probe and its margin; --group_margin=0 turns it off.
  const std::string dry = " --backend=cpu --batch=1 --heads=2 --head_dim=16 --seq_len=32 --dry_run --search=exhaustive";
  Result on = run("tune" + dry + " --group_margin=2 --probe_flush");
  EXPECT_EQ(on.rc, 0) << on.err;
  EXPECT_NE(on.err.find("a grouped probe (a representative per base configuration first; the variants of those over "
                        "2x the fastest are not probed), successive halving"), std::string::npos) << on.err;
  Result off = run("tune" + dry + " --group_margin=0");
  EXPECT_EQ(off.rc, 0) << off.err;
  EXPECT_EQ(off.err.find("grouped probe"), std::string::npos) << off.err;
  Result heuristic = run("tune --backend=cpu --batch=1 --heads=2 --head_dim=16 --seq_len=32 --dry_run");
  EXPECT_EQ(heuristic.err.find("grouped probe"), std::string::npos) << heuristic.err;
}

TEST(TuneCli, run_with_the_cache_reports_cache_as_the_source) {
  std::string cache = (dir() / "for_run.json").string();
  ASSERT_TRUE(run("tune --cache=" + cache + kGrid + " --pages=2").rc == 0);
  std::string json = (dir() / "run.json").string();
  Result r = run("run --cache=" + cache + kGrid + " --pages=2 --json=" + json);
  ASSERT_TRUE(r.rc == 0);
  EXPECT_TRUE(r.err.find("another environment") == std::string::npos);
  nlohmann::json rep = nlohmann::json::parse(read_text(json));
  int rows = 0;
  for (const auto& row : rep["results"]) {
    ASSERT_TRUE(row["status"] == "ok");
    rows++;
    if (row["strategy"] == "fused") {
      EXPECT_EQ(row["config"]["tile_source"].get<std::string>(), std::string("cache"));
    } else {
      ASSERT_TRUE(!row["config"]["gemm_algos"].empty());
      for (const auto& g : row["config"]["gemm_algos"]) EXPECT_EQ(g["source"].get<std::string>(), std::string("cache"));
    }
    EXPECT_EQ(row["config"]["source"].get<std::string>(), std::string("cache"));
  }
  EXPECT_EQ(rows, 5);

  // The same entries labelled with another GPU: not applied, and the run says how many were skipped.
  HeuristicCache mine = HeuristicCache::load(cache);
  DeviceInfo h100;
  h100.backend = "cuda";
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc_major = 9;
  h100.driver = "550.54.15";
  h100.cuda_runtime = "12.4";
  h100.cublaslt = "120402";
  CacheEnvironment other = CacheEnvironment::from_device(h100);
  HeuristicCache foreign;
  foreign.add_environment(other);
  for (auto e : mine.fused_entries()) {
    e.env = other.id();
    foreign.put_fused(e);
  }
  std::size_t n = mine.fused_entries().size();
  std::string foreign_path = (dir() / "foreign.json").string();
  foreign.save(foreign_path);
  r = run("run --cache=" + foreign_path + kGrid + " --pages=2 --json=" + json);
  ASSERT_TRUE(r.rc == 0);
  EXPECT_TRUE(r.err.find(std::to_string(n) + " cache entries come from another environment") != std::string::npos);
  rep = nlohmann::json::parse(read_text(json));
  for (const auto& row : rep["results"]) EXPECT_TRUE(row["config"]["source"] != "cache");
}

