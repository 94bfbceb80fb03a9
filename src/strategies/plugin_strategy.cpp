// A plugin as a strategy: "plugin:<name>", or "peer:<name>" for a peer (strategies/plugin_kind.hpp). It translates attnbench's problem and tensors into the C ABI
// (include/attnbench/plugin.h), calls the plugin's functions, turns their error returns into exceptions (a
// `failed` row), and after the forwards checks the guard regions around every tensor it handed out. The
// plugin's code runs only where plugins run in-process (the child process of orchestrate/plugin_process.cpp) and its
// library is loaded; the parent, which holds its description alone (no table), asks nothing of it and leaves
// can_implement and the launch contract to the child's row. A token-major plugin (plugin.h, ab_qo_layout) gets
// Q permuted into a buffer of its own at setup and writes O into another, which publish_output permutes back
// into attnbench's O before verification: both buffers have guard regions, and neither copy is timed.
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "attnbench/plugin.h"
#include "core/errors.hpp"
#include "core/guarded_buffer.hpp"
#include "core/sizes.hpp"
#include "strategies/plugin_library.hpp"
#include "strategies/plugin_mode.hpp"
#include "strategies/token_major.hpp"

namespace ab {

namespace {

constexpr std::size_t kMessageBytes = 512;

ab_problem to_abi(const Problem& p) {
  ab_problem a{};
  a.batch = p.batch;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.seq_len = p.seq_len;
  a.q_len = p.q_len;
  a.head_dim = p.head_dim;
  a.page_size = p.page_size;
  a.pages = p.pages;
  a.pool_slots = p.kv_layout == KvLayout::paged ? p.pool_slots() : 0;
  a.dtype = p.dtype == DType::bf16 ? AB_DTYPE_BF16 : AB_DTYPE_FP16;
  a.kv_layout = p.kv_layout == KvLayout::paged ? AB_KV_PAGED : AB_KV_CONTIGUOUS;
  a.causal = p.causal ? 1 : 0;
  a.ragged = p.ragged() ? 1 : 0;
  a.scale = p.scale();
  a.window = static_cast<std::int32_t>(p.window);  // can_implement refuses a window past int32 first
  a.softcap = static_cast<float>(p.softcap);
  a.sinks = p.sinks ? 1 : 0;
  a.head_dim_v = p.split_head_dim() ? static_cast<std::int32_t>(p.head_dim_v) : 0;  // under make_problem's 2^50 limit
  return a;
}

// The ABI's structs keep their sizes (the variants took reserved fields): a plugin built before reads them alike.
static_assert(sizeof(ab_problem) == 120, "ab_problem's size is part of plugin ABI version 1");
static_assert(sizeof(ab_tensors) == 13 * sizeof(void*) + 8, "ab_tensors' size is part of plugin ABI version 1");

std::int32_t abi_backend(const Backend& be) { return be.kind() == BackendKind::cuda ? AB_BACKEND_CUDA : AB_BACKEND_CPU; }

// Q's shape and O's (head_dim_v wide).
QoShape q_shape(const Problem& p) { return {p.batch, p.heads, p.q_len, p.head_dim}; }
QoShape o_shape(const Problem& p) { return {p.batch, p.heads, p.q_len, p.head_dim_v}; }
std::size_t bytes_of(const QoShape& s, const Problem& p) { return static_cast<std::size_t>(s.elements()) * dtype_size(p.dtype); }

// A token-major plugin's own Q (attnbench's Q permuted once) and O (permuted back to verify), with guards.
class TokenMajorQo {
 public:
  TokenMajorQo(Backend& be, const Problem& p, const void* head_major_q)
      : q_shape_(q_shape(p)),
        o_shape_(o_shape(p)),
        q_(be.memory(), bytes_of(q_shape_, p), "Q (token-major)"),
        o_(be.memory(), bytes_of(o_shape_, p), "O (token-major)") {
    std::vector<std::uint16_t> q(static_cast<std::size_t>(q_shape_.elements()));
    be.memory().download(q.data(), head_major_q, q_.bytes());
    be.memory().synchronize();
    be.memory().upload(q_.get(), to_token_major(q, q_shape_).data(), q_.bytes());
    poison_output(be);
    guards_.add(&q_);
    guards_.add(&o_);
  }
  const void* q() const { return q_.get(); }
  void* o() const { return o_.get(); }
  // Fills the plugin's O with NaN: after the plugin's setup (which may have written it) and after each publish, so
  // that the next verified forward must write every element, as attnbench's own O before a verified forward.
  void poison_output(Backend& be) {
    be.memory().fill_bytes(o_.get(), kOutputPoison, o_.bytes());
    be.memory().synchronize();
  }
  // Writes the plugin's O into `head_major_o` in attnbench's order, then poisons its own O again.
  void publish(Backend& be, void* head_major_o) {
    std::vector<std::uint16_t> o(static_cast<std::size_t>(o_shape_.elements()));
    be.memory().synchronize();
    be.memory().download(o.data(), o_.get(), o_.bytes());
    be.memory().synchronize();
    be.memory().upload(head_major_o, to_head_major(o, o_shape_).data(), o_.bytes());
    poison_output(be);
  }
  std::string check_guards() const { return guards_.check(); }
  // The device context was rebuilt: the buffers are gone; drop them without freeing.
  void forget() {
    q_.forget();
    o_.forget();
  }

