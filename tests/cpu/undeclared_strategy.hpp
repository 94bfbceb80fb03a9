// A strategy that declares no variant (Strategy::runs_variants empty) and does nothing: what can_run says to a
// problem with a variant, for the variant tests (test_variants, test_value_head_dim).
#pragma once
#include <cstdint>
#include <string>

#include "core/strategy.hpp"

struct UndeclaredStrategy : ab::Strategy {
  std::string name() const override { return "plain"; }
  std::string description() const override { return "test"; }
  ab::LaunchContract contract(const ab::Problem&, const ab::StrategyOptions&) const override { return {}; }
  std::string can_implement(const ab::Problem&, const ab::Backend&, const ab::StrategyOptions&) const override {
    return "";
  }
  std::int64_t workspace_bytes(const ab::Problem&, const ab::StrategyOptions&) const override { return 0; }
  void setup(ab::Backend&, const ab::Problem&, const ab::AttentionIO&, const ab::StrategyOptions&) override {}
  void run(ab::Backend&) override {}
  void teardown(ab::Backend&) override {}
  ab::StrategyConfig config() const override { return {}; }
};
