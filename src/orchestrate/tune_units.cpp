// Screening units of a split tune (see the header) and the compact outcomes they return.
#include "orchestrate/tune_units.hpp"

#include <algorithm>

#include "tune/screen_halving.hpp"

namespace ab {

std::vector<ScreenUnit> plan_screen_units(std::size_t problem, const std::vector<ListedShape>& shapes,
                                          std::size_t split, std::set<std::string>& taken) {
  std::vector<ScreenUnit> units;
  split = std::max<std::size_t>(split, 1);
  for (const ListedShape& s : shapes) {
    if (!taken.insert(s.key).second || s.count <= split) continue;
    const std::size_t parts = (s.count + split - 1) / split;
    for (std::size_t i = 0; i < parts; ++i) {
      ScreenUnit u;
      u.problem = problem;
      u.strategy = s.strategy;
      u.key = s.key;
      u.count = s.count;
      u.lo = s.count * i / parts;
      u.hi = s.count * (i + 1) / parts;
      units.push_back(u);
    }
  }
  return units;
}

nlohmann::json screened_range_to_json(const std::vector<CandidateOutcome>& candidates, std::size_t lo, std::size_t hi) {
  nlohmann::json status = nlohmann::json::array(), ms = nlohmann::json::array(), samples = nlohmann::json::array();
  nlohmann::json dropped = nlohmann::json::array(), reasons = nlohmann::json::object();
  for (std::size_t i = lo; i < hi && i < candidates.size(); ++i) {
    const CandidateOutcome& c = candidates[i];
    status.push_back(c.status);
    ms.push_back(c.screen_ms);
    samples.push_back(c.screen_samples);
    dropped.push_back(c.dropped_at);
    if (!c.reason.empty()) reasons[std::to_string(i - lo)] = c.reason;
  }
  return {{"status", status}, {"screen_ms", ms}, {"samples", samples}, {"dropped", dropped}, {"reasons", reasons}};
}

void screened_range_from_json(const nlohmann::json& j, std::size_t lo, std::size_t count, ScreenedShape& shape) {
  shape.candidates.resize(count);
  const nlohmann::json& status = j.at("status");
  for (std::size_t i = 0; i < status.size() && lo + i < count; ++i) {
    CandidateOutcome& c = shape.candidates[lo + i];
    c.status = status[i].get<std::string>();
    c.screen_ms = j.at("screen_ms")[i].get<double>();
    c.screen_samples = j.at("samples")[i].get<int>();
    c.dropped_at = j.at("dropped")[i].get<int>();
    c.reason = j.at("reasons").value(std::to_string(i), std::string());
  }
}

nlohmann::json screened_shape_to_json(const ScreenedShape& shape) {
  return {{"count", shape.candidates.size()},
          {"verify_s", shape.verify_s},
          {"screen_s", shape.screen_s},
          {"stages", screen_stages_to_json(shape.stages)},
          {"range", screened_range_to_json(shape.candidates, 0, shape.candidates.size())}};
}

ScreenedShape screened_shape_from_json(const nlohmann::json& j) {
  ScreenedShape s;
  screened_range_from_json(j.at("range"), 0, j.at("count").get<std::size_t>(), s);
  s.verify_s = j.at("verify_s").get<double>();
  s.screen_s = j.at("screen_s").get<double>();
  s.stages = screen_stages_from_json(j.at("stages"));
  return s;
}

bool add_probe_bound(nlohmann::json& bounds, const std::string& key, const std::string& device, double ms) {
  if (!(ms > 0)) return false;
  const double now = probe_bound_of(bounds, key, device);
  if (now > 0 && now <= ms) return false;
  bounds[key][device] = ms;
  return true;
}

double probe_bound_of(const nlohmann::json& bounds, const std::string& key, const std::string& device) {
  if (!bounds.is_object()) return 0;
  auto k = bounds.find(key);
  if (k == bounds.end() || !k->is_object()) return 0;
  auto d = k->find(device);
  return d != k->end() && d->is_number() ? d->get<double>() : 0;
}

}  // namespace ab
