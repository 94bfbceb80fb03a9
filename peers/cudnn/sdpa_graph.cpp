// The cuDNN SDPA forward graph of one problem (sdpa_graph.hpp): tensors, mask and paging set from the
// problem, validated, lowered, heuristics queried, support checked and one plan built, all before timing.
#include "sdpa_graph.hpp"

#include <unordered_map>
#include <utility>

#include <cudnn_frontend.h>

namespace fe = cudnn_frontend;

namespace ab_peer_cudnn {

namespace {

enum Uid : int64_t { kQ = 1, kK, kV, kO, kSeqQ, kSeqKv, kPageK, kPageV, kSink };

std::shared_ptr<fe::graph::Tensor_attributes> tensor4(fe::graph::Graph& g, const char* name, int64_t uid,
                                                      std::vector<int64_t> dim) {
  std::vector<int64_t> stride(4, 1);
  for (int i = 2; i >= 0; --i) stride[i] = stride[i + 1] * dim[i + 1];
  return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dim).set_stride(stride));
}

std::shared_ptr<fe::graph::Tensor_attributes> int_tensor(fe::graph::Graph& g, const char* name, int64_t uid,
                                                         std::vector<int64_t> dim) {
  auto t = tensor4(g, name, uid, std::move(dim));
  t->set_data_type(fe::DataType_t::INT32);
  return t;
}

// The graph's message with what it was doing.
std::string said(const char* step, fe::error_t e) { return std::string("cuDNN ") + step + ": " + e.get_message(); }

}  // namespace

std::string frontend_version() {
  return std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." + std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
}

struct SdpaGraph::Impl {
  fe::graph::Graph graph;
  cudnnHandle_t handle = nullptr;
  int plan = -1;
  bool padded = false;
  bool paged = false;
  bool sinks = false;
  ~Impl() {
    if (handle) fe::detail::destroy_handle(handle);
  }
};

SdpaGraph::SdpaGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SdpaGraph::~SdpaGraph() = default;

bool SdpaGraph::padded() const { return impl_->padded; }

