// The split tune's units: planning them as listings arrive (parent), running one (worker). Unit files
// (unit-ITEM.json, attnbench.tune-unit/1) and results (task-ITEM-0.json) live in the pool's directory.
#include "orchestrate/tune_split.hpp"

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "core/json_document.hpp"
#include "core/phase_trace.hpp"
#include "strategies/registry.hpp"
#include "tune/screen_halving.hpp"
#include "tune/tuner.hpp"

namespace ab {

namespace {

constexpr const char* kUnitSchema = "attnbench.tune-unit/1";     // parent -> worker
constexpr const char* kResultSchema = "attnbench.tune-part/1";   // worker -> parent (listing, screening)

std::string unit_path(const std::string& dir, std::size_t item) { return fmt::format("{}/unit-{}.json", dir, item); }
std::string bounds_path(const std::string& dir) { return dir + "/probe-bounds.json"; }
constexpr const char* kBoundsSchema = "attnbench.tune-probe-bounds/1";  // parent -> workers: {key: {device name: ms}}

// The pool's shared bounds (bounds_path) for shape `key` on a device named `device`, into `bounds` where faster.
void take_shared_bound(const std::string& dir, const std::string& key, const std::string& device,
                       std::map<std::string, double>& bounds) {
  if (std::error_code ec; !std::filesystem::exists(bounds_path(dir), ec)) return;
  const nlohmann::json doc = read_json_document(bounds_path(dir), kBoundsSchema);
  const double ms = probe_bound_of(doc.value("bounds", nlohmann::json::object()), key, device);
  auto it = bounds.find(key);
  if (ms > 0 && (it == bounds.end() || ms < it->second)) bounds[key] = ms;
}

}  // namespace

SplitTune::SplitTune(const TuneOptions& opt, std::size_t split, std::string dir)
    : opt_(opt), problems_(opt.problems.size()), split_(split), dir_(std::move(dir)) {
  for (const auto& st : make_strategies(opt.strategies)) strategies_.push_back(st->name());
  listings_left_.assign(problems_, strategies_.size());
  shapes_.assign(problems_, std::vector<std::optional<std::vector<ListedShape>>>(strategies_.size()));
  for (std::size_t pi = 0; pi < problems_; ++pi)
    for (std::size_t si = 0; si < strategies_.size(); ++si) {
      Unit u;
      u.problem = pi;
      u.strategy = si;
      write_unit(add(u), {{"kind", "listing"}, {"problem", pi}, {"strategy", strategies_[si]}});
    }
}

std::size_t SplitTune::add(Unit u) {
  units_.push_back(std::move(u));
  return units_.size() - 1;
}

void SplitTune::write_unit(std::size_t item, nlohmann::json doc) const {
  doc["schema"] = kUnitSchema;
  write_json_atomic(unit_path(dir_, item), doc);
}

void SplitTune::note(std::size_t problem, std::string text) {
  notes_[problem] += text + "\n";
  failed_ = true;
}

std::string SplitTune::notes(std::size_t problem) const {
  std::string text;
  std::map<std::string, int> units;
  std::vector<std::string> order;
  for (const Unit& u : units_)
    if (u.kind == Kind::screening && u.problem == problem && units[u.range.key]++ == 0) order.push_back(u.range.key);
  for (const std::string& key : order) {
    std::string devices;
    auto on = screened_on_.find(key);
    if (on != screened_on_.end())
      for (int d : on->second) devices += fmt::format("{}{}", devices.empty() ? "" : ", ", d);
    text += fmt::format("  gemm {}: {} candidates screened in {} units on device(s) {}\n", key,
                        screened_.count(key) ? screened_.at(key).candidates.size() : 0, units[key],
                        devices.empty() ? "-" : devices);
  }
  auto it = notes_.find(problem);
  return text + (it == notes_.end() ? "" : it->second);
}

std::size_t SplitTune::finishing_units(std::size_t problem) const {
  std::size_t n = 0;
  for (std::size_t item : finishing_)
    n += units_[item].problem == problem;
  return n;
}

std::size_t SplitTune::strategy_index(const std::string& name) const {
  for (std::size_t si = 0; si < strategies_.size(); ++si)
    if (strategies_[si] == name) return si;
  throw std::logic_error("tune split: unknown strategy " + name);
}

// Plans problem `pi`'s screening and finishing units once all its listings are in. Ready finishing units
// (strategies with nothing to screen: the fused tiles, small shapes) go to `out.first`, the screens to `out.last`.
void SplitTune::plan_problem(std::size_t pi, ReadyItems& out) {
  const std::set<std::string> earlier = taken_;  // shapes earlier problems make (and tune)
  // A strategy whose listing was lost leaves the problem unsplit (its shapes are unknown): one finishing
  // unit tunes every strategy of it, as one process would.
  bool complete = true;
  for (const auto& listed : shapes_[pi]) complete = complete && listed.has_value();
  if (!complete) {
    for (const auto& listed : shapes_[pi])
      if (listed)
        for (const ListedShape& s : *listed) taken_.insert(s.key);
    Unit f;
    f.kind = Kind::finishing;
    f.problem = pi;
    f.strategy = kAllStrategies;
    f.elsewhere = earlier;
    finishing_.push_back(add(f));
    release(finishing_.back(), out);
    return;
  }
  // The strategies' shapes in --strategies order: a shape two strategies make belongs to the first, and the
  // later one's finishing unit leaves it to that one's unit (as it leaves an earlier problem's shapes).
  std::vector<ScreenUnit> screens;
  std::vector<std::set<std::string>> elsewhere(strategies_.size());
  for (std::size_t si = 0; si < strategies_.size(); ++si) {
    elsewhere[si] = taken_;
    std::vector<ScreenUnit> mine = plan_screen_units(pi, *shapes_[pi][si], split_, taken_);
    screens.insert(screens.end(), mine.begin(), mine.end());
  }
  std::vector<std::size_t> screen_items;
  for (const ScreenUnit& s : screens) {
    Unit u;
    u.kind = Kind::screening;
    u.problem = pi;
    u.strategy = strategy_index(s.strategy);
    u.range = s;
    const std::size_t item = add(u);
    write_unit(item, {{"kind", "screening"}, {"problem", pi}, {"strategy", s.strategy}, {"key", s.key},
                      {"lo", s.lo}, {"hi", s.hi}, {"count", s.count}});
    screen_items.push_back(item);
    ++open_screens_[{pi, u.strategy}];
  }
  for (std::size_t si = 0; si < strategies_.size(); ++si) {
    Unit f;
    f.kind = Kind::finishing;
    f.problem = pi;
    f.strategy = si;
    f.elsewhere = std::move(elsewhere[si]);
    finishing_.push_back(add(f));
    if (open_screens_[{pi, si}] == 0) release(finishing_.back(), out);
  }
  out.last.insert(out.last.end(), screen_items.begin(), screen_items.end());
}

// Writes a finishing unit's file (the outcomes of its strategy's screened shapes) and hands it out.
void SplitTune::release(std::size_t item, ReadyItems& out) {
  Unit& f = units_.at(item);
  nlohmann::json screened = nlohmann::json::object();
  for (const Unit& u : units_)
    if (u.kind == Kind::screening && u.problem == f.problem &&
        (f.strategy == kAllStrategies || u.strategy == f.strategy) && !screened.contains(u.range.key))
      screened[u.range.key] = screened_shape_to_json(screened_.at(u.range.key));
  nlohmann::json doc = {{"kind", "finishing"}, {"problem", f.problem}, {"tuned_elsewhere", f.elsewhere},
                        {"screened", screened}};
  if (f.strategy != kAllStrategies) doc["strategy"] = strategies_.at(f.strategy);
  write_unit(item, doc);
  f.released = true;
  out.first.push_back(item);
}

ReadyItems SplitTune::ready() {
  ReadyItems out;
  // Problems are planned in grid order once listed, so unit numbers and shape ownership (the first problem
  // that makes a shape tunes it, as in one process) do not depend on which device listed first.
  while (expanded_ < problems_ && listings_left_[expanded_] == 0) plan_problem(expanded_++, out);
  for (std::size_t item : finishing_) {
    const Unit& f = units_[item];
    if (!f.released && open_screens_[{f.problem, f.strategy}] == 0) release(item, out);
  }
  return out;
}

bool SplitTune::absorb(const TaskOutcome& t) {
  const Unit& u = units_.at(t.item);
  if (u.kind == Kind::finishing) return false;
  if (u.kind == Kind::listing) absorb_listing(u, t);
  else absorb_screening(u, t);
  return true;
}

void SplitTune::absorb_listing(const Unit& u, const TaskOutcome& t) {
  --listings_left_[u.problem];
  const std::string label = opt_.problems[u.problem].label();
  if (t.file.empty()) {
    note(u.problem, fmt::format("{}: listing unit {} ({}) lost ({}); the problem is tuned unsplit", label, t.item,
                                strategies_[u.strategy], t.failure));
    return;
  }
  nlohmann::json doc = read_json_document(t.file, kResultSchema);
  std::vector<ListedShape> shapes;
  for (const auto& s : doc.at("shapes"))
    shapes.push_back({s.at("key").get<std::string>(), s.at("strategy").get<std::string>(), s.at("count").get<std::size_t>()});
  shapes_[u.problem][u.strategy] = std::move(shapes);
}

void SplitTune::absorb_screening(const Unit& u, const TaskOutcome& t) {
  const ScreenUnit& r = u.range;
  ScreenedShape& shape = screened_[r.key];
  shape.candidates.resize(r.count);
  --open_screens_[{u.problem, u.strategy}];
  std::string why = t.failure;
  if (!t.file.empty()) {
    screened_on_[r.key].insert(t.device);
    nlohmann::json doc = read_json_document(t.file, kResultSchema);
    if (doc.contains("range")) {
      screened_range_from_json(doc.at("range"), r.lo, r.count, shape);
      if (doc.contains("best_probe_ms") && doc.contains("device_name")) share_bound(r.key, doc);
      shape.verify_s += doc.at("verify_s").get<double>();
      shape.screen_s += doc.at("screen_s").get<double>();
      add_screen_stages(shape.stages, screen_stages_from_json(doc.at("stages")));
      return;
    }
    why = doc.value("error", std::string("no outcomes"));
  }
  for (std::size_t i = r.lo; i < r.hi; ++i) {
    shape.candidates[i].status = "failed";
    shape.candidates[i].reason = "not screened: " + why;
  }
  note(u.problem, fmt::format("{}: screening unit {} (gemm {} / {}, candidates {}-{} of {}) lost: {}",
                              opt_.problems[u.problem].label(), t.item, r.key, r.strategy, r.lo, r.hi - 1, r.count, why));
}

void SplitTune::share_bound(const std::string& key, const nlohmann::json& unit_result) {
  if (!add_probe_bound(probe_bounds_, key, unit_result.at("device_name").get<std::string>(),
                       unit_result.at("best_probe_ms").get<double>()))
    return;
  write_json_atomic(bounds_path(dir_), {{"schema", kBoundsSchema}, {"bounds", probe_bounds_}});
}

bool serve_split_unit(Backend& backend, const WorkerTask& task, const std::function<TuneOptions(std::size_t)>& one,
                      const std::function<TaskEnd(const TuneOptions&)>& finish, TaskEnd* end) {
  const std::string path = unit_path(std::filesystem::path(task.file).parent_path().string(), task.item);
  if (std::error_code ec; !std::filesystem::exists(path, ec)) return false;
  const nlohmann::json unit = read_json_document(path, kUnitSchema);
  const std::string kind = unit.at("kind").get<std::string>();
  TuneOptions opt = one(unit.at("problem").get<std::size_t>());
  *end = TaskEnd{};
  if (phase_trace_enabled())
    trace_phase(fmt::format("tune unit {}: {} of problem {}, {}{}", task.item, kind, unit.at("problem").get<std::size_t>(),
                            unit.value("strategy", std::string("every strategy")),
                            kind == "screening" ? fmt::format(" gemm {} [{}, {}) of {}", unit.at("key").get<std::string>(),
                                                              unit.at("lo").get<std::size_t>(), unit.at("hi").get<std::size_t>(),
                                                              unit.at("count").get<std::size_t>())
                                                : std::string()));
  if (kind == "finishing") {
    std::map<std::string, ScreenedShape> screened;
    for (const auto& [key, shape] : unit.at("screened").items()) screened[key] = screened_shape_from_json(shape);
    opt.tuned_elsewhere = unit.at("tuned_elsewhere").get<std::set<std::string>>();
    opt.screened = &screened;
    if (unit.contains("strategy")) opt.strategies = unit.at("strategy").get<std::string>();
    *end = finish(opt);
    return true;
  }
  nlohmann::json doc = {{"schema", kResultSchema}};
  if (kind == "listing") {
    opt.dry_run = true;
    opt.strategies = unit.at("strategy").get<std::string>();
    TuneOutcome out = tune_grid(backend, opt);
    nlohmann::json shapes = nlohmann::json::array();
    for (const GemmTuneRecord& r : out.gemm)
      if (!(opt.skip_cached && opt.skip_cached->find_gemm(r.key, out.env)))
        shapes.push_back({{"key", r.key}, {"strategy", r.strategy}, {"count", r.algos.size()}});
    doc["shapes"] = shapes;
    end->retire = out.failed_strategies > 0;
  } else {
    ScreenRange range;
    range.key = unit.at("key").get<std::string>();
    range.lo = unit.at("lo").get<std::size_t>();
    range.hi = unit.at("hi").get<std::size_t>();
    range.count = unit.at("count").get<std::size_t>();
    opt.strategies = unit.at("strategy").get<std::string>();
    opt.screen_range = range;
    const std::string device = backend.device_info().name;
    if (opt.probe_bounds) take_shared_bound(std::filesystem::path(path).parent_path().string(), range.key, device, *opt.probe_bounds);
    TuneOutcome out = tune_grid(backend, opt);
    const GemmTuneRecord* r = nullptr;
    for (const GemmTuneRecord& g : out.gemm)
      if (g.key == range.key) r = &g;
    if (r) {
      if (phase_trace_enabled()) {
        std::size_t ok = 0, cut = 0;
        for (std::size_t i = range.lo; i < range.hi; ++i) {
          ok += r->candidates[i].status == "ok";
          cut += r->candidates[i].status == "cut";
        }
        trace_phase(fmt::format("tune unit {}: {} ok, {} cut, verify {:.2f} s, screen {:.2f} s", task.item, ok, cut,
                                r->verify_s, r->screen_s));
      }
      doc["range"] = screened_range_to_json(r->candidates, range.lo, range.hi);
      if (opt.probe_bounds && opt.probe_bounds->count(range.key)) {
        doc["best_probe_ms"] = opt.probe_bounds->at(range.key);
        doc["device_name"] = device;
      }
      doc["verify_s"] = r->verify_s;
      doc["screen_s"] = r->screen_s;
      doc["stages"] = screen_stages_to_json(r->stages);
    } else {
      doc["error"] = out.notes.empty() ? std::string("the shape was not screened") : out.notes.back();
    }
    end->retire = out.failed_strategies > 0;
  }
  write_json_atomic(task.file, doc);
  return true;
}

}  // namespace ab
