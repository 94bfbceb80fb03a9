// The cuDNN peer (docs/peers.md): cuDNN's fused SDPA forward as an attnbench plugin, `peer:cudnn`. The graph
// is built and its plan chosen in can_implement/setup (never timed), once per problem; forward only enqueues
// the plan on attnbench's stream. A problem or plan cuDNN refuses is `unsupported` with cuDNN's reason.
// Configurations (what `attnbench tune` searches): the heuristics' choice, or the i-th plan of heuristics A.
#include <attnbench/plugin.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cudnn_library.hpp"
#include "sdpa_graph.hpp"

namespace ab_peer_cudnn {

namespace {

const char* const kConfigs[] = {"heuristic", "plan-1", "plan-2", "plan-3"};
constexpr int kPlanOfConfig[] = {-1, 1, 2, 3};
constexpr int kNumConfigs = 4;

void say(char* buf, size_t n, const std::string& text) {
  if (n == 0) return;
  std::snprintf(buf, n, "%s", text.c_str());
  for (char* c = buf; *c; ++c)
    if (static_cast<unsigned char>(*c) < 0x20) *c = ' ';  // one line
}

std::string cuda_said(const char* what, cudaError_t e) { return std::string(what) + ": " + cudaGetErrorString(e); }

// The graph can_implement built last in this process, kept for the setup of the same problem and config
// (every row runs in a process of its own, so this holds one problem's graph).
struct LastGraph {
  ab_problem problem{};
  int config = -1;
  std::unique_ptr<SdpaGraph> graph;
  std::string why;
};
LastGraph& last_graph() {
  static LastGraph last;
  return last;
}

bool same(const ab_problem& a, const ab_problem& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The graph of (problem, config), built once; null with the reason when cuDNN refuses it.
SdpaGraph* graph_for(const ab_problem& p, int config, std::string* why) {
  LastGraph& last = last_graph();
  if (last.config != config || !same(last.problem, p)) {
    last.problem = p;
    last.config = config;
    last.why.clear();
    last.graph = SdpaGraph::build(p, kPlanOfConfig[config], &last.why);
  }
  *why = last.why;
  return last.graph.get();
}

std::string refusal(const ab_problem& p, int32_t backend, int32_t config) {
  if (backend != AB_BACKEND_CUDA) return "cuDNN runs on the CUDA backend only";
  if (config < 0 || config >= kNumConfigs) return "no such configuration";
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.loaded) return lib.why;
  std::string why;
  if (!graph_for(p, config, &why)) return why;
  return "";
}

struct State {
  SdpaGraph* graph = nullptr;
  SdpaPointers ptr;
  void* workspace = nullptr;
  int32_t* seq_len_q = nullptr;
  int32_t* page_table = nullptr;
  ~State() {
    cudaFree(workspace);
    cudaFree(seq_len_q);
    cudaFree(page_table);
  }
};

// Device memory for `count` int32 values copied from `host`.
std::string upload(const std::vector<int32_t>& host, int32_t** out) {
  if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(out), host.size() * sizeof(int32_t)); e != cudaSuccess)
    return cuda_said("cudaMalloc", e);
  if (cudaError_t e = cudaMemcpy(*out, host.data(), host.size() * sizeof(int32_t), cudaMemcpyHostToDevice); e != cudaSuccess)
    return cuda_said("cudaMemcpy", e);
  return "";
}

