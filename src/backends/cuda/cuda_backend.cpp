// The CUDA backend's lifetime (device, stream, cuBLASLt handle, workspace), device info, measurement
// hooks (events, L2 flush, graph capture, CUPTI window, NVTX, clocks) and recovery after sticky errors.
// ATTNBENCH_KERNEL_BREAKDOWN=1 prints each counted window's kernels with their summed times to stderr.
#include "backends/cuda/cuda_backend.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "backends/cuda/cuda_backend_impl.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_graph.hpp"
#include "backends/cuda/peak_gemm.hpp"
#include "backends/cuda/cuda_timer.hpp"
#include "backends/cuda/nvtx_ranges.hpp"
#include "core/errors.hpp"
#include "core/phase_trace.hpp"

namespace ab {

int cuda_device_count() { return cuda::device_count_noexcept(); }

std::unique_ptr<Backend> make_cuda_backend(int device) {
  int n = cuda::device_count_noexcept();
  trace_phase(fmt::format("cuda: {} device(s) (the driver and runtime loaded)", n));
  if (device < 0 || device >= n) throw BackendError(fmt::format("CUDA device {} does not exist ({} visible)", device, n));
  return std::make_unique<cuda::CudaBackend>(device);
}

namespace cuda {

CudaBackend::CudaBackend(int device) : device_(device), nvml_(device) {
  set_parts({this, this, this, this, this});
  trace_phase(fmt::format("cuda: device {}: CUPTI's callbacks registered, NVML opened", device_));
  AB_CUDA_CHECK(cudaSetDevice(device_));
  trace_phase("cuda: context");
  int l2 = 0;
  AB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
  l2_bytes_ = l2;
  try {
    create_context_objects();
  } catch (...) {
    destroy_context_objects(false);
    throw;
  }
  trace_phase("cuda: stream, cuBLASLt handle, workspace");
}

CudaBackend::~CudaBackend() {
  plans_.clear();
  if (stream_) cudaStreamSynchronize(stream_);
  destroy_context_objects(false);
}

void CudaBackend::create_context_objects() {
  AB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  AB_CUBLAS_CHECK(cublasLtCreate(&lt_));
  cudaError_t e = cudaMalloc(&workspace_, kWorkspaceBytes);
  if (e != cudaSuccess) {
    workspace_ = nullptr;
    throw_cuda_error(e, fmt::format("cudaMalloc of the {}-byte cuBLASLt workspace", kWorkspaceBytes));
  }
}

void CudaBackend::destroy_context_objects(bool after_reset) noexcept {
  flusher_.release(after_reset);
  if (!after_reset) {
    if (spacer_) cudaFree(spacer_);
    if (workspace_) cudaFree(workspace_);
    if (lt_) cublasLtDestroy(lt_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  workspace_ = nullptr;
  spacer_ = nullptr;
  lt_ = nullptr;
  stream_ = nullptr;
  (void)cudaGetLastError();
}

DeviceInfo CudaBackend::device_info() const {
  DeviceInfo d = query_device_info(device_);
  if (copy_gbps_ < 0) {
    copy_gbps_ = measure_copy_bandwidth_gbps(device_);
    trace_phase("cuda: copy bandwidth measured");
  }
  d.copy_bandwidth_gbps = copy_gbps_;
  if (peak_tflops_ < 0) {
    // ATTNBENCH_NO_PEAK_GEMM=1 leaves the ceiling unknown (0): compute-sanitizer's racecheck, restricted to our
    // kernels by --kernel-name, faults in the uninstrumented cuBLAS kernel of the probe (docs/perf-notes.md).
    const char* skip = std::getenv("ATTNBENCH_NO_PEAK_GEMM");
    peak_tflops_ = skip && *skip && *skip != '0' ? 0 : measure_peak_gemm_tflops(lt_, device_);
    trace_phase("cuda: peak GEMM measured");
  }
  d.peak_tflops = peak_tflops_;
  return d;
}

void CudaBackend::synchronize() { AB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

std::unique_ptr<DeviceTimer> CudaBackend::make_timer() { return make_event_timer(stream_); }

void CudaBackend::flush_l2() {
  if (flusher_.bytes() == 0) flusher_.init(l2_bytes_);  // once, on first use
  flusher_.flush(stream_);
}

void CudaBackend::relocate_buffers(std::uint64_t salt) {
  synchronize();
  flusher_.release(false);  // re-made at the next flush, after this round's allocations
  if (spacer_) AB_CUDA_CHECK(cudaFree(spacer_));
  spacer_ = nullptr;
  // 1 to 64 pages of 2 MiB (at most kMaxRelocationSpacerBytes), from a hash of the salt.
  std::size_t bytes = (((salt + 1) * 0x9E3779B97F4A7C15ull) >> 58) * (2u << 20) + (2u << 20);
  AB_CUDA_CHECK(cudaMalloc(&spacer_, bytes));
}

std::unique_ptr<CapturedForward> CudaBackend::capture(const std::function<void()>& forward) {
  capture_error_.clear();
  auto g = capture_graph(stream_, forward, &capture_error_);
  return g;
}

void CudaBackend::begin_launch_count() {
  gemm_calls_ = 0;
  other_kernels_ = 0;
  cupti_.begin();
}

LaunchRecord CudaBackend::end_launch_count() {
  synchronize();
  KernelWindow w = cupti_.end();
  LaunchRecord r;
  r.gemm_calls = gemm_calls_;
  r.other_kernels = other_kernels_;
  if (w.available) {
    if (const char* env = std::getenv("ATTNBENCH_KERNEL_BREAKDOWN"); env && *env && *env != '0') {
      for (std::size_t i = 0; i < w.names.size(); ++i)
        std::fprintf(stderr, "  [cupti] %9.4f ms  %s\n", w.name_time_ms[i], w.names[i].c_str());
      std::fprintf(stderr, "  [cupti] %9.4f ms  total, %lld kernels\n", w.kernel_time_ms, static_cast<long long>(w.kernels));
    }
    r.kernels = w.kernels;
    r.kernel_names = std::move(w.names);
    if (w.dropped > 0) r.kernel_names.push_back(fmt::format("({} CUPTI records dropped)", w.dropped));
    r.kernel_time_ms = w.kernel_time_ms;
    r.source = "cupti";
  } else {
    r.kernels = -1;
    r.kernel_names = {"CUPTI unavailable: " + w.error};
    r.source = "unavailable";
  }
  return r;
}

void CudaBackend::range_push(const std::string& name) { nvtx_push(name); }
void CudaBackend::range_pop() { nvtx_pop(); }

bool CudaBackend::recover() {
  plans_.clear();  // descriptors are host objects; the algorithms must be chosen again anyway
  if (lt_) cublasLtDestroy(lt_);
  lt_ = nullptr;
  // cudaDeviceReset may report the sticky error it is clearing: its result says nothing about the reset.
  (void)cudaDeviceReset();
  (void)cudaGetLastError();
  mem_.forget_all();
  destroy_context_objects(true);
  try {
    // The faulted context can take a moment to go away; until it has, a new one may be refused.
    cudaError_t set = cudaErrorUnknown;
    for (int attempt = 0; attempt < 10; ++attempt) {
      set = cudaSetDevice(device_);
      if (set == cudaSuccess) break;
      (void)cudaGetLastError();
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
      (void)cudaDeviceReset();
      (void)cudaGetLastError();
    }
    if (set != cudaSuccess) {
      int mode = -1;
      (void)cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device_);
      (void)cudaGetLastError();
      throw BackendError(fmt::format("cudaSetDevice({}) after cudaDeviceReset: {}{}", device_, cuda_error_text(set),
                                     mode == cudaComputeModeExclusiveProcess
                                         ? " (the device is in exclusive-process compute mode, which keeps a faulted "
                                           "context from being replaced inside this process)"
                                         : ""));
    }
    create_context_objects();
    // Prove the device works: a write and a read back.
    int* probe = nullptr;
    AB_CUDA_CHECK(cudaMalloc(&probe, sizeof(int)));
    int v = 0;
    cudaError_t e1 = cudaMemsetAsync(probe, 0x5a, sizeof(int), stream_);
    cudaError_t e2 = e1 == cudaSuccess ? cudaMemcpyAsync(&v, probe, sizeof(int), cudaMemcpyDeviceToHost, stream_) : e1;
    cudaError_t e3 = e2 == cudaSuccess ? cudaStreamSynchronize(stream_) : e2;
    cudaFree(probe);
    recover_error_ = e3 == cudaSuccess ? (v == 0x5a5a5a5a ? "" : "probe read back a wrong value") : cuda_error_text(e3);
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    recover_error_ = e.what();
  }
  return recover_error_.empty();
}

}  // namespace cuda
}  // namespace ab
