// GEMM candidate search: group plans by shape, gather candidates (always with the heuristic's first
// choice), verify and time each, keep the fastest.
#include "tune/gemm_search.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "core/blob_hex.hpp"
#include "core/errors.hpp"
#include "core/phase_trace.hpp"
#include "tune/candidate_trials.hpp"
#include "tune/plan_groups.hpp"
#include "tune/reduced_verifier.hpp"
#include "tune/shape_screen.hpp"
#include "tune/tune_summary.hpp"

namespace ab {

namespace {

// Candidates for a shape: the backend's list, with the heuristic's first choice put first (fetched on its
// own when the list lacks it, as an exhaustive list may) and duplicates dropped. `baseline` gets its index.
// An exhaustive search also takes the heuristic's top-N, first (`heuristic_top` says how many), so that an
// exhaustive search is never a weaker search than --search=heuristic: a capped list still holds them, and
// they are all re-measured (finalist_indices).
std::vector<GemmAlgo> candidate_list(Backend& be, GemmPlanId plan, const TuneOptions& opt, int* heuristic_top) {
  std::vector<GemmAlgo> raw = be.gemm().candidates(plan, opt.exhaustive ? opt.max_candidates : opt.top, opt.exhaustive);
  std::unordered_set<std::string> top_ids;
  if (opt.exhaustive) {
    std::vector<GemmAlgo> top = be.gemm().candidates(plan, opt.top, false);
    for (const GemmAlgo& a : top) top_ids.insert(gemm_algo_identity(a));
    raw.insert(raw.begin(), top.begin(), top.end());
  }
  std::vector<GemmAlgo> out;
  auto first = std::find_if(raw.begin(), raw.end(), [](const GemmAlgo& a) { return a.heuristic_first; });
  if (first != raw.end()) {
    out.push_back(*first);
  } else {
    std::vector<GemmAlgo> h = be.gemm().candidates(plan, 1, false);
    if (h.empty()) throw BackendError("the heuristic returned no algorithm");
    out.push_back(h.front());
    out.back().heuristic_first = true;
  }
  // A set of identities: an exhaustive list holds 10^4-10^5 candidates, and comparing each with every one
  // kept so far (what this did first) took minutes.
  std::unordered_set<std::string> seen = {gemm_algo_identity(out.front())};
  for (GemmAlgo& a : raw) {
    if (!seen.insert(gemm_algo_identity(a)).second) continue;
    a.heuristic_first = false;
    out.push_back(std::move(a));
  }
  // The top-N came first in `raw` and its first member (the heuristic's choice) is out[0]: its distinct
  // members are the first of `out`.
  *heuristic_top = static_cast<int>(top_ids.size());
  return out;
}

// A record for one shape of `st` on `p`, before its candidates are listed.
GemmTuneRecord new_record(const PlanGroup& g, const Strategy& st, const Problem& p) {
  GemmTuneRecord r;
  r.key = g.key;
  r.shape = g.shape;
  r.strategy = st.name();
  r.problem = p;
  r.plans = static_cast<int>(g.ids.size());
  return r;
}

// Lists the shape's candidates into r.algos; false (with a note) when the backend has none for it. A screening
// unit borrows the process's list (TuneOptions::listed: r.algos and the cached list are swapped, and
// return_listed swaps them back) instead of copying it: a non-batched shape lists 10^5 algorithms, whose copy
// and release took a fifth of a second per unit.
bool list_candidates(GemmSearchState& s, PlanRecorder& rec, const PlanGroup& g, const Strategy& st, const Problem& p,
                     GemmTuneRecord& r) {
  try {
    if (s.opt.listed) {
      auto it = s.opt.listed->find(g.key);
      if (it == s.opt.listed->end() || it->second.algos.empty()) {  // not listed, or a failed unit kept it
        ListedCandidates l;
        l.algos = candidate_list(rec, g.ids.front(), s.opt, &l.heuristic_top);
        it = s.opt.listed->insert_or_assign(g.key, std::move(l)).first;
      }
      if (s.opt.screen_range) r.algos.swap(it->second.algos);
      else r.algos = it->second.algos;
      r.heuristic_top = it->second.heuristic_top;
    } else {
      r.algos = candidate_list(rec, g.ids.front(), s.opt, &r.heuristic_top);
    }
    return true;
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    s.out.notes.push_back(fmt::format("gemm {} ({} / {}): no candidates: {}", g.key, p.label(), st.name(), e.what()));
    return false;
  }
}

// A shape decided before the search (tuned earlier in the run, or cached): its choice, for the reduced
// problem too.
using DecidedShapes = std::vector<std::pair<std::string, GemmAlgo>>;

// Puts every shape already decided at its choice, so the searched shapes are timed with the rest of the
// forward at its best; returns the shapes left to search.
std::vector<const PlanGroup*> apply_decided_shapes(GemmSearchState& s, PlanRecorder& rec,
                                                   const std::vector<PlanGroup>& groups, DecidedShapes* decided) {
  CacheEnvironment env = s.out.env;
  std::vector<const PlanGroup*> todo;
  for (const PlanGroup& g : groups) {
    if (s.opt.screen_range) {  // a screening unit: its one shape, nothing set
      if (g.key == s.opt.screen_range->key) todo.push_back(&g);
      continue;
    }
    if (s.opt.tuned_elsewhere.count(g.key)) {  // another unit of a split search tunes it
      s.out.reused_plans++;
      continue;
    }
    auto t = s.tuned.find(g.key);
    if (t != s.tuned.end()) {
      const GemmTuneRecord& r = s.out.gemm[t->second];
      if (r.best >= 0) {
        set_group(rec, g, r.algos[r.best], "tuned");
        decided->emplace_back(g.key, r.algos[r.best]);
      }
      s.out.reused_plans++;
      continue;
    }
    const GemmCacheEntry* c = s.opt.skip_cached ? s.opt.skip_cached->find_gemm(g.key, env) : nullptr;
    if (c) {
      try {
        set_group(rec, g, c->algo, "cache");
        decided->emplace_back(g.key, c->algo);
        s.out.cached_plans++;
        continue;
      } catch (const BackendError& e) {
        if (e.sticky) throw;
        s.out.notes.push_back(fmt::format("gemm {}: cached algorithm rejected ({}); re-tuning", g.key, e.what()));
      }
    }
    todo.push_back(&g);
  }
  return todo;
}

// The search of one shape: list, screen every candidate, re-measure the finalists, re-check the winner
// against the heuristic's choice, keep the best (or fall back to the heuristic's choice), add the record.
class ShapeSearch {
 public:
  ShapeSearch(GemmSearchState& s, PlanRecorder& rec, Strategy& st, const Problem& p, ProblemInputs& in,
              ReducedVerifier& reduced, const PlanGroup& g)
      : s_(s), rec_(rec), st_(st), p_(p), in_(in), reduced_(reduced), g_(g), r_(new_record(g, st, p)) {}

