// The fused kernels' parameters for a problem on its tensors: the one translation from Problem + AttentionIO
// that the CUDA backend and the fused dev harness (tools/fused_dev) both use.
#include "fused_attention.hpp"

namespace ab::kernels {

FusedParams fused_params(const Problem& p, const AttentionIO& io) {
  FusedParams f;
  f.q = io.q;
  f.k = io.k;
  f.v = io.v;
  f.o = io.o;
  f.block_table = io.block_table;
  // Only a ragged problem's lengths: with none the kernels take seq_len instead of loading a length per work
  // item (a dependent load at the start of each; 1-2 % of the persistent kernel's time at B=32 H=12 S=512
  // D=64 on an H200, session 23).
  f.kv_lens = p.ragged() ? io.kv_lens : nullptr;
  f.batch = p.batch;
  f.heads = p.heads;
  f.kv_heads = p.kv_heads;
  f.q_len = p.q_len;
  f.ragged = p.ragged();
  f.q_lens = p.mixed() ? io.q_lens : nullptr;
  f.mixed = p.mixed();
  f.seq_len = p.seq_len;
  f.head_dim = p.head_dim;
  f.pages = p.pages;
  f.page_size = p.page_size;
  f.paged = p.kv_layout == KvLayout::paged;
  f.pool_slots = f.paged ? p.pool_slots() : 0;
  f.causal = p.causal;
  f.bf16 = p.dtype == DType::bf16;
  f.scale = p.scale();
  f.window = p.window < p.seq_len ? p.window : 0;  // a window of the whole cache or more hides no key
  f.softcap = static_cast<float>(p.softcap);
  f.sinks = p.sinks ? io.sinks : nullptr;
  f.has_sinks = p.sinks;
  return f;
}

}  // namespace ab::kernels
