// A C entry point to the fused kernels for tools/fused_dev/peer_interleaved.py, which loads it with ctypes to time
// fused and PyTorch's cuDNN and flash backends sample by sample in one process (an H200's clock falls within
// seconds of steady work, so series timed one after the other do not compare). One launch of a named tile, or
// of the default one, on contiguous [B,H,S,D] tensors on the caller's stream. Built with
// ATTNBENCH_FUSED_CAPI (on by default with CUDA; the libraries it links are then position independent). The
// persistent tiles' tail split gets a workspace of this library's, kept for the process (grown when a larger
// head_dim needs more; its counters zeroed on the caller's stream when it is made).
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "core/fused_decode_plan.hpp"
#include "core/fused_tail_layout.hpp"
#include "core/problem.hpp"
#include "fused_attention.hpp"

namespace {

void write_text(char* buf, int len, const std::string& s) {
  if (buf && len > 0) std::snprintf(buf, static_cast<std::size_t>(len), "%s", s.c_str());
}

// The tail split's workspace for any persistent tile at `head_dim` (the largest grid it runs on, 192-row
// blocks); nullptr when it cannot be had (the kernels then do not split).
struct TailWorkspace {
  void* p = nullptr;
  std::int64_t bytes = 0;
};
TailWorkspace tail_workspace(int head_dim, void* stream) {
  static TailWorkspace ws;
  const std::int64_t need = ab::fused_tail::any_tile_workspace_bytes(head_dim);
  if (need > ws.bytes) {
    if (ws.p && cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) == cudaSuccess) cudaFree(ws.p);
    ws = TailWorkspace{};
    void* p = nullptr;
    if (need > 0 && cudaMalloc(&p, static_cast<std::size_t>(need)) == cudaSuccess) {
      if (cudaMemsetAsync(p, 0, static_cast<std::size_t>(ab::fused_tail::kCounters * 4),
                          static_cast<cudaStream_t>(stream)) == cudaSuccess)
        ws = TailWorkspace{p, need};
      else
        cudaFree(p);
    }
    cudaGetLastError();  // a failed allocation leaves no sticky error: the launch runs without the split
  }
  return ws;
}

}  // namespace

// 0: launched (tile_used names the tile); 2: refused (err says why: bad sizes, a tile not compiled or that
// cannot run the problem); 1: the launch failed (err holds the CUDA error code).
extern "C" int attnbench_fused_run(const void* q, const void* k, const void* v, void* o, long long batch,
                                   long long heads, long long seq_len, long long head_dim, int causal, int bf16,
                                   const char* tile, void* stream, char* err, int err_len, char* tile_used,
                                   int tile_used_len) {
  try {
    const ab::Problem p = ab::make_problem(batch, heads, seq_len, head_dim, 1, 0, ab::KvLayout::contiguous,
                                           bf16 ? ab::DType::bf16 : ab::DType::fp16, causal != 0);
    ab::AttentionIO io;
    io.q = q;
    io.k = k;
    io.v = v;
    io.o = o;
    ab::kernels::FusedParams f = ab::kernels::fused_params(p, io);
    if (!ab::fused_decode::takes_q_len(p.q_len)) {  // prefill: the persistent tiles' tail split (decode: none)
      const TailWorkspace ws = tail_workspace(static_cast<int>(head_dim), stream);
      f.workspace = ws.p;
      f.workspace_bytes = ws.bytes;
    }
    const bool named = tile != nullptr && *tile != '\0';
    std::string why = named ? "tile " + std::string(tile) + " is not compiled" : "";
    for (const ab::FusedTile& t : ab::kernels::fused_compiled_tiles()) {
      if (named && t.name() != tile) continue;
      const std::string refusal = ab::kernels::fused_can_implement(f, t);
      if (!refusal.empty()) {
        if (named) {
          why = refusal;
          break;
        }
        if (why.empty()) why = "no compiled tile runs this problem (the first: " + refusal + ")";
        continue;  // the default: the first tile that runs it
      }
      write_text(tile_used, tile_used_len, t.name());
      const int e = ab::kernels::fused_launch(f, t, stream);
      if (e == 0) return 0;
      write_text(err, err_len, "fused launch of " + t.name() + " failed: CUDA error " + std::to_string(e));
      return 1;
    }
    write_text(err, err_len, why);
    return 2;
  } catch (const std::exception& e) {
    write_text(err, err_len, e.what());
    return 2;
  }
}
