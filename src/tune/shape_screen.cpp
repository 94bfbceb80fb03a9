// A shape's screen (see the header): the probe, then successive halving and a final round, or one pass.
#include "tune/shape_screen.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/stop_request.hpp"
#include "tune/candidate_groups.hpp"
#include "tune/screen_halving.hpp"

namespace ab {

namespace {

// A halving stage takes one more sample of each candidate it keeps; past this many a stage that still has more
// than the final round's candidates (all within the band) ends the halving.
constexpr int kMaxHalvingSamples = 8;

bool interrupted(CandidateOutcome& c) {
  if (!stop_requested()) return false;
  c.status = "failed";
  c.reason = "interrupted";
  return true;
}

// Without halving: each candidate probed, verified and screened in turn (screen_candidate), as before.
double screen_in_one_pass(const ShapeScreenSetup& s, GemmTuneRecord& r, std::size_t lo, std::size_t hi) {
  const ScreenTiming& t = s.t;
  ScreenStage probe{"probe", r.probe_calls, 1};
  ScreenStage screen{"final", r.screen_calls, t.samples};
  double best_probe_ms = t.cutoff > 0 ? s.probe_bound : 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (interrupted(r.candidates[i])) continue;  // the tuner keeps nothing of this shape
    s.guarded(i, [&] { r.candidates[i] = screen_candidate(s.rec, s.g, r.algos[i], s.verify, t, best_probe_ms, r); });
    const CandidateOutcome& c = r.candidates[i];
    const bool probed = t.cutoff > 0 && (c.probe_ms > 0 || c.status == "cut");
    if (probed) {
      ++probe.entered;
      probe.calls_spent += r.probe_calls;
    }
    if (c.status == "ok" || c.status == "incorrect") ++screen.entered;  // verified
    if (c.status == "ok") {
      ++screen.passed;
      const int reused = t.probe_is_screen && probed ? 1 : 0;  // the probe was the screen's first sample
      screen.calls_spent += static_cast<std::int64_t>(c.screen_samples - reused) * r.screen_calls;
      if (c.probe_ms > 0 && (best_probe_ms == 0 || c.probe_ms < best_probe_ms)) best_probe_ms = c.probe_ms;
    }
  }
  screen.kept = screen.passed;
  probe.passed = probe.kept = screen.entered;
  if (t.cutoff > 0) r.stages.push_back(probe);
  r.stages.push_back(screen);
  return best_probe_ms;
}

// Successive halving over candidates [lo, hi).
class Halving {
 public:
  Halving(const ShapeScreenSetup& s, GemmTuneRecord& r)
      : s_(s), t_(s.t), r_(r), best_probe_(s.t.cutoff > 0 ? s.probe_bound : 0) {}

  double best_probe() const { return best_probe_; }

  void run(std::size_t lo, std::size_t hi) {
    probe_all(lo, hi);
    if (t_.cutoff > 0) rank_on_probe();
    // Each stage: one more sample of every candidate left, then the ranking. A stage that drops nothing (every
    // candidate within the band) ends the halving: more samples would narrow the band only slowly.
    int samples = t_.cutoff > 0 && t_.probe_is_screen ? 1 : 0;
    while (ranked_pool() > static_cast<std::size_t>(s_.rule.final_round) && samples < kMaxHalvingSamples)
      if (!halving_stage(++samples)) break;
    final_round();
  }

 private:
  struct Entry {
    std::size_t i = 0;
    bool verified = false;
    std::vector<double> ms;  // samples of the screen's calls (the probe first when it is one)
    bool out = false;        // failed, wrong or interrupted in the current stage
  };

  CandidateOutcome& outcome(std::size_t i) { return r_.candidates[i]; }
  // The heuristic's choice, the gain's reference, always goes on: it is counted apart from the final round's.
  bool is_protected(const Entry& e) const { return static_cast<int>(e.i) == r_.baseline; }
  std::size_t ranked_pool() const {
    std::size_t n = 0;
    for (const Entry& e : pool_) n += !is_protected(e);
    return n;
  }

