// The exhaustive candidate list: every (algorithm, tile, stages) base from cublasLtMatmulAlgoGetIds and the
// capabilities, then each base with one setting changed, then with several (after the cuBLASLt
// LtMatmulCustomFind sample's search), each configuration checked on every host core.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <set>
#include <thread>

#include "backends/cuda/cublaslt_algo.hpp"
#include "backends/cuda/cublaslt_attributes.hpp"
#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

namespace {

// One algorithm id's capabilities.
struct AlgoCaps {
  int id;
  std::vector<std::uint32_t> tiles, stages;
  std::int32_t splitk = 0, swizzle = 0, custom_max = 0;
  std::uint32_t red_mask = 0;
};

// The settings a base (algorithm, tile, stages) can vary, each a dimension whose first value is the
// default: split-K with a reduction scheme, cluster shape, CTA swizzle, custom option.
struct Split {
  std::int32_t sk;
  std::uint32_t red;
};
struct Config {
  const AlgoCaps* caps;
  std::uint32_t tile, stages;
  Split split{1, CUBLASLT_REDUCTION_SCHEME_NONE};
  std::uint16_t cluster = CUBLASLT_CLUSTER_SHAPE_AUTO;
  std::int32_t swz = 0, custom = 0;
  int changes() const {
    return (split.sk > 1) + (cluster != CUBLASLT_CLUSTER_SHAPE_AUTO) + (swz > 0) + (custom > 0);
  }
};
// Every value of each dimension for one base, the default first.
struct Dims {
  std::vector<Split> splits;
  std::vector<std::uint16_t> clusters;
  std::vector<std::int32_t> swizzles, customs;
};

bool init_algo(cublasLtHandle_t h, const LtPlan& p, int id, cublasLtMatmulAlgo_t* a) {
  return cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(), p.type_c(), id,
                                a) == CUBLAS_STATUS_SUCCESS;
}

// Every algorithm id for the plan's type combination, and each one's capabilities; false when the ids
// cannot be listed.
bool algorithm_capabilities(cublasLtHandle_t h, const LtPlan& p, std::vector<AlgoCaps>* caps) {
  int ids[256];
  int n_ids = 0;
  if (cublasLtMatmulAlgoGetIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, p.type_a(), p.type_b(), p.type_c(), p.type_c(), 256,
                               ids, &n_ids) != CUBLAS_STATUS_SUCCESS)
    return false;
  for (int i = 0; i < n_ids; ++i) {
    cublasLtMatmulAlgo_t a{};
    if (!init_algo(h, p, ids[i], &a)) continue;
    AlgoCaps c;
    c.id = ids[i];
    c.tiles = get_cap_list(a, CUBLASLT_ALGO_CAP_TILE_IDS);
    c.stages = get_cap_list(a, CUBLASLT_ALGO_CAP_STAGES_IDS);
    if (c.tiles.empty()) c.tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
    if (c.stages.empty()) c.stages.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
    get_cap(a, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &c.splitk);
    get_cap(a, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &c.red_mask);
    get_cap(a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &c.swizzle);
    get_cap(a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &c.custom_max);
    caps->push_back(std::move(c));
  }
  return true;
}

// Every value of each dimension an algorithm with capabilities `c` supports for a K of `k`.
Dims setting_values(const AlgoCaps& c, std::int64_t k) {
  // Split-K counts as in the cuBLASLt LtMatmulCustomFind sample, each split keeping at least 8 of K.
  const std::int32_t split_counts[] = {2, 3, 4, 5, 6, 8, 12, 16, 32};
  const std::uint32_t schemes[] = {CUBLASLT_REDUCTION_SCHEME_INPLACE, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                                   CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE};
  Dims d;
  d.splits.push_back({1, CUBLASLT_REDUCTION_SCHEME_NONE});
  if (c.splitk)
    for (std::int32_t sk : split_counts)
      if (sk <= k / 8)
        for (std::uint32_t red : schemes)
          if (c.red_mask & red) d.splits.push_back({sk, red});
  d.clusters.push_back(CUBLASLT_CLUSTER_SHAPE_AUTO);
  for (int cl = CUBLASLT_CLUSTER_SHAPE_1x1x1; cl < CUBLASLT_CLUSTER_SHAPE_END; ++cl)
    d.clusters.push_back(static_cast<std::uint16_t>(cl));
  for (std::int32_t w = 0; w <= c.swizzle; ++w) d.swizzles.push_back(w);
  for (std::int32_t u = 0; u <= c.custom_max; ++u) d.customs.push_back(u);
  return d;
}

