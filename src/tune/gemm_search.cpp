// GEMM candidate search: group plans by shape, gather candidates (always with the heuristic's first
// choice), verify and time each, keep the fastest.
#include "tune/gemm_search.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "core/blob_hex.hpp"
#include "core/errors.hpp"
#include "tune/reduced_verifier.hpp"
#include "tune/tune_summary.hpp"

namespace ab {

namespace {

struct PlanGroup {
  std::string key;
  GemmShape shape;
  std::vector<GemmPlanId> ids;
};

std::vector<PlanGroup> group_plans(Backend& be, const std::vector<GemmPlanId>& ids) {
  std::vector<PlanGroup> groups;
  for (GemmPlanId id : ids) {
    GemmShape shape = be.gemm().plan_shape(id);
    std::string key = shape.key();
    PlanGroup* g = nullptr;
    for (auto& x : groups)
      if (x.key == key) g = &x;
    if (!g) {
      groups.push_back({key, shape, {}});
      g = &groups.back();
    }
    g->ids.push_back(id);
  }
  return groups;
}

void set_group(Backend& be, const PlanGroup& g, const GemmAlgo& a, const std::string& source) {
  for (GemmPlanId id : g.ids) be.gemm().set_algo(id, a, source);
}

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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Phase 1 for one candidate: set it, verify a whole forward against the reference (`verify`: of the
// problem, or of its reduced B=1 H=1 copy), then screen it with the short measurement (opt.screen) of
// `gemm_alone`, the shape's own GEMM calls of one forward. One sample first: a candidate over `cutoff`
// times the fastest screened so far (`best_screen_ms`, 0 for none) keeps that sample as its screen time and
// is not sampled further. Failures and wrong answers are recorded here and never timed.
CandidateOutcome screen_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a,
                                  const std::function<std::string(const GemmAlgo&)>& verify,
                                  const MeasureSettings& screen, double cutoff, double best_screen_ms,
                                  const std::function<void()>& gemm_alone, GemmTuneRecord& r) {
  CandidateOutcome c;
  c.label = a.label.empty() ? "algo" : a.label;
  c.baseline = a.heuristic_first;
  try {
    set_group(rec, g, a, "tuned");
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    c.status = "failed";
    c.reason = fmt::format("cannot be set: {}", e.what());
    return c;
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    std::string bad = verify(a);
    r.verify_s += seconds_since(t0);
    if (!bad.empty()) {
      c.status = "incorrect";
      c.reason = bad;
      return c;
    }
    t0 = std::chrono::steady_clock::now();
    MeasureSettings first = screen;
    first.min_samples = first.max_samples = 1;
    Measurement m = measure_forward(rec.inner(), gemm_alone, first);
    c.screen_samples = 1;
    if (screen.max_samples > 1 && !(cutoff > 0 && best_screen_ms > 0 && m.gpu.median > cutoff * best_screen_ms)) {
      m = measure_forward(rec.inner(), gemm_alone, screen);
      c.screen_samples = static_cast<int>(m.gpu.samples);
    }
    r.screen_s += seconds_since(t0);
    c.status = "ok";
    c.screen_ms = m.gpu.median;
    c.warnings = m.warnings;
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    c.status = "failed";
    c.reason = e.what();
  }
  return c;
}

// Phase 2 for one finalist: set it again, verify the problem's own forward when phase 1 verified a reduced
// copy (`verify_here`), and take the full measurement (opt.measure).
void confirm_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a, Strategy& st, ProblemInputs& in,
                       bool verify_here, const MeasureSettings& ms, CandidateOutcome& c) {
  c.finalist = true;
  try {
    set_group(rec, g, a, "tuned");
    if (verify_here) {
      std::string bad = in.check_forward([&] { st.run(rec); });
      if (!bad.empty()) {
        c.status = "incorrect";
        c.reason = "on the tuned problem (it passed on B=1 H=1): " + bad;
        return;
      }
    }
    Measurement m = measure_forward(rec.inner(), [&] { st.run(rec); }, ms);
    c.ms = m.gpu.median;
    c.noise = m.gpu.noise;
    for (auto& w : m.warnings) c.warnings.push_back(std::move(w));
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    c.status = "failed";
    c.reason = fmt::format("failed when re-measured: {}", e.what());
  }
}

}  // namespace

