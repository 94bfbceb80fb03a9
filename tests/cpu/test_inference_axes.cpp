// The inference suites and keys: every suite in configs/ expands; each model suite's head counts are the ones
// docs/inference-shapes.md's table gives (its source); decode, chunked-prefill and prefill suites have the
// shapes their names promise and fit an 80 GB GPU; a heuristic cache written before the inference axes still
// loads and matches the same self-attention problems, while GQA, decode and ragged keys name their axes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/problem.hpp"
#include "tune/cache_environment.hpp"
#include "tune/heuristic_cache.hpp"
#include "tune/problem_key.hpp"
#include "testing.hpp"

using namespace ab;
namespace fs = std::filesystem;

namespace {

const std::string kSource = ATTNBENCH_SOURCE_DIR;

struct ModelRow {
  std::string model;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;
};

// The model table of docs/inference-shapes.md: "| `slug` | Model | H | KVH | D | source |".
std::map<std::string, ModelRow> documented_models() {
  std::ifstream f(kSource + "/docs/inference-shapes.md");
  std::map<std::string, ModelRow> out;
  std::regex row(R"(^\|\s*`([a-z0-9.\-]+)`\s*\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|)");
  std::string line;
  std::smatch m;
  while (std::getline(f, line))
    if (std::regex_search(line, m, row))
      out[m[1]] = ModelRow{m[2], std::stoll(m[3]), std::stoll(m[4]), std::stoll(m[5])};
  return out;
}

// The MLA table of docs/inference-shapes.md: "| `slug` | Model | H / KVH / D / Dv (decode) | H / KVH / D / Dv (prefill) |".
struct MlaRow {
  std::int64_t decode[4] = {}, prefill[4] = {};  // heads, kv_heads, head_dim, head_dim_v
};
std::map<std::string, MlaRow> documented_mla_models() {
  std::ifstream f(kSource + "/docs/inference-shapes.md");
  std::map<std::string, MlaRow> out;
  const std::string four = R"((\d+)\s*/\s*(\d+)\s*/\s*(\d+)\s*/\s*(\d+))";
  std::regex row(R"(^\|\s*`([a-z0-9.\-]+)`\s*\|\s*[^|]+?\s*\|\s*)" + four + R"(\s*\|\s*)" + four + R"(\s*\|)");
  std::string line;
  std::smatch m;
  while (std::getline(f, line))
    if (std::regex_search(line, m, row))
      for (int i = 0; i < 4; ++i) {
        out[m[1]].decode[i] = std::stoll(m[2 + i]);
        out[m[1]].prefill[i] = std::stoll(m[6 + i]);
      }
  return out;
}

const char* const kKinds[] = {"decode", "chunked-prefill", "prefill"};

// Bytes a problem's Q, O and K/V occupy on the device (the paged pool instead of contiguous K/V).
double tensor_bytes(const Problem& p) {
  const bool paged = p.kv_layout == KvLayout::paged;
  double k = paged ? double(p.pool_elements()) : double(p.kv_elements());
  double v = paged ? double(p.v_pool_elements()) : double(p.v_elements());
  return (double(p.q_elements()) + double(p.o_elements()) + k + v) * double(dtype_size(p.dtype));
}

std::vector<Problem> suite(const std::string& name) {
  std::string got;
  auto ps = load_suite(kSource + "/configs/" + name + ".json", &got);
  EXPECT_EQ(got, name);
  return ps;
}

}  // namespace

TEST(InferenceSuites, every_suite_in_configs_expands) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(kSource + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    std::string name;
    std::vector<Problem> ps;
    EXPECT_NO_THROW(ps = load_suite(entry.path().string(), &name)) << entry.path();
    EXPECT_EQ(name, entry.path().stem().string());
    EXPECT_TRUE(!ps.empty()) << entry.path();
    EXPECT_LE(ps.size(), std::size_t(64)) << entry.path() << ": a suite is tens of problems";
    ++n;
  }
  EXPECT_GE(n, 20);
  EXPECT_TRUE(!fs::exists(kSource + "/configs/paged-decode.json"));  // renamed paged-prefill: it is a prefill
  for (const Problem& p : suite("paged-prefill")) EXPECT_EQ(p.q_len, p.seq_len);
}