  // Runs `work` on candidate i; a BackendError that is not sticky makes the candidate failed (false).
  bool attempt(std::size_t i, const std::function<void()>& work, const char* what = nullptr) {
    try {
      work();
      return true;
    } catch (const BackendError& e) {
      if (e.sticky) throw;
      outcome(i).status = "failed";
      outcome(i).reason = what ? fmt::format("{}: {}", what, e.what()) : std::string(e.what());
      return false;
    }
  }
  bool set(std::size_t i) { return attempt(i, [&] { set_group(s_.rec, s_.g, r_.algos[i], "tuned"); }, "cannot be set"); }
  bool verify(Entry& e) {
    if (e.verified) return true;
    std::string bad;
    auto t0 = std::chrono::steady_clock::now();
    const bool ran = attempt(e.i, [&] { bad = s_.verify(r_.algos[e.i]); });
    r_.verify_s += seconds_since(t0);
    if (!ran) return false;
    if (!bad.empty()) {
      outcome(e.i).status = "incorrect";
      outcome(e.i).reason = bad;
      return false;
    }
    return e.verified = true;
  }
  // One sample with `timer` of `calls` into *ms.
  bool sample(std::size_t i, QueuedScreen& timer, const std::function<void()>& calls, double* ms) {
    auto t0 = std::chrono::steady_clock::now();
    const bool ok = attempt(i, [&] { *ms = timer.sample(calls); });
    r_.screen_s += seconds_since(t0);
    return ok;
  }
  // Brings e's samples of the screen's calls up to `n`, counting them in `stage`.
  bool samples_up_to(Entry& e, std::size_t n, ScreenStage& stage) {
    while (e.ms.size() < n) {
      double ms = 0;
      if (!sample(e.i, t_.screen_timer, t_.screen, &ms)) return false;
      e.ms.push_back(ms);
      stage.calls_spent += r_.screen_calls;
    }
    return true;
  }
  // Drops the candidates that failed in this stage from the pool.
  void sweep() {
    std::vector<Entry> left;
    for (Entry& e : pool_)
      if (!e.out) left.push_back(std::move(e));
    pool_ = std::move(left);
  }
  // Ranks the pool on `ms` (a time per entry) and drops those halving_keeps does not keep, giving each its
  // stage's time (screen_ms, its samples) and status: "ok" when verified, else "cut" (it never was). Returns how
  // many went on.
  std::size_t rank(const std::vector<double>& ms, double band, int samples, double scale) {
    std::vector<bool> protect;
    for (const Entry& e : pool_) protect.push_back(is_protected(e));
    const std::vector<bool> keep = halving_keeps(ms, protect, s_.rule, band);
    const int stage = ++ranked_;
    for (std::size_t k = 0; k < pool_.size(); ++k) {
      if (keep[k]) continue;
      CandidateOutcome& c = outcome(pool_[k].i);
      c.status = pool_[k].verified ? "ok" : "cut";
      c.screen_ms = ms[k] * scale;
      c.screen_samples = samples;
      c.dropped_at = stage;
      pool_[k].out = true;
    }
    sweep();
    return pool_.size();
  }

  // Sets and probes every candidate; one whose probe would be the fastest so far is verified at once (the
  // cutoff is always relative to a verified candidate's probe, as without halving), one over the cutoff is cut,
  // the others wait in the pool, unverified. Without a probe (cutoff 0) every candidate that can be set waits.
  // With the grouped probe (an exhaustive list whose range has variants of one base) the groups' representatives
  // go first and the groups far behind are not probed further (probe_by_group).
  void probe_all(std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      CandidateOutcome& c = outcome(i);
      c = CandidateOutcome{};
      c.label = r_.algos[i].label.empty() ? "algo" : r_.algos[i].label;
      c.baseline = r_.algos[i].heuristic_first;
    }
    if (t_.cutoff > 0 && s_.group_margin > 0) {
      const std::vector<CandidateGroup> groups = group_candidates(r_.algos, lo, hi);
      if (any_variants(groups)) {
        probe_by_group(groups, lo, hi);
        return;
      }
    }
    ScreenStage stage{"probe", r_.probe_calls, 1};
    for (std::size_t i = lo; i < hi; ++i) probe_candidate(i, stage);
    if (t_.cutoff > 0) {
      stage.passed = stage.kept = pool_.size();
      r_.stages.push_back(stage);
    }
  }

