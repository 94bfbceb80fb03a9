// The CUDA backend class: one device, one non-blocking stream, a cuBLASLt handle with a shared 32 MiB
// workspace, GEMM plans, the primitive kernels, CUPTI counting, NVTX, graph capture, L2 flush.
// Internal to src/backends/cuda (it includes CUDA headers); the CLI sees only cuda_backend.hpp.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <vector>

#include "backends/cuda/cublaslt_plan.hpp"
#include "backends/cuda/cuda_memory.hpp"
#include "backends/cuda/cupti_counter.hpp"
#include "backends/cuda/l2_flush.hpp"
#include "backends/cuda/nvml_clock.hpp"
#include "core/backend.hpp"
#include "core/fault_injection.hpp"

namespace ab::cuda {

// One object is the device and every interface it hands out, and the fault-injection test hook.
class CudaBackend final : public ab::DeviceMemory,
                          public GemmEngine,
                          public AttentionKernels,
                          public Verifier,
                          public Profiler,
                          public Backend,
                          public FaultInjector {
 public:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;

  explicit CudaBackend(int device);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  BackendKind kind() const override { return BackendKind::cuda; }
  DeviceInfo device_info() const override;

  void* alloc(std::size_t bytes) override { return mem_.alloc(bytes); }
  void free(void* p) override { mem_.free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { cuda::upload(dst, src, bytes, stream_); }
  void download(void* dst, const void* src, std::size_t bytes) override { cuda::download(dst, src, bytes, stream_); }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override { cuda::fill(dst, value, bytes, stream_); }
  void fill_random(void* dst, const RandomFill& fill) override;  // cuda_backend_kernels.cpp
  void synchronize() override;

  // cublaslt GEMMs (cuda_backend_gemm.cpp)
  GemmPlan make_plan(const GemmShape& shape) override;
  using GemmEngine::run;
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override;
  std::vector<GemmPlanChoice> plan_report() const override;
  GemmShape plan_shape(GemmPlanId plan) const override { return plan_at(plan).shape(); }
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override;
  void set_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) override;
  void set_chooser(Chooser chooser) override { chooser_ = std::move(chooser); }

  // kernels (cuda_backend_kernels.cpp)
  void softmax_update(const SoftmaxUpdateArgs& a) override;
  void page_softmax(const PageSoftmaxArgs& a) override;
  void combine_pages(const CombineArgs& a) override;
  void finalize(const FinalizeArgs& a) override;
  void gather_pages(const GatherArgs& a) override;
  std::vector<FusedTile> fused_tiles() const override;
  std::string fused_can_implement(const Problem& p, const FusedTile& tile) const override;
  int fused_decode_ctas_per_sm(const Problem& p, const FusedTile& tile) const override;
  // The softmax primitives apply the key mask's window and soft-cap (kernels/primitive_device.cuh: WindowCap),
  // the combine and finalize kernels the sinks (their *_sinks_kernel instances).
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile, void* workspace,
                       std::int64_t workspace_bytes) override;
  void reference_attention(const Problem& p, const AttentionIO& io, float* out) override;
  std::string reference_name() const override { return "cuda-fp32"; }
  ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) override;

  // measurement (cuda_backend.cpp)
  std::unique_ptr<DeviceTimer> make_timer() override;
  void flush_l2() override;
  std::unique_ptr<CapturedForward> capture(const std::function<void()>& forward) override;
  void begin_launch_count() override;
  LaunchRecord end_launch_count() override;
  int current_sm_clock_mhz() override { return nvml_.sm_clock_mhz(); }
  void range_push(const std::string& name) override;
  void range_pop() override;
  void enqueue_delay(double ms) override;  // the delay kernel (cuda_backend_kernels.cpp)
  bool recover() override;
  void inject_fault() override;  // the test hook (cuda_backend_kernels.cpp)
  void relocate_buffers(std::uint64_t salt) override;

  // Why the last capture() returned nullptr (empty after a successful one).
  const std::string& last_capture_error() const { return capture_error_; }
  // Why the last recover() returned false.
  const std::string& last_recover_error() const { return recover_error_; }
  void* stream() const { return stream_; }
  void* native_stream() const override { return stream_; }
  int device_ordinal() const override { return device_; }

 private:
  void create_context_objects();
  void destroy_context_objects(bool after_reset) noexcept;
  LtPlan& plan_at(GemmPlanId id) const;
  void release_plan(GemmPlanId id) noexcept override { plans_.erase(id); }
  void count_kernel() { other_kernels_++; }

  int device_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  void* spacer_ = nullptr;  // relocate_buffers' spacer
  AllocationTracker mem_;
  L2Flusher flusher_;
  std::int64_t l2_bytes_ = 0;
  std::map<GemmPlanId, std::unique_ptr<LtPlan>> plans_;  // by id: creation order
  GemmPlanId next_plan_id_ = 0;  // never reused, also across recover()
  Chooser chooser_;
  CuptiCounter cupti_;
  NvmlClock nvml_;
  std::int64_t gemm_calls_ = 0, other_kernels_ = 0;
  std::string capture_error_, recover_error_;
  mutable double peak_tflops_ = -1;  // measured on the first device_info() (-1: not yet; 0: could not)
  mutable double copy_gbps_ = -1;  // measured on the first device_info() (-1: not yet; 0: could not)
};

}  // namespace ab::cuda
