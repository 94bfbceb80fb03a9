// The tune summary's rows (one definition of its columns) and their JSON, markdown and CSV renderings.
#include "tune/tune_summary_formats.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/csv.hpp"
#include "tune/screen_halving.hpp"
#include "tune/tune_summary.hpp"

namespace ab {

namespace {

// One summary row; a time of 0 means none.
struct SummaryRow {
  std::string kind;  // gemm | fused
  std::string what;  // the GEMM shape label or the fused problem's label
  std::string strategy;
  int ok = 0, cut = 0, candidates = 0, finalists = 0;  // ok: verified and screened; cut: after the probe
  double baseline_ms = 0, best_ms = 0, gain = 0;
  std::string baseline, best;  // labels of the heuristic's choice (default tile) and the winner ("" none passed)
  std::vector<ScreenStage> stages;  // GEMM shapes: the screen's stages (tune/shape_screen.hpp)
  const FusedTuneRecord* fused = nullptr;  // fused problems: every tile tried (JSON only)
};

const char* const kColumns[] = {"kind", "what", "strategy", "ok", "cut", "candidates", "finalists", "baseline_ms",
                                "best_ms", "gain", "baseline", "best", "stages"};

std::string label_at(const GemmTuneRecord& r, int i) {
  const CandidateOutcome* c = candidate_at(r.candidates, i);
  return c ? c->label : "";
}
std::string label_at(const FusedTuneRecord& r, int i) { return r.tile_label(i); }

std::vector<SummaryRow> summary_rows(const TuneOutcome& out) {
  std::vector<SummaryRow> rows;
  for (const GemmTuneRecord& r : out.gemm)
    rows.push_back({"gemm", gemm_shape_label(r.shape), r.strategy,
                    static_cast<int>(r.candidates.size()) - r.failed() - r.cut(), r.cut(), static_cast<int>(r.candidates.size()), r.finalists(), r.baseline_ms(), r.best_ms(), r.gain(),
                    label_at(r, r.baseline), label_at(r, r.best), r.stages});
  for (const FusedTuneRecord& r : out.fused)
    rows.push_back({"fused", r.problem.label(), "fused", static_cast<int>(r.candidates.size()) - r.failed(), 0,
                    static_cast<int>(r.candidates.size()), 0, r.baseline_ms(), r.best_ms(), r.gain(),
                    label_at(r, r.baseline), label_at(r, r.best), {}, &r});
  return rows;
}

std::string num(double v) { return v > 0 && std::isfinite(v) ? fmt::format("{}", v) : ""; }

std::vector<std::string> cells(const SummaryRow& r) {
  return {r.kind, r.what, r.strategy, std::to_string(r.ok), std::to_string(r.cut), std::to_string(r.candidates), std::to_string(r.finalists),
          num(r.baseline_ms), num(r.best_ms), num(r.gain), r.baseline, r.best, screen_stages_cell(r.stages)};
}

std::string md_cell(const std::string& s) {
  std::string e;
  for (char c : s) e += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return e.empty() ? "-" : e;
}

// Through the one CSV writer (core/csv.hpp); cells(r) gives every column of kColumns in order.
std::string to_csv(const std::vector<SummaryRow>& rows) {
  CsvWriter csv(std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
  for (const SummaryRow& r : rows) csv.add_ordered_row(cells(r));
  return csv.text();
}

std::string to_markdown(const TuneOutcome& out, const std::vector<SummaryRow>& rows) {
  std::string s = fmt::format("### attnbench tune on {}\n\n", md_cell(out.env.describe()));
  s += fmt::format("{} GEMM shape(s) and {} fused problem(s) in {:.1f}s{}\n\n", out.gemm.size(), out.fused.size(),
                   out.wall_s, out.dry_run ? " (dry run: nothing timed)" : "");
  s += "|";
  for (const char* c : kColumns) s += fmt::format(" {} |", c);
  s += "\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|---|\n";
  for (const SummaryRow& r : rows) {
    s += "|";
    for (const std::string& c : cells(r)) s += " " + md_cell(c) + " |";
    s += "\n";
  }
  for (const std::string& n : out.notes) s += "\n> note: " + md_cell(n) + "\n";
  return s;
}

nlohmann::json json_number(double v) { return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
nlohmann::json json_text(const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); }

// A fused problem's tiles in the order tried (the default first): name, status, time, noise and reason each,
// so a reader sees how far every tile is from the winner, not only the winner; a dry run's listed tiles with
// the status "listed". [] for a GEMM shape.
nlohmann::json tiles_to_json(const FusedTuneRecord* r) {
  nlohmann::json list = nlohmann::json::array();
  if (!r) return list;
  for (const CandidateOutcome& c : r->candidates)
    list.push_back({{"tile", c.label}, {"default", c.baseline}, {"status", c.status}, {"ms", json_number(c.ms)},
                    {"noise", c.status == "ok" ? nlohmann::json(c.noise) : nlohmann::json(nullptr)},
                    {"reason", json_text(c.reason)}});
  if (r->candidates.empty())
    for (std::size_t i = 0; i < r->tiles.size(); ++i)
      list.push_back({{"tile", r->tiles[i].name()}, {"default", static_cast<int>(i) == r->baseline}, {"status", "listed"},
                      {"ms", nullptr}, {"noise", nullptr}, {"reason", nullptr}});
  return list;
}

std::string to_json_text(const TuneOutcome& out, const std::vector<SummaryRow>& rows) {
  auto number = json_number;
  auto text = json_text;
  nlohmann::json list = nlohmann::json::array();
  for (const SummaryRow& r : rows)
    list.push_back({{"kind", r.kind}, {"what", r.what}, {"strategy", r.strategy}, {"ok", r.ok},
                    {"cut", r.cut}, {"candidates", r.candidates}, {"finalists", r.finalists}, {"baseline_ms", number(r.baseline_ms)},
                    {"best_ms", number(r.best_ms)}, {"gain", number(r.gain)}, {"baseline", text(r.baseline)},
                    {"best", text(r.best)}, {"stages", screen_stages_to_json(r.stages)}, {"tiles", tiles_to_json(r.fused)}});
  nlohmann::json doc = {{"schema", kTuneSummarySchema},
                        {"environment", out.env.describe()},
                        {"dry_run", out.dry_run},
                        {"wall_s", out.wall_s},
                        {"failed_strategies", out.failed_strategies},
                        {"rows", list},
                        {"notes", out.notes}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string render_tune_summary(const TuneOutcome& out, const std::string& format) {
  std::vector<SummaryRow> rows = summary_rows(out);
  if (format == "json") return to_json_text(out, rows);
  if (format == "md") return to_markdown(out, rows);
  if (format == "csv") return to_csv(rows);
  throw std::invalid_argument("tune summary format '" + format + "'");
}

}  // namespace ab