  // Sets and probes candidate i (counted in `stage` when it was probed): verified at once when its probe is the
  // fastest so far, cut when over the cutoff, else it waits in the pool.
  void probe_candidate(std::size_t i, ScreenStage& stage) {
    CandidateOutcome& c = outcome(i);
    if (interrupted(c)) return;
    Entry e;
    e.i = i;
    bool waits = false;
    s_.guarded(i, [&] {
      if (!set(i)) return;
      if (t_.cutoff > 0) {
        if (!sample(i, t_.probe_timer, t_.probe, &c.probe_ms)) return;
        ++stage.entered;
        stage.calls_spent += r_.probe_calls;
        if (best_probe_ == 0 || c.probe_ms < best_probe_) {
          if (!verify(e)) return;
          best_probe_ = c.probe_ms;
        } else if (c.probe_ms > t_.cutoff * best_probe_) {
          c.status = "cut";
          c.screen_ms = c.probe_ms * t_.scale;
          c.screen_samples = t_.probe_is_screen ? 1 : 0;
          return;
        }
        if (t_.probe_is_screen) e.ms.push_back(c.probe_ms);
      }
      waits = true;
    });
    if (waits) pool_.push_back(std::move(e));
  }

  bool failed_or_wrong(std::size_t i) {
    const std::string& status = outcome(i).status;
    return status == "failed" || status == "incorrect";
  }