 private:
  QoShape q_shape_, o_shape_;
  GuardedBuffer q_, o_;
  GuardRegions guards_;
};

// The plugin's message, never unterminated.
std::string message(const char* buf) { return std::string(buf, strnlen(buf, kMessageBytes)); }

class PluginStrategy : public Strategy {
 public:
  explicit PluginStrategy(const LoadedPlugin& p) : plugin_(p), t_(p.table) {}
  std::string name() const override { return plugin_.info.strategy_name(); }
  std::string description() const override {
    return fmt::format("{} {} {} ({}): {}", plugin_.info.kind == PluginKind::peer ? "peer" : "plugin",
                       plugin_.info.name, plugin_.info.version, plugin_.info.path, plugin_.info.description);
  }
  bool runs_isolated() const override { return true; }
  std::vector<std::string> tunable_configs() const override { return plugin_.info.configs; }
  // The variants its table declares (plugin.h, ab_plugin.variants); the others' rows are refused by can_run.
  std::vector<std::string> runs_variants() const override { return plugin_.info.variants; }
  std::string library_version() const override { return plugin_.info.version; }

  LaunchContract contract(const Problem& p, const StrategyOptions& opt) const override {
    int index = 0;
    if (!code_here() || !config_index(opt, &index).empty()) return {0, 0, "as the plugin declares"};
    ab_problem ap = to_abi(p);
    std::int64_t k = t_->kernels_per_forward(&ap, index);
    // plugin.h: -1 (any negative count) leaves the count to the library's plan; launches are measured, not checked.
    if (k < 0) return {0, 0, "decided by the library's plan at setup (not declared)", false};
    return {0, k, fmt::format("{} kernel{} (declared by the plugin)", k, k == 1 ? "" : "s")};
  }
  std::string can_implement(const Problem& p, const Backend& be, const StrategyOptions& opt) const override {
    int index = 0;
    if (std::string why = config_index(opt, &index); !why.empty()) return why;
    if (p.window > INT32_MAX) return fmt::format("a window of {} keys is past the plugin ABI's 32 bits", p.window);
    if (!code_here()) return "";  // the child process asks the plugin
    ab_problem ap = to_abi(p);
    char reason[kMessageBytes] = {};
    if (t_->can_implement(&ap, abi_backend(be), index, reason, sizeof reason) == 0) return "";
    std::string why = message(reason);
    return why.empty() ? "the plugin declines this problem (no reason given)" : why;
  }
  // A token-major plugin's own Q and O (TokenMajorQo); the plugin's own workspace is its business.
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions&) const override {
    if (plugin_.info.qo_layout != QoLayout::token_major) return 0;
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype));
    return size_add(size_mul(size_add(p.q_elements(), p.o_elements()), es), size_mul(2, kGuardOverheadBytes));
  }

  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    if (std::string why = config_index(opt, &config_); !why.empty()) throw UnsupportedError(why);
    problem_ = to_abi(p);
    head_major_o_ = io.o;
    token_major_.reset();
    if (plugin_.info.qo_layout == QoLayout::token_major) token_major_.emplace(be, p, io.q);
    ab_tensors t{};
    t.q = token_major_ ? token_major_->q() : io.q;
    t.k = io.k;
    t.v = io.v;
    t.o = token_major_ ? token_major_->o() : io.o;
    t.block_table = p.kv_layout == KvLayout::paged ? io.block_table : nullptr;
    t.kv_lens = io.kv_lens;
    t.block_table_host = p.kv_layout == KvLayout::paged ? io.block_table_host : nullptr;
    t.kv_lens_host = io.kv_lens_host;
    t.backend = abi_backend(be);
    t.device = be.device_ordinal();
    t.stream = be.native_stream();
    t.sinks = p.sinks ? io.sinks : nullptr;
    tensors_ = t;
    guards_ = io.guards;
    be.memory().synchronize();  // inputs uploaded on attnbench's stream are ready before the plugin reads them
    char err[kMessageBytes] = {};
    state_ = nullptr;
    if (table().setup(&problem_, &tensors_, config_, &state_, err, sizeof err) != 0) {
      token_major_.reset();  // nothing to tear down: the buffers go now
      throw BackendError(fmt::format("plugin setup failed: {}", message(err)), false);
    }
    set_up_ = true;
    if (token_major_) token_major_->poison_output(be);  // a setup that wrote O (a warm-up forward) proves nothing
  }
  void run(Backend&) override {
    char err[kMessageBytes] = {};
    if (table().forward(state_, err, sizeof err) != 0)
      throw BackendError(fmt::format("plugin forward failed: {}", message(err)), false);
  }
  void publish_output(Backend& be) override {
    if (token_major_) token_major_->publish(be, head_major_o_);
  }
  // After a sticky device error, before the context is rebuilt: the inputs' guard regions and our own buffers
  // are about to be gone, so teardown must neither read nor free them.
  void forget_device_memory() override {
    guards_ = nullptr;
    if (token_major_) token_major_->forget();
    token_major_.reset();
  }
  void teardown(Backend& be) override {
    if (!set_up_) return;
    set_up_ = false;
    be.memory().synchronize();  // the forwards have finished before the guards are read
    table().teardown(state_);
    state_ = nullptr;
    std::string why = guards_ ? guards_->check() : "";
    if (why.empty() && token_major_) why = token_major_->check_guards();
    token_major_.reset();
    if (!why.empty()) throw BackendError(why, false);
  }
  StrategyConfig config() const override {
    StrategyConfig c;
    c.plugin_config = plugin_.info.configs[static_cast<std::size_t>(config_)];
    return c;
  }

 private:
  // The index of the configuration `opt` names (its default when none), or why there is none.
  std::string config_index(const StrategyOptions& opt, int* index) const {
    *index = 0;
    if (opt.config.empty()) return "";
    for (std::size_t i = 0; i < plugin_.info.configs.size(); ++i)
      if (plugin_.info.configs[i] == opt.config) {
        *index = static_cast<int>(i);
        return "";
      }
    return fmt::format("the plugin has no configuration '{}'", opt.config);
  }

  // Whether the plugin's code may be called here: its library is loaded in this process, which runs plugins.
  bool code_here() const { return t_ && plugins_run_in_process(); }
  // Its table; BackendError (a failed row) where its library is not loaded in this process.
  const ab_plugin& table() const {
    if (!t_) throw BackendError(fmt::format("{}: its library is not loaded in this process", name()), false);
    return *t_;
  }

  const LoadedPlugin& plugin_;
  const ab_plugin* t_;
  ab_problem problem_{};
  ab_tensors tensors_{};
  const GuardRegions* guards_ = nullptr;
  std::optional<TokenMajorQo> token_major_;  // a token-major plugin's own Q and O, from setup to teardown
  void* head_major_o_ = nullptr;             // attnbench's O, which publish_output fills
  int config_ = 0;
  void* state_ = nullptr;
  bool set_up_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_plugin_strategy(const LoadedPlugin& plugin) {
  return std::make_unique<PluginStrategy>(plugin);
}

}  // namespace ab