TEST(InferenceSuites, model_suites_match_the_documented_head_counts) {
  auto models = documented_models();
  ASSERT_GE(models.size(), std::size_t(5));
  bool mqa = false;
  for (const auto& [slug, m] : models) {
    mqa = mqa || m.kv_heads == 1;
    EXPECT_EQ(m.heads % m.kv_heads, 0) << slug;
    for (const char* kind : kKinds) {
      std::string name = slug + "-" + kind;
      ASSERT_TRUE(fs::exists(kSource + "/configs/" + name + ".json")) << name;
      for (const Problem& p : suite(name)) {
        EXPECT_EQ(p.heads, m.heads) << name;
        EXPECT_EQ(p.kv_heads, m.kv_heads) << name;
        EXPECT_EQ(p.head_dim, m.head_dim) << name;
      }
    }
  }
  EXPECT_TRUE(mqa);
  // The issue's models, with their published head counts.
  std::map<std::string, std::vector<std::int64_t>> published = {{"llama3.1-8b", {32, 8, 128}},
                                                                 {"llama3.1-70b", {64, 8, 128}},
                                                                 {"mistral-7b", {32, 8, 128}},
                                                                 {"qwen2.5-7b", {28, 4, 128}}};
  for (const auto& [slug, hd] : published) {
    ASSERT_TRUE(models.count(slug)) << slug;
    EXPECT_EQ(models[slug].heads, hd[0]);
    EXPECT_EQ(models[slug].kv_heads, hd[1]);
    EXPECT_EQ(models[slug].head_dim, hd[2]);
  }
  // Every model-style suite file is in the table.
  for (const auto& entry : fs::directory_iterator(kSource + "/configs")) {
    std::string stem = entry.path().stem().string();
    for (const char* kind : kKinds) {
      std::string tail = std::string("-") + kind;
      if (stem.size() > tail.size() && stem.compare(stem.size() - tail.size(), tail.size(), tail) == 0 &&
          stem != "llama-prefill" && stem != "paged-prefill") {
        std::string slug = stem.substr(0, stem.size() - tail.size());
        if (std::string(kind) == "prefill" && slug.size() > 8 && slug.compare(slug.size() - 8, 8, "-chunked") == 0)
          continue;
        EXPECT_TRUE(models.count(slug) || documented_mla_models().count(slug))
            << stem << " is not in docs/inference-shapes.md's tables";
      }
    }
  }
}

// MLA models: decode in the absorbed form (one latent KV head, V narrower than K, 64-token pages, one query or
// two: multi-token prediction), chunked prefill and prefill in the expanded one, each as its table row says.
TEST(InferenceSuites, mla_suites_match_their_documented_rows) {
  const auto mla = documented_mla_models();
  ASSERT_TRUE(mla.count("deepseek-v3"));
  const MlaRow& v3 = mla.at("deepseek-v3");
  EXPECT_EQ(std::vector<std::int64_t>(v3.decode, v3.decode + 4), (std::vector<std::int64_t>{128, 1, 576, 512}));
  EXPECT_EQ(std::vector<std::int64_t>(v3.prefill, v3.prefill + 4), (std::vector<std::int64_t>{128, 128, 192, 128}));
  for (const auto& [slug, row] : mla)
    for (const char* kind : kKinds) {
      const bool decode = std::string(kind) == "decode";
      const std::int64_t* want = decode ? row.decode : row.prefill;
      int paged = 0;
      for (const Problem& p : suite(slug + "-" + kind)) {
        EXPECT_EQ(std::vector<std::int64_t>({p.heads, p.kv_heads, p.head_dim, p.head_dim_v}),
                  std::vector<std::int64_t>(want, want + 4)) << p.label();
        EXPECT_EQ(p.dtype, DType::bf16) << p.label();
        if (p.kv_layout == KvLayout::paged) {
          ++paged;
          EXPECT_EQ(p.page_size, 64) << p.label();
        }
        if (decode) EXPECT_LE(p.q_len, 2) << p.label();
        if (std::string(kind) == "prefill") EXPECT_EQ(p.q_len, p.seq_len) << p.label();
        if (std::string(kind) == "chunked-prefill") EXPECT_LT(p.q_len, p.seq_len) << p.label();
        EXPECT_LT(tensor_bytes(p), 40e9) << p.label();
      }
      EXPECT_GE(paged, 1) << slug << "-" << kind;
    }
}

TEST(InferenceSuites, suites_have_the_shapes_their_names_promise) {
  for (const auto& [slug, m] : documented_models()) {
    // Decode: one query, batch 1..256, KV 1k..32k, 16-token pages, paged, some ragged; fits 80 GB.
    auto dec = suite(slug + "-decode");
    std::int64_t bmin = 1 << 30, bmax = 0, smin = 1 << 30, smax = 0;
    int ragged = 0, paged = 0;
    double largest = 0;
    for (const Problem& p : dec) {
      EXPECT_EQ(p.q_len, 1);
      bmin = std::min(bmin, p.batch);
      bmax = std::max(bmax, p.batch);
      smin = std::min(smin, p.seq_len);
      smax = std::max(smax, p.seq_len);
      ragged += p.ragged();
      if (p.kv_layout == KvLayout::paged) {
        ++paged;
        EXPECT_EQ(p.page_size, 16);
      }
      largest = std::max(largest, tensor_bytes(p));
    }
    EXPECT_EQ(bmin, 1);
    EXPECT_EQ(bmax, 256);
    EXPECT_LE(smin, 1024);
    EXPECT_EQ(smax, 32768);
    EXPECT_GE(ragged, 2);
    EXPECT_GE(paged, int(dec.size()) - 1);
    EXPECT_LT(largest, 80e9) << slug << "-decode's largest problem needs " << largest / 1e9 << " GB";
    // Chunked prefill: chunks of 512..2048 queries against up to 32k keys, causal, q_len < KV length.
    std::set<std::int64_t> chunks;
    for (const Problem& p : suite(slug + "-chunked-prefill")) {
      EXPECT_TRUE(p.causal);
      EXPECT_LT(p.q_len, p.min_kv_len());
      EXPECT_LE(p.seq_len, 32768);
      chunks.insert(p.q_len);
      EXPECT_LT(tensor_bytes(p), 80e9);
    }
    EXPECT_EQ(*chunks.begin(), 512);
    EXPECT_EQ(*chunks.rbegin(), 2048);
    // Prefill: the whole prompt, causal.
    for (const Problem& p : suite(slug + "-prefill")) {
      EXPECT_TRUE(p.causal);
      EXPECT_EQ(p.q_len, p.seq_len);
      EXPECT_TRUE(!p.ragged());
    }
  }
}

