// tune --devices with --search=exhaustive: the grid's tune split below the problem, so that two GPUs share
// even a one-problem grid (docs/scale-out-devices.md). Per problem: a listing unit per strategy (the shapes it searches and their
// candidate counts), screening units (ranges of a large shape's candidates: phase 1, probe, verify and
// screen, tune/gemm_search.hpp), then a finishing unit per strategy that runs the strategy's tune of the
// problem on one device with those outcomes: the finalists re-measured and re-checked there (phases 2-3),
// the fused tiles and small shapes as before. A strategy's finishing unit is ready once its own shapes are
// screened, so one strategy's finalists (or the fused tiles, which need no screening) are measured while
// another's screening goes on. Units are numbered in grid order as they are planned, whatever the device
// count: first the listing units (one per problem and strategy, so that devices list a problem's
// strategies side by side), then each problem's screening units and its finishing units (in --strategies
// order; one for the whole problem when a listing unit was lost). A screening unit's probe cutoff starts from
// the fastest verified probe of its shape that any earlier unit on a device of the same name reported, as one
// process screening the whole list starts each candidate from the fastest so far.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrate/tune_units.hpp"
#include "orchestrate/worker_loop.hpp"
#include "orchestrate/worker_pool.hpp"
#include "core/backend.hpp"
#include "tune/tune_types.hpp"

namespace ab {

// The parent's side: the units, their dependencies and what the listing and screening units returned.
class SplitTune {
 public:
  // `split`: candidates per screening unit at most; `dir`: the pool's directory, for the unit files.
  SplitTune(const TuneOptions& opt, std::size_t split, std::string dir);
  // Items 0..problems x strategies - 1 are the listing units (their files are written here).
  std::size_t listing_units() const { return problems_ * strategies_.size(); }
  // Units that became ready since the last call (each one's file written): first, the finishing units whose
  // strategy's screening is done (so that a long finish, nested's re-measured finalists, overlaps the other
  // strategies' screens instead of running alone at the end); last, the screening units of the problems
  // listed so far, in grid order.
  ReadyItems ready();
  // Absorbs a listing or screening unit's outcome (a dead worker's too: its candidates are recorded as not
  // screened, with the reason); false for a finishing unit, whose file the caller reads as a problem's.
  bool absorb(const TaskOutcome& t);
  std::size_t problem_of(std::size_t item) const { return units_.at(item).problem; }
  // The finishing units planned for `problem` so far (0 until its listings are in).
  std::size_t finishing_units(std::size_t problem) const;
  std::size_t planned() const { return units_.size(); }
  // Lines for `problem`'s summary: how each split shape was screened (units, devices), and any lost or
  // failed unit ("" when the problem was not split).
  std::string notes(std::size_t problem) const;
  bool failed() const { return failed_; }

 private:
  enum class Kind { listing, screening, finishing };
  static constexpr std::size_t kAllStrategies = static_cast<std::size_t>(-1);
  struct Unit {
    Kind kind = Kind::listing;
    std::size_t problem = 0;
    std::size_t strategy = 0;  // listing and finishing units: the index in strategies_ (kAllStrategies: all)
    ScreenUnit range;
    std::set<std::string> elsewhere;  // finishing units: the shapes other units tune
    bool released = false;            // finishing units: handed to the pool
  };
  std::size_t strategy_index(const std::string& name) const;
  void plan_problem(std::size_t pi, ReadyItems& out);
  void release(std::size_t item, ReadyItems& out);
  std::size_t add(Unit u);
  void write_unit(std::size_t item, nlohmann::json doc) const;
  void absorb_listing(const Unit& u, const TaskOutcome& t);
  void absorb_screening(const Unit& u, const TaskOutcome& t);
  // Takes a screening unit's fastest verified probe into the pool's shared bounds (and their file) where faster.
  void share_bound(const std::string& key, const nlohmann::json& unit_result);
  void note(std::size_t problem, std::string text);

  const TuneOptions& opt_;
  std::size_t problems_, split_;
  std::vector<std::string> strategies_;  // --strategies, in order
  std::string dir_;
  std::vector<Unit> units_;  // by item
  std::vector<std::size_t> listings_left_;                  // per problem: listing units without an outcome
  std::vector<std::vector<std::optional<std::vector<ListedShape>>>> shapes_;  // per problem and strategy; nullopt: lost
  std::size_t expanded_ = 0;                                // problems whose units are planned (a prefix)
  std::set<std::string> taken_;                             // keys of the problems planned so far
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> open_screens_;  // (problem, strategy): screening units left
  std::vector<std::size_t> finishing_;                      // finishing units' items, in planning order
  std::map<std::string, ScreenedShape> screened_;
  std::map<std::string, std::set<int>> screened_on_;  // devices that screened each shape
  // The fastest verified probe of each shape by device name, as the screening units report it: the pool's
  // probe-bounds.json, which each screening unit reads before it starts (devices of one name only: their
  // times compare).
  nlohmann::json probe_bounds_ = nlohmann::json::object();
  std::map<std::size_t, std::string> notes_;
  bool failed_ = false;
};

// The worker's side: runs task.item's unit when the parent wrote one (a split tune) and returns true with
// `end` set; false for a plain problem task. `one` is the tune of the unit's problem alone (its seed
// included) and keeps candidate lists across the worker's tasks in one.listed. A finishing unit adds the
// screened outcomes and the shapes tuned elsewhere to a copy of `one`, then calls `finish` with it, which
// tunes the problem and writes the task's file as for a plain problem task.
bool serve_split_unit(Backend& backend, const WorkerTask& task, const std::function<TuneOptions(std::size_t)>& one,
                      const std::function<TaskEnd(const TuneOptions&)>& finish, TaskEnd* end);

}  // namespace ab
