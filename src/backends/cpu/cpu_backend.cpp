// CPU backend: host memory, fp64 GEMMs, the softmax/combine/gather primitives, the tiled fused algorithm,
// a host timer and a primitive-call counter.
#include "backends/cpu/cpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fault_injection.hpp"
#include "core/parallel.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"
#include "core/sizes.hpp"

namespace ab {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A visible score after the mask's soft-cap (KeyMask::softcap; 0: the score itself).
double capped(const KeyMask& m, double s) { return m.softcap > 0 ? m.softcap * std::tanh(s / m.softcap) : s; }

// A row's sink term of its softmax denominator, exp(sink - m) with m its max (0 without sinks).
double sink_term(const SoftmaxSinks& s, std::int64_t item, std::int64_t row, double m) {
  if (!s.logits) return 0.0;
  return std::exp(static_cast<double>(s.logits[sink_head(s, item, row)]) - m);
}

class HostTimer : public DeviceTimer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() override { return std::chrono::duration<double, std::milli>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "host CPU";
}

// The host's copy bandwidth: memcpy of 256 MiB (past any last-level cache), best of a few, bytes read plus
// written over the time, in GB/s; 0 when the buffers cannot be had. Measured once per process.
double measure_memcpy_gbps() {
  constexpr std::size_t kBytes = std::size_t(256) << 20;
  char* src = static_cast<char*>(std::malloc(kBytes));
  char* dst = static_cast<char*>(std::malloc(kBytes));
  double best = 0;
  if (src && dst) {
    std::memset(src, 1, kBytes);  // first touch outside the timing
    std::memset(dst, 0, kBytes);
    for (int rep = 0; rep < 4; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      std::memcpy(dst, src, kBytes);
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (sec > 0) best = std::max(best, 2.0 * static_cast<double>(kBytes) / sec * 1e-9);
      src[rep] = dst[kBytes - 1 - rep];  // keeps the copies observable
    }
  }
  std::free(src);
  std::free(dst);
  return best;
}

// Measured once per process; a plugin row's child process (orchestrate/plugin_process.cpp) is handed its parent's
// measurement in ATTNBENCH_HOST_COPY_GBPS instead of taking ~1 s to measure it again (the cpu tests set it too,
// tests/CMakeLists.txt).
double host_copy_gbps() {
  static const double gbps = [] {
    const char* given = std::getenv("ATTNBENCH_HOST_COPY_GBPS");
    double v = given ? std::strtod(given, nullptr) : 0;
    return v > 0 && std::isfinite(v) ? v : measure_memcpy_gbps();
  }();
  return gbps;
}

// One GEMM of a batch: row-major C = alpha A op(B) + beta C with fp64 accumulation.
void gemm_one(const GemmShape& g, const void* a, const void* b, void* c, float alpha, float beta) {
  const std::int64_t M = g.m, N = g.n, K = g.k;
  std::vector<double> bk(K * N);  // B as [k][n]
  for (std::int64_t kk = 0; kk < K; ++kk)
    for (std::int64_t j = 0; j < N; ++j)
      bk[kk * N + j] = g.b_trans ? load_element(b, j * g.ldb + kk, g.b_type) : load_element(b, kk * g.ldb + j, g.b_type);
  parallel_for(M, 2.0 * M * N * K, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<double> row(N), arow(K);
    for (std::int64_t i = lo; i < hi; ++i) {
      for (std::int64_t kk = 0; kk < K; ++kk) arow[kk] = load_element(a, i * g.lda + kk, g.a_type);
      std::fill(row.begin(), row.end(), 0.0);
      for (std::int64_t kk = 0; kk < K; ++kk) {
        const double av = arow[kk];
        const double* br = &bk[kk * N];
        for (std::int64_t j = 0; j < N; ++j) row[j] += av * br[j];
      }
      for (std::int64_t j = 0; j < N; ++j) {
        double v = alpha * row[j];
        if (beta != 0.0f) v += beta * load_element(c, i * g.ldc + j, g.c_type);
        store_element(c, i * g.ldc + j, g.c_type, v);
      }
    }
  });
}

