// `fused`: one FlashAttention-style kernel; scores never leave the chip. The tile is the user's choice, the
// tuner's, or the backend's first compiled tile that can implement the problem. A decode tile (q_len <= 16)
// is the split-KV kernel: its split count is resolved here (0 = the heuristic on the device's SM count), and
// its split partials live in workspace allocated in setup (run() allocates nothing). A persistent tile on a
// non-causal problem whose sequences all have seq_len keys may split its last round over the grid
// (core/query_block_order.hpp: tail_split); its partials live in workspace allocated in setup too.
#include <fmt/format.h>

#include <algorithm>

#include "core/fused_default_tile.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/fused_tail_layout.hpp"
#include "core/sizes.hpp"
#include "strategies/strategy_common.hpp"
#include "strategies/strategies.hpp"

namespace ab {

namespace {

// The tail split's workspace (core/fused_tail_layout.hpp) for tile `t` on `p` on a grid of at most
// `grid_bound` CTAs: 0 where the tile's walk cannot split (not persistent, causal, ragged).
std::int64_t tail_workspace_bytes(const Problem& p, const FusedTile& t, std::int64_t grid_bound) {
  if (!t.persistent() || p.causal || p.ragged() || t.block_m < 1) return 0;
  const std::int64_t units = size_mul((p.q_len + t.block_m - 1) / t.block_m, p.batch, p.heads);
  const std::int64_t grid = std::min({units, grid_bound, static_cast<std::int64_t>(fused_tail::kGridBound)});
  return fused_tail::workspace_bytes(static_cast<int>(std::max<std::int64_t>(grid, 0)), t.block_m,
                                     static_cast<int>(std::min<std::int64_t>(p.head_dim_v, 1 << 20)));  // O's rows
}

// Before the tile is known (the default may be a persistent one of either block height).
std::int64_t tail_workspace_bound_any_tile(const Problem& p) {
  std::int64_t most = 0;
  for (int bm : {128, 192}) {
    const FusedTile t = FusedTile::prefill_tile(bm, 128, 12, 2, TileFamily::prefill_wsp);
    most = std::max(most, tail_workspace_bytes(p, t, fused_tail::kGridBound));
  }
  return most;
}

class Fused : public Strategy {
 public:
  std::string name() const override { return "fused"; }
  bool uses_fused_tile() const override { return true; }
  std::string description() const override { return "one FlashAttention-2 style kernel (split-KV decode for q_len <= 16)"; }
  // The splits are the set-up tile's (the heuristic needs the device): before setup, one kernel.
  LaunchContract contract(const Problem& p, const StrategyOptions&) const override {
    if (set_up_ && p == p_ && tile_.decode() && tile_.splits > 1)
      return {0, 2, fmt::format("1 split-KV decode kernel ({} splits) + 1 combine", tile_.splits)};
    return {0, 1, "1 fused kernel"};
  }
  // The window and soft-cap ride in the key mask its fused kernel applies, the sinks in its last division (the CPU
  // backend's fused path; on CUDA the split-KV decode tiles, the persistent prefill tiles, the ws tile of head_dim
  // 256 and the mma.sync prefill tiles of head_dim 32, 96 and 256 apply the three, the other prefill tiles refuse
  // them and every tile a value head dim: CudaBackend::fused_can_implement).
  std::vector<std::string> runs_variants() const override { return softmax_variants(); }
  std::string can_implement(const Problem& p, const Backend& be, const StrategyOptions& opt) const override {
    std::string why;
    pick(p, be, opt, &why);
    return why;
  }
  // Decode tiles (which any q_len <= 16 problem may get): the split partials at the bound on splits.
  // Persistent tiles: the tail split's partials on the largest grid it runs on.
  std::int64_t workspace_bytes(const Problem& p, const StrategyOptions& opt) const override {
    const std::optional<FusedTile> asked = FusedTile::from_name(opt.config);
    if (asked && !asked->decode()) return tail_workspace_bytes(p, *asked, fused_tail::kGridBound);
    const std::int64_t tail = asked ? 0 : tail_workspace_bound_any_tile(p);
    if (!fused_decode::takes_q_len(p.q_len)) return tail;
    return std::max(tail, fused_decode::workspace_bound(p, asked ? asked->splits : 0));
  }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    ws_.clear();
    set_up_ = false;
    p_ = p;
    io_ = io;
    std::string why;
    tile_ = pick(p, be, opt, &why);
    source_ = opt.config.empty() ? "heuristic" : "user";
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    if (tile_.decode()) {
      tile_.splits = static_cast<int>(fused_decode::resolve_splits(p, tile_.splits, be.device_info().sm_count, tile_.block_n,
                                                                      be.kernels().fused_decode_ctas_per_sm(p, tile_)));
      const std::int64_t bytes = fused_decode::partial_bytes(p.batch, p.heads, p.q_len, p.head_dim_v, tile_.splits);
      if (bytes > 0) workspace_ = ws_.add(be, bytes);
      workspace_bytes_ = workspace_ ? bytes : 0;
    } else if (const std::int64_t bytes = tail_workspace_bytes(p, tile_, be.device_info().sm_count); bytes > 0) {
      workspace_ = ws_.add(be, bytes);
      workspace_bytes_ = bytes;
      be.memory().fill_bytes(workspace_, 0, static_cast<std::size_t>(fused_tail::kCounters * 4));  // the counters
    }
    set_up_ = true;
  }
  void run(Backend& be) override {
    ScopedRange r(be.profiler(), "fused kernel " + tile_.name());
    be.kernels().fused_attention(p_, io_, tile_, workspace_, workspace_bytes_);
  }
  void teardown(Backend&) override {
    ws_.clear();
    workspace_ = nullptr;
    workspace_bytes_ = 0;
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
  // The user's tile, else the problem's preferred tile where it can implement (core/fused_default_tile.hpp),
  // else the first that can (decode tiles lead the list for q_len <= 16). The reason given when none can is the
  // first prefill tile's: a decode tile's refusal is about q_len.
  static FusedTile pick(const Problem& p, const Backend& be, const StrategyOptions& opt, std::string* why) {
    if (!opt.config.empty()) {
      const std::optional<FusedTile> asked = FusedTile::from_name(opt.config);
      if (!asked) {
        *why = fmt::format("'{}' is not a fused tile name (attnbench list shows the tiles)", opt.config);
        return {};
      }
      *why = be.kernels().fused_can_implement(p, *asked);
      if (!why->empty() && why->find("attnbench list") == std::string::npos)
        *why = fmt::format("tile {}: {} (attnbench list shows the tiles and head_dims here)", asked->name(), *why);
      else if (!why->empty())
        *why = fmt::format("tile {}: {}", asked->name(), *why);
      return *asked;
    }
    if (const std::optional<FusedTile> pref = preferred_fused_tile(p);
        pref && be.kernels().fused_can_implement(p, *pref).empty()) {
      why->clear();
      return *pref;
    }
    std::string first_reason, first_decode_reason;
    for (const FusedTile& t : be.kernels().fused_tiles()) {
      std::string r = be.kernels().fused_can_implement(p, t);
      if (r.empty()) {
        why->clear();
        return t;
      }
      std::string& slot = t.decode() ? first_decode_reason : first_reason;
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
  std::int64_t workspace_bytes_ = 0;
  bool set_up_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_fused() { return std::make_unique<Fused>(); }

}  // namespace ab