  void run() {
    auto t_enum = std::chrono::steady_clock::now();
    if (!list_candidates(s_, rec_, g_, st_, p_, r_)) return;
    r_.enumerate_s = seconds_since(t_enum);
    trace_phase(fmt::format("tune: gemm {}: {} candidates listed", g_.key, r_.algos.size()));
    record_own_calls();
    trace_phase(fmt::format("tune: gemm {}: own calls recorded", g_.key));
    verify_reduced_ = reduced_.covers(g_.key);
    r_.verified_on = verify_reduced_ ? reduced_.label() : p_.label();
    label_candidates();
    if (s_.opt.screen_range) {  // a screening unit: phase 1 on its range, the record as it stands
      const ScreenRange& range = *s_.opt.screen_range;
      if (range.count != r_.algos.size() || range.hi > r_.algos.size() || range.lo > range.hi)
        throw BackendError(fmt::format("the screening unit's range [{}, {}) of {} candidates does not fit the {} listed "
                                       "here for {}", range.lo, range.hi, range.count, r_.algos.size(), g_.key));
      screen(range.lo, range.hi);
      return_listed();
      s_.out.gemm.push_back(std::move(r_));
      return;
    }
    if (!take_screened()) screen(0, r_.algos.size());
    auto t_confirm = std::chrono::steady_clock::now();
    confirm_finalists();
    recheck_winner();
    r_.confirm_s = seconds_since(t_confirm);
    keep_result();
    s_.tuned[r_.key] = s_.out.gemm.size();
    s_.out.gemm.push_back(std::move(r_));
    if (s_.on_record) s_.on_record();
  }