// Builds the configuration into `a` and checks it against the plan.
bool configure(cublasLtHandle_t h, const LtPlan& p, std::size_t workspace_bytes, const Config& c,
               cublasLtMatmulAlgo_t* a) {
  if (!init_algo(h, p, c.caps->id, a)) return false;
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
}

// Checks blocks of configurations on every host core, each thread with its own cuBLASLt handle; which
// members are valid does not depend on the thread count.
class ParallelChecker {
 public:
  ParallelChecker(const LtPlan& p, std::size_t workspace_bytes) : p_(p), workspace_bytes_(workspace_bytes) {
    AB_CUDA_CHECK(cudaGetDevice(&device_));
    for (unsigned t = 0; t < n_threads_; ++t) {
      cublasLtHandle_t x = nullptr;
      AB_CUBLAS_CHECK(cublasLtCreate(&x));
      handles_.h.push_back(x);
    }
  }
  ParallelChecker(const ParallelChecker&) = delete;
  ParallelChecker& operator=(const ParallelChecker&) = delete;

  // Builds and checks every member of `block` into `algos`; valid[i] says whether algos[i] passed.
  std::vector<char> check(const std::vector<Config>& block, std::vector<cublasLtMatmulAlgo_t>* algos) {
    algos->assign(block.size(), cublasLtMatmulAlgo_t{});
    std::vector<char> valid(block.size(), 0);
    std::vector<std::exception_ptr> errors(n_threads_);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n_threads_; ++t)
      pool.emplace_back([&, t] {
        try {
          AB_CUDA_CHECK(cudaSetDevice(device_));  // a new thread's current device
          for (std::size_t i = t; i < block.size(); i += n_threads_)
            valid[i] = configure(handles_.h[t], p_, workspace_bytes_, block[i], &(*algos)[i]);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& th : pool) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    checks_ += static_cast<long>(block.size());
    return valid;
  }

  long checks() const { return checks_; }
  unsigned threads() const { return n_threads_; }

 private:
  const LtPlan& p_;
  std::size_t workspace_bytes_;
  const unsigned n_threads_ = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  int device_ = 0;
  struct Handles {  // destroyed also when creating a later one throws
    std::vector<cublasLtHandle_t> h;
    ~Handles() {
      for (cublasLtHandle_t x : h) cublasLtDestroy(x);
    }
  } handles_;
  long checks_ = 0;
};

// The enumeration's three passes over the bases found from `caps`, adding valid configurations in order
// (de-duplicated by their bytes) until `cap` candidates.
class ExhaustiveSearch {
 public:
  ExhaustiveSearch(const LtPlan& p, std::size_t workspace_bytes, int cap, const std::vector<AlgoCaps>& caps,
                   std::vector<GemmAlgo>* out, std::set<std::string>* seen)
      : p_(p), cap_(cap), caps_(caps), out_(*out), seen_(*seen), checker_(p, workspace_bytes) {}

  void run() {
    base_pass();
    if (full()) return;
    one_change_pass();
    if (full()) return;
    combination_pass();
  }

 private:
  void add(const cublasLtMatmulAlgo_t& a) {
    if (static_cast<int>(out_.size()) < cap_ && seen_.insert(blob_key(a)).second) out_.push_back(decode_algo(a));
  }
  bool full() const { return static_cast<int>(out_.size()) >= cap_; }

  // A line on stderr when the search took over 2 s or `how` says why it stopped.
  void report(const char* how) const {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start_).count();
    if (secs > 2 || how[0])
      std::fprintf(stderr, "attnbench: gemm %s: %ld configurations checked in %.0fs on %u threads, %zu candidates%s\n",
                   p_.shape().key().c_str(), checker_.checks(), secs, checker_.threads(), out_.size(), how);
  }

  // Checks `configs`, adds the valid ones in order and empties it.
  void check_and_add(std::vector<Config>* configs) {
    std::vector<char> valid = checker_.check(*configs, &algos_);
    for (std::size_t i = 0; i < configs->size(); ++i)
      if (valid[i]) add(algos_[i]);
    configs->clear();
  }

  // Pass 1: the valid (algorithm, tile, stages) bases, in the default configuration.
  void base_pass() {
    std::vector<Config> configs;
    for (const AlgoCaps& c : caps_)
      for (std::uint32_t tile : c.tiles)
        for (std::uint32_t st : c.stages) configs.push_back({&c, tile, st});
    std::vector<char> valid = checker_.check(configs, &algos_);
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (valid[i]) {
        bases_.push_back(configs[i]);
        add(algos_[i]);
      }
  }

