// The CUDA backend's kernel primitives: argument checks, then the kernels/ launchers on the backend's
// stream, each launch checked (BackendError naming the kernel) and counted; also the profiler's delay kernel
// and the fault-injection test hook's kernel; the random inputs' draw.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "backends/cuda/cuda_backend_impl.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "compare_output.hpp"
#include "core/errors.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/random_inputs.hpp"
#include "fused_attention.hpp"
#include "delay.hpp"
#include "fault_injection.hpp"
#include "primitives.hpp"
#include "random_inputs.hpp"
#include "reference_attention.hpp"

namespace ab::cuda {

namespace {

void check_softmax_types(const char* what, DType score, DType prob) {
  bool ok = (prob == DType::fp16 || prob == DType::bf16) && (score == prob || score == DType::fp32);
  if (!ok)
    throw BackendError(fmt::format("{}: scores in {} with probabilities in {} are not supported (scores must be fp32 "
                                   "or the probability type, probabilities fp16 or bf16)",
                                   what, dtype_name(score), dtype_name(prob)));
}

}  // namespace

void CudaBackend::softmax_update(const SoftmaxUpdateArgs& a) {
  check_softmax_types("softmax_update", a.score_type, a.prob_type);
  count_kernel();
  check_launch(kernels::launch_softmax_update(a, stream_), "softmax_update_kernel");
}

void CudaBackend::page_softmax(const PageSoftmaxArgs& a) {
  check_softmax_types("page_softmax", a.score_type, a.prob_type);
  count_kernel();
  check_launch(kernels::launch_page_softmax(a, stream_), "page_softmax_kernel");
}

void CudaBackend::combine_pages(const CombineArgs& a) {
  count_kernel();
  check_launch(kernels::launch_combine_pages(a, stream_), "combine_pages_kernel");
}

void CudaBackend::finalize(const FinalizeArgs& a) {
  count_kernel();
  check_launch(kernels::launch_finalize(a, stream_), "finalize_kernel");
}

void CudaBackend::inject_fault() {
  count_kernel();
  check_launch(kernels::launch_illegal_write(stream_), "illegal_write_kernel");
  AB_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the illegal address surfaces here, sticky
  throw BackendError("injected fault: illegal_write_kernel completed without an error", false);
}

void CudaBackend::enqueue_delay(double ms) {
  if (!(ms >= 0) || !std::isfinite(ms)) throw BackendError(fmt::format("enqueue_delay: {} ms is not a delay", ms));
  // Not counted as a kernel: it is no part of any strategy's launch contract.
  check_launch(kernels::launch_delay(static_cast<std::uint64_t>(ms * 1e6), stream_), "delay_kernel");
}

// Input preparation, not a forward's work: not counted among the forward's kernels.
void CudaBackend::fill_random(void* dst, const RandomFill& fill) {
  check_launch(kernels::launch_random_fill(dst, fill, stream_), "random_fill_kernel");
}

void CudaBackend::gather_pages(const GatherArgs& a) {
  count_kernel();
  check_launch(kernels::launch_gather_pages(a, stream_), "gather_pages_kernel");
}

std::vector<FusedTile> CudaBackend::fused_tiles() const { return kernels::fused_compiled_tiles(); }

std::string CudaBackend::fused_can_implement(const Problem& p, const FusedTile& tile) const {
  // The primitives apply the key mask's window and soft-cap and the sinks (runs_variants); the split-KV decode
  // tiles (kernels/fused_decode.cuh), the persistent prefill tiles (fused_kernel_wsp.cuh's VAR instances), the ws
  // tile of head_dim 256 and the mma.sync prefill tiles of head_dim 32, 96 and 256 apply those three: which tile
  // does is kernels::fused_can_implement's to say, and which take a mixed batch's query counts (the decode tiles). No
  // fused tile has a value head dim of its own.
  for (const std::string& v : p.variants())
    if (v == kValueHeadDim) return "the fused kernels do not apply " + v + " yet";
  return kernels::fused_can_implement(kernels::fused_params(p, AttentionIO{}), tile);
}

int CudaBackend::fused_decode_ctas_per_sm(const Problem& p, const FusedTile& tile) const {
  if (!fused_can_implement(p, tile).empty()) return 0;
  return kernels::fused_decode_occupancy(kernels::fused_params(p, AttentionIO{}), tile);
}

void CudaBackend::fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile, void* workspace,
                                  std::int64_t workspace_bytes) {
  if (p.sinks && !io.sinks)
    throw BackendError(fmt::format("fused_attention for {}: the problem has sinks but no sink logits were given", p.label()));
  kernels::FusedParams f = kernels::fused_params(p, io);
  if (tile.decode()) {
    f.workspace = workspace;
    f.workspace_bytes = workspace ? fused_decode::workspace_bound(p, tile.splits) : 0;
  } else if (tile.persistent() && workspace) {  // the tail split's partials
    f.workspace = workspace;
    f.workspace_bytes = workspace_bytes;
  }
  for (int i = kernels::fused_kernel_count(f, tile); i > 0; --i) count_kernel();
  int err = kernels::fused_launch(f, tile, stream_);
  if (err != 0) check_launch(err, fmt::format("fused_attention [{}] for {}", tile.name(), p.label()).c_str());
}