// The work of one GEMM call again, into scratch (the test hook's slower variants): C is left as it was.
void gemm_into_scratch(const GemmShape& g, const void* a, const void* b, float alpha) {
  GemmShape s = g;
  s.ldc = g.n;
  std::vector<double> scratch(static_cast<std::size_t>(g.m * g.n));  // room for any element type
  for (std::int64_t i = 0; i < g.batch; ++i) {
    const void* ai = g.mode == BatchMode::pointer_array ? static_cast<const void* const*>(a)[i]
                                                        : offset_ptr(a, i * g.stride_a, g.a_type);
    const void* bi = g.mode == BatchMode::pointer_array ? static_cast<const void* const*>(b)[i]
                                                        : offset_ptr(b, i * g.stride_b, g.b_type);
    gemm_one(s, ai, bi, scratch.data(), alpha, 0.0f);
  }
}

// One object is the device and every interface it hands out.
class CpuBackend final : public DeviceMemory,
                         public GemmEngine,
                         public AttentionKernels,
                         public Verifier,
                         public Profiler,
                         public Backend,
                         public FaultInjector {
 public:
  CpuBackend() { set_parts({this, this, this, this, this}); }

  BackendKind kind() const override { return BackendKind::cpu; }

  DeviceInfo device_info() const override {
    DeviceInfo d;
    d.backend = "cpu";
    d.name = cpu_name();
    d.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    d.memory_bytes = pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
    long avail = sysconf(_SC_AVPHYS_PAGES);
    d.memory_free = avail > 0 && page > 0 ? static_cast<std::int64_t>(avail) * page : d.memory_bytes;
    d.copy_bandwidth_gbps = host_copy_gbps();
    return d;
  }

  // Backend memory is host memory: the fp64 reference shares it (the inputs are drawn in place).
  std::int64_t input_staging_bytes(const Problem& p, bool with_reference) const override {
    return with_reference ? size_mul(p.o_elements(), sizeof(double)) : 0;
  }
  void* alloc(std::size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw BackendError(fmt::format("cpu: out of memory allocating {} bytes", bytes));
    return p;
  }
  void free(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override { std::memset(dst, value, bytes); }
  void fill_random(void* dst, const RandomFill& fill) override { draw_random_host(static_cast<std::uint16_t*>(dst), fill); }
  void synchronize() override {}

  GemmPlan make_plan(const GemmShape& shape) override {
    if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0)
      throw BackendError(fmt::format("cpu gemm: invalid shape {}", shape.key()));
    Plan plan{shape, "heuristic"};
    if (chooser_) {
      GemmAlgo algo;
      if (chooser_(shape, &algo)) plan.source = "cache";
    }
    const GemmPlanId id = next_plan_id_++;
    plans_.emplace(id, std::move(plan));
    return GemmPlan(*this, id);
  }

  using GemmEngine::run;
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    const GemmShape& g = plan_at(plan).shape;
    gemm_calls_++;
    // A slower test variant computes the product into scratch first (C = alpha A B + beta C reads C).
    for (int rep = plan_at(plan).repeats; rep > 1; --rep) gemm_into_scratch(g, a, b, alpha);
    if (g.mode == BatchMode::pointer_array) {
      auto pa = static_cast<const void* const*>(a);
      auto pb = static_cast<const void* const*>(b);
      auto pc = static_cast<void* const*>(c);
      for (std::int64_t i = 0; i < g.batch; ++i) gemm_one(g, pa[i], pb[i], pc[i], alpha, beta);
      return;
    }
    for (std::int64_t i = 0; i < g.batch; ++i)
      gemm_one(g, offset_ptr(a, i * g.stride_a, g.a_type), offset_ptr(b, i * g.stride_b, g.b_type),
               offset_ptr(c, i * g.stride_c, g.c_type), alpha, beta);
  }

  std::vector<GemmPlanChoice> plan_report() const override {
    std::vector<GemmPlanChoice> out;
    for (const auto& [id, p] : plans_) {
      (void)id;
      GemmPlanChoice c;
      c.shape = p.shape.key();
      c.algo = "cpu-reference fp64";
      c.source = p.source;
      out.push_back(std::move(c));
    }
    return out;
  }
  GemmShape plan_shape(GemmPlanId plan) const override { return plan_at(plan).shape; }

  // One algorithm, or with the test hook ATTNBENCH_INJECT_CPU_GEMM_VARIANTS=N (docs/scale-out-devices.md) an
  // exhaustive list of N variants that repeat the same GEMM 8-9 times, all but variant 2N/3 which runs it
  // once: a list long enough to split, with one winner that timing cannot miss even as a whole forward
  // under a sanitizer on a loaded machine (with 3-4 repeats the GEMMs were too small a part of a forward of
  // S=57, and a one-process tune's winner sometimes gave way to the heuristic's choice when measured again).
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int, bool exhaustive) override {
    (void)plan_at(plan);
    const char* spec = std::getenv("ATTNBENCH_INJECT_CPU_GEMM_VARIANTS");
    const int variants = spec ? std::atoi(spec) : 0;
    GemmAlgo a;
    a.label = "cpu-reference";
    a.attrs = {{"ALGO_ID", 0}};
    a.heuristic_first = true;
    if (variants < 2) return {a};
    a.attrs["REPEATS"] = 8;
    std::vector<GemmAlgo> out = {a};
    for (int k = 1; exhaustive && k < variants; ++k) {
      GemmAlgo v;
      const int repeats = k == 2 * variants / 3 ? 1 : 8 + k % 2;
      v.label = fmt::format("cpu-variant {} x{}", k, repeats);
      v.attrs = {{"ALGO_ID", k}, {"REPEATS", repeats}};
      out.push_back(v);
    }
    return out;
  }
  void set_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) override {
    (void)plan_at(plan);
    plans_[plan].source = source;
    plans_[plan].repeats = algo.attrs.is_object() ? algo.attrs.value("REPEATS", 1) : 1;
  }
  void set_chooser(Chooser chooser) override { chooser_ = std::move(chooser); }

  void softmax_update(const SoftmaxUpdateArgs& a) override;
  void page_softmax(const PageSoftmaxArgs& a) override;
  void combine_pages(const CombineArgs& a) override;
  void finalize(const FinalizeArgs& a) override;
  void gather_pages(const GatherArgs& a) override;
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }

  std::vector<FusedTile> fused_tiles() const override {
    return {{128, 64, 4, 2}, {64, 64, 4, 2}, {128, 128, 8, 2}};
  }
  std::string fused_can_implement(const Problem& p, const FusedTile& tile) const override {
    // The same limit as the GPU kernel, which keeps a block_m x head_dim accumulator in registers.
    if (std::max(p.head_dim, p.head_dim_v) > 256)
      return fmt::format("head_dim={} is over the fused kernel's limit of 256", std::max(p.head_dim, p.head_dim_v));
    // Only the tiles this backend lists, as on the GPU, where a tile is a compiled kernel.
    for (const FusedTile& t : fused_tiles())
      if (t == tile) return "";
    return fmt::format("tile {} is not one of this backend's tiles (see attnbench list)", tile.name());
  }
  void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile, void*, std::int64_t) override {
    other_kernels_++;
    cpu_fused_attention(p, io, tile.block_m, tile.block_n);
  }

  void reference_attention(const Problem& p, const AttentionIO& io, float* out) override {
    std::vector<double> ref(p.o_elements());
    reference_attention_fp64(p, io.q, io.k, io.v, io.block_table_host, ref.data(), io.sinks_host);
    for (std::size_t i = 0; i < ref.size(); ++i) out[i] = static_cast<float>(ref[i]);
  }
  std::string reference_name() const override { return "cpu-fp64"; }
  ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) override {
    return compare_output(p, out, ref);
  }

  std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<HostTimer>(); }
  void flush_l2() override {}
  std::unique_ptr<CapturedForward> capture(const std::function<void()>&) override { return nullptr; }
  void begin_launch_count() override { gemm_calls_ = other_kernels_ = 0; }
  void enqueue_delay(double ms) override {
    if (!(ms >= 0) || !std::isfinite(ms)) throw BackendError(fmt::format("enqueue_delay: {} ms is not a delay", ms));
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  // The test hook (core/fault_injection.hpp).
  void inject_fault() override {
    context_lost_ = true;
    throw BackendError("cpu: injected sticky fault (ATTNBENCH_INJECT_FAULT)", true);
  }
  // The simulated fault is as fatal as a real one: this backend cannot rebuild itself afterwards.
  bool recover() override { return !context_lost_; }
  LaunchRecord end_launch_count() override {
    LaunchRecord r;
    r.gemm_calls = gemm_calls_;
    r.other_kernels = other_kernels_;
    r.kernels = gemm_calls_ + other_kernels_;
    r.source = "cpu-counter";
    return r;
  }

 private:
  struct Plan {
    GemmShape shape;
    std::string source;
    int repeats = 1;  // ATTNBENCH_INJECT_CPU_GEMM_VARIANTS's variants
  };
  const Plan& plan_at(GemmPlanId id) const {
    auto it = plans_.find(id);
    if (it == plans_.end()) throw BackendError(fmt::format("cpu gemm: unknown plan {}", id));
    return it->second;
  }
  void release_plan(GemmPlanId id) noexcept override { plans_.erase(id); }
  std::map<GemmPlanId, Plan> plans_;  // by id: creation order
  GemmPlanId next_plan_id_ = 0;
  Chooser chooser_;
  std::int64_t gemm_calls_ = 0, other_kernels_ = 0;
  bool context_lost_ = false;

};