 private:
  // The shape's own GEMM calls of one forward (one call for a batched strategy, one per head and page for
  // nested), replayed alone to screen candidates: the work an algorithm choice changes, without the rest of
  // the forward's time and noise.
  void record_own_calls() {
    rec_.record_calls(true);
    st_.run(rec_);
    rec_.memory().synchronize();
    rec_.record_calls(false);
    for (const GemmCall& c : rec_.calls())
      if (std::find(g_.ids.begin(), g_.ids.end(), c.plan) != g_.ids.end()) own_.push_back(c);
    r_.own_calls = static_cast<int>(own_.size());
    if (s_.opt.screen_calls > 0 && static_cast<int>(own_.size()) > s_.opt.screen_calls)
      own_.resize(static_cast<std::size_t>(s_.opt.screen_calls));  // nested: the first heads' calls
    r_.screen_calls = static_cast<int>(own_.size());
    const int probe = s_.opt.probe_calls > 0 ? s_.opt.probe_calls : r_.screen_calls;
    r_.probe_calls = s_.opt.screen_cutoff > 0 ? std::min(probe, r_.screen_calls) : 0;
  }

  // Runs one phase's work on candidate i, skipping a candidate that lost the device context before and
  // remembering the one that loses it now.
  void guarded(std::size_t i, const std::function<void()>& work) {
    std::string crash_id = "gemm:" + g_.key + "|" + gemm_algo_identity(r_.algos[i]);
    if (s_.crashed && s_.crashed->count(crash_id)) {
      r_.candidates[i].status = "failed";
      r_.candidates[i].reason = "lost the device context in an earlier attempt; skipped";
      return;
    }
    try {
      work();
    } catch (const BackendError& e) {
      if (e.sticky && s_.crashed) s_.crashed->insert(crash_id);
      throw;
    }
  }

  // A screening unit's borrowed list back to the process's cache (list_candidates); the record keeps its
  // candidates' outcomes, not the algorithms.
  void return_listed() {
    if (!s_.opt.listed) return;
    auto it = s_.opt.listed->find(g_.key);
    if (it != s_.opt.listed->end() && it->second.algos.empty()) it->second.algos.swap(r_.algos);
  }

  // Every candidate's label and baseline flag, and the record's baseline index.
  void label_candidates() {
    r_.candidates.resize(r_.algos.size());
    const std::optional<ScreenRange>& unit = s_.opt.screen_range;  // a unit labels its own range only
    for (std::size_t i = 0; i < r_.algos.size(); ++i) {
      if (!unit || (i >= unit->lo && i < unit->hi))
        r_.candidates[i].label = r_.algos[i].label.empty() ? "algo" : r_.algos[i].label;
      r_.candidates[i].baseline = r_.algos[i].heuristic_first;
      if (r_.algos[i].heuristic_first && r_.baseline < 0) r_.baseline = static_cast<int>(i);
    }
  }

  // Phase 1 done by the screening units of a split search (TuneOptions::screened): their outcomes, when
  // they cover this shape's list; false (with a note when they do not fit) to screen here.
  bool take_screened() {
    if (!s_.opt.screened) return false;
    auto it = s_.opt.screened->find(g_.key);
    if (it == s_.opt.screened->end()) return false;
    const ScreenedShape& done = it->second;
    if (done.candidates.size() != r_.candidates.size()) {
      s_.out.notes.push_back(fmt::format("gemm {}: the screening units listed {} candidates, this process {}; screened here",
                                         g_.key, done.candidates.size(), r_.candidates.size()));
      return false;
    }
    for (std::size_t i = 0; i < done.candidates.size(); ++i) {
      CandidateOutcome& c = r_.candidates[i];
      const CandidateOutcome& d = done.candidates[i];
      c.status = d.status.empty() ? "failed" : d.status;
      c.reason = d.status.empty() ? "not screened" : d.reason;
      c.screen_ms = d.screen_ms;
      c.screen_samples = d.screen_samples;
      c.dropped_at = d.dropped_at;
      c.warnings = d.warnings;
    }
    r_.verify_s += done.verify_s;
    r_.screen_s += done.screen_s;
    r_.stages = done.stages;
    return true;
  }

