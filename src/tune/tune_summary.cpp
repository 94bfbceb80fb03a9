// Formatting of the tune summary table and gain statistics.
#include "tune/tune_summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text_table.hpp"
#include "tune/candidate_groups.hpp"
#include "tune/screen_halving.hpp"

namespace ab {

std::string gemm_shape_label(const GemmShape& s) {
  std::string batch = s.mode == BatchMode::single ? "" : fmt::format(" {} x{}", batch_mode_name(s.mode), s.batch);
  return fmt::format("m{} n{} k{} {} {}>{}{}", s.m, s.n, s.k, s.b_trans ? "NT" : "NN", dtype_name(s.a_type),
                     dtype_name(s.c_type), batch);
}

std::string screen_stages_label(const std::vector<ScreenStage>& stages) {
  if (stages.empty()) return "not screened";
  std::string s;
  std::int64_t calls = 0;
  bool halved = false, grouped = false;
  auto count = [](int n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  for (const ScreenStage& st : stages) {
    calls += st.calls_spent;
    if (!s.empty()) s += "; ";
    if (st.kind == "group") {
      const std::int64_t probed = st.calls > 0 ? st.calls_spent / st.calls : 0;
      s += fmt::format("groups ({}) {} -> {} probes of representatives -> {} in the groups within the margin",
                       count(st.calls, "call"), st.entered, probed, st.kept);
      grouped = true;
      halved = halved || st.kept != st.entered;
    } else if (st.kind == "probe") {
      s += fmt::format("probe ({}) {} -> {} within the cutoff", count(st.calls, "call"), st.entered, st.passed);
      if (st.kept != st.passed) s += fmt::format(" -> {}", st.kept);
      halved = halved || st.kept != st.passed;
    } else if (st.kind == "halving") {
      s += fmt::format("{} ({}) {} -> {}", count(st.samples, "sample"), count(st.calls, "call"), st.entered, st.kept);
      halved = true;
    } else {
      s += fmt::format("final {} x {} ({}): {} kept", st.entered, count(st.samples, "sample"), count(st.calls, "call"),
                       st.kept);
    }
  }
  s += fmt::format("; {} GEMM calls", calls);
  const std::int64_t unhalved = unhalved_screen_calls(stages);
  if (halved && unhalved > 0)
    s += fmt::format(", {:.0f}% of the {} a screen without {}halving takes", 100.0 * static_cast<double>(calls) / unhalved,
                     unhalved, grouped ? "grouping or " : "");
  return s;
}

std::string screen_stages_cell(const std::vector<ScreenStage>& stages) {
  std::string s;
  for (const ScreenStage& st : stages) s += fmt::format("{}{}", s.empty() ? "" : ">", st.entered);
  return s;
}

GainStats gain_stats(const std::vector<double>& gains_in) {
  GainStats g;
  std::vector<double> v;
  for (double x : gains_in)
    if (x > 0) v.push_back(x);
  if (v.empty()) return g;
  std::sort(v.begin(), v.end());
  g.count = static_cast<int>(v.size());
  g.min = v.front();
  g.max = v.back();
  g.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  double logs = 0;
  for (double x : v) {
    logs += std::log(x);
    g.improved += x > 1.02;
  }
  g.geomean = std::exp(logs / static_cast<double>(v.size()));
  return g;
}

namespace {

std::string ms_cell(double ms) { return ms > 0 ? fmt::format("{:.4f}", ms) : "-"; }
std::string gain_cell(double g) { return g > 0 ? fmt::format("{:.3f}x", g) : "-"; }

// First column left-aligned, the rest right-aligned (numbers), two spaces apart, each as wide as it needs.
std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::vector<TableColumn> cols;
  for (std::size_t c = 0; c < head.size(); ++c)
    cols.push_back(TableColumn{head[c], c == 0 ? Align::left : Align::right, 0, true, 2});
  TextTable t(std::move(cols));
  for (const auto& r : rows) t.add_row(r);
  return t.render();
}

std::string stats_line(const char* what, const GainStats& g) {
  if (!g.count) return fmt::format("{} gain: no measured baseline\n", what);
  return fmt::format("{} gain over {}: min {:.3f}x  median {:.3f}x  geomean {:.3f}x  max {:.3f}x  ({} of {} > 1.02x)\n",
                     what, g.count, g.min, g.median, g.geomean, g.max, g.improved, g.count);
}

}  // namespace

namespace {

// --dry_run: what a search would try, per GEMM shape and fused problem.
std::string format_dry_run(const TuneOutcome& out) {
  std::string s;
  if (!out.gemm.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::size_t total = 0;
    std::size_t bases = 0;
    for (const GemmTuneRecord& r : out.gemm) {
      const std::size_t groups = group_candidates(r.algos, 0, r.algos.size()).size();
      rows.push_back({gemm_shape_label(r.shape), r.strategy, fmt::format("{}", r.algos.size()), fmt::format("{}", groups),
                      fmt::format("{:.1f}", r.enumerate_s), r.baseline >= 0 ? r.algos[r.baseline].label : "-"});
      total += r.algos.size();
      bases += groups;
    }
    s += table({"GEMM shape", "strategy", "candidates", "base groups", "listed in s", "heuristic's choice"}, rows);
    s += fmt::format("{} candidates over {} GEMM shapes; {} base groups (an exhaustive search's grouped probe takes "
                     "one representative of each first)\n", total, out.gemm.size(), bases);
  }
  if (!out.fused.empty()) {
    if (!s.empty()) s += "\n";
    std::vector<std::vector<std::string>> rows;
    for (const FusedTuneRecord& r : out.fused) {
      std::string names;
      for (const FusedTile& t : r.tiles) names += (names.empty() ? "" : " ") + t.name();
      rows.push_back({r.problem.label(), fmt::format("{}", r.tiles.size()), names});
    }
    s += table({"fused problem", "tiles", "tiles that can implement it"}, rows);
  }
  if (out.gemm.empty() && out.fused.empty()) s += "nothing to tune\n";
  s += fmt::format("dry run: listed in {:.1f}s on {}; nothing was timed and no cache was written\n", out.wall_s,
                   out.env.describe());
  for (const auto& n : out.notes) s += "  " + n + "\n";
  return s;
}

}  // namespace

namespace {

// The GEMM table, its gain statistics and where the search spent its time.
std::string gemm_section(const TuneOutcome& out) {
  std::string s;
  std::vector<std::vector<std::string>> rows;
  std::vector<double> gains;
  for (const GemmTuneRecord& r : out.gemm) {
    rows.push_back({gemm_shape_label(r.shape), r.strategy,
                    fmt::format("{}/{}/{}", r.candidates.size() - r.failed() - r.cut(), r.cut(), r.candidates.size()),
                    fmt::format("{}", r.finalists()),
                    ms_cell(r.baseline_ms()), ms_cell(r.best_ms()), gain_cell(r.gain()),
                    r.best >= 0 ? r.candidates[r.best].label : "none passed"});
    gains.push_back(r.gain());
  }
  s += table({"GEMM shape", "tuned in", "ok/cut/cands", "re-measured", "heuristic ms", "best ms", "gain", "best algo"}, rows);
  s += stats_line("GEMM", gain_stats(gains));
  double en = 0, ve = 0, sc = 0, co = 0;
  std::size_t cands = 0, cut = 0;
  for (const GemmTuneRecord& r : out.gemm) {
    en += r.enumerate_s;
    ve += r.verify_s;
    sc += r.screen_s;
    co += r.confirm_s;
    cands += r.candidates.size();
    cut += static_cast<std::size_t>(r.cut());
  }
  s += fmt::format("GEMM search time: listing {:.1f}s, verifying {:.1f}s, screening {:.1f}s, re-measuring {:.1f}s "
                   "({} candidates, {} of them cut after their probe: over the cutoff, not among the fastest, or in "
                   "a group whose representative was over the margin)\n",
                   en, ve, sc, co, cands, cut);
  s += "(times are whole forwards of the strategy named, with this GEMM switched: every candidate is probed on\n"
       " the shape's first GEMM calls (at most --probe_calls; an exhaustive search probes one representative per\n"
       " base configuration first, then the variants of the bases within --group_margin of the fastest only);\n"
       " those within --screen_cutoff of the fastest so far are screened on the shape's own GEMM calls (at most\n"
       " --screen_calls) by successive halving: each stage keeps the fastest --halving_keep of its candidates and\n"
       " any within its noise band (at most --halving_band_limit times as many), and takes one more sample of\n"
       " each, down to --halving_final, screened with\n"
       " --screen_samples fresh samples; a candidate is verified by a forward (of B=1 H=1 where that has the same\n"
       " GEMM shape, as nested's) before its first screen sample; the heuristic's choice and the fastest screened\n"
       " are verified on the problem itself and re-measured as whole forwards, and the winner is the fastest)\n";
  s += "screen stages (candidates in -> going on):\n";
  for (const GemmTuneRecord& r : out.gemm)
    s += fmt::format("  {} ({}): {}\n", gemm_shape_label(r.shape), r.strategy, screen_stages_label(r.stages));
  return s;
}

// The fused-tile table and its gain statistics.
std::string fused_section(const TuneOutcome& out) {
  std::string s;
  std::vector<std::vector<std::string>> rows;
  std::vector<double> gains;
  for (const FusedTuneRecord& r : out.fused) {
    rows.push_back({r.problem.label(), fmt::format("{}/{}", r.candidates.size() - r.failed(), r.candidates.size()),
                    ms_cell(r.baseline_ms()), ms_cell(r.best_ms()), gain_cell(r.gain()),
                    r.best >= 0 ? r.candidates[r.best].label : "none passed"});
    gains.push_back(r.gain());
  }
  s += table({"fused problem", "ok/tiles", "default ms", "best ms", "gain", "best tile"}, rows);
  s += stats_line("fused", gain_stats(gains));
  return s;
}

// The distinct measurement warnings (at most five) and the notes.
std::string warnings_and_notes(const TuneOutcome& out) {
  std::string s;
  std::vector<std::string> warnings;
  auto collect = [&](const std::vector<CandidateOutcome>& cs) {
    for (const auto& c : cs)
      for (const auto& w : c.warnings)
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  };
  for (const auto& r : out.gemm) collect(r.candidates);
  for (const auto& r : out.fused) collect(r.candidates);
  if (!warnings.empty()) {
    s += fmt::format("{} distinct measurement warning(s):\n", warnings.size());
    for (std::size_t i = 0; i < warnings.size() && i < 5; ++i) s += "  " + warnings[i] + "\n";
    if (warnings.size() > 5) s += fmt::format("  ... and {} more\n", warnings.size() - 5);
  }
  if (!out.notes.empty()) {
    s += fmt::format("{} note(s):\n", out.notes.size());
    for (const auto& n : out.notes) s += "  " + n + "\n";
  }
  return s;
}

}  // namespace

std::string format_tune_summary(const TuneOutcome& out) {
  if (out.dry_run) return format_dry_run(out);
  std::string s;
  if (!out.gemm.empty()) s += gemm_section(out);
  if (!out.fused.empty()) {
    if (!s.empty()) s += "\n";
    s += fused_section(out);
  }
  if (out.gemm.empty() && out.fused.empty()) s += "nothing was tuned\n";
  s += fmt::format("tuned {} GEMM shapes and {} fused problems in {:.1f}s on {}", out.gemm.size(), out.fused.size(),
                   out.wall_s, out.env.describe());
  if (out.reused_plans || out.cached_plans)
    s += fmt::format(" ({} plan groups reused a shape tuned earlier, {} served by the cache)", out.reused_plans,
                     out.cached_plans);
  s += "\n";
  return s + warnings_and_notes(out);
}

}  // namespace ab
