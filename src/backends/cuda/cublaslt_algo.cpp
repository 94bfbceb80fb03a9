// Decode, rebuild, check and enumerate cuBLASLt matmul algorithms (after the cuBLASLt LtMatmulCustomFind
// sample's search).
#include "backends/cuda/cublaslt_algo.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <cstring>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "backends/cuda/cublaslt_names.hpp"
#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

namespace {

template <class T>
bool get_config(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t attr, T* v) {
  std::size_t written = 0;
  return cublasLtMatmulAlgoConfigGetAttribute(&a, attr, v, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

template <class T>
bool set_config(cublasLtMatmulAlgo_t* a, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  return cublasLtMatmulAlgoConfigSetAttribute(a, attr, &v, sizeof(T)) == CUBLAS_STATUS_SUCCESS;
}

template <class T>
bool get_cap(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoCapAttributes_t attr, T* v) {
  std::size_t written = 0;
  return cublasLtMatmulAlgoCapGetAttribute(&a, attr, v, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

// A list-valued capability (tile ids, stages ids).
std::vector<std::uint32_t> get_cap_list(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoCapAttributes_t attr) {
  std::size_t need = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, attr, nullptr, 0, &need) != CUBLAS_STATUS_SUCCESS || need == 0) return {};
  std::vector<std::uint32_t> v(need / sizeof(std::uint32_t));
  std::size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, attr, v.data(), v.size() * sizeof(std::uint32_t), &written) != CUBLAS_STATUS_SUCCESS)
    return {};
  v.resize(written / sizeof(std::uint32_t));
  return v;
}

const char* reduction_name(std::uint32_t r) {
  switch (r) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute-type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output-type";
    default: return "?";
  }
}

std::string blob_key(const cublasLtMatmulAlgo_t& a) {
  return std::string(reinterpret_cast<const char*>(&a), sizeof a);
}

}  // namespace

GemmAlgo decode_algo(const cublasLtMatmulAlgo_t& algo) {
  GemmAlgo g;
  std::int32_t id = -1, splitk = 1;
  std::uint32_t tile = 0, stages = 0, red = 0, swizzle = 0, custom = 0;
  std::uint16_t inner = 0, cluster = 0;
  nlohmann::json& a = g.attrs;
  a = nlohmann::json::object();
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_ID, &id)) a["ALGO_ID"] = id;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile)) a["TILE_ID"] = tile;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages)) a["STAGES_ID"] = stages;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk)) a["SPLITK_NUM"] = splitk;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red)) a["REDUCTION_SCHEME"] = red;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle)) a["CTA_SWIZZLING"] = swizzle;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom)) a["CUSTOM_OPTION"] = custom;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner)) a["INNER_SHAPE_ID"] = inner;
  if (get_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster)) a["CLUSTER_SHAPE_ID"] = cluster;
  g.blob.resize(sizeof algo);
  std::memcpy(g.blob.data(), &algo, sizeof algo);
  std::string label = fmt::format("algo {} tile {} stages {}", id, tile_name(static_cast<int>(tile)),
                                  stages_name(static_cast<int>(stages)));
  if (splitk > 1) label += fmt::format(" splitK {} ({})", splitk, reduction_name(red));
  if (swizzle) label += fmt::format(" swizzle {}", swizzle);
  if (custom) label += fmt::format(" custom {}", custom);
  if (inner) label += fmt::format(" inner {}", inner_shape_name(inner));
  if (cluster) label += fmt::format(" cluster {}", cluster_shape_name(cluster));
  g.label = label;
  return g;
}

bool check_algo(cublasLtHandle_t h, const LtPlan& p, const cublasLtMatmulAlgo_t& algo, std::size_t workspace_bytes,
                std::size_t* workspace_needed, std::string* why) {
  std::uint32_t need = 0;
  struct A { cublasLtMatmulAlgoCapAttributes_t cap; std::uint32_t have; const char* name; } aligns[] = {
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, p.align_a(), "B"},  // cuBLASLt's A is our B
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, p.align_b(), "A"},
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, p.align_c(), "C"},
      {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, p.align_c(), "D"}};
  for (const A& x : aligns)
    if (get_cap(algo, x.cap, &need) && need > x.have) {
      *why = fmt::format("needs {}-byte alignment of {}, the shape guarantees {}", need, x.name, x.have);
      return false;
    }
  std::int32_t support = 1;
  if (p.shape().mode == BatchMode::pointer_array && get_cap(algo, CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT, &support) && !support) {
    *why = "no pointer-array batch support";
    return false;
  }
  if (p.shape().mode == BatchMode::strided && get_cap(algo, CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT, &support) && !support) {
    *why = "no strided batch support";
    return false;
  }
  cublasLtMatmulHeuristicResult_t r{};
  cublasStatus_t s = cublasLtMatmulAlgoCheck(h, p.op(), p.lt_a(), p.lt_b(), p.lt_c(), p.lt_c(), &algo, &r);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("cublasLtMatmulAlgoCheck: {}", cublas_status_name(s));
    return false;
  }
  if (r.workspaceSize > workspace_bytes) {
    *why = fmt::format("needs {} bytes of workspace, {} available", r.workspaceSize, workspace_bytes);
    return false;
  }
  if (workspace_needed) *workspace_needed = r.workspaceSize;
  return true;
}