  // Phase 1: probe, verify and screen candidates [lo, hi) (tune/shape_screen.hpp).
  void screen(std::size_t lo, std::size_t hi) {
    auto verify = [&](const GemmAlgo& a) {
      return verify_reduced_ ? reduced_.check(g_.key, a) : in_.check_forward([&] { st_.run(rec_); });
    };
    Backend& inner = rec_.inner();
    auto replay = [&inner](const std::vector<GemmCall>& calls) {
      return [&inner, &calls] {
        for (const GemmCall& c : calls) inner.gemm().run(c.plan, c.a, c.b, c.c, c.alpha, c.beta);
      };
    };
    const std::vector<GemmCall> probe_calls(own_.begin(), own_.begin() + std::max(r_.probe_calls, 0));
    const bool probe_is_screen = probe_calls.size() == own_.size();
    QueuedScreen screen_timer(inner, !s_.opt.screen.hot);
    // The probe has its own timer when it replays fewer calls than the screen: it only ranks, so it runs with
    // L2 as the last probe left it (unless --probe_flush), saving a flush of twice the L2 per candidate.
    std::optional<QueuedScreen> probe_timer;
    if (!probe_is_screen) probe_timer.emplace(inner, !s_.opt.screen.hot && s_.opt.probe_flush);
    ScreenTiming t{probe_timer ? *probe_timer : screen_timer, screen_timer, replay(probe_calls), replay(own_)};
    t.probe_is_screen = probe_is_screen;
    t.scale = probe_calls.empty() ? 1 : static_cast<double>(own_.size()) / static_cast<double>(probe_calls.size());
    t.samples = s_.opt.screen.max_samples;
    t.cutoff = r_.probe_calls > 0 ? s_.opt.screen_cutoff : 0;
    ShapeScreenSetup setup{rec_, g_, t, s_.opt.halving, verify,
                           [this](std::size_t i, const std::function<void()>& work) { guarded(i, work); },
                           s_.opt.exhaustive ? s_.opt.group_margin : 0};
    std::map<std::string, double>* bounds = s_.opt.screen_range ? s_.opt.probe_bounds : nullptr;
    if (bounds && bounds->count(g_.key)) setup.probe_bound = bounds->at(g_.key);
    const double best = screen_shape(setup, r_, lo, hi);
    trace_phase(fmt::format("tune: gemm {}: [{}, {}) screened", g_.key, lo, hi));
    if (bounds && best > 0) (*bounds)[g_.key] = best;
  }

  // Phase 2: the heuristic's choice and the fastest screened candidates get the full measurement, and the
  // fastest of those wins. Re-measuring keeps the winner's time honest: the minimum of many short noisy
  // screens is biased low, an independent measurement of the chosen few is not.
  void confirm_finalists() {
    for (int i : finalist_indices(r_, s_.opt.finalists)) {
      guarded(static_cast<std::size_t>(i), [&] {
        confirm_candidate(rec_, g_, r_.algos[i], st_, in_, verify_reduced_, s_.opt.measure, r_.candidates[i]);
      });
      const CandidateOutcome& c = r_.candidates[i];
      if (c.status == "ok" && (r_.best < 0 || c.ms < r_.candidates[r_.best].ms)) r_.best = i;
    }
  }

  // Phase 3: the fastest of several noisy finalists is biased low too (by about a noise width for 5-12
  // finalists), so the winner and the heuristic's choice are measured again and those independent times
  // are the ones kept; a winner no faster than the heuristic's choice then gives way to it.
  void recheck_winner() {
    const int base = r_.baseline;
    if (!(r_.best >= 0 && base >= 0 && r_.best != base && r_.candidates[base].status == "ok")) return;
    const int winner = r_.best;
    for (int i : {winner, base}) {
      CandidateOutcome& c = r_.candidates[i];
      c.finalist_ms = c.ms;
      guarded(static_cast<std::size_t>(i), [&] {
        confirm_candidate(rec_, g_, r_.algos[i], st_, in_, false, s_.opt.measure, c);
      });
    }
    if (r_.candidates[winner].status != "ok" || r_.candidates[winner].ms >= r_.candidates[base].ms) r_.best = base;
  }

  // Sets the winner on the shape's plans and the reduced problem; with no winner, goes back to the
  // heuristic's choice so the strategy's later shapes still run, and notes it.
  void keep_result() {
    if (r_.best >= 0) {
      set_group(rec_, g_, r_.algos[r_.best], "tuned");
      reduced_.use(g_.key, r_.algos[r_.best], "tuned");
      if (s_.message) {
        s_.message(fmt::format("  gemm {}: {} candidates ({} failed, {} re-measured), best {} {:.4f} ms, gain {:.3f}x",
                               gemm_shape_label(g_.shape), r_.candidates.size(), r_.failed(), r_.finalists(),
                               r_.candidates[r_.best].label, r_.best_ms(), r_.gain()));
        s_.message("    screen: " + screen_stages_label(r_.stages));
      }
      return;
    }
    try {
      set_group(rec_, g_, r_.algos.front(), "heuristic");
      reduced_.use(g_.key, r_.algos.front(), "heuristic");
    } catch (const BackendError& e) {
      if (e.sticky) throw;
    }
    s_.out.notes.push_back(fmt::format("gemm {} ({} / {}): none of {} candidates passed (first: {})", g_.key,
                                       p_.label(), st_.name(), r_.candidates.size(),
                                       r_.candidates.empty() ? "-" : r_.candidates.front().reason));
  }