void CudaBackend::reference_attention(const Problem& p, const AttentionIO& io, float* out) {
  if (std::max(p.head_dim, p.head_dim_v) > kernels::kReferenceMaxHeadDim)
    throw BackendError(fmt::format("cuda reference attention: head_dim {} is over its limit of {}",
                                   std::max(p.head_dim, p.head_dim_v), kernels::kReferenceMaxHeadDim));
  if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
    throw BackendError(fmt::format("cuda reference attention: dtype {} is not supported", dtype_name(p.dtype)));
  kernels::ReferenceParams r;
  r.q = io.q;
  r.k = io.k;
  r.v = io.v;
  r.block_table = io.block_table;
  r.kv_lens = io.kv_lens;
  r.q_lens = p.mixed() ? io.q_lens : nullptr;
  if (p.mixed() && !io.q_lens)
    throw BackendError(fmt::format("cuda reference attention for {}: a mixed batch but no q_lens were given", p.label()));
  r.out = out;
  r.batch = p.batch;
  r.heads = p.heads;
  r.kv_heads = p.kv_heads;
  r.seq_len = p.seq_len;
  r.q_len = p.q_len;
  r.head_dim = p.head_dim;
  r.head_dim_v = p.head_dim_v;
  r.pages = p.pages;
  r.page_size = p.page_size;
  r.paged = p.kv_layout == KvLayout::paged;
  r.causal = p.causal;
  r.bf16 = p.dtype == DType::bf16;
  r.scale = p.scale();
  r.window = p.window;
  r.softcap = static_cast<float>(p.softcap);
  r.sinks = p.sinks ? io.sinks : nullptr;
  if (p.sinks && !io.sinks) throw BackendError("cuda reference attention: a problem with sinks needs their logits");
  count_kernel();
  check_launch(kernels::launch_reference_attention(r, stream_), "reference_attention_kernel");
}

ErrorStats CudaBackend::compare_to_reference(const Problem& p, const void* out, const float* ref) {
  if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
    throw BackendError(fmt::format("cuda compare: dtype {} is not supported", dtype_name(p.dtype)));
  constexpr std::size_t kDoubles = static_cast<std::size_t>(kernels::kCompareBlocks) * kernels::kCompareFields;
  Buffer partials(*this, kDoubles * sizeof(double));
  kernels::CompareParams c;
  c.out = out;
  c.ref = ref;
  c.n = p.o_elements();
  c.bf16 = p.dtype == DType::bf16;
  c.partials = partials.as<double>();
  Buffer q_lens;  // a mixed batch: its counts, so that padding rows are not compared (core/reference.cpp's rule)
  if (p.mixed()) {
    const std::vector<std::int32_t> counts = q_lens_of(p);
    q_lens = Buffer(*this, counts.size() * sizeof(std::int32_t));
    upload(q_lens.get(), counts.data(), counts.size() * sizeof(std::int32_t));
    c.q_lens = q_lens.as<std::int32_t>();
    c.rows = p.q_len;
    c.heads = p.heads;
    c.width = p.head_dim_v;
  }
  check_launch(kernels::launch_compare_output(c, stream_), "compare_output_kernel");
  synchronize();
  std::vector<double> h(kDoubles);
  download(h.data(), partials.get(), kDoubles * sizeof(double));
  double num = 0, den = 0, max_abs = 0, nonfinite = 0;
  for (int b = 0; b < kernels::kCompareBlocks; ++b) {
    const double* f = &h[static_cast<std::size_t>(b) * kernels::kCompareFields];
    num += f[0];
    den += f[1];
    max_abs = std::max(max_abs, f[2]);
    nonfinite += f[3];
  }
  return error_stats_from_sums(p.compared_o_elements(), num, den, max_abs, static_cast<std::int64_t>(nonfinite));
}

}  // namespace ab::cuda