std::vector<int> finalist_indices(const GemmTuneRecord& r, int finalists) {
  std::vector<int> ok;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].status == "ok" && static_cast<int>(i) != r.baseline) ok.push_back(static_cast<int>(i));
  std::stable_sort(ok.begin(), ok.end(),
                   [&](int a, int b) { return r.candidates[a].screen_ms < r.candidates[b].screen_ms; });
  if (finalists >= 0 && static_cast<int>(ok.size()) > finalists) ok.resize(static_cast<std::size_t>(finalists));
  if (r.baseline >= 0 && r.candidates[r.baseline].status == "ok") ok.insert(ok.begin(), r.baseline);
  // An exhaustive search re-measures the heuristic's top-N too: among 10^5 screened candidates the fastest
  // screens are the luckiest as much as the fastest, and a heuristic pick just behind them must not be lost.
  for (int i = 0; i < r.heuristic_top && i < static_cast<int>(r.candidates.size()); ++i)
    if (r.candidates[i].status == "ok" && std::find(ok.begin(), ok.end(), i) == ok.end()) ok.push_back(i);
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
    GemmTuneRecord r;
    r.key = g.key;
    r.shape = g.shape;
    r.strategy = st.name();
    r.problem = p;
    r.plans = static_cast<int>(g.ids.size());
    auto t0 = std::chrono::steady_clock::now();
    try {
      r.algos = candidate_list(rec, g.ids.front(), s.opt, &r.heuristic_top);
    } catch (const BackendError& e) {
      if (e.sticky) throw;
      s.out.notes.push_back(fmt::format("gemm {} ({} / {}): no candidates: {}", g.key, p.label(), st.name(), e.what()));
    }
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
  CacheEnvironment env = s.out.env;
  // First put every shape already decided at its choice, so the searched shapes are timed with the rest
  // of the forward at its best.
  std::vector<const PlanGroup*> todo;
  std::vector<std::pair<std::string, GemmAlgo>> decided;  // shape key -> choice, for the reduced problem too
  for (const PlanGroup& g : groups) {
    auto t = s.tuned.find(g.key);
    if (t != s.tuned.end()) {
      const GemmTuneRecord& r = s.out.gemm[t->second];
      if (r.best >= 0) {
        set_group(rec, g, r.algos[r.best], "tuned");
        decided.emplace_back(g.key, r.algos[r.best]);
      }
      s.out.reused_plans++;
      continue;
    }
    const GemmCacheEntry* c = s.opt.skip_cached ? s.opt.skip_cached->find_gemm(g.key, env) : nullptr;
    if (c) {
      try {
        set_group(rec, g, c->algo, "cache");
        decided.emplace_back(g.key, c->algo);
        s.out.cached_plans++;
        continue;
      } catch (const BackendError& e) {
        if (e.sticky) throw;
        s.out.notes.push_back(fmt::format("gemm {}: cached algorithm rejected ({}); re-tuning", g.key, e.what()));
      }
    }
    todo.push_back(&g);
  }

  // Verification forwards on B=1 H=1 for the shapes found there (nested's), set up once per strategy.
  std::unique_ptr<ReducedVerifier> reduced;
  if (!todo.empty()) {
    reduced = std::make_unique<ReducedVerifier>(rec.inner(), st.name(), p, s.opt.strategy, s.opt.seed + 1);
    for (const auto& [key, algo] : decided) reduced->use(key, algo, "tuned");
  }

  for (const PlanGroup* g : todo) {
    GemmTuneRecord r;
    r.key = g->key;
    r.shape = g->shape;
    r.strategy = st.name();
    r.problem = p;
    r.plans = static_cast<int>(g->ids.size());
    auto t_enum = std::chrono::steady_clock::now();
    try {
      r.algos = candidate_list(rec, g->ids.front(), s.opt, &r.heuristic_top);
    } catch (const BackendError& e) {
      if (e.sticky) throw;
      s.out.notes.push_back(fmt::format("gemm {} ({} / {}): no candidates: {}", g->key, p.label(), st.name(), e.what()));
      continue;
    }
    r.enumerate_s = seconds_since(t_enum);
    // The shape's own GEMM calls of one forward (one call for a batched strategy, one per head and page
    // for nested), replayed alone to screen candidates: the work an algorithm choice changes, without the
    // rest of the forward's time and noise.
    rec.record_calls(true);
    st.run(rec);
    rec.memory().synchronize();
    rec.record_calls(false);
    std::vector<GemmCall> own;
    for (const GemmCall& c : rec.calls())
      if (std::find(g->ids.begin(), g->ids.end(), c.plan) != g->ids.end()) own.push_back(c);
    r.own_calls = static_cast<int>(own.size());
    if (s.opt.screen_calls > 0 && static_cast<int>(own.size()) > s.opt.screen_calls)
      own.resize(static_cast<std::size_t>(s.opt.screen_calls));  // nested: the first heads' calls
    r.screen_calls = static_cast<int>(own.size());
    const bool verify_reduced = reduced->covers(g->key);
    r.verified_on = verify_reduced ? reduced->label() : p.label();
    auto verify = [&](const GemmAlgo& a) {
      return verify_reduced ? reduced->check(g->key, a) : in.check_forward([&] { st.run(rec); });
    };
    Backend& inner = rec.inner();
    auto gemm_alone = [&inner, &own] {
      for (const GemmCall& c : own) inner.gemm().run(c.plan, c.a, c.b, c.c, c.alpha, c.beta);
    };
    // Runs one phase's work on candidate i, skipping a candidate that lost the device context before and
    // remembering the one that loses it now.
    auto guarded = [&](std::size_t i, const std::function<void()>& work) {
      std::string crash_id = "gemm:" + g->key + "|" + gemm_algo_identity(r.algos[i]);
      if (s.crashed && s.crashed->count(crash_id)) {
        r.candidates[i].status = "failed";
        r.candidates[i].reason = "lost the device context in an earlier attempt; skipped";
        return;
      }
      try {
        work();
      } catch (const BackendError& e) {
        if (e.sticky && s.crashed) s.crashed->insert(crash_id);
        throw;
      }
    };
    // Phase 1: verify and screen every candidate.
    r.candidates.resize(r.algos.size());
    double best_screen_ms = 0;
    for (std::size_t i = 0; i < r.algos.size(); ++i) {
      r.candidates[i].label = r.algos[i].label.empty() ? "algo" : r.algos[i].label;
      r.candidates[i].baseline = r.algos[i].heuristic_first;
      if (r.algos[i].heuristic_first && r.baseline < 0) r.baseline = static_cast<int>(i);
      guarded(i, [&] {
        r.candidates[i] = screen_candidate(rec, *g, r.algos[i], verify, s.opt.screen, s.opt.screen_cutoff,
                                           best_screen_ms, gemm_alone, r);
      });
      const CandidateOutcome& c = r.candidates[i];
      if (c.status == "ok" && c.screen_samples > 1 && (best_screen_ms == 0 || c.screen_ms < best_screen_ms))
        best_screen_ms = c.screen_ms;
    }
    // Phase 2: the heuristic's choice and the fastest screened candidates get the full measurement, and the
    // fastest of those wins. Re-measuring keeps the winner's time honest: the minimum of many short noisy
    // screens is biased low, an independent measurement of the chosen few is not.
    auto t_confirm = std::chrono::steady_clock::now();
    for (int i : finalist_indices(r, s.opt.finalists)) {
      guarded(static_cast<std::size_t>(i), [&] {
        confirm_candidate(rec, *g, r.algos[i], st, in, verify_reduced, s.opt.measure, r.candidates[i]);
      });
      const CandidateOutcome& c = r.candidates[i];
      if (c.status == "ok" && (r.best < 0 || c.ms < r.candidates[r.best].ms)) r.best = i;
    }
    // Phase 3: the fastest of several noisy finalists is biased low too (by about a noise width for 5-12
    // finalists), so the winner and the heuristic's choice are measured again and those independent times
    // are the ones kept; a winner no faster than the heuristic's choice then gives way to it.
    const int base = r.baseline;
    if (r.best >= 0 && base >= 0 && r.best != base && r.candidates[base].status == "ok") {
      const int winner = r.best;
      for (int i : {winner, base}) {
        CandidateOutcome& c = r.candidates[i];
        c.finalist_ms = c.ms;
        guarded(static_cast<std::size_t>(i), [&] {
          confirm_candidate(rec, *g, r.algos[i], st, in, false, s.opt.measure, c);
        });
      }
      if (r.candidates[winner].status != "ok" || r.candidates[winner].ms >= r.candidates[base].ms) r.best = base;
    }
    r.confirm_s = seconds_since(t_confirm);
    if (r.best >= 0) {
      set_group(rec, *g, r.algos[r.best], "tuned");
      reduced->use(g->key, r.algos[r.best], "tuned");
      if (s.message)
        s.message(fmt::format("  gemm {}: {} candidates ({} failed, {} re-measured), best {} {:.4f} ms, gain {:.3f}x",
                              gemm_shape_label(g->shape), r.candidates.size(), r.failed(), r.finalists(),
                              r.candidates[r.best].label, r.best_ms(), r.gain()));
    } else {
      // Nothing correct: go back to the heuristic's choice so the strategy's later shapes still run.
      try {
        set_group(rec, *g, r.algos.front(), "heuristic");
        reduced->use(g->key, r.algos.front(), "heuristic");
      } catch (const BackendError& e) {
        if (e.sticky) throw;
      }
      s.out.notes.push_back(fmt::format("gemm {} ({} / {}): none of {} candidates passed (first: {})", g->key,
                                        p.label(), st.name(), r.candidates.size(),
                                        r.candidates.empty() ? "-" : r.candidates.front().reason));
    }
    s.tuned[r.key] = s.out.gemm.size();
    s.out.gemm.push_back(std::move(r));
    if (s.on_record) s.on_record();
  }
}

}  // namespace ab