void CpuBackend::softmax_update(const SoftmaxUpdateArgs& a) {
  other_kernels_++;
  parallel_for(a.bh_count * a.rows, 4.0 * a.bh_count * a.rows * (a.cols + a.head_dim), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t idx = lo; idx < hi; ++idx) {
      std::int64_t bh = idx / a.rows, r = idx % a.rows;
      const std::int64_t s_base = bh * a.score_bh_stride + r * a.score_ld;
      const std::int64_t p_base = bh * a.prob_bh_stride + r * a.prob_ld;
      double m_old = a.first_page ? kNegInf : a.row_max[idx];
      double l_old = a.first_page ? 0.0 : a.row_sum[idx];
      const std::int64_t first = key_first(a.mask, bh, r), limit = key_limit(a.mask, bh, r);
      auto visible = [&](std::int64_t c) { return a.col_offset + c >= first && a.col_offset + c < limit; };
      auto score = [&](std::int64_t c) { return capped(a.mask, load_element(a.scores, s_base + c, a.score_type)); };
      double m_page = kNegInf;
      for (std::int64_t c = 0; c < a.cols; ++c)
        if (visible(c)) m_page = std::max(m_page, score(c));
      double m_new = std::max(m_old, m_page);
      double sum = 0;
      for (std::int64_t c = 0; c < a.cols; ++c) {
        bool masked = !visible(c);
        double pv = masked || m_new == kNegInf ? 0.0 : std::exp(score(c) - m_new);
        // The PV GEMM consumes P in V's dtype; the sum uses the same rounded values.
        pv = round_to(a.prob_type, pv);
        sum += pv;
        store_element(a.probs, p_base + c, a.prob_type, pv);
      }
      double alpha = m_old == kNegInf ? 0.0 : std::exp(m_old - m_new);
      a.row_max[idx] = static_cast<float>(m_new);
      a.row_sum[idx] = static_cast<float>(l_old * alpha + sum);
      if (!a.first_page) {
        float* acc = a.acc + idx * a.head_dim;
        for (std::int64_t d = 0; d < a.head_dim; ++d) acc[d] = static_cast<float>(acc[d] * alpha);
      }
    }
  });
}