  GemmSearchState& s_;
  PlanRecorder& rec_;
  Strategy& st_;
  const Problem& p_;
  ProblemInputs& in_;
  ReducedVerifier& reduced_;
  const PlanGroup& g_;
  GemmTuneRecord r_;
  std::vector<GemmCall> own_;  // the shape's own calls of one forward, replayed by the screen
  bool verify_reduced_ = false;
};

}  // namespace

std::vector<int> finalist_indices(const GemmTuneRecord& r, int finalists) {
  // A cut candidate competes on its probe's time (scaled to the screen's calls): after a lucky fast probe
  // (one sample) the true winner may be cut, and the finalists' round must still be able to find it. One that
  // successive halving dropped does not: its time is from fewer samples than the final round's, and was not
  // fast enough to go on (the fastest of many one-sample times are the luckiest).
  auto timed = [&](std::size_t i) { return r.candidates[i].status == "ok" || r.candidates[i].status == "cut"; };
  std::vector<int> ok;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (timed(i) && r.candidates[i].dropped_at == 0 && static_cast<int>(i) != r.baseline) ok.push_back(static_cast<int>(i));
  std::stable_sort(ok.begin(), ok.end(),
                   [&](int a, int b) { return r.candidates[a].screen_ms < r.candidates[b].screen_ms; });
  if (finalists >= 0 && static_cast<int>(ok.size()) > finalists) ok.resize(static_cast<std::size_t>(finalists));
  if (r.baseline >= 0 && r.candidates[r.baseline].status == "ok") ok.insert(ok.begin(), r.baseline);
  // An exhaustive search re-measures the heuristic's top-N too: among 10^5 screened candidates the fastest
  // screens are the luckiest as much as the fastest, and a heuristic pick just behind them must not be lost.
  for (int i = 0; i < r.heuristic_top && i < static_cast<int>(r.candidates.size()); ++i)
    if (timed(static_cast<std::size_t>(i)) && std::find(ok.begin(), ok.end(), i) == ok.end()) ok.push_back(i);
  return ok;
}

std::string gemm_algo_identity(const GemmAlgo& a) {
  if (!a.blob.empty()) return blob_to_hex(a.blob);
  return a.label + "|" + a.attrs.dump();
}

void list_strategy_gemm_candidates(GemmSearchState& s, PlanRecorder& rec, Strategy& st, const Problem& p) {
  for (const PlanGroup& g : group_plans(rec, rec.plans())) {
    if (s.tuned.count(g.key)) {
      s.out.reused_plans++;
      continue;
    }
    GemmTuneRecord r = new_record(g, st, p);
    auto t0 = std::chrono::steady_clock::now();
    list_candidates(s, rec, g, st, p, r);
    r.enumerate_s = seconds_since(t0);
    for (std::size_t i = 0; i < r.algos.size(); ++i)
      if (r.algos[i].heuristic_first && r.baseline < 0) r.baseline = static_cast<int>(i);
    if (s.message)
      s.message(fmt::format("  gemm {}: {} candidates, listed in {:.1f}s", gemm_shape_label(g.shape), r.algos.size(),
                            r.enumerate_s));
    s.tuned[r.key] = s.out.gemm.size();
    s.out.gemm.push_back(std::move(r));
  }
}

void tune_strategy_gemms(GemmSearchState& s, PlanRecorder& rec, Strategy& st, const Problem& p, ProblemInputs& in) {
  std::vector<PlanGroup> groups = group_plans(rec, rec.plans());
  DecidedShapes decided;
  std::vector<const PlanGroup*> todo = apply_decided_shapes(s, rec, groups, &decided);
  if (todo.empty()) return;
  // Verification forwards on B=1 H=1 for the shapes found there (nested's), set up once per strategy.
  ReducedVerifier reduced(rec.inner(), st.name(), p, s.opt.strategy, s.opt.seed + 1);
  trace_phase(fmt::format("tune: {}: reduced verifier ready", st.name()));
  for (const auto& [key, algo] : decided) reduced.use(key, algo, "tuned");
  for (const PlanGroup* g : todo) ShapeSearch(s, rec, st, p, in, reduced, *g).run();
}

}  // namespace ab
