// fused_dev soak: the search for intermittent pipeline hangs. Every implementable tile of the family is
// launched many times in a row on one shape, the L2 flushed before each launch as bench does, and a host
// watchdog waits on each launch: one that has not finished after 10 s is reported (tile, launch index,
// elapsed) and the process exits 4 at once, without the destructors (they would wait on the hung kernel);
// the driver ends the kernel with the context. Default shape: B=32 H=12 S=512 D=64 on 128-row pages, causal,
// 2000 launches per tile (where bench hung in session 23); FUSED_DEV_SOAK=B,H,S,D,PAGE,CAUSAL,LAUNCHES
// sets another (PAGE 0: contiguous K/V). Exit 3 when no tile of the family implements the shape here (a
// GPU without sm_90a), as without a device: the ctests report that as skipped.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/l2_flush.hpp"
#include "dev_case.hpp"
#include "dev_inputs.hpp"
#include "device_case.hpp"
#include "fused_attention.hpp"
#include "launch_timing.hpp"
#include "modes.hpp"

namespace ab::fused_dev {

namespace {

struct SoakShape {
  int batch = 32, heads = 12, seq_len = 512, head_dim = 64, page_size = 128, causal = 1, launches = 2000;
};

bool parse_soak_shape(const char* s, SoakShape* out) {
  SoakShape r;
  if (std::sscanf(s, "%d,%d,%d,%d,%d,%d,%d", &r.batch, &r.heads, &r.seq_len, &r.head_dim, &r.page_size, &r.causal,
                  &r.launches) != 7)
    return false;
  if (r.batch < 1 || r.heads < 1 || r.seq_len < 1 || r.head_dim < 1 || r.page_size < 0 || r.launches < 1) return false;
  *out = r;
  return true;
}

// Polls `done` until it completes or `limit` passes; false on a timeout.
bool wait_event(cudaEvent_t done, std::chrono::seconds limit) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) AB_CUDA_CHECK(e);
    if (std::chrono::steady_clock::now() - t0 > limit) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

int run_soak(TileSelection family) {
  SoakShape s;
  if (const char* env = std::getenv("FUSED_DEV_SOAK")) {
    if (!parse_soak_shape(env, &s)) {
      std::fprintf(stderr, "FUSED_DEV_SOAK must be B,H,S,D,PAGE,CAUSAL,LAUNCHES (positive; PAGE 0: contiguous), got '%s'\n",
                   env);
      return 2;
    }
  }
  const Problem p = dev_problem(s.batch, s.heads, s.seq_len, s.head_dim, s.page_size, s.causal != 0, DType::fp16);
  const DeviceCase d(p, make_dev_inputs(p, 7));
  cuda::L2Flusher flusher;
  flusher.init(kFlushBytes / 2);
  cudaEvent_t done = nullptr;
  AB_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  std::printf("soak %s, %d launches per tile\n", p.label().c_str(), s.launches);
  std::fflush(stdout);
  int tiles = 0;
  for (const FusedTile& t : tiles_of_selection(kernels::fused_compiled_tiles(), family)) {
    if (!kernels::fused_can_implement(d.params(), t).empty()) continue;
    ++tiles;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < s.launches; ++i) {
      flusher.flush(nullptr);
      d.launch(t);
      AB_CUDA_CHECK(cudaEventRecord(done, nullptr));
      if (!wait_event(done, std::chrono::seconds(10))) {
        std::printf("HANG %s launch %d of %d (no completion after 10 s)\n", t.name().c_str(), i + 1, s.launches);
        std::fflush(stdout);
        std::_Exit(4);
      }
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("ok %s %d launches %.1f s\n", t.name().c_str(), s.launches, sec);
    std::fflush(stdout);
  }
  AB_CUDA_CHECK(cudaEventDestroy(done));
  if (tiles == 0) {  // nothing ran: a skip (the soak ctests on a GPU without the family's tiles), not a pass
    std::printf("no tile of the family implements this shape on this device: skipped\n");
    return 3;
  }
  return 0;
}

}  // namespace ab::fused_dev
