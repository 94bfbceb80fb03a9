// The units of a tune split below the problem (tune --devices with --search=exhaustive): which candidates
// of which shape each screening unit takes, and the compact form in which screening outcomes travel
// between the pool's processes. Pure: no process, no device (tested by tests/cpu/test_tune_units.cpp).
#pragma once
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/tune_types.hpp"

namespace ab {

// A GEMM shape a problem's tune searches, as its listing unit found it: the first strategy (in --strategies
// order) that makes it and its candidate count.
struct ListedShape {
  std::string key, strategy;
  std::size_t count = 0;
};

// One screening unit: candidates [lo, hi) of shape `key` of `problem`'s strategy `strategy`.
struct ScreenUnit {
  std::size_t problem = 0;
  std::string strategy, key;
  std::size_t lo = 0, hi = 0, count = 0;
};

// The screening units of one problem, in listing order: each shape with more than `split` candidates whose
// key is not in `taken` (shapes an earlier problem of the grid makes, which it tunes) becomes
// ceil(count / split) ranges of near-equal size (sizes differ by at most one) that cover its candidates
// once, in order. Smaller shapes stay with the problem's finishing unit, which screens them itself. Adds
// every listed key to `taken`. Deterministic: the same listing and split give the same units.
std::vector<ScreenUnit> plan_screen_units(std::size_t problem, const std::vector<ListedShape>& shapes,
                                          std::size_t split, std::set<std::string>& taken);

// Candidates [lo, hi) of a record, compactly: {"status": [...], "screen_ms": [...], "samples": [...],
// "dropped": [...], "reasons": {"index": reason}} (indices relative to lo).
nlohmann::json screened_range_to_json(const std::vector<CandidateOutcome>& candidates, std::size_t lo, std::size_t hi);
// Writes such a range into `shape` (sized to `count` candidates first), at lo.
void screened_range_from_json(const nlohmann::json& j, std::size_t lo, std::size_t count, ScreenedShape& shape);

// The pool's shared probe bounds ({key: {device name: ms}}, the fastest verified probe each shape's screening
// units reported, by device name: only a device of the same name compares). Adds `ms` for `key` on `device` where
// faster (or new); false when it changed nothing.
bool add_probe_bound(nlohmann::json& bounds, const std::string& key, const std::string& device, double ms);
// The bound for `key` on `device` (0: none).
double probe_bound_of(const nlohmann::json& bounds, const std::string& key, const std::string& device);

// A whole screened shape and back (the finishing unit's input): {"count", "verify_s", "screen_s", "stages", "range"}.
nlohmann::json screened_shape_to_json(const ScreenedShape& shape);
ScreenedShape screened_shape_from_json(const nlohmann::json& j);

}  // namespace ab
