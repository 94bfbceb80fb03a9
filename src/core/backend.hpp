// The backend seam: the primitives every strategy is written against once. Two implementations:
// `cpu` (reference, fp64 accumulation, counts primitive calls) and `cuda` (cuBLASLt, kernels/, CUPTI).
// Pointers handed to and returned by a backend live in that backend's memory (host for cpu, device for
// cuda); strategies only do arithmetic on them, never dereference them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/problem.hpp"
#include "core/reference.hpp"

namespace ab {

enum class BackendKind { cpu, cuda };
const char* backend_kind_name(BackendKind k);

struct DeviceInfo {
  std::string backend;  // "cpu" or "cuda"
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;  // total device memory (host RAM for cpu)
  std::int64_t memory_free = 0;
  std::string driver, cuda_runtime, cublaslt;
  int clock_mhz_max = 0;      // max SM clock, 0 if unknown
  int mem_clock_mhz = 0;
  nlohmann::json to_json() const;
};

// ---- GEMM ------------------------------------------------------------------------------------------

enum class BatchMode { single, strided, pointer_array };
const char* batch_mode_name(BatchMode m);

// Row-major C[m,n] = alpha * A[m,k] * op(B) + beta * C. op(B) = B^T with B stored [n,k] when b_trans,
// else B stored [k,n]. Leading dimensions are row strides in elements. In strided mode matrix i of each
// operand starts stride_* elements after matrix i-1; in pointer-array mode the call passes arrays of
// `batch` pointers (in backend memory) instead of base pointers.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool b_trans = false;
  DType a_type = DType::fp16, b_type = DType::fp16, c_type = DType::fp32;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  BatchMode mode = BatchMode::single;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::string key() const;  // canonical text, the tuner cache key
  nlohmann::json to_json() const;
};

using GemmPlanId = int;

// One algorithm a GEMM plan could use. On CUDA, `attrs` holds the decoded cublasLtMatmulAlgo_t
// configuration (ALGO_ID, TILE_ID, STAGES_ID, SPLITK_NUM, REDUCTION_SCHEME, CTA_SWIZZLING, CUSTOM_OPTION,
// INNER_SHAPE_ID, CLUSTER_SHAPE_ID) and `blob` its 64 raw bytes; on CPU a single "cpu-reference" entry.
struct GemmAlgo {
  nlohmann::json attrs;
  std::vector<std::uint8_t> blob;
  std::string label;           // short human-readable form
  bool heuristic_first = false;  // the heuristic's first choice
  nlohmann::json to_json() const;
  static GemmAlgo from_json(const nlohmann::json& j);
};

// ---- kernel primitives ------------------------------------------------------------------------------
// Score matrices are already scaled (1/sqrt(D) is the QK^T GEMM's alpha). Row r of head bh is query r;
// a column c of a page starting at token `col_offset` is key col_offset + c; causal masks key > query.

// Online-softmax update over one page for `bh_count` heads at once (nested: 1 head, head_batched: all).
// Per row: m' = max(m, max_c s); P_c = exp(s_c - m'); l' = l e^(m-m') + sum P; acc *= e^(m-m').
// With first_page, m and l are initialised and acc is not read (the PV GEMM then runs with beta = 0).
struct SoftmaxUpdateArgs {
  const void* scores = nullptr;
  DType score_type = DType::fp32;
  std::int64_t score_ld = 0, score_bh_stride = 0;
  void* probs = nullptr;  // same dtype as V
  DType prob_type = DType::fp16;
  std::int64_t prob_ld = 0, prob_bh_stride = 0;
  float* row_max = nullptr;  // [bh_count * rows]
  float* row_sum = nullptr;
  float* acc = nullptr;  // [bh_count, rows, head_dim]
  std::int64_t bh_count = 0, rows = 0, cols = 0, head_dim = 0;
  std::int64_t col_offset = 0;
  bool first_page = false;
  bool causal = false;
};

// Page-local softmax over every page at once (fully_batched, ptr_array). Scores of (bh, page p, row r,
// col c) are at bh*score_bh_stride + p*score_page_stride + r*score_ld + c. Probabilities go to a
// page-major buffer [bh, pages, rows, page_size] with the short last page's missing columns set to 0;
// page_max/page_sum are [bh, pages, rows]. A row with every key of a page masked gets max -inf, sum 0.
struct PageSoftmaxArgs {
  const void* scores = nullptr;
  DType score_type = DType::fp32;
  std::int64_t score_bh_stride = 0, score_page_stride = 0, score_ld = 0;
  void* probs = nullptr;
  DType prob_type = DType::fp16;
  float* page_max = nullptr;
  float* page_sum = nullptr;
  std::int64_t bh_count = 0, pages = 0, rows = 0, page_size = 0, last_page_len = 0;
  bool causal = false;
};