  // Pass 2: every base with one setting changed.
  void one_change_pass() {
    std::vector<Config> configs;
    for (const Config& b : bases_) {
      values_.push_back(setting_values(*b.caps, p_.shape().k));
      const Dims& d = values_.back();
      for (std::size_t i = 1; i < d.splits.size(); ++i) configs.push_back(b), configs.back().split = d.splits[i];
      for (std::size_t i = 1; i < d.clusters.size(); ++i) configs.push_back(b), configs.back().cluster = d.clusters[i];
      for (std::size_t i = 1; i < d.swizzles.size(); ++i) configs.push_back(b), configs.back().swz = d.swizzles[i];
      for (std::size_t i = 1; i < d.customs.size(); ++i) configs.push_back(b), configs.back().custom = d.customs[i];
    }
    check_and_add(&configs);
  }

  // Pass 3: two or more settings changed together, fewest changes first so that a cap trims the most exotic.
  // Every combination is checked: combining only the values that pass alone would miss some (on the H200,
  // algo 35 with custom option 1 fails alone and passes with split-K), and checking the whole product of a
  // non-batched shape takes about a second.
  void combination_pass() {
    std::vector<Config> block;
    for (int changes = 2; changes <= 4; ++changes)
      for (std::size_t bi = 0; bi < bases_.size(); ++bi)
        if (!queue_combinations(bi, changes, &block)) return;
    if (!block.empty()) check_and_add(&block);
    report("");
  }

  // Queues base `bi` with exactly `changes` settings changed; false when the search stops.
  bool queue_combinations(std::size_t bi, int changes, std::vector<Config>* block) {
    const Dims& d = values_[bi];
    Config x = bases_[bi];
    for (const Split& sp : d.splits)
      for (std::uint16_t cl : d.clusters)
        for (std::int32_t w : d.swizzles)
          for (std::int32_t u : d.customs) {
            x.split = sp;
            x.cluster = cl;
            x.swz = w;
            x.custom = u;
            if (x.changes() != changes) continue;
            if (!queue(x, block)) return false;
          }
    return true;
  }

  // Adds `x` to the block, checking a full block; false when the search stops (the cap or the check limit).
  bool queue(const Config& x, std::vector<Config>* block) {
    if (checker_.checks() + static_cast<long>(block->size()) >= kMaxChecks) {
      check_and_add(block);
      report(" (stopped: the check limit was reached)");
      return false;
    }
    block->push_back(x);
    if (block->size() == kBlockSize) {
      check_and_add(block);
      if (full()) return false;
    }
    return true;
  }

  static constexpr long kMaxChecks = 4000000;  // a guard against a runaway space; reaching it is reported on stderr
  static constexpr std::size_t kBlockSize = 8192;

  const LtPlan& p_;
  const int cap_;
  const std::vector<AlgoCaps>& caps_;
  std::vector<GemmAlgo>& out_;
  std::set<std::string>& seen_;
  ParallelChecker checker_;
  const std::chrono::steady_clock::time_point t_start_ = std::chrono::steady_clock::now();
  std::vector<Config> bases_;
  std::vector<Dims> values_;  // per base: every value of each dimension
  std::vector<cublasLtMatmulAlgo_t> algos_;
};

}  // namespace

std::vector<GemmAlgo> exhaustive_candidates(cublasLtHandle_t h, const LtPlan& p, std::size_t workspace_bytes, int cap) {
  std::vector<GemmAlgo> out;
  std::set<std::string> seen;
  auto first = lt_heuristic(h, p, 1, workspace_bytes);
  if (!first.empty()) {
    out.push_back(decode_algo(first[0].algo));
    out.back().heuristic_first = true;
    seen.insert(blob_key(first[0].algo));
  }
  std::vector<AlgoCaps> caps;
  if (!algorithm_capabilities(h, p, &caps)) return out;
  // Checks run on every host core in blocks whose valid members are then taken in order: the result, and
  // the point where the cap stops it, do not depend on the thread count. On the H200 machine (16 cores) a
  // non-batched shape's whole product, ~10^5 valid of a few 10^5, takes about a second.
  ExhaustiveSearch(p, workspace_bytes, cap, caps, &out, &seen).run();
  return out;
}

}  // namespace ab::cuda
