// Heuristic cache (attnbench.cache/1): round trip, merging into a file, environment mismatch, and clear
// one-line errors for missing, corrupt and wrong-schema files.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "backends/cpu/cpu_backend.hpp"
#include "core/errors.hpp"
#include "core/json_document.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/plan_recorder.hpp"
#include "tune/problem_key.hpp"
#include "testing.hpp"

using namespace ab;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("attnbench_test_cache_" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string temp_file(const std::string& name) { return (temp_dir() / name).string(); }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

DeviceInfo gpu(const std::string& name, const std::string& driver = "550.54.15") {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = name;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.driver = driver;
  d.cuda_runtime = "12.4";
  d.cublaslt = "120402";
  return d;
}

GemmAlgo lt_algo(int id) {
  GemmAlgo a;
  a.attrs = {{"ALGO_ID", id},        {"TILE_ID", 20 + id},        {"STAGES_ID", 9},        {"SPLITK_NUM", 1},
             {"REDUCTION_SCHEME", 0}, {"CTA_SWIZZLING", id % 2},   {"CUSTOM_OPTION", 0},    {"INNER_SHAPE_ID", 0},
             {"CLUSTER_SHAPE_ID", 2}};
  for (int i = 0; i < 64; ++i) a.blob.push_back(static_cast<std::uint8_t>((i * 7 + id) & 0xff));
  a.label = "algo" + std::to_string(id);
  return a;
}

GemmShape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.b_trans = true;
  s.lda = k;
  s.ldb = k;
  s.ldc = n;
  s.mode = BatchMode::strided;
  s.batch = 384;
  s.stride_a = m * k;
  s.stride_b = n * k;
  s.stride_c = m * n;
  return s;
}

GemmCacheEntry gemm_entry(const CacheEnvironment& env, const GemmShape& s, const GemmAlgo& a, double best,
                          double heur) {
  GemmCacheEntry e;
  e.env = env.id();
  e.key = s.key();
  e.shape = s.to_json();
  e.algo = a;
  e.best_ms = best;
  e.heuristic_ms = heur;
  e.gain = heur / best;
  e.heuristic_algo = "algo0";
  e.candidates = 8;
  e.failed = 1;
  e.failures = nlohmann::json::array({{{"algo", "algo7"}, {"status", "failed"}, {"reason", "not supported"}}});
  e.search = "heuristic";
  e.top = 8;
  e.measured_with = {{"strategy", "head_batched"}, {"problem", "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full"}};
  e.tuned_at = "2025-01-01T00:00:00Z";
  return e;
}

Problem problem(std::int64_t s) { return make_problem(2, 4, s, 64, 1, 0, KvLayout::contiguous, DType::fp16, false); }

FusedCacheEntry fused_entry(const CacheEnvironment& env, const Problem& p, const FusedTile& t, double best) {
  FusedCacheEntry e;
  e.env = env.id();
  e.key = problem_cache_key(p);
  e.problem = problem_cache_json(p);
  e.tile = t;
  e.best_ms = best;
  e.default_ms = best * 1.25;
  e.gain = 1.25;
  e.default_tile = "m128n64w4s2";
  e.candidates = 3;
  e.tuned_at = "2025-01-01T00:00:00Z";
  return e;
}