// Combine per-page partial outputs [bh, pages, rows, head_dim] (fp32, unnormalised) into O [bh, rows, D].
struct CombineArgs {
  const float* partial = nullptr;
  const float* page_max = nullptr;
  const float* page_sum = nullptr;
  std::int64_t bh_count = 0, pages = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
};

// O = acc / l for every row.
struct FinalizeArgs {
  const float* acc = nullptr;
  const float* row_sum = nullptr;
  std::int64_t bh_count = 0, rows = 0, head_dim = 0;
  void* out = nullptr;
  DType out_type = DType::fp16;
};

// Copy K and V pages into contiguous padded tensors [bh, pages*page_size, D], rows past seq_len zeroed.
// The source is either contiguous [B,H,S,D] (padding a short last page) or the paged pool.
struct GatherArgs {
  const void* k_src = nullptr;
  const void* v_src = nullptr;
  const std::int32_t* block_table = nullptr;  // [B, pages], paged source only
  bool paged = false;
  void* k_dst = nullptr;
  void* v_dst = nullptr;
  std::int64_t batch = 0, heads = 0, seq_len = 0, pages = 0, page_size = 0, head_dim = 0;
  DType dtype = DType::fp16;
};

// ---- the problem's tensors, and the fused kernel's tiles --------------------------------------------

// Q and O are [B,H,S,D]. K and V are [B,H,S,D] (contiguous) or a pool of B*pages slots, each
// [H, page_size, D], reached through block_table [B, pages] (paged). In the pool, rows of a short last
// page past seq_len hold zeros.
struct AttentionIO {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const std::int32_t* block_table = nullptr;       // backend memory
  const std::int32_t* block_table_host = nullptr;  // the same table on the host, for pointer arithmetic
};

// Contiguous K and V allocations carry this many zeroed rows of slack past their end, so that a GEMM over
// a full-size last page (ptr_array) reads defined memory.
inline std::int64_t kv_slack_rows(const Problem& p) { return p.page_size; }

struct FusedTile {
  int block_m = 64, block_n = 64, warps = 4, stages = 2;
  std::string name() const;  // "m64n64w4s2"
  nlohmann::json to_json() const;
  bool operator==(const FusedTile& o) const {
    return block_m == o.block_m && block_n == o.block_n && warps == o.warps && stages == o.stages;
  }
};

// ---- measurement hooks ------------------------------------------------------------------------------

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_ms() = 0;  // waits for stop to complete
};

// A forward captured once (a CUDA graph on the GPU) and replayed.
class CapturedForward {
 public:
  virtual ~CapturedForward() = default;
  virtual void replay() = 0;
};

struct LaunchRecord {
  std::int64_t kernels = 0;     // device kernels that ran (CUDA: CUPTI; CPU: every primitive call)
  std::int64_t gemm_calls = -1;  // library GEMM calls the backend received (-1: not counted)
  std::int64_t other_kernels = -1;  // non-GEMM primitive calls the backend received (-1: not counted)
  std::vector<std::string> kernel_names;  // distinct names with counts, "name x3"
  double kernel_time_ms = 0;   // summed kernel durations (CUPTI), 0 where unknown
  std::string source;          // "cupti" or "cpu-counter"
};