bool rebuild_algo(cublasLtHandle_t h, const LtPlan& p, const GemmAlgo& in, std::size_t workspace_bytes,
                  cublasLtMatmulAlgo_t* out, std::size_t* workspace_needed, std::string* why) {
  std::string blob_why;
  if (in.blob.size() == sizeof(cublasLtMatmulAlgo_t)) {
    cublasLtMatmulAlgo_t a{};
    std::memcpy(&a, in.blob.data(), sizeof a);
    if (check_algo(h, p, a, workspace_bytes, workspace_needed, &blob_why)) {
      *out = a;
      return true;
    }
    blob_why = "from its blob: " + blob_why;
  } else if (!in.blob.empty()) {
    blob_why = fmt::format("blob has {} bytes, not {}", in.blob.size(), sizeof(cublasLtMatmulAlgo_t));
  }
  const nlohmann::json& at = in.attrs;
  if (!at.is_object() || !at.contains("ALGO_ID") || !at["ALGO_ID"].is_number_integer()) {
    *why = blob_why.empty() ? "neither a 64-byte blob nor an ALGO_ID attribute" : blob_why + "; no ALGO_ID to rebuild from";
    return false;
  }
  cublasLtMatmulAlgo_t a{};
  cublasStatus_t s = cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(),
                                            p.type_c(), at["ALGO_ID"].get<int>(), &a);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = fmt::format("{}{}cublasLtMatmulAlgoInit(ALGO_ID {}): {}", blob_why, blob_why.empty() ? "" : "; ",
                       at["ALGO_ID"].get<int>(), cublas_status_name(s));
    return false;
  }
  auto u32 = [&](const char* k, cublasLtMatmulAlgoConfigAttributes_t attr) {
    if (at.contains(k) && at[k].is_number_integer()) set_config<std::uint32_t>(&a, attr, at[k].get<std::uint32_t>());
  };
  auto u16 = [&](const char* k, cublasLtMatmulAlgoConfigAttributes_t attr) {
    if (at.contains(k) && at[k].is_number_integer()) set_config<std::uint16_t>(&a, attr, at[k].get<std::uint16_t>());
  };
  u32("TILE_ID", CUBLASLT_ALGO_CONFIG_TILE_ID);
  u32("STAGES_ID", CUBLASLT_ALGO_CONFIG_STAGES_ID);
  if (at.contains("SPLITK_NUM") && at["SPLITK_NUM"].is_number_integer())
    set_config<std::int32_t>(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, at["SPLITK_NUM"].get<std::int32_t>());
  u32("REDUCTION_SCHEME", CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  u32("CTA_SWIZZLING", CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  u32("CUSTOM_OPTION", CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  u16("INNER_SHAPE_ID", CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  u16("CLUSTER_SHAPE_ID", CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  std::string attr_why;
  if (!check_algo(h, p, a, workspace_bytes, workspace_needed, &attr_why)) {
    *why = fmt::format("{}{}from its attributes: {}", blob_why, blob_why.empty() ? "" : "; ", attr_why);
    return false;
  }
  *out = a;
  return true;
}

std::vector<GemmAlgo> heuristic_candidates(cublasLtHandle_t h, const LtPlan& p, int top, std::size_t workspace_bytes) {
  std::vector<GemmAlgo> out;
  for (const auto& r : lt_heuristic(h, p, top < 1 ? 1 : top, workspace_bytes)) {
    out.push_back(decode_algo(r.algo));
    if (out.size() == 1) out.back().heuristic_first = true;
  }
  return out;
}

std::vector<GemmAlgo> exhaustive_candidates(cublasLtHandle_t h, const LtPlan& p, std::size_t workspace_bytes, int cap) {
  std::vector<GemmAlgo> out;
  std::set<std::string> seen;
  auto first = lt_heuristic(h, p, 1, workspace_bytes);
  if (!first.empty()) {
    out.push_back(decode_algo(first[0].algo));
    out.back().heuristic_first = true;
    seen.insert(blob_key(first[0].algo));
  }
  // Every algorithm id for the type combination, and each one's capabilities.
  int ids[256];
  int n_ids = 0;
  if (cublasLtMatmulAlgoGetIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(), p.type_c(), 256,
                               ids, &n_ids) != CUBLAS_STATUS_SUCCESS)
    return out;
  struct Caps {
    int id;
    std::vector<std::uint32_t> tiles, stages;
    std::int32_t splitk = 0, swizzle = 0, custom_max = 0;
    std::uint32_t red_mask = 0;
  };
  std::vector<Caps> caps;
  for (int i = 0; i < n_ids; ++i) {
    cublasLtMatmulAlgo_t a{};
    if (cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(), p.type_c(), ids[i],
                               &a) != CUBLAS_STATUS_SUCCESS)
      continue;
    Caps c;
    c.id = ids[i];
    c.tiles = get_cap_list(a, CUBLASLT_ALGO_CAP_TILE_IDS);
    c.stages = get_cap_list(a, CUBLASLT_ALGO_CAP_STAGES_IDS);
    if (c.tiles.empty()) c.tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
    if (c.stages.empty()) c.stages.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
    get_cap(a, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &c.splitk);
    get_cap(a, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &c.red_mask);
    get_cap(a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &c.swizzle);
    get_cap(a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &c.custom_max);
    caps.push_back(std::move(c));
  }
  // The settings a base (algorithm, tile, stages) can vary, each a dimension whose first value is the
  // default: split-K with a reduction scheme, cluster shape, CTA swizzle, custom option.
  struct Split {
    std::int32_t sk;
    std::uint32_t red;
  };
  struct Config {
    const Caps* caps;
    std::uint32_t tile, stages;
    Split split{1, CUBLASLT_REDUCTION_SCHEME_NONE};
    std::uint16_t cluster = CUBLASLT_CLUSTER_SHAPE_AUTO;
    std::int32_t swz = 0, custom = 0;
    int changes() const {
      return (split.sk > 1) + (cluster != CUBLASLT_CLUSTER_SHAPE_AUTO) + (swz > 0) + (custom > 0);
    }
  };
  // Split-K counts as in the cuBLASLt LtMatmulCustomFind sample, each split keeping at least 8 of K.
  const std::int32_t split_counts[] = {2, 3, 4, 5, 6, 8, 12, 16, 32};
  const std::uint32_t schemes[] = {CUBLASLT_REDUCTION_SCHEME_INPLACE, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                                   CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE};
  struct Dims {
    std::vector<Split> splits;
    std::vector<std::uint16_t> clusters;
    std::vector<std::int32_t> swizzles, customs;
  };
  auto all_values = [&](const Caps& c) {
    Dims d;
    d.splits.push_back({1, CUBLASLT_REDUCTION_SCHEME_NONE});
    if (c.splitk)
      for (std::int32_t sk : split_counts)
        if (sk <= p.shape().k / 8)
          for (std::uint32_t red : schemes)
            if (c.red_mask & red) d.splits.push_back({sk, red});
    d.clusters.push_back(CUBLASLT_CLUSTER_SHAPE_AUTO);
    for (int cl = CUBLASLT_CLUSTER_SHAPE_1x1x1; cl < CUBLASLT_CLUSTER_SHAPE_END; ++cl)
      d.clusters.push_back(static_cast<std::uint16_t>(cl));
    for (std::int32_t w = 0; w <= c.swizzle; ++w) d.swizzles.push_back(w);
    for (std::int32_t u = 0; u <= c.custom_max; ++u) d.customs.push_back(u);
    return d;
  };
  auto configure = [&](cublasLtHandle_t h, const Config& c, cublasLtMatmulAlgo_t* a) {
    if (cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(), p.type_c(),
                               c.caps->id, a) != CUBLAS_STATUS_SUCCESS)
      return false;
    bool ok = set_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile) &&
              set_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages) &&
              set_config<std::int32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.split.sk) &&
              set_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.split.red) &&
              set_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, static_cast<std::uint32_t>(c.swz)) &&
              set_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, static_cast<std::uint32_t>(c.custom));
    if (ok && c.cluster != CUBLASLT_CLUSTER_SHAPE_AUTO)
      ok = set_config<std::uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
    std::string why;
    return ok && check_algo(h, p, *a, workspace_bytes, nullptr, &why);
  };
  // Checks run on every host core, each thread with its own cuBLASLt handle, in blocks whose valid members
  // are then taken in order: the result, and the point where the cap stops it, do not depend on the thread
  // count. On the H200 machine (16 cores) a non-batched shape's whole product, ~10^5 valid of a few 10^5,
  // takes about a second.
  int device = 0;
  AB_CUDA_CHECK(cudaGetDevice(&device));
  const unsigned n_threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  struct Handles {
    std::vector<cublasLtHandle_t> h;
    ~Handles() {
      for (cublasLtHandle_t x : h) cublasLtDestroy(x);
    }
  } handles;
  for (unsigned t = 0; t < n_threads; ++t) {
    cublasLtHandle_t x = nullptr;
    AB_CUBLAS_CHECK(cublasLtCreate(&x));
    handles.h.push_back(x);
  }
  long checks = 0;
  const auto t_start = std::chrono::steady_clock::now();
  auto check_block = [&](const std::vector<Config>& block, std::vector<cublasLtMatmulAlgo_t>* algos) {
    algos->assign(block.size(), cublasLtMatmulAlgo_t{});
    std::vector<char> valid(block.size(), 0);
    std::vector<std::exception_ptr> errors(n_threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n_threads; ++t)
      pool.emplace_back([&, t] {
        try {
          AB_CUDA_CHECK(cudaSetDevice(device));  // a new thread's current device
          for (std::size_t i = t; i < block.size(); i += n_threads)
            valid[i] = configure(handles.h[t], block[i], &(*algos)[i]);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& th : pool) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    checks += static_cast<long>(block.size());
    return valid;
  };
  auto add = [&](const cublasLtMatmulAlgo_t& a) {
    if (static_cast<int>(out.size()) < cap && seen.insert(blob_key(a)).second) out.push_back(decode_algo(a));
  };
  auto full = [&] { return static_cast<int>(out.size()) >= cap; };
  auto report = [&](const char* how) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    if (secs > 2 || how[0])
      std::fprintf(stderr, "attnbench: gemm %s: %ld configurations checked in %.0fs on %u threads, %zu candidates%s\n",
                   p.shape().key().c_str(), checks, secs, n_threads, out.size(), how);
  };

  // Pass 1: the valid (algorithm, tile, stages) bases, in the default configuration.
  std::vector<Config> configs;
  for (const Caps& c : caps)
    for (std::uint32_t tile : c.tiles)
      for (std::uint32_t st : c.stages) configs.push_back({&c, tile, st});
  std::vector<Config> bases;
  std::vector<cublasLtMatmulAlgo_t> algos;
  {
    std::vector<char> valid = check_block(configs, &algos);
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (valid[i]) {
        bases.push_back(configs[i]);
        add(algos[i]);
      }
  }
  if (full()) return out;

  // Pass 2: every base with one setting changed.
  std::vector<Dims> values;  // per base: every value of each dimension
  configs.clear();
  for (const Config& b : bases) {
    values.push_back(all_values(*b.caps));
    const Dims& d = values.back();
    for (std::size_t i = 1; i < d.splits.size(); ++i) configs.push_back(b), configs.back().split = d.splits[i];
    for (std::size_t i = 1; i < d.clusters.size(); ++i) configs.push_back(b), configs.back().cluster = d.clusters[i];
    for (std::size_t i = 1; i < d.swizzles.size(); ++i) configs.push_back(b), configs.back().swz = d.swizzles[i];
    for (std::size_t i = 1; i < d.customs.size(); ++i) configs.push_back(b), configs.back().custom = d.customs[i];
  }
  {
    std::vector<char> valid = check_block(configs, &algos);
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (valid[i]) add(algos[i]);
  }
  if (full()) return out;

  // Pass 3: two or more settings changed together, fewest changes first so that a cap trims the most exotic.
  // Every combination is checked: combining only the values that pass alone would miss some (on the H200,
  // algo 35 with custom option 1 fails alone and passes with split-K), and checking the whole product of a
  // non-batched shape takes about a second.
  const long max_checks = 4000000;  // a guard against a runaway space; reaching it is reported on stderr
  const std::size_t block_size = 8192;
  configs.clear();
  auto flush = [&] {
    std::vector<char> valid = check_block(configs, &algos);
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (valid[i]) add(algos[i]);
    configs.clear();
  };
  for (int changes = 2; changes <= 4; ++changes)
    for (std::size_t bi = 0; bi < bases.size(); ++bi) {
      const Dims& d = values[bi];
      Config x = bases[bi];
      for (const Split& sp : d.splits)
        for (std::uint16_t cl : d.clusters)
          for (std::int32_t w : d.swizzles)
            for (std::int32_t u : d.customs) {
              x.split = sp;
              x.cluster = cl;
              x.swz = w;
              x.custom = u;
              if (x.changes() != changes) continue;
              if (checks + static_cast<long>(configs.size()) >= max_checks) {
                flush();
                report(" (stopped: the check limit was reached)");
                return out;
              }
              configs.push_back(x);
              if (configs.size() == block_size) {
                flush();
                if (full()) return out;
              }
            }
    }
  if (!configs.empty()) flush();
  report("");
  return out;
}

}  // namespace ab::cuda