std::string set_up(const ab_problem& p, const ab_tensors& t, int config, State& s) {
  std::string why;
  s.graph = graph_for(p, config, &why);
  if (!s.graph) return why;
  if (s.graph->workspace_bytes() > 0)
    if (cudaError_t e = cudaMalloc(&s.workspace, static_cast<size_t>(s.graph->workspace_bytes())); e != cudaSuccess)
      return cuda_said("cudaMalloc (cuDNN workspace)", e);
  s.ptr = SdpaPointers{t.q, t.k, t.v, t.o, nullptr, nullptr, t.kv_lens, p.sinks ? t.sinks : nullptr};
  if (s.graph->padded()) {
    if (std::string e = upload(std::vector<int32_t>(static_cast<size_t>(p.batch), static_cast<int32_t>(p.q_len)), &s.seq_len_q); !e.empty())
      return e;
    s.ptr.seq_len_q = s.seq_len_q;
  }
  if (p.kv_layout == AB_KV_PAGED) {
    if (!t.block_table_host) return "the paged problem came without a host block table";
    // attnbench marks pages past a sequence's end with -1; cuDNN's table holds slots only, so those entries
    // point at slot 0 (never read: the padding mask stops at the sequence's length).
    std::vector<int32_t> table(t.block_table_host, t.block_table_host + p.batch * p.pages);
    for (int32_t& slot : table) slot = std::max(slot, 0);
    if (std::string e = upload(table, &s.page_table); !e.empty()) return e;
    s.ptr.page_table = s.page_table;
  }
  return s.graph->set_stream(t.stream);
}

int can_implement(const ab_problem* p, int32_t backend, int32_t config, char* reason, size_t n) try {
  std::string why = refusal(*p, backend, config);
  if (why.empty()) return 0;
  say(reason, n, why);
  return 1;
} catch (const std::exception& e) {
  say(reason, n, std::string("cuDNN: ") + e.what());
  return 1;
}

// cuDNN's plan decides its kernels (one for the fused flash kernels, more for some decode plans): not
// declared; attnbench reports what CUPTI counts.
int64_t kernels_per_forward(const ab_problem*, int32_t) { return -1; }

int setup(const ab_problem* p, const ab_tensors* t, int32_t config, void** state, char* err, size_t n) try {
  auto s = std::make_unique<State>();
  if (std::string why = set_up(*p, *t, config, *s); !why.empty()) {
    say(err, n, why);
    return 1;
  }
  *state = s.release();
  return 0;
} catch (const std::exception& e) {
  say(err, n, std::string("cuDNN setup: ") + e.what());
  return 1;
}

int forward(void* state, char* err, size_t n) try {
  auto* s = static_cast<State*>(state);
  if (std::string why = s->graph->execute(s->ptr, s->workspace); !why.empty()) {
    say(err, n, why);
    return 1;
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    say(err, n, cuda_said("after cuDNN's execute", e));
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  say(err, n, std::string("cuDNN execute: ") + e.what());
  return 1;
}

void teardown(void* state) { delete static_cast<State*>(state); }

// The version line: cuDNN's and the frontend's, or "unavailable: why" when libcudnn does not load here.
const char* version_line() {
  static char line[256];
  static bool done = false;
  if (!done) {
    done = true;
    const CudnnLibrary& lib = cudnn_library();
    say(line, sizeof line,
        lib.loaded ? "cuDNN " + version_text(lib.version) + " (cudnn_frontend " + frontend_version() + ")"
                   : "unavailable: " + lib.why);
  }
  return line;
}

}  // namespace

}  // namespace ab_peer_cudnn

extern "C" ATTNBENCH_PLUGIN_EXPORT const ab_plugin* attnbench_plugin(void) {
  using namespace ab_peer_cudnn;
  static ab_plugin table = {ATTNBENCH_PLUGIN_ABI_VERSION, sizeof(ab_plugin), "cudnn", nullptr,
                            "cuDNN fused SDPA forward (cudnn_frontend graph API): contiguous and paged K/V, GQA/MQA, "
                            "bottom-right causal, ragged lengths, sliding windows, sinks, a value head dim of its own; configs: the heuristics' plan or "
                            "plan i of heuristics A",
                            kNumConfigs, kConfigs, can_implement, kernels_per_forward, setup, forward, teardown,
                            AB_QO_HEAD_MAJOR,  // cuDNN takes attnbench's [B, H, q_len, D] through its strides
                            // Its window (the diagonal band), sink token and V / O of their own width (MLA's 192 / 128); soft-capping would be a score_mod,
                            // which turns off the built-in masks (docs/perf-log/2026-11-27-variant-peer-support.md).
                            AB_VARIANT_SLIDING_WINDOW | AB_VARIANT_SINKS | AB_VARIANT_HEAD_DIM_V};
  table.version = version_line();
  return &table;
}