void CpuBackend::page_softmax(const PageSoftmaxArgs& a) {
  other_kernels_++;
  std::int64_t n = a.bh_count * a.pages * a.rows;
  parallel_for(n, 4.0 * n * a.page_size, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t idx = lo; idx < hi; ++idx) {
      std::int64_t r = idx % a.rows, bp = idx / a.rows, p = bp % a.pages, bh = bp / a.pages;
      std::int64_t len = p == a.pages - 1 ? a.last_page_len : a.page_size;
      std::int64_t col0 = p * a.page_size;
      std::int64_t s_base = bh * a.score_bh_stride + p * a.score_page_stride + r * a.score_ld;
      std::int64_t p_base = idx * a.page_size;
      const std::int64_t first = key_first(a.mask, bh, r), limit = key_limit(a.mask, bh, r);
      auto visible = [&](std::int64_t c) { return c < len && col0 + c >= first && col0 + c < limit; };
      auto score = [&](std::int64_t c) { return capped(a.mask, load_element(a.scores, s_base + c, a.score_type)); };
      double m = kNegInf;
      for (std::int64_t c = 0; c < len; ++c)
        if (visible(c)) m = std::max(m, score(c));
      double sum = 0;
      for (std::int64_t c = 0; c < a.page_size; ++c) {
        double pv = 0;
        if (visible(c) && m != kNegInf) pv = round_to(a.prob_type, std::exp(score(c) - m));
        sum += pv;
        store_element(a.probs, p_base + c, a.prob_type, pv);
      }
      a.page_max[idx] = static_cast<float>(m);
      a.page_sum[idx] = static_cast<float>(sum);
    }
  });
}

