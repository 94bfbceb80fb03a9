// The strategy registry: run order, names, and parsing of --strategies.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "strategies/plugin_library.hpp"
#include "strategies/registry.hpp"
#include "strategies/strategies.hpp"

namespace ab {

std::vector<std::unique_ptr<Strategy>> make_all_strategies() {
  std::vector<std::unique_ptr<Strategy>> v;
  v.push_back(make_nested());
  v.push_back(make_head_batched());
  v.push_back(make_fully_batched());
  v.push_back(make_ptr_array());
  v.push_back(make_fused());
  // After the built-ins: the plugins, then the peers (in load order, cli/plugin_flags.cpp).
  for (const LoadedPlugin& p : loaded_plugins()) v.push_back(make_plugin_strategy(p));
  return v;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : make_all_strategies()) names.push_back(s->name());
  return names;
}

std::vector<std::unique_ptr<Strategy>> make_strategies(const std::string& list) {
  auto all = make_all_strategies();
  if (list.empty() || list == "all") return all;
  std::vector<std::unique_ptr<Strategy>> out;
  for (const std::string& want : split_list("strategies", list)) {
    bool found = false;
    for (auto& s : all)
      if (s && s->name() == want) {
        out.push_back(std::move(s));
        found = true;
        break;
      }
    if (!found) {
      bool dup = false;
      for (auto& s : out) dup = dup || s->name() == want;
      if (dup) throw UsageError(fmt::format("--strategies: '{}' is listed twice", want));
      throw UsageError(fmt::format("--strategies: unknown strategy '{}' (known: {}){}", want,
                                   fmt::join(strategy_names(), ", "),
                                   is_peer_strategy(want) ? "; a peer runs once --peers loads it (--peers=NAME or all)" : ""));
    }
  }
  return out;
}

}  // namespace ab
