// `fused`: one FlashAttention-style kernel; scores never leave the chip. The tile is the user's choice, the
// tuner's, or the backend's first compiled tile that can implement the problem.
#include <fmt/format.h>

#include "strategies/strategies.hpp"

namespace ab {

namespace {

class Fused : public Strategy {
 public:
  std::string name() const override { return "fused"; }
  bool uses_fused_tile() const override { return true; }
  std::string description() const override { return "one FlashAttention-2 style kernel"; }
  LaunchContract contract(const Problem&, const StrategyOptions&) const override { return {0, 1, "1 fused kernel"}; }
  std::string can_implement(const Problem& p, const Backend& be, const StrategyOptions& opt) const override {
    std::string why;
    pick(p, be, opt, &why);
    return why;
  }
  std::int64_t workspace_bytes(const Problem&, const StrategyOptions&) const override { return 0; }
  void setup(Backend& be, const Problem& p, const AttentionIO& io, const StrategyOptions& opt) override {
    p_ = p;
    io_ = io;
    std::string why;
    tile_ = pick(p, be, opt, &why);
    source_ = opt.fused_tile ? "user" : "heuristic";
  }
  void run(Backend& be) override {
    ScopedRange r(be.profiler(), "fused kernel " + tile_.name());
    be.kernels().fused_attention(p_, io_, tile_);
  }
  void teardown(Backend&) override {}
  StrategyConfig config() const override {
    StrategyConfig c;
    c.tile = tile_;
    c.tile_source = source_;
    return c;
  }
  // The tuner and the cache override the tile through StrategyOptions; this reports where it came from.
  void set_tile_source(const std::string& s) { source_ = s; }

 private:
  static FusedTile pick(const Problem& p, const Backend& be, const StrategyOptions& opt, std::string* why) {
    if (opt.fused_tile) {
      *why = be.kernels().fused_can_implement(p, *opt.fused_tile);
      if (!why->empty()) *why = fmt::format("tile {}: {}", opt.fused_tile->name(), *why);
      return *opt.fused_tile;
    }
    std::string first_reason;
    for (const FusedTile& t : be.kernels().fused_tiles()) {
      std::string r = be.kernels().fused_can_implement(p, t);
      if (r.empty()) {
        why->clear();
        return t;
      }
      if (first_reason.empty()) first_reason = r;
    }
    *why = first_reason.empty() ? "no fused tile is compiled" : first_reason;
    return {};
  }
  Problem p_;
  AttentionIO io_;
  FusedTile tile_;
  std::string source_ = "heuristic";
};

}  // namespace

std::unique_ptr<Strategy> make_fused() { return std::make_unique<Fused>(); }

}  // namespace ab