TEST(InferenceSuites, a_suite_whose_kv_heads_do_not_divide_heads_is_refused) {
  nlohmann::json j = {{"name", "bad"},
                      {"grids", nlohmann::json::array({{{"batch", 1}, {"heads", 32}, {"kv_heads", 5}, {"seq_len", 64}}})}};
  try {
    suite_from_json(j, "bad.json");
    ADD_FAILURE() << "accepted kv_heads=5 with heads=32";
  } catch (const std::exception& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kv_heads"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// A cache written before the inference axes (tests/data/cache-before-inference-axes.json: problem JSON without
// kv_heads / q_len, keys like B32_H12_S512_D64_P1_ps512_contiguous_fp16_full) still loads, and its entries
// still serve the same self-attention problems.
TEST(InferenceCache, a_cache_from_before_the_inference_axes_still_matches) {
  HeuristicCache c = HeuristicCache::load(kSource + "/tests/data/cache-before-inference-axes.json");
  ASSERT_EQ(c.environments().size(), std::size_t(1));
  CacheEnvironment env = c.environments()[0];
  EXPECT_EQ(c.gemm_entries().size(), std::size_t(1));
  ASSERT_EQ(c.fused_entries().size(), std::size_t(2));

  Problem self = make_problem(32, 12, 512, 64, 1, 0, KvLayout::contiguous, DType::fp16, false);
  EXPECT_EQ(problem_cache_key(self), "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full");
  const FusedCacheEntry* e = c.find_fused(self, env);
  ASSERT_TRUE(e != nullptr);
  EXPECT_TRUE(e->tile == (FusedTile{128, 64, 4, 2}));

  Problem paged = make_problem(4, 8, 1000, 128, 3, 0, KvLayout::paged, DType::bf16, true);
  EXPECT_EQ(problem_cache_key(paged), "B4_H8_S1000_D128_P3_ps334_paged_bf16_causal");
  ASSERT_TRUE(c.find_fused(paged, env) != nullptr);
  EXPECT_TRUE(c.find_fused(paged, env)->tile == (FusedTile{64, 64, 4, 2}));

  // The same sizes with grouped KV heads or a shorter query are other problems: the old entries do not serve them.
  ProblemSpec s;
  s.batch = 32, s.heads = 12, s.kv_heads = 4, s.seq_len = 512, s.head_dim = 64, s.pages = 1;
  EXPECT_TRUE(c.find_fused(make_problem(s), env) == nullptr);
  s.kv_heads = 12, s.q_len = 1;
  EXPECT_TRUE(c.find_fused(make_problem(s), env) == nullptr);
}

TEST(InferenceCache, inference_keys_name_kv_heads_q_len_and_lengths) {
  ProblemSpec s;
  s.batch = 64, s.heads = 32, s.kv_heads = 8, s.seq_len = 4096, s.q_len = 1, s.head_dim = 128, s.page_size = 16;
  s.kv_layout = KvLayout::paged;
  s.dtype = DType::bf16;
  std::string key = problem_cache_key(make_problem(s));
  EXPECT_NE(key.find("KVH8"), std::string::npos) << key;
  EXPECT_NE(key.find("q1"), std::string::npos) << key;
  EXPECT_EQ(key.find("lens"), std::string::npos) << key;

  // Ragged: the key carries a fragment of the lengths, and two different length sets differ.
  ProblemSpec r = s;
  r.batch = 3;
  r.seq_len = 0;
  r.kv_lens = {17, 4096, 900};
  r.kv_lens_spec = "list:17,4096,900";
  std::string rk = problem_cache_key(make_problem(r));
  EXPECT_NE(rk.find("lens"), std::string::npos) << rk;
  EXPECT_NE(rk.find("KVH8"), std::string::npos) << rk;
  r.kv_lens = {18, 4096, 900};
  r.kv_lens_spec = "list:18,4096,900";
  EXPECT_NE(problem_cache_key(make_problem(r)), rk);

  // MQA
  ProblemSpec q = s;
  q.heads = 71, q.kv_heads = 1, q.head_dim = 64;
  EXPECT_NE(problem_cache_key(make_problem(q)).find("KVH1"), std::string::npos);
}
