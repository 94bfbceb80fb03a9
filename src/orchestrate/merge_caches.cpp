// Merging heuristic caches: same tool version; entries keyed by (environment, key); a key tuned in two inputs
// must agree on its choice unless the faster is asked for.
#include <map>
#include <utility>

#include <fmt/format.h>

#include "orchestrate/merge.hpp"
#include "core/errors.hpp"
#include "tune/gemm_search.hpp"
#include "tune/heuristic_cache.hpp"

namespace ab {

namespace {

// "VERSION (GIT)" of a cache's tool, "?" for a part it does not say (any document: the reader checks the rest).
std::string tool_of(const nlohmann::json& doc) {
  auto part = [&doc](const char* key) {
    if (!doc.is_object() || !doc.contains("tool") || !doc["tool"].is_object()) return std::string("?");
    const nlohmann::json& t = doc["tool"];
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string("?");
  };
  return fmt::format("{} ({})", part("version"), part("git"));
}

// One kind of entry (GEMM or fused) from every input: `choice` names what an entry chose.
template <class Entry, class Choice>
class EntryMerge {
 public:
  EntryMerge(const char* kind, Choice choice, bool keep_fastest, std::vector<std::string>* notes)
      : kind_(kind), choice_(choice), keep_fastest_(keep_fastest), notes_(notes) {}

  void add(const Entry& e, const std::string& path) {
    auto key = std::make_pair(e.env, e.key);
    auto it = held_.find(key);
    if (it == held_.end()) {
      held_.emplace(key, std::make_pair(e, path));
      return;
    }
    const Entry& old = it->second.first;
    const bool same = choice_(old) == choice_(e);
    if (!same && !keep_fastest_)
      throw UsageError(fmt::format("merge: {} and '{}' tuned {} {} differently ({} vs {}); give --on_conflict=fastest "
                                   "to keep the faster",
                                   "'" + it->second.second + "'", path, kind_, e.key, choice_(old), choice_(e)));
    const bool newer_wins = e.best_ms > 0 && (old.best_ms <= 0 || e.best_ms < old.best_ms);
    if (!same)
      notes_->push_back(fmt::format("{} {}: kept {} ({:.4f} ms) over {} ({:.4f} ms)", kind_, e.key,
                                    choice_(newer_wins ? e : old), (newer_wins ? e : old).best_ms,
                                    choice_(newer_wins ? old : e), (newer_wins ? old : e).best_ms));
    if (newer_wins) it->second = std::make_pair(e, path);
  }
  template <class Put>
  void put_into(Put put) const {
    for (const auto& [key, held] : held_) put(held.first);
  }

 private:
  const char* kind_;
  Choice choice_;
  bool keep_fastest_;
  std::vector<std::string>* notes_;
  std::map<std::pair<std::string, std::string>, std::pair<Entry, std::string>> held_;
};

}  // namespace

nlohmann::json merge_caches(const std::vector<MergeInput>& inputs, bool keep_fastest, std::vector<std::string>* notes) {
  auto gemm_choice = [](const GemmCacheEntry& e) { return gemm_algo_identity(e.algo); };
  auto fused_choice = [](const FusedCacheEntry& e) { return e.tile.name(); };
  EntryMerge<GemmCacheEntry, decltype(gemm_choice)> gemm("GEMM", gemm_choice, keep_fastest, notes);
  EntryMerge<FusedCacheEntry, decltype(fused_choice)> fused("fused problem", fused_choice, keep_fastest, notes);
  HeuristicCache merged;
  for (const MergeInput& in : inputs) {
    if (tool_of(in.doc) != tool_of(inputs.front().doc))
      throw UsageError(fmt::format("merge: '{}' comes from attnbench {}, '{}' from {}: caches of different tool versions "
                                   "do not merge",
                                   in.path, tool_of(in.doc), inputs.front().path, tool_of(inputs.front().doc)));
    HeuristicCache c = HeuristicCache::from_json(in.doc, fmt::format("heuristic cache '{}'", in.path));
    for (const CacheEnvironment& e : c.environments()) merged.add_environment(e);
    for (const GemmCacheEntry& e : c.gemm_entries()) gemm.add(e, in.path);
    for (const FusedCacheEntry& e : c.fused_entries()) fused.add(e, in.path);
  }
  gemm.put_into([&](const GemmCacheEntry& e) { merged.put_gemm(e); });
  fused.put_into([&](const FusedCacheEntry& e) { merged.put_fused(e); });
  return merged.to_json();
}

}  // namespace ab
