// One attnbench problem as a cuDNN SDPA forward graph (cudnn_frontend), built and its plan chosen once, then
// executed on a stream. The only file of the peer that includes cudnn_frontend (it takes most of the compile).
// Layouts are attnbench's (include/attnbench/plugin.h): Q/O [B,H,q,D]; K/V [B,KVH,S,D], or a page pool
// [slots,KVH,page,D] (V and O Dv wide with a value head dim of its own) read through page tables [B,1,pages,1]; per-sequence lengths turn on cuDNN's padding
// mask; causal is bottom-right; a sliding window is the diagonal band's left bound (window + 1: cuDNN's bound
// counts the query itself), bottom-right aligned; sinks are the sink token {1, H, 1, 1} (fp32).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <attnbench/plugin.h>

namespace ab_peer_cudnn {

// The device pointers one execution reads and writes.
struct SdpaPointers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const int32_t* page_table = nullptr;  // paged: [B, pages], every entry a valid slot
  const int32_t* seq_len_q = nullptr;   // with the padding mask: [B] queries per sequence
  const int32_t* seq_len_kv = nullptr;  // with the padding mask: [B] keys per sequence
  const float* sinks = nullptr;         // with sinks: [H] fp32 sink logits
};

// cudnn_frontend's version as "1.32.0".
std::string frontend_version();

class SdpaGraph {
 public:
  ~SdpaGraph();
  SdpaGraph(const SdpaGraph&) = delete;
  SdpaGraph& operator=(const SdpaGraph&) = delete;

  // Builds the graph of `p` on the current device and the plan `plan` picks: -1 the heuristics' first plan
  // that builds (what cuDNN's own samples run), i >= 0 the i-th plan of heuristics mode A. Null with
  // cuDNN's reason in *why when cuDNN refuses the problem or the plan.
  static std::unique_ptr<SdpaGraph> build(const ab_problem& p, int plan, std::string* why);

  // Whether the graph reads per-sequence lengths (the padding mask): ragged or paged problems.
  bool padded() const;
  std::int64_t workspace_bytes() const { return workspace_; }
  const std::string& plan_name() const { return plan_name_; }
  // Sets the stream the executions are enqueued on; "" or cuDNN's message.
  std::string set_stream(void* stream);
  // Enqueues one forward; "" or cuDNN's message. No allocation on the device, no synchronization.
  std::string execute(const SdpaPointers& ptr, void* workspace) const;

 private:
  struct Impl;
  explicit SdpaGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::int64_t workspace_ = 0;
  std::string plan_name_;
};

}  // namespace ab_peer_cudnn