// The UsageError message of `fn`, or "" when it does not throw one.
template <class Fn>
std::string usage_error_of(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(Cache, round_trip_keeps_every_field) {
  CacheEnvironment h100 = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  HeuristicCache c;
  c.add_environment(h100);
  c.put_gemm(gemm_entry(h100, shape(512, 512, 64), lt_algo(3), 0.120, 0.150));
  c.put_gemm(gemm_entry(h100, shape(512, 64, 512), lt_algo(5), 0.100, 0.100));
  FusedTile ws_tile{128, 128, 12, 2, TileFamily::prefill_ws};  // a warp-specialized tile: the family survives the cache
  c.put_fused(fused_entry(h100, problem(512), FusedTile{128, 128, 8, 2}, 0.05));
  c.put_fused(fused_entry(h100, problem(1024), ws_tile, 0.2));
  std::string path = temp_file("round_trip.json");
  c.save(path);

  HeuristicCache back = HeuristicCache::load(path);
  ASSERT_TRUE(back.gemm_entries().size() == 2);
  ASSERT_TRUE(back.fused_entries().size() == 2);
  ASSERT_TRUE(back.environments().size() == 1);
  EXPECT_TRUE(back.environments()[0] == h100);
  auto a = c.gemm_entries(), b = back.gemm_entries();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].to_json() == b[i].to_json());
  for (std::size_t i = 0; i < 2; ++i) EXPECT_TRUE(c.fused_entries()[i].to_json() == back.fused_entries()[i].to_json());
  EXPECT_TRUE(back.find_fused(problem(1024), h100)->tile == ws_tile);
  const GemmCacheEntry* e = back.find_gemm(shape(512, 512, 64).key(), h100);
  ASSERT_TRUE(e != nullptr);
  EXPECT_TRUE(e->algo.blob == lt_algo(3).blob);
  EXPECT_EQ(e->algo.blob.size(), std::size_t(64));
  EXPECT_TRUE(e->algo.attrs == lt_algo(3).attrs);
  EXPECT_EQ(e->algo.attrs["TILE_ID"].get<int>(), 23);
  EXPECT_NEAR(e->gain, 1.25, 1e-12);
  EXPECT_TRUE(back.find_fused(problem(512), h100)->tile == (FusedTile{128, 128, 8, 2}));
  EXPECT_TRUE(back.find_fused(problem(256), h100) == nullptr);
  // The document itself carries the schema tag and the environment metadata.
  nlohmann::json doc = read_json_document(path, kCacheSchema);
  EXPECT_EQ(doc["environments"][0]["gpu"].get<std::string>(), std::string("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(doc["environments"][0]["cublaslt"].get<std::string>(), std::string("120402"));
  EXPECT_EQ(doc["gemm"][0]["algo"]["blob"].get<std::string>().size(), std::size_t(128));
  // Saved atomically: no temporary file left beside it.
  for (const auto& f : fs::directory_iterator(temp_dir())) EXPECT_TRUE(!contains(f.path().filename().string(), ".tmp."));
}

TEST(Cache, merge_two_tunes_into_one_file) {
  std::string path = temp_file("merge.json");
  CacheEnvironment h100 = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  CacheEnvironment h200 = CacheEnvironment::from_device(gpu("NVIDIA H200"));
  {
    HeuristicCache first;
    first.add_environment(h100);
    first.put_gemm(gemm_entry(h100, shape(512, 512, 64), lt_algo(1), 0.2, 0.3));
    first.put_fused(fused_entry(h100, problem(512), FusedTile{64, 64, 4, 2}, 0.05));
    first.save(path);
  }
  {
    HeuristicCache second;  // another shape, and another GPU
    second.add_environment(h100);
    second.add_environment(h200);
    second.put_gemm(gemm_entry(h100, shape(1024, 1024, 64), lt_algo(2), 0.5, 0.6));
    second.put_gemm(gemm_entry(h200, shape(512, 512, 64), lt_algo(4), 0.15, 0.2));
    HeuristicCache written = second.save(path);
    EXPECT_EQ(written.gemm_entries().size(), std::size_t(3));
  }
  HeuristicCache both = HeuristicCache::load(path);
  EXPECT_EQ(both.gemm_entries().size(), std::size_t(3));
  EXPECT_EQ(both.fused_entries().size(), std::size_t(1));
  EXPECT_EQ(both.environments().size(), std::size_t(2));
  ASSERT_TRUE(both.find_gemm(shape(512, 512, 64).key(), h100) != nullptr);
  EXPECT_EQ(both.find_gemm(shape(512, 512, 64).key(), h100)->algo.label, std::string("algo1"));
  EXPECT_EQ(both.find_gemm(shape(512, 512, 64).key(), h200)->algo.label, std::string("algo4"));
  {
    HeuristicCache third;  // the same key on the same environment: replaced by the newer entry
    third.add_environment(h100);
    third.put_gemm(gemm_entry(h100, shape(512, 512, 64), lt_algo(6), 0.18, 0.3));
    third.put_fused(fused_entry(h100, problem(512), FusedTile{128, 64, 4, 2}, 0.04));
    third.save(path);
  }
  HeuristicCache after = HeuristicCache::load(path);
  EXPECT_EQ(after.gemm_entries().size(), std::size_t(3));
  EXPECT_EQ(after.find_gemm(shape(512, 512, 64).key(), h100)->algo.label, std::string("algo6"));
  EXPECT_TRUE(after.find_gemm(shape(512, 512, 64).key(), h100)->algo.blob == lt_algo(6).blob);
  EXPECT_NEAR(after.find_gemm(shape(512, 512, 64).key(), h100)->best_ms, 0.18, 1e-12);
  EXPECT_EQ(after.find_gemm(shape(512, 512, 64).key(), h200)->algo.label, std::string("algo4"));
  EXPECT_TRUE(after.find_gemm(shape(1024, 1024, 64).key(), h100) != nullptr);
  EXPECT_TRUE(after.find_fused(problem(512), h100)->tile == (FusedTile{128, 64, 4, 2}));
}

TEST(Cache, in_memory_merge_replaces_same_key_only) {
  CacheEnvironment env = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  HeuristicCache a, b;
  a.add_environment(env);
  b.add_environment(env);
  a.put_gemm(gemm_entry(env, shape(64, 64, 64), lt_algo(1), 1, 1));
  a.put_gemm(gemm_entry(env, shape(128, 64, 64), lt_algo(2), 1, 1));
  b.put_gemm(gemm_entry(env, shape(64, 64, 64), lt_algo(3), 1, 1));
  a.merge(b);
  EXPECT_EQ(a.gemm_entries().size(), std::size_t(2));
  EXPECT_EQ(a.find_gemm(shape(64, 64, 64).key(), env)->algo.label, std::string("algo3"));
  EXPECT_EQ(a.find_gemm(shape(128, 64, 64).key(), env)->algo.label, std::string("algo2"));
}

TEST(Cache, environment_mismatch_is_skipped_and_counted) {
  auto cpu = make_cpu_backend();
  DeviceInfo here = cpu->device_info();
  CacheEnvironment mine = CacheEnvironment::from_device(here);
  CacheEnvironment other = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  DeviceInfo newer_driver = gpu("NVIDIA H100 80GB HBM3", "560.28.03");
  EXPECT_TRUE(CacheEnvironment::from_device(newer_driver) != other);
  EXPECT_TRUE(CacheEnvironment::from_device(newer_driver).id() != other.id());

  GemmShape served = shape(32, 32, 16), foreign = shape(48, 48, 16);
  HeuristicCache c;
  c.add_environment(mine);
  c.add_environment(other);
  c.put_gemm(gemm_entry(mine, served, lt_algo(1), 1, 1));
  c.put_gemm(gemm_entry(other, foreign, lt_algo(2), 1, 1));
  c.put_gemm(gemm_entry(other, served, lt_algo(3), 1, 1));
  c.put_fused(fused_entry(other, problem(512), FusedTile{64, 64, 4, 2}, 0.1));
  std::string path = temp_file("mismatch.json");
  c.save(path);
  HeuristicCache loaded = HeuristicCache::load(path);

  EXPECT_EQ(loaded.install(*cpu), 3);  // two GEMM entries and one fused entry from the H100
  EXPECT_EQ(loaded.foreign_entries(here), 3);
  EXPECT_EQ(loaded.foreign_entries(gpu("NVIDIA H100 80GB HBM3")), 1);
  EXPECT_EQ(loaded.foreign_entries(newer_driver), 4);  // a driver update invalidates everything
  GemmPlan served_plan = cpu->gemm().make_plan(served);
  GemmPlan foreign_plan = cpu->gemm().make_plan(foreign);
  std::vector<GemmPlanChoice> rep = cpu->gemm().plan_report();
  ASSERT_TRUE(rep.size() == 2);
  EXPECT_EQ(rep[0].source, std::string("cache"));
  EXPECT_EQ(rep[1].source, std::string("heuristic"));
  // The fused entry is the H100's: not applied here, applied there.
  EXPECT_TRUE(!loaded.fused_tile(problem(512), here).has_value());
  EXPECT_TRUE(loaded.fused_tile(problem(512), gpu("NVIDIA H100 80GB HBM3")).has_value());
  EXPECT_TRUE(!loaded.fused_tile(problem(512), newer_driver).has_value());
}

// A plugin or peer entry records the library version it tuned and applies only to that version; an entry of a
// cache written before versions were recorded still loads, and applies to any version.
TEST(Cache, plugin_entries_record_their_library_version) {
  CacheEnvironment env = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  PluginCacheEntry e;
  e.env = env.id();
  e.strategy = "peer:cudnn";
  e.key = problem_cache_key(problem(512)) + "|" + e.strategy;
  e.problem = problem_cache_json(problem(512));
  e.config = "plan-2";
  e.best_ms = 0.07;
  e.default_ms = 0.08;
  e.default_config = "heuristics";
  e.candidates = 4;
  e.tuned_at = "2026-11-27T00:00:00Z";
  e.library_version = "cuDNN 9.19.0";
  HeuristicCache c;
  c.add_environment(env);
  c.put_plugin(e);
  const std::string path = temp_file("plugin_versions.json");
  c.save(path);
  HeuristicCache loaded = HeuristicCache::load(path);
  ASSERT_EQ(loaded.plugin_entries().size(), 1u);
  const PluginCacheEntry got = loaded.plugin_entries().front();
  EXPECT_EQ(got.library_version, "cuDNN 9.19.0");
  EXPECT_TRUE(got.applies_to_library("cuDNN 9.19.0"));
  EXPECT_FALSE(got.applies_to_library("cuDNN 9.20.0"));  // stale, as an entry of another environment is

  // The same entry as a cache before library versions wrote it: it loads, records none, applies to any version.
  nlohmann::json old = read_json_document(path, kCacheSchema);
  ASSERT_TRUE(old["plugins"][0].contains("library_version"));
  old["plugins"][0].erase("library_version");
  HeuristicCache before = HeuristicCache::from_json(old, "'old.json'");
  ASSERT_EQ(before.plugin_entries().size(), 1u);
  EXPECT_EQ(before.plugin_entries().front().library_version, "");
  EXPECT_TRUE(before.plugin_entries().front().applies_to_library("cuDNN 9.20.0"));
  EXPECT_EQ(before.plugin_config(problem(512), "peer:cudnn", gpu("NVIDIA H100 80GB HBM3")), std::optional<std::string>("plan-2"));
  EXPECT_FALSE(before.plugin_entries().front().to_json().contains("library_version"));  // written only when known

  old["plugins"][0]["library_version"] = 9;
  EXPECT_TRUE(contains(usage_error_of([&] { HeuristicCache::from_json(old, "'old.json'"); }),
                       "field 'library_version' must be a string"));
}

// Captures the chooser install() hands the backend's GEMM engine.
struct ChooserSpy : public ComposedBackend {
  struct Engine : public ForwardingGemmEngine {
    using ForwardingGemmEngine::ForwardingGemmEngine;
    GemmEngine::Chooser chooser;
    void set_chooser(Chooser c) override {
      chooser = c;
      ForwardingGemmEngine::set_chooser(std::move(c));
    }
  };
  explicit ChooserSpy(Backend& inner) : ComposedBackend(inner), engine(inner.gemm()) { replace_gemm(engine); }
  Engine engine;
};

TEST(Cache, chooser_serves_the_cached_algorithm_itself) {
  auto cpu = make_cpu_backend();
  ChooserSpy spy(*cpu);
  CacheEnvironment mine = CacheEnvironment::from_device(spy.device_info());
  CacheEnvironment other = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  HeuristicCache c;
  c.add_environment(mine);
  c.add_environment(other);
  c.put_gemm(gemm_entry(mine, shape(32, 32, 16), lt_algo(4), 1, 1));
  c.put_gemm(gemm_entry(other, shape(48, 48, 16), lt_algo(5), 1, 1));
  EXPECT_EQ(c.install(spy), 1);
  ASSERT_TRUE(static_cast<bool>(spy.engine.chooser));
  GemmAlgo got;
  EXPECT_TRUE(spy.engine.chooser(shape(32, 32, 16), &got));
  EXPECT_TRUE(got.blob == lt_algo(4).blob);
  EXPECT_TRUE(got.attrs == lt_algo(4).attrs);
  EXPECT_EQ(got.label, std::string("algo4"));
  EXPECT_TRUE(!spy.engine.chooser(shape(48, 48, 16), &got));  // the H100's entry is not served here
  EXPECT_TRUE(!spy.engine.chooser(shape(16, 16, 16), &got));
}

TEST(Cache, missing_corrupt_and_wrong_schema_files_are_one_line_usage_errors) {
  auto one_line = [](const std::string& m) { return !m.empty() && m.find('\n') == std::string::npos; };

  std::string missing = temp_file("does_not_exist.json");
  std::string m = usage_error_of([&] { HeuristicCache::load(missing); });
  EXPECT_TRUE(one_line(m));
  EXPECT_TRUE(contains(m, missing));
  EXPECT_TRUE(contains(m, "cannot open"));
  EXPECT_TRUE(HeuristicCache::load_or_empty(missing).empty());

  std::string truncated = temp_file("truncated.json");
  write_text(truncated, "{\"schema\": \"attnbench.cache/1\", \"gemm\": [ {\"env\": ");
  m = usage_error_of([&] { HeuristicCache::load(truncated); });
  EXPECT_TRUE(one_line(m));
  EXPECT_TRUE(contains(m, truncated));
  EXPECT_TRUE(contains(m, "malformed"));

  std::string report = temp_file("a_report.json");
  write_text(report, "{\"schema\": \"attnbench.report/1\", \"results\": []}");
  m = usage_error_of([&] { HeuristicCache::load(report); });
  EXPECT_TRUE(one_line(m));
  EXPECT_TRUE(contains(m, "attnbench.report/1"));
  EXPECT_TRUE(contains(m, "attnbench.cache/1"));

  std::string untagged = temp_file("untagged.json");
  write_text(untagged, "[1, 2, 3]");
  m = usage_error_of([&] { HeuristicCache::load(untagged); });
  EXPECT_TRUE(one_line(m));
  EXPECT_TRUE(contains(m, "schema"));

  // A valid file, then one field at a time broken: each names the entry and the field.
  CacheEnvironment h100 = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  HeuristicCache c;
  c.add_environment(h100);
  c.put_gemm(gemm_entry(h100, shape(512, 512, 64), lt_algo(3), 0.12, 0.15));
  c.put_fused(fused_entry(h100, problem(512), FusedTile{128, 128, 8, 2}, 0.05));
  nlohmann::json good = c.to_json();
  struct Breakage {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    const char* expect;
  };
  std::vector<Breakage> cases = {
      {"no best_ms", [](nlohmann::json& d) { d["gemm"][0].erase("best_ms"); }, "gemm[0]"},
      {"best_ms text", [](nlohmann::json& d) { d["gemm"][0]["best_ms"] = "fast"; }, "best_ms"},
      {"blob not hex", [](nlohmann::json& d) { d["gemm"][0]["algo"]["blob"] = "zz"; }, "blob"},
      {"blob short", [](nlohmann::json& d) { d["gemm"][0]["algo"]["blob"] = "abcd"; }, "64 bytes"},
      {"attrs not object", [](nlohmann::json& d) { d["gemm"][0]["algo"]["attrs"] = 5; }, "attrs"},
      {"unknown env", [](nlohmann::json& d) { d["gemm"][0]["env"] = "env-000000000000"; }, "env-000000000000"},
      {"env field missing", [](nlohmann::json& d) { d["environments"][0].erase("driver"); }, "driver"},
      {"env edited", [](nlohmann::json& d) { d["environments"][0]["gpu"] = "NVIDIA H200"; }, "does not match"},
      {"gemm not a list", [](nlohmann::json& d) { d["gemm"] = 3; }, "'gemm'"},
      {"tile missing", [](nlohmann::json& d) { d["fused"][0].erase("tile"); }, "fused[0]"},
      {"tile zero", [](nlohmann::json& d) { d["fused"][0]["tile"]["warps"] = 0; }, "positive"},
      {"candidates float", [](nlohmann::json& d) { d["gemm"][0]["candidates"] = 1.5; }, "candidates"},
      {"top text", [](nlohmann::json& d) { d["gemm"][0]["top"] = "eight"; }, "'top' must be an integer"},
      {"search number", [](nlohmann::json& d) { d["gemm"][0]["search"] = 3; }, "'search' must be a string"},
      {"problem list", [](nlohmann::json& d) { d["fused"][0]["problem"] = nlohmann::json::array(); }, "'problem' must be an object"},
      {"schema number", [](nlohmann::json& d) { d["schema"] = 1; }, "schema"},
  };
  for (const auto& b : cases) {
    nlohmann::json doc = good;
    b.edit(doc);
    std::string path = temp_file("broken.json");
    write_text(path, doc.dump(1));
    std::string msg = usage_error_of([&] { HeuristicCache::load(path); });
    bool ok = one_line(msg) && contains(msg, path) && contains(msg, b.expect);
    if (!ok) std::fprintf(stderr, "  case '%s': message '%s'\n", b.name, msg.c_str());
    EXPECT_TRUE(ok);
  }
  // The untouched document loads.
  std::string path = temp_file("good.json");
  write_text(path, good.dump(1));
  EXPECT_EQ(HeuristicCache::load(path).gemm_entries().size(), std::size_t(1));
}

TEST(Cache, save_never_overwrites_a_corrupt_file) {
  std::string path = temp_file("corrupt_target.json");
  write_text(path, "this is not json");
  CacheEnvironment env = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  HeuristicCache c;
  c.add_environment(env);
  c.put_gemm(gemm_entry(env, shape(64, 64, 64), lt_algo(1), 1, 1));
  std::string m = usage_error_of([&] { c.save(path); });
  EXPECT_TRUE(contains(m, path));
  EXPECT_EQ(read_text(path), std::string("this is not json"));
  // An unwritable directory is a UsageError too.
  EXPECT_TRUE(!usage_error_of([&] { c.save(temp_file("no_such_dir/cache.json")); }).empty());
}

TEST(Cache, environment_id_is_stable_and_field_sensitive) {
  CacheEnvironment a = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  CacheEnvironment b = CacheEnvironment::from_device(gpu("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(a.id().size(), std::size_t(16));
  for (int field = 0; field < 6; ++field) {
    CacheEnvironment c = a;
    std::string* f[] = {&c.backend, &c.gpu, &c.cc, &c.driver, &c.cuda_runtime, &c.cublaslt};
    *f[field] += "x";
    EXPECT_TRUE(c.id() != a.id());
    EXPECT_TRUE(c != a);
  }
  EXPECT_TRUE(CacheEnvironment::from_json(a.to_json(), "test") == a);
}