std::unique_ptr<SdpaGraph> SdpaGraph::build(const ab_problem& p, int plan, std::string* why) {
  auto impl = std::make_unique<Impl>();
  if (fe::detail::create_handle(&impl->handle) != CUDNN_STATUS_SUCCESS) {
    impl->handle = nullptr;
    *why = "cudnnCreate failed";
    return nullptr;
  }
  impl->plan = plan;
  impl->paged = p.kv_layout == AB_KV_PAGED;
  impl->padded = impl->paged || p.ragged;
  fe::graph::Graph& g = impl->graph;
  g.set_io_data_type(p.dtype == AB_DTYPE_BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);

  // V and O are Dv wide where the problem gives a value head dim of its own (AB_VARIANT_HEAD_DIM_V: MLA's
  // expanded prefill, 192 / 128), Q and K D.
  const int64_t B = p.batch, H = p.heads, KVH = p.kv_heads, Sq = p.q_len, D = p.head_dim;
  const int64_t Dv = p.head_dim_v > 0 ? p.head_dim_v : D;
  auto Q = tensor4(g, "Q", kQ, {B, H, Sq, D});
  std::shared_ptr<fe::graph::Tensor_attributes> K, V;
  if (impl->paged) {
    K = tensor4(g, "K_pool", kK, {p.pool_slots, KVH, p.page_size, D});
    V = tensor4(g, "V_pool", kV, {p.pool_slots, KVH, p.page_size, Dv});
  } else {
    K = tensor4(g, "K", kK, {B, KVH, p.seq_len, D});
    V = tensor4(g, "V", kV, {B, KVH, p.seq_len, Dv});
  }

  auto options = fe::graph::SDPA_attributes().set_name("attnbench_peer").set_generate_stats(false).set_attn_scale(p.scale);
  // Causal matters with more than one query; the whole square (one length, q == S) is top-left as well.
  if (p.causal && Sq > 1) {
    if (!impl->padded && Sq == p.seq_len)
      options.set_causal_mask(true);
    else
      options.set_causal_mask_bottom_right(true);
  }
  // A window (attnbench's: at most `window` keys before the query's own position): cuDNN keeps key col when
  // col + left_bound > row, row aligned bottom-right, so the bound is window + 1 (docs/variants.md). After the
  // causal flags, which set the alignment too (the square's top-left one is the same diagonal).
  if (p.window > 0)
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT).set_diagonal_band_left_bound(p.window + 1);
  if (p.sinks) {
    impl->sinks = true;
    auto sink = tensor4(g, "sink_token", kSink, {1, H, 1, 1});
    sink->set_data_type(fe::DataType_t::FLOAT);
    options.set_sink_token(sink);
  }
  if (impl->padded) {
    options.set_padding_mask(true)
        .set_seq_len_q(int_tensor(g, "seq_len_q", kSeqQ, {B, 1, 1, 1}))
        .set_seq_len_kv(int_tensor(g, "seq_len_kv", kSeqKv, {B, 1, 1, 1}));
  }
  if (impl->paged) {
    // One table for K and V: attnbench stores a sequence's K and V pages in the same slots.
    options.set_paged_attention_k_table(int_tensor(g, "page_table_k", kPageK, {B, 1, p.pages, 1}))
        .set_paged_attention_v_table(int_tensor(g, "page_table_v", kPageV, {B, 1, p.pages, 1}))
        .set_paged_attention_max_seq_len_kv(static_cast<int>(p.seq_len));
  }
  auto [O, stats] = g.sdpa(Q, K, V, options);
  (void)stats;
  O->set_output(true).set_uid(kO).set_dim({B, H, Sq, Dv}).set_stride({H * Sq * Dv, Sq * Dv, Dv, 1});

  if (auto e = g.validate(); e.is_bad()) return *why = said("validate", e), nullptr;
  if (auto e = g.build_operation_graph(impl->handle); e.is_bad()) return *why = said("operation graph", e), nullptr;
  if (auto e = g.create_execution_plans({fe::HeurMode_t::A}); e.is_bad()) return *why = said("heuristics", e), nullptr;
  if (auto e = g.check_support(impl->handle); e.is_bad()) return *why = said("support", e), nullptr;
  int64_t workspace = 0;
  std::string name;
  if (plan < 0) {
    if (auto e = g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE); e.is_bad()) return *why = said("plan", e), nullptr;
    if (auto e = g.get_workspace_size(workspace); e.is_bad()) return *why = said("workspace", e), nullptr;
    (void)g.get_plan_name(name);
  } else {
    const int64_t count = g.get_execution_plan_count();
    if (plan >= count) {
      *why = "cuDNN's heuristics offer " + std::to_string(count) + " plan(s) for this problem, not plan " + std::to_string(plan);
      return nullptr;
    }
    if (auto e = g.build_plan_at_index(plan); e.is_bad()) return *why = said("plan", e), nullptr;
    if (auto e = g.get_workspace_size_plan_at_index(plan, workspace); e.is_bad()) return *why = said("workspace", e), nullptr;
    (void)g.get_plan_name_at_index(plan, name);
  }
  auto out = std::unique_ptr<SdpaGraph>(new SdpaGraph(std::move(impl)));
  out->workspace_ = workspace;
  out->plan_name_ = name;
  return out;
}

std::string SdpaGraph::set_stream(void* stream) {
  if (fe::detail::set_stream(impl_->handle, static_cast<cudaStream_t>(stream)) != CUDNN_STATUS_SUCCESS)
    return "cudnnSetStream failed";
  return "";
}

std::string SdpaGraph::execute(const SdpaPointers& ptr, void* workspace) const {
  std::unordered_map<int64_t, void*> pack = {{kQ, const_cast<void*>(ptr.q)},
                                             {kK, const_cast<void*>(ptr.k)},
                                             {kV, const_cast<void*>(ptr.v)},
                                             {kO, ptr.o}};
  if (impl_->padded) {
    pack[kSeqQ] = const_cast<int32_t*>(ptr.seq_len_q);
    pack[kSeqKv] = const_cast<int32_t*>(ptr.seq_len_kv);
  }
  if (impl_->sinks) pack[kSink] = const_cast<float*>(ptr.sinks);
  if (impl_->paged) {
    pack[kPageK] = const_cast<int32_t*>(ptr.page_table);
    pack[kPageV] = const_cast<int32_t*>(ptr.page_table);
  }
  fe::error_t e = impl_->plan < 0 ? impl_->graph.execute(impl_->handle, pack, workspace)
                                  : impl_->graph.execute_plan_at_index(impl_->handle, pack, workspace, impl_->plan);
  if (e.is_bad()) return said("execute", e);
  return "";
}

}  // namespace ab_peer_cudnn
