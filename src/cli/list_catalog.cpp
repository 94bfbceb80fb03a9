// Gathers `attnbench list`'s document from the registries: strategies (registry), backends and devices
// (backend_factory), timers (measure), the fused tiles the default backend has compiled and the head_dims and
// dtypes each takes there, the suites in suite_search_dirs(), the plugins loaded with --plugin, and the peers
// (cli/list_peers.hpp).
#include "cli/list_catalog.hpp"

#include <filesystem>
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "cli/backend_factory.hpp"
#include "cli/list_peers.hpp"
#include "core/grid.hpp"
#include "core/json_file.hpp"
#include "core/strategy.hpp"
#include "measure/measure.hpp"
#include "strategies/plugin_library.hpp"
#include "strategies/registry.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

// head_dims probed for each tile (every head_dim the kernels instantiate is among them).
constexpr int kProbeHeadDims[] = {32, 64, 80, 96, 128, 160, 192, 256};

json strategies() {
  Problem example = make_problem(32, 12, 512, 64, 8, 0, KvLayout::contiguous, DType::fp16, false);
  json list = json::array();
  for (const auto& s : make_all_strategies()) {
    LaunchContract c = s->contract(example);
    list.push_back({{"name", s->name()}, {"description", s->description()}, {"launch_formula", c.formula},
                    {"example_launches", c.total()}, {"takes_tile", s->uses_fused_tile()}});
  }
  return list;
}

json backends() {
  json list = json::array();
  list.push_back({{"name", "cpu"}, {"available", true},
                  {"description", "reference, fp64 accumulation, always available (times are CPU times)"}});
  list.push_back({{"name", "cuda"}, {"available", cuda_backend_built() && visible_cuda_devices() > 0},
                  {"description", cuda_backend_built() ? "cuBLASLt + kernels/, CUDA events, CUPTI, NVTX"
                                                       : "not built (configure with -DATTNBENCH_CUDA=ON)"}});
  return list;
}

json devices() {
  json list = json::array();
  for (int i = 0; i < visible_cuda_devices(); ++i) {
    try {
      DeviceInfo d = make_backend("cuda", i)->device_info();
      list.push_back({{"index", i}, {"name", d.name}, {"cc", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                      {"sms", d.sm_count}, {"memory_gib", d.memory_bytes / 1073741824.0}});
    } catch (const std::exception& e) {
      list.push_back({{"index", i}, {"unavailable", e.what()}});
    }
  }
  return list;
}

json timers() {
  const std::map<TimerKind, const char*> what = {
      {TimerKind::events, "CUDA events around each forward (CPU backend: wall clock)"},
      {TimerKind::graph, "the forward captured once as a CUDA graph and replayed (GPU time without launch cost)"},
      {TimerKind::cupti, "summed kernel durations from CUPTI activity records"}};
  json list = json::array();
  for (const auto& [k, text] : what) list.push_back({{"name", timer_kind_name(k)}, {"description", text}});
  return list;
}

// A problem that a tile of kind `decode` would be asked to run, at head_dim d: one query against a KV length
// long enough for the largest split count a decode tile has; with `variants`, with a sliding window, a soft-cap
// and sinks (the three a tile applies or refuses together).
Problem probe_problem(bool decode, int d, DType dtype, bool variants = false) {
  ProblemSpec s;
  if (variants) {
    s.window = 64;
    s.softcap = 30;
    s.sinks = true;
  }
  s.batch = 1;
  s.heads = s.kv_heads = 1;
  s.seq_len = decode ? 8192 : 256;
  s.q_len = decode ? 1 : 256;
  s.head_dim = d;
  s.page_size = s.seq_len;
  s.dtype = dtype;
  return make_problem(s);
}

// The tiles of the backend `--backend=auto` picks, with the head_dims and dtypes each runs there.
json fused_tiles() {
  auto backend = make_backend("auto", 0);
  DeviceInfo dev = backend->device_info();
  std::string arch = backend->kind() == BackendKind::cpu ? "cpu" : fmt::format("sm_{}{}", dev.cc_major, dev.cc_minor);
  json list = json::array();
  for (const FusedTile& t : backend->kernels().fused_tiles()) {
    json fp16 = json::array(), bf16 = json::array();
    std::string why_not;
    for (int d : kProbeHeadDims)
      for (DType dt : {DType::fp16, DType::bf16}) {
        std::string why = backend->kernels().fused_can_implement(probe_problem(t.decode(), d, dt), t);
        if (why.empty()) (dt == DType::fp16 ? fp16 : bf16).push_back(d);
        else if (why_not.empty() && why.find("head_dim") == std::string::npos) why_not = why;
      }
    // The head_dims (fp16) at which it applies the window, the soft-cap and the sinks too.
    json variants = json::array();
    for (const auto& d : fp16)
      if (backend->kernels().fused_can_implement(probe_problem(t.decode(), d.get<int>(), DType::fp16, true), t).empty())
        variants.push_back(d);
    json entry = {{"name", t.name()}, {"kind", t.decode() ? "decode" : "prefill"}, {"family", tile_family_name(t.family)}, {"backend", backend_kind_name(backend->kind())},
                  {"arch", arch}, {"device", dev.name}, {"head_dims_fp16", fp16}, {"head_dims_bf16", bf16},
                  {"head_dims_variants", variants}};
    if (fp16.empty() && bf16.empty()) entry["unavailable"] = why_not.empty() ? "no head_dim probed" : why_not;
    list.push_back(entry);
  }
  return list;
}

json suites() {
  namespace fs = std::filesystem;
  json list = json::array();
  std::map<std::string, bool> seen;
  for (const std::string& dir : suite_search_dirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::string name = f.stem().string();
      if (seen[name]) continue;  // the first folder wins, as in resolve_suite_path
      seen[name] = true;
      json entry = {{"name", name}, {"path", f.string()}};
      try {
        json doc = read_json_file(f.string());
        entry["description"] = doc.value("description", "");
      } catch (const std::exception& e) {
        entry["description"] = "";
        entry["unreadable"] = e.what();
      }
      list.push_back(entry);
    }
  }
  return list;
}

json plugins() {
  json list = json::array();
  for (const PluginInfo& p : describe_plugins())
    list.push_back({{"name", p.name}, {"strategy", p.strategy_name()}, {"version", p.version},
                    {"description", p.description}, {"path", p.path}, {"configs", p.configs},
                    {"qo_layout", qo_layout_name(p.qo_layout)}, {"variants", p.variants}});
  return list;
}

}  // namespace

json list_catalog(double peer_load_timeout_s) {
  return {{"schema", "attnbench.list/1"}, {"strategies", strategies()}, {"backends", backends()},
          {"devices", devices()},        {"timers", timers()},         {"fused_tiles", fused_tiles()},
          {"suites", suites()},          {"plugins", plugins()},       {"peers", list_peers(peer_load_timeout_s)}};
}

}  // namespace ab
