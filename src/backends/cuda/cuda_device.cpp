// CUDA device discovery and the device description recorded in reports.
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/nvml_clock.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "backends/cuda/cuda_check.hpp"

namespace ab::cuda {

int device_count_noexcept() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {
std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
int attr(cudaDeviceAttr a, int device) {
  int v = 0;
  AB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
  return v;
}
}  // namespace

DeviceInfo query_device_info(int device) {
  DeviceInfo d;
  d.backend = "cuda";
  cudaDeviceProp prop{};
  AB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  std::size_t free_b = 0, total_b = 0;
  int current = 0;
  AB_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    d.memory_free = static_cast<std::int64_t>(free_b);
    d.memory_bytes = static_cast<std::int64_t>(total_b);
  } else {
    (void)cudaGetLastError();
  }
  int drv = 0, rt = 0;
  AB_CUDA_CHECK(cudaDriverGetVersion(&drv));
  AB_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  // The display driver ("580.159.04") identifies the environment; the CUDA driver API version follows it.
  std::string display = nvml_driver_version();
  d.driver = display.empty() ? version_text(drv) : fmt::format("{} (CUDA {})", display, version_text(drv));
  d.cuda_runtime = version_text(rt);
  std::size_t lt = cublasLtGetVersion();  // e.g. 130100 = 13.1.0
  d.cublaslt = fmt::format("{}.{}.{}", lt / 10000, (lt % 10000) / 100, lt % 100);
  d.clock_mhz_max = attr(cudaDevAttrClockRate, device) / 1000;      // kHz
  d.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate, device) / 1000;
  return d;
}

namespace {

// The buffers, stream and events of one bandwidth measurement, released on every path.
struct CopyProbe {
  void* src = nullptr;
  void* dst = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~CopyProbe() {
    if (stream) (void)cudaStreamSynchronize(stream);
    if (start) (void)cudaEventDestroy(start);
    if (stop) (void)cudaEventDestroy(stop);
    if (stream) (void)cudaStreamDestroy(stream);
    if (src) (void)cudaFree(src);
    if (dst) (void)cudaFree(dst);
  }
};

}  // namespace

void* try_device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  if (e != cudaSuccess) throw_cuda_error(e, std::string("cudaMalloc (") + what + ")");
  return p;
}

double measure_copy_bandwidth_gbps(int device) {
  int current = -1;
  AB_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) return 0;
  std::size_t free_b = 0, total_b = 0;
  AB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  constexpr std::size_t kMin = std::size_t(64) << 20;
  std::size_t bytes = std::size_t(1) << 30;
  while (bytes > kMin && 2 * bytes > free_b / 4) bytes /= 2;
  if (2 * bytes > free_b) return 0;
  CopyProbe probe;
  probe.src = try_device_alloc(bytes, "copy bandwidth");
  if (probe.src) probe.dst = try_device_alloc(bytes, "copy bandwidth");
  if (!probe.src || !probe.dst) return 0;
  AB_CUDA_CHECK(cudaStreamCreateWithFlags(&probe.stream, cudaStreamNonBlocking));
  AB_CUDA_CHECK(cudaEventCreate(&probe.start));
  AB_CUDA_CHECK(cudaEventCreate(&probe.stop));
  AB_CUDA_CHECK(cudaMemsetAsync(probe.src, 1, bytes, probe.stream));
  AB_CUDA_CHECK(cudaMemsetAsync(probe.dst, 0, bytes, probe.stream));
  AB_CUDA_CHECK(cudaMemcpyAsync(probe.dst, probe.src, bytes, cudaMemcpyDeviceToDevice, probe.stream));  // warm-up
  float best_ms = 0;
  for (int rep = 0; rep < 5; ++rep) {
    AB_CUDA_CHECK(cudaEventRecord(probe.start, probe.stream));
    AB_CUDA_CHECK(cudaMemcpyAsync(probe.dst, probe.src, bytes, cudaMemcpyDeviceToDevice, probe.stream));
    AB_CUDA_CHECK(cudaEventRecord(probe.stop, probe.stream));
    AB_CUDA_CHECK(cudaEventSynchronize(probe.stop));
    float ms = 0;
    AB_CUDA_CHECK(cudaEventElapsedTime(&ms, probe.start, probe.stop));
    if (ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  AB_CUDA_CHECK(cudaStreamSynchronize(probe.stream));
  return best_ms > 0 ? 2.0 * static_cast<double>(bytes) / (best_ms * 1e-3) * 1e-9 : 0.0;
}

}  // namespace ab::cuda