void CpuBackend::combine_pages(const CombineArgs& a) {
  other_kernels_++;
  std::int64_t n = a.bh_count * a.rows;
  parallel_for(n, 3.0 * n * a.pages * a.head_dim, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<double> o(a.head_dim);
    for (std::int64_t idx = lo; idx < hi; ++idx) {
      std::int64_t bh = idx / a.rows, r = idx % a.rows;
      double m = kNegInf;
      for (std::int64_t p = 0; p < a.pages; ++p) m = std::max(m, static_cast<double>(a.page_max[(bh * a.pages + p) * a.rows + r]));
      double l = 0;
      std::fill(o.begin(), o.end(), 0.0);
      for (std::int64_t p = 0; p < a.pages; ++p) {
        std::int64_t sidx = (bh * a.pages + p) * a.rows + r;
        double mp = a.page_max[sidx];
        if (mp == kNegInf) continue;
        double w = std::exp(mp - m);
        l += a.page_sum[sidx] * w;
        const float* part = a.partial + sidx * a.head_dim;
        for (std::int64_t d = 0; d < a.head_dim; ++d) o[d] += part[d] * w;
      }
      l += sink_term(a.sinks, bh, r, m);
      for (std::int64_t d = 0; d < a.head_dim; ++d) store_element(a.out, idx * a.head_dim + d, a.out_type, o[d] / l);
    }
  });
}

void CpuBackend::finalize(const FinalizeArgs& a) {
  other_kernels_++;
  std::int64_t n = a.bh_count * a.rows;
  for (std::int64_t idx = 0; idx < n; ++idx) {
    double l = a.row_sum[idx];
    if (a.sinks.logits) l += sink_term(a.sinks, idx / a.rows, idx % a.rows, a.row_max[idx]);
    for (std::int64_t d = 0; d < a.head_dim; ++d)
      store_element(a.out, idx * a.head_dim + d, a.out_type, a.acc[idx * a.head_dim + d] / l);
  }
}

