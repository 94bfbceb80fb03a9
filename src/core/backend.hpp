// The backend seam: one device and the interfaces every strategy is written against once. Two
// implementations: `cpu` (reference, fp64 accumulation, counts primitive calls) and `cuda` (cuBLASLt,
// kernels/, CUPTI). A Backend names its device (kind, info, recovery) and hands out five interfaces, each
// declared in its own header: DeviceMemory, GemmEngine, AttentionKernels, Verifier, Profiler. A decorator
// (core/backend_decorators.hpp) substitutes one of them and keeps the rest.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/attention_kernels.hpp"
#include "core/device_memory.hpp"
#include "core/dtype.hpp"
#include "core/gemm_engine.hpp"
#include "core/problem.hpp"
#include "core/profiler.hpp"
#include "core/reference.hpp"
#include "core/verifier.hpp"

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
  // Measured once per process: a device-to-device copy's bytes read plus written over its best time, in
  // GB/s (1e9 bytes/s); 0 when unknown. Achieved bandwidth is shown as a fraction of it (%copy).
  double copy_bandwidth_gbps = 0;
  // Measured once per process (CUDA): a dense fp16 GEMM's TFLOP/s (backends/cuda/peak_gemm.hpp), the ceiling
  // plots draw; 0 when unknown (the CPU backend).
  double peak_tflops = 0;
  nlohmann::json to_json() const;
};

class Backend {
 public:
  // The interfaces a backend hands out; each pointer is set and outlives the Backend's use.
  struct Parts {
    DeviceMemory* memory = nullptr;
    GemmEngine* gemm = nullptr;
    AttentionKernels* kernels = nullptr;
    Verifier* verifier = nullptr;
    Profiler* profiler = nullptr;
  };

  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual DeviceInfo device_info() const = 0;
  // After a sticky device error: rebuild the context so later strategies can run. Returns false when
  // that is impossible (the run command then continues in a fresh process).
  virtual bool recover() { return true; }
  // The native stream work is enqueued on (a cudaStream_t on cuda; nullptr on cpu) and the device ordinal,
  // handed to plugins (strategies/plugin_strategy.cpp) so that their kernels run in stream order.
  virtual void* native_stream() const { return nullptr; }
  virtual int device_ordinal() const { return 0; }

  DeviceMemory& memory() { return *parts_.memory; }
  const DeviceMemory& memory() const { return *parts_.memory; }
  GemmEngine& gemm() { return *parts_.gemm; }
  const GemmEngine& gemm() const { return *parts_.gemm; }
  AttentionKernels& kernels() { return *parts_.kernels; }
  const AttentionKernels& kernels() const { return *parts_.kernels; }
  Verifier& verifier() { return *parts_.verifier; }
  const Verifier& verifier() const { return *parts_.verifier; }
  Profiler& profiler() { return *parts_.profiler; }
  const Profiler& profiler() const { return *parts_.profiler; }
  const Parts& parts() const { return parts_; }

 protected:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  // Called by the implementation's constructor once its parts exist.
  void set_parts(const Parts& parts) { parts_ = parts; }

 private:
  Parts parts_;
};

}  // namespace ab
