// Successive halving's rule (see the header) and the JSON of a screen stage.
#include "tune/screen_halving.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ab {

nlohmann::json ScreenStage::to_json() const {
  return {{"kind", kind},       {"calls", calls}, {"samples", samples},         {"entered", entered},
          {"passed", passed},   {"kept", kept},   {"calls_spent", calls_spent}};
}

ScreenStage ScreenStage::from_json(const nlohmann::json& j) {
  ScreenStage s;
  s.kind = j.at("kind").get<std::string>();
  s.calls = j.at("calls").get<int>();
  s.samples = j.at("samples").get<int>();
  s.entered = j.at("entered").get<std::size_t>();
  s.passed = j.at("passed").get<std::size_t>();
  s.kept = j.at("kept").get<std::size_t>();
  s.calls_spent = j.at("calls_spent").get<std::int64_t>();
  return s;
}

nlohmann::json screen_stages_to_json(const std::vector<ScreenStage>& stages) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScreenStage& s : stages) out.push_back(s.to_json());
  return out;
}

std::vector<ScreenStage> screen_stages_from_json(const nlohmann::json& j) {
  std::vector<ScreenStage> out;
  for (const nlohmann::json& s : j) out.push_back(ScreenStage::from_json(s));
  return out;
}

double stage_band(const HalvingRule& rule, int calls, int screen_calls, int samples) {
  const double fewer = calls > 0 && screen_calls > calls ? static_cast<double>(screen_calls) / calls : 1.0;
  return rule.band * std::sqrt(fewer / std::max(samples, 1));
}

std::vector<bool> halving_keeps(const std::vector<double>& ms, const std::vector<bool>& protect, const HalvingRule& rule,
                                double band) {
  const std::size_t n = ms.size();
  auto is_protected = [&](std::size_t i) { return i < protect.size() && protect[i]; };
  auto timed = [&](std::size_t i) { return ms[i] > 0; };
  std::vector<bool> keep(n, true);
  std::vector<std::size_t> order;  // the candidates the quota ranks: neither protected nor untimed
  double fastest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (timed(i) && (fastest == 0 || ms[i] < fastest)) fastest = ms[i];
    if (timed(i) && !is_protected(i)) order.push_back(i);
  }
  const std::size_t final_round = static_cast<std::size_t>(std::max(rule.final_round, 1));
  if (order.size() <= final_round) return keep;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ms[a] < ms[b]; });
  std::size_t quota = static_cast<std::size_t>(std::ceil(static_cast<double>(order.size()) * rule.keep));
  quota = std::max(quota, final_round);
  // The band keeps those the noise cannot tell from the fastest, up to band_limit times the quota: past that
  // they are ties of one another, and which of them go on changes the winner's time by no more than the band.
  const std::size_t limit =
      rule.band_limit > 0 ? std::max(quota, static_cast<std::size_t>(std::ceil(static_cast<double>(quota) * rule.band_limit)))
                          : order.size();
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const std::size_t i = order[rank];
    keep[i] = rank < quota || (rank < limit && ms[i] <= fastest * (1 + band));
  }
  return keep;
}

namespace {

// Where a stage sorts among a shape's stages: the grouped probe's representatives, the probe, the halving
// stages by samples, the final round.
int stage_order(const ScreenStage& s) {
  if (s.kind == "group") return 0;
  if (s.kind == "probe") return 1;
  if (s.kind == "final") return 1 << 20;
  return 2 + s.samples;
}

}  // namespace

void add_screen_stages(std::vector<ScreenStage>& into, const std::vector<ScreenStage>& more) {
  for (const ScreenStage& m : more) {
    auto same = std::find_if(into.begin(), into.end(), [&](const ScreenStage& s) {
      return stage_order(s) == stage_order(m) && s.kind == m.kind;
    });
    if (same == into.end()) {
      auto at = std::find_if(into.begin(), into.end(), [&](const ScreenStage& s) { return stage_order(s) > stage_order(m); });
      into.insert(at, m);
      continue;
    }
    same->entered += m.entered;
    same->passed += m.passed;
    same->kept += m.kept;
    same->calls_spent += m.calls_spent;
  }
}

std::int64_t unhalved_screen_calls(const std::vector<ScreenStage>& stages) {
  if (stages.empty() || stages.back().kind != "final") return 0;
  auto find = [&](const char* kind) {
    auto it = std::find_if(stages.begin(), stages.end(), [&](const ScreenStage& s) { return s.kind == kind; });
    return it == stages.end() ? nullptr : &*it;
  };
  const ScreenStage* group = find("group");
  const ScreenStage* probe = find("probe");
  const ScreenStage& last = stages.back();
  const std::int64_t per_candidate = static_cast<std::int64_t>(last.samples) * last.calls;
  if (!probe)  // no probe: every candidate screened in full
    return static_cast<std::int64_t>(stages.front().entered) * per_candidate;
  // Without grouping every candidate of the range is probed (the group stage's entered).
  const std::int64_t probes = group ? static_cast<std::int64_t>(group->entered) * group->calls : probe->calls_spent;
  const std::int64_t probe_is_sample = probe->calls == last.calls ? last.calls : 0;
  return probes + static_cast<std::int64_t>(probe->passed) * (per_candidate - probe_is_sample);
}

}  // namespace ab