void CpuBackend::gather_pages(const GatherArgs& a) {
  other_kernels_++;
  const std::int64_t rows = a.pages * a.page_size, dst_heads = a.kv_heads * a.group;
  std::size_t es = dtype_size(a.dtype);
  // One tensor (rows `width` wide) gathered; K and V the same way.
  auto gather = [&](const void* src_base, void* dst_base, std::int64_t width) {
    for (std::int64_t b = 0; b < a.batch; ++b) {
      const std::int64_t len = a.kv_lens ? a.kv_lens[b] : a.seq_len;
      for (std::int64_t hd = 0; hd < dst_heads; ++hd) {
        const std::int64_t h = hd / a.group;
        for (std::int64_t s = 0; s < rows; ++s) {
          char* dst = static_cast<char*>(dst_base) + (((b * dst_heads + hd) * rows) + s) * width * es;
          if (s >= len) {
            std::memset(dst, 0, width * es);
            continue;
          }
          std::int64_t src = a.paged ? ((a.block_table[b * a.pages + s / a.page_size] * a.kv_heads + h) * a.page_size +
                                        s % a.page_size) * width
                                     : ((b * a.kv_heads + h) * a.seq_len + s) * width;
          std::memcpy(dst, static_cast<const char*>(src_base) + src * es, width * es);
        }
      }
    }
  };
  gather(a.k_src, a.k_dst, a.head_dim);
  gather(a.v_src, a.v_dst, a.head_dim_v > 0 ? a.head_dim_v : a.head_dim);
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

void cpu_fused_attention(const Problem& p, const AttentionIO& io, int block_m, int block_n) {
  // The GPU kernel's structure: a block of block_m query rows walks K/V tiles of block_n keys, keeping the
  // running max m, running sum l and an unnormalised accumulator; P is rounded to the input dtype before
  // the P·V product as the tensor-core kernel does. Causal blocks stop at the last key their last row sees.
  const std::int64_t Q = p.q_len, D = p.head_dim, Dv = p.head_dim_v;
  const double scale = p.scale();
  std::int64_t m_blocks = (Q + block_m - 1) / block_m;
  parallel_for(p.bh() * m_blocks, p.flops(), [&](std::int64_t lo, std::int64_t hi) {
    std::vector<double> q(block_m * D), acc(block_m * Dv), m(block_m), l(block_m), s(block_n);
    std::vector<double> kt(block_n * D), vt(block_n * Dv);
    for (std::int64_t task = lo; task < hi; ++task) {
      std::int64_t bh = task / m_blocks, mb = task % m_blocks;
      std::int64_t b = bh / p.heads, h = bh % p.heads, kvh = h / p.group();
      std::int64_t r0 = mb * block_m, rows = std::min<std::int64_t>(block_m, Q - r0);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t d = 0; d < D; ++d) q[r * D + d] = load_element(io.q, (bh * Q + r0 + r) * D + d, p.dtype);
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(l.begin(), l.end(), 0.0);
      const std::int64_t kv_end = p.visible_keys(b, r0 + rows - 1);
      // A window: the block's first row sees the earliest keys; the tiles before them are skipped.
      const std::int64_t kv_begin = p.first_visible_key(b, r0) / block_n * block_n;
      const double cap = static_cast<double>(p.softcap);
      for (std::int64_t c0 = kv_begin; c0 < kv_end; c0 += block_n) {
        std::int64_t cols = std::min<std::int64_t>(block_n, kv_end - c0);
        for (std::int64_t c = 0; c < cols; ++c) {
          for (std::int64_t d = 0; d < D; ++d)
            kt[c * D + d] = load_element(io.k, kv_index(p, io.block_table_host, b, kvh, c0 + c, d), p.dtype);
          for (std::int64_t d = 0; d < Dv; ++d)
            vt[c * Dv + d] = load_element(io.v, v_index(p, io.block_table_host, b, kvh, c0 + c, d), p.dtype);
        }
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t first = p.first_visible_key(b, r0 + r), limit = p.visible_keys(b, r0 + r);
          double m_tile = kNegInf;
          for (std::int64_t c = 0; c < cols; ++c) {
            if (c0 + c < first || c0 + c >= limit) { s[c] = kNegInf; continue; }
            double dot = 0;
            for (std::int64_t d = 0; d < D; ++d) dot += q[r * D + d] * kt[c * D + d];
            s[c] = dot * scale;
            if (cap > 0) s[c] = cap * std::tanh(s[c] / cap);
            m_tile = std::max(m_tile, s[c]);
          }
          double m_new = std::max(m[r], m_tile);
          if (m_new == kNegInf) continue;
          double alpha = m[r] == kNegInf ? 0.0 : std::exp(m[r] - m_new);
          double sum = 0;
          for (std::int64_t d = 0; d < Dv; ++d) acc[r * Dv + d] *= alpha;
          for (std::int64_t c = 0; c < cols; ++c) {
            if (s[c] == kNegInf) continue;
            double pv = round_to(p.dtype, std::exp(s[c] - m_new));
            sum += pv;
            for (std::int64_t d = 0; d < Dv; ++d) acc[r * Dv + d] += pv * vt[c * Dv + d];
          }
          l[r] = l[r] * alpha + sum;
          m[r] = m_new;
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        if (p.sinks) l[r] += std::exp(static_cast<double>(io.sinks[h]) - m[r]);
        for (std::int64_t d = 0; d < Dv; ++d)
          store_element(io.o, (bh * Q + r0 + r) * Dv + d, p.dtype, acc[r * Dv + d] / l[r]);
      }
    }
  });
}

}  // namespace ab
