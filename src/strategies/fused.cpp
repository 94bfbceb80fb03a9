// `fused`: one FlashAttention-style kernel; scores never leave the chip. The tile is the user's choice, the
// tuner's, or the backend's first compiled tile that can implement the problem. A decode tile (q_len <= 16)
// is the split-KV kernel: its split count is resolved here (0 = the heuristic on the device's SM count), and
// its split partials live in workspace allocated in setup (run() allocates nothing).
#include <fmt/format.h>

#include "core/fused_decode_plan.hpp"
#include "strategies/strategy_common.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

class Fused : public Strategy {
 public:
  std::string name() const override { return "fused"; }
  bool uses_fused_tile() const override { return true; }
  std::string description() const override { return "one FlashAttention-2 style kernel (split-KV decode for q_len <= 16)"; }
  // The splits are the set-up tile's (the heuristic needs the device): before setup, one kernel.
  LaunchContract contract(const Problem& p, const StrategyOptions&) const override {
    if (set_up_ && p == p_ && tile_.decode && tile_.splits > 1)
      return {0, 2, fmt::format("1 split-KV decode kernel ({} splits) + 1 combine", tile_.splits)};
    return {0, 1, "1 fused kernel"};
  }
  std::string can_implement(const Problem& p, const Backend& be, const StrategyOptions& opt) const override {
    std::string why;
    pick(p, be, opt, &why);
    return why;
  }
  // Decode tiles (which any q_len <= 16 problem may get): the split partials at the bound on splits.
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    if (opt.fused_tile && !opt.fused_tile->decode) return 0;
    if (!fused_decode::takes_q_len(p.q_len)) return 0;
    return fused_decode::workspace_bound(p, opt.fused_tile ? opt.fused_tile->splits : 0);
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    ws_.clear();
    set_up_ = false;
    p_ = p;
    io_ = io;
    std::string why;
    tile_ = pick(p, be, opt, &why);
    source_ = opt.fused_tile ? "user" : "heuristic";
    workspace_ = nullptr;
    if (tile_.decode) {
      tile_.splits = static_cast<int>(fused_decode::resolve_splits(p, tile_.splits, be.device_info().sm_count));
      const std::int64_t bytes = fused_decode::partial_bytes(p.batch, p.heads, p.q_len, p.head_dim, tile_.splits);
      if (bytes > 0) workspace_ = ws_.add(be, bytes);
    }
    set_up_ = true;
  }
  void run(Backend& be) override {
    ScopedRange r(be.profiler(), "fused kernel " + tile_.name());
    be.kernels().fused_attention(p_, io_, tile_, workspace_);
  }
  void teardown(Backend&) override {
    ws_.clear();
    workspace_ = nullptr;
    set_up_ = false;
  }
  StrategyConfig config() const override {
    StrategyConfig c;
    c.tile = tile_;
    c.tile_source = source_;
    return c;
  }
  // The tuner and the cache override the tile through StrategyOptions; this reports where it came from.
  void set_tile_source(const std::string& s) { source_ = s; }

 private:
  // The user's tile, else the first that can implement (decode tiles lead the list for q_len <= 16). The
  // reason given when none can is the first prefill tile's: a decode tile's refusal is about q_len.
  static FusedTile pick(const Problem& p, const Backend& be, const StrategyOptions& opt, std::string* why) {
    if (opt.fused_tile) {
      *why = be.kernels().fused_can_implement(p, *opt.fused_tile);
      if (!why->empty() && why->find("attnbench list") == std::string::npos)
        *why = fmt::format("tile {}: {} (attnbench list shows the tiles and head_dims here)", opt.fused_tile->name(), *why);
      else if (!why->empty())
        *why = fmt::format("tile {}: {}", opt.fused_tile->name(), *why);
      return *opt.fused_tile;
    }
    std::string first_reason, first_decode_reason;
    for (const FusedTile& t : be.kernels().fused_tiles()) {
      std::string r = be.kernels().fused_can_implement(p, t);
      if (r.empty()) {
        why->clear();
        return t;
      }
      std::string& slot = t.decode ? first_decode_reason : first_reason;
      if (slot.empty()) slot = r;
    }
    if (first_reason.empty()) first_reason = first_decode_reason;
    *why = first_reason.empty() ? "no fused tile is compiled" : first_reason;
    return {};
  }
  Problem p_;
  AttentionIO io_;
  FusedTile tile_;
  std::string source_ = "heuristic";
  Workspace ws_;
  void* workspace_ = nullptr;
  bool set_up_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_fused() { return std::make_unique<Fused>(); }

}  // namespace ab