  // The grouped probe (docs/tuning.md, step 2): the "group" stage probes each group's representative (its
  // member with the fewest variant settings changed) and every candidate the screen never drops (the
  // heuristic's choice, and an exhaustive list's heuristic top-N, which are re-measured as finalists anyway);
  // a group whose fastest such probe is over group_margin times the fastest verified probe is dropped, its
  // members never probed ("cut", dropped_at this ranking). The "probe" stage then probes the other members of
  // the groups kept, the fastest groups first, against the cutoff as without groups.
  void probe_by_group(const std::vector<CandidateGroup>& groups, std::size_t lo, std::size_t hi) {
    std::vector<char> first(hi - lo, 0);
    for (const CandidateGroup& g : groups) first[g.representative - lo] = 1;
    for (std::size_t i = lo; i < hi; ++i)
      if (static_cast<int>(i) == r_.baseline || static_cast<int>(i) < r_.heuristic_top) first[i - lo] = 1;
    ScreenStage group{"group", r_.probe_calls, 1};
    group.entered = hi - lo;
    {
      ScreenStage probes{"group", r_.probe_calls, 1};
      for (std::size_t i = lo; i < hi; ++i)
        if (first[i - lo]) probe_candidate(i, probes);
      group.calls_spent = probes.calls_spent;
    }
    // Each group's time: the fastest probe among its members probed so far (a wrong or failed one's too: a
    // group is dropped only on times that say it is slow).
    std::vector<double> group_ms(groups.size(), 0);
    std::vector<std::size_t> fastest(groups.size(), 0);
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t i : groups[g].members) {
        const double ms = outcome(i).probe_ms;
        if (first[i - lo] && ms > 0 && (group_ms[g] == 0 || ms < group_ms[g])) {
          group_ms[g] = ms;
          fastest[g] = i;
        }
      }
    std::vector<bool> keep = groups_within_margin(group_ms, best_probe_, s_.group_margin);
    // A group about to be dropped rests on one sample of one member: a host stall in it would take the group's
    // winner with it. That member is probed once more and the group judged on the faster of its two probes
    // (one probe more per group dropped).
    ScreenStage retakes{"group", r_.probe_calls, 1};
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (keep[g] || !(group_ms[g] > 0)) continue;
      double ms = 0;
      if (retake_probe(fastest[g], retakes, &ms) && ms < group_ms[g]) group_ms[g] = ms;
    }
    group.calls_spent += retakes.calls_spent;
    keep = groups_within_margin(group_ms, best_probe_, s_.group_margin);
    const int stage = ++ranked_;
    std::vector<bool> goes_on(hi - lo, false);
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t i : groups[g].members)
        goes_on[i - lo] = keep[g] || static_cast<int>(i) == r_.baseline;
    for (Entry& e : pool_)  // representatives (and the heuristic's top) of the groups dropped leave the pool
      if (!goes_on[e.i - lo]) drop_probed(e, stage);
    sweep();
    for (std::size_t i = lo; i < hi; ++i) {
      if (first[i - lo]) {
        group.passed += !failed_or_wrong(i);
        group.kept += !failed_or_wrong(i) && goes_on[i - lo];
      } else {
        ++group.passed;
        group.kept += goes_on[i - lo];
        if (!goes_on[i - lo]) drop_unprobed(outcome(i), stage);
      }
    }
    r_.stages.push_back(group);
    // The other members of the groups kept, the fastest groups first: the cutoff tightens early.
    std::vector<std::size_t> order;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (keep[g]) order.push_back(g);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double x = group_ms[a] > 0 ? group_ms[a] : std::numeric_limits<double>::infinity();
      const double y = group_ms[b] > 0 ? group_ms[b] : std::numeric_limits<double>::infinity();
      return x < y;
    });
    ScreenStage probe{"probe", r_.probe_calls, 1};
    for (std::size_t g : order)
      for (std::size_t i : groups[g].members)
        if (!first[i - lo]) probe_candidate(i, probe);
    std::stable_sort(pool_.begin(), pool_.end(), [](const Entry& a, const Entry& b) { return a.i < b.i; });
    probe.entered = group.kept;  // the representatives kept entered it with their probes of the group stage
    probe.passed = probe.kept = pool_.size();
    r_.stages.push_back(probe);
  }

  // Probes candidate i once more (counted in `stage`), into *ms; its probe time becomes the faster of the two
  // (with a probe that is the screen's first sample, that one stands as its first sample: the retake replaces a
  // stalled one, which biases a retaken candidate low, toward keeping it). One cut over the cutoff that the retake
  // brings within it waits in the pool again, unverified. False (the candidate as it was) when it could not be set
  // or timed, or a stop was asked for.
  bool retake_probe(std::size_t i, ScreenStage& stage, double* ms) {
    if (stop_requested()) return false;  // the rest of the shape is dropped anyway
    CandidateOutcome& c = outcome(i);
    const std::string status = c.status, reason = c.reason;
    bool ok = false;
    s_.guarded(i, [&] {
      if (!set(i) || !sample(i, t_.probe_timer, t_.probe, ms)) return;
      stage.calls_spent += r_.probe_calls;
      ok = true;
    });
    if (!ok) {  // no news: the candidate stays as its first probe left it
      c.status = status;
      c.reason = reason;
      return false;
    }
    c.probe_ms = std::min(c.probe_ms, *ms);
    if (c.status == "cut") c.screen_ms = c.probe_ms * t_.scale;
    Entry* waiting = nullptr;
    for (Entry& e : pool_)
      if (e.i == i) waiting = &e;
    if (!waiting && c.status == "cut" && c.dropped_at == 0 && !(c.probe_ms > t_.cutoff * best_probe_)) {
      CandidateOutcome fresh;  // as probe_candidate leaves one that waits
      fresh.label = c.label;
      fresh.baseline = c.baseline;
      fresh.probe_ms = c.probe_ms;
      c = fresh;
      pool_.push_back(Entry{});
      waiting = &pool_.back();
      waiting->i = i;
    }
    if (waiting && t_.probe_is_screen) waiting->ms.assign(1, c.probe_ms);
    return true;
  }

  // A probed candidate of a group the group stage dropped, as a ranking drops it: its probe is its time.
  void drop_probed(Entry& e, int stage) {
    CandidateOutcome& c = outcome(e.i);
    c.status = e.verified ? "ok" : "cut";
    c.screen_ms = c.probe_ms * t_.scale;
    c.screen_samples = t_.probe_is_screen ? 1 : 0;
    c.dropped_at = stage;
    e.out = true;
  }
  // A member of a group the group stage dropped that was never probed: cut, with no time.
  static void drop_unprobed(CandidateOutcome& c, int stage) {
    if (!c.status.empty()) return;  // interrupted
    c.status = "cut";
    c.dropped_at = stage;
  }

  // The first ranking, on the probes already taken (the probe's noise band: fewer calls than a screen sample).
  void rank_on_probe() {
    if (ranked_pool() <= static_cast<std::size_t>(s_.rule.final_round)) return;
    std::vector<double> ms;
    for (const Entry& e : pool_) ms.push_back(outcome(e.i).probe_ms);
    const double band = stage_band(s_.rule, r_.probe_calls, r_.screen_calls, 1);
    r_.stages.back().kept = rank(ms, band, t_.probe_is_screen ? 1 : 0, t_.scale);
  }

  // A halving stage: every candidate left verified (when it was not) and sampled up to `samples`, then ranked
  // on the median of its samples. False when it dropped none.
  bool halving_stage(int samples) {
    ScreenStage stage{"halving", r_.screen_calls, samples};
    stage.entered = pool_.size();
    for (Entry& e : pool_) {
      if (interrupted(outcome(e.i))) {
        e.out = true;
        continue;
      }
      bool ok = false;
      s_.guarded(e.i, [&] { ok = set(e.i) && verify(e) && samples_up_to(e, static_cast<std::size_t>(samples), stage); });
      e.out = !ok;
    }
    sweep();
    stage.passed = pool_.size();
    std::vector<double> ms;
    for (const Entry& e : pool_) ms.push_back(compute_stats(e.ms).median);
    stage.kept = rank(ms, stage_band(s_.rule, r_.screen_calls, r_.screen_calls, samples), samples, 1.0);
    r_.stages.push_back(stage);
    return stage.kept < stage.passed;
  }

  // The candidates left, each verified (when it was not) and screened with `samples` samples: fresh ones when a
  // ranking chose them (their earlier samples are biased low by that choice), else counting the probe when it
  // was the screen's first sample, as without halving. Their medians are the contenders' screen times.
  void final_round() {
    ScreenStage stage{"final", r_.screen_calls, t_.samples};
    stage.entered = pool_.size();
    for (Entry& e : pool_) {
      CandidateOutcome& c = outcome(e.i);
      if (interrupted(c)) continue;
      if (ranked_) e.ms.clear();
      bool ok = false;
      s_.guarded(e.i, [&] {
        ok = set(e.i) && verify(e) && samples_up_to(e, static_cast<std::size_t>(t_.samples), stage);
      });
      if (!ok) continue;
      c.status = "ok";
      c.screen_samples = static_cast<int>(e.ms.size());
      c.screen_ms = compute_stats(e.ms).median;
      ++stage.passed;
    }
    stage.kept = stage.passed;
    r_.stages.push_back(stage);
  }

  const ShapeScreenSetup& s_;
  const ScreenTiming& t_;
  GemmTuneRecord& r_;
  std::vector<Entry> pool_;  // the candidates still in the screen, in list order
  int ranked_ = 0;           // rankings so far
  double best_probe_ = 0;    // the fastest probe of a verified candidate (here, or the bound it started from)
};

}  // namespace

double screen_shape(const ShapeScreenSetup& s, GemmTuneRecord& r, std::size_t lo, std::size_t hi) {
  if (!s.rule.on() || hi - lo <= static_cast<std::size_t>(s.rule.final_round)) return screen_in_one_pass(s, r, lo, hi);
  Halving h(s, r);
  h.run(lo, hi);
  return h.best_probe();
}

}  // namespace ab