// ---- the interface -----------------------------------------------------------------------------------

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual DeviceInfo device_info() const = 0;

  // Bytes of this backend's memory that preparing a problem's inputs takes beyond the buffers allocated
  // through alloc (the estimate made before allocating): 0 here; cpu, whose memory is host memory, counts
  // the host copies of the inputs and, with the reference, its fp64 result.
  virtual std::int64_t input_staging_bytes(const Problem& p, bool with_reference) const {
    (void)p;
    (void)with_reference;
    return 0;
  }
  // Memory. alloc throws BackendError when out of memory.
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void upload(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void download(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void fill_bytes(void* dst, unsigned char value, std::size_t bytes) = 0;
  virtual void synchronize() = 0;

  // GEMMs. Plans hold descriptors and the chosen algorithm; made in setup, used in run.
  virtual GemmPlanId make_gemm_plan(const GemmShape& shape) = 0;
  virtual void gemm(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) = 0;
  virtual void release_gemm_plans() = 0;
  // What each live plan chose (shape, algorithm, source heuristic|tuned|cache), in plan order.
  virtual nlohmann::json gemm_plan_report() const = 0;
  virtual GemmShape gemm_plan_shape(GemmPlanId plan) const = 0;
  // Tuning: candidate algorithms for a plan (heuristic top-N, or the exhaustive space capped at `top`
  // candidates, 0 for no cap, the heuristic's first choice and the distinct base configurations first), and switching a
  // plan to one of them (throws BackendError when the algorithm cannot run the shape). `source` is what
  // the report shows: "heuristic", "tuned" or "cache".
  virtual std::vector<GemmAlgo> gemm_candidates(GemmPlanId plan, int top, bool exhaustive) = 0;
  virtual void set_gemm_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) = 0;
  // An algorithm chooser consulted by make_gemm_plan (the heuristic cache); nullptr restores the heuristic.
  // It returns true and fills `algo` when it has a choice for the shape.
  using GemmAlgoChooser = std::function<bool(const GemmShape&, GemmAlgo* algo)>;
  virtual void set_gemm_chooser(GemmAlgoChooser chooser) = 0;

  // Kernels.
  virtual void softmax_update(const SoftmaxUpdateArgs& a) = 0;
  virtual void page_softmax(const PageSoftmaxArgs& a) = 0;
  virtual void combine_pages(const CombineArgs& a) = 0;
  virtual void finalize(const FinalizeArgs& a) = 0;
  virtual void gather_pages(const GatherArgs& a) = 0;

  // Fused attention: the compiled tiles, which of them take a problem, and one launch.
  virtual std::vector<FusedTile> fused_tiles() const = 0;
  // Empty string when `tile` can run `p`, else the reason it cannot.
  virtual std::string fused_can_implement(const Problem& p, const FusedTile& tile) const = 0;
  virtual void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile) = 0;

  // Reference attention, ignoring io.o, into `out` (backend memory, fp32 [B,H,S,D]).
  // cpu: naive fp64 math; cuda: a simple fp32 kernel (checked against the cpu one by a test).
  virtual void reference_attention(const Problem& p, const AttentionIO& io, float* out) = 0;
  virtual std::string reference_name() const = 0;
  // Verification: error statistics of `out` (p's output in p.dtype, backend memory) against `ref` (fp32,
  // backend memory), computed where the data lives (cuda: on the GPU, only the statistics are copied back).
  virtual ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) = 0;

  // Measurement.
  virtual std::unique_ptr<DeviceTimer> make_timer() = 0;
  virtual void flush_l2() = 0;
  // Captures `forward` for replay; returns nullptr where the backend cannot capture.
  virtual std::unique_ptr<CapturedForward> capture(const std::function<void()>& forward) = 0;
  virtual void begin_launch_count() = 0;
  virtual LaunchRecord end_launch_count() = 0;  // synchronizes
  virtual int current_sm_clock_mhz() { return 0; }

  // Profiler ranges (NVTX on CUDA; no-ops on CPU).
  virtual void range_push(const std::string& name) { (void)name; }
  virtual void range_pop() {}

  // After a sticky device error: rebuild the context so later strategies can run. Returns false when
  // that is impossible (the run command then continues in a fresh process).
  virtual bool recover() { return true; }

  // Test hook (ATTNBENCH_INJECT_FAULT): make the device fail the way a kernel bug would, with a sticky
  // error. cuda: a kernel writes to an invalid address; cpu: simulated, and recover() then fails.
  // Throws BackendError.
  virtual void inject_fault();

  // Test hook (ATTNBENCH_INJECT_SLOWDOWN): enqueue `ms` of device time that computes nothing, in stream
  // order after whatever was enqueued before (cuda: one kernel spinning on the global timer; cpu: a busy
  // wait). The CI gate's power is measured by slowing strategies this way. Throws BackendError.
  virtual void inject_delay(double ms);

  // Before a measurement round (MeasureSettings::rounds > 1): give the measurement's own buffers (the L2
  // flush buffer) back and hold a spacer whose size depends on `salt`, so that the round's allocations land
  // at other device addresses than the last round's. A median moves with memory placement between
  // processes; rounds on fresh placements let one process see that spread. No-op where placement is moot.
  virtual void relocate_buffers(std::uint64_t salt) { (void)salt; }
  // The most a spacer of relocate_buffers holds (counted in the memory estimate of a run with rounds).
  static constexpr std::int64_t kMaxRelocationSpacerBytes = std::int64_t(128) << 20;
};

// RAII profiler range.
class ScopedRange {
 public:
  ScopedRange(Backend& b, const std::string& name) : b_(b) { b_.range_push(name); }
  ~ScopedRange() { b_.range_pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  Backend& b_;
};

// RAII buffer in backend memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& b, std::size_t bytes) : b_(&b), p_(bytes ? b.alloc(bytes) : nullptr), bytes_(bytes) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept : b_(o.b_), p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) { reset(); b_ = o.b_; p_ = o.p_; bytes_ = o.bytes_; o.p_ = nullptr; o.bytes_ = 0; }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void reset() {
    if (p_ && b_) b_->free(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  // After the backend rebuilt its context (recover), the old allocation is gone: forget it without freeing.
  void forget() { p_ = nullptr; bytes_ = 0; }
  void* get() const { return p_; }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  Backend* b_ = nullptr;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Byte-offset pointer arithmetic on backend pointers.
inline const void* offset_ptr(const void* p, std::int64_t elements, DType t) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(dtype_size(t));
}
inline void* offset_ptr(void* p, std::int64_t elements, DType t) {
  return static_cast<char*>(p) + elements * static_cast<std::int64_t>(dtype_size(t));
}

}  // namespace ab
