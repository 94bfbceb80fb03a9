// The two trials of a GEMM candidate: phase 1 (set, probe, verify, screen) and phase 2 (set, verify on the tuned
// problem when needed, full measurement). A sticky BackendError propagates; others are recorded.
#include "tune/candidate_trials.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Phase 1 (see the header).
CandidateOutcome screen_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a,
                                  const std::function<std::string(const GemmAlgo&)>& verify, const ScreenTiming& t,
                                  double best_probe_ms, GemmTuneRecord& r) {
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
    std::vector<double> ms;
    if (t.cutoff > 0) {
      auto t0 = std::chrono::steady_clock::now();
      c.probe_ms = t.probe_timer.sample(t.probe);
      r.screen_s += seconds_since(t0);
      if (best_probe_ms > 0 && c.probe_ms > t.cutoff * best_probe_ms) {
        c.status = "cut";  // no reason string: 10^5 of them would fill the screening units' files
        c.screen_ms = c.probe_ms * t.scale;
        c.screen_samples = t.probe_is_screen ? 1 : 0;
        return c;
      }
      if (t.probe_is_screen) ms.push_back(c.probe_ms);
    }
    auto t0 = std::chrono::steady_clock::now();
    std::string bad = verify(a);
    r.verify_s += seconds_since(t0);
    if (!bad.empty()) {
      c.status = "incorrect";
      c.reason = bad;
      return c;
    }
    t0 = std::chrono::steady_clock::now();
    while (static_cast<int>(ms.size()) < t.samples) ms.push_back(t.screen_timer.sample(t.screen));
    r.screen_s += seconds_since(t0);
    c.status = "ok";
    c.screen_samples = static_cast<int>(ms.size());
    c.screen_ms = compute_stats(ms).median;
  } catch (const BackendError& e) {
    if (e.sticky) throw;
    c.status = "failed";
    c.reason = e.what();
  }
  return c;
}

// Phase 2 (see the header).
void confirm_candidate(PlanRecorder& rec, const PlanGroup& g, const GemmAlgo& a, Strategy& st, ProblemInputs& in,
                       bool verify_here, const MeasureSettings& ms, CandidateOutcome& c) {
  c.finalist = true;
  const bool cut = c.status == "cut";  // never verified: phase 1 cut it after its probe
  try {
    set_group(rec, g, a, "tuned");
    if (verify_here || cut) {
      std::string bad = in.check_forward([&] { st.run(rec); });
      if (!bad.empty()) {
        c.status = "incorrect";
        c.reason = std::string(cut ? "when verified as a finalist (it was cut after its probe): "
                                   : "on the tuned problem (it passed on B=1 H=1): ") + bad;
        return;
      }
      c.status = "ok";
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

}  // namespace ab
