// The console printer: an aligned fmt table, one block per problem, '*' on the fastest ok row.
#include <algorithm>

#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/printers.hpp"

namespace ab {

// Widths of the numeric columns, right-aligned: median ms, noise, vs best, TFLOP/s, GB/s, launches (at least;
// widened to the longest cell), rel-err.
static constexpr int kW[] = {10, 7, 8, 8, 8, 9, 9};
static constexpr int kStatusW = 11;

void ConsolePrinter::do_begin(const nlohmann::json& report, const std::vector<ProblemGroup>& groups) {
  label_width_ = std::string("problem").size();
  strategy_width_ = std::string("strategy").size();
  launches_width_ = kW[5];
  for (const ProblemGroup& g : groups) {
    label_width_ = std::max(label_width_, g.label.size());
    for (const RowView& r : g.rows) {
      strategy_width_ = std::max(strategy_width_, r.strategy.size());
      launches_width_ = std::max(launches_width_, cell_launches(r).size() + 1);
      any_peer_ = any_peer_ || r.peer;
    }
  }
  strategy_width_ += 2;  // the "* " mark
  if (report.contains("warnings") && report["warnings"].is_array())
    for (const auto& w : report["warnings"])
      if (w.is_string()) warnings_.push_back(w.get<std::string>());

  out_ += fmt::format("{} | {}\n", device_line(report), tool_line(report));
  std::string settings = settings_line(report);
  if (!settings.empty()) out_ += settings + "\n";
  out_ += fmt::format("{:<{}}  {:<{}} {:<{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}\n", "problem",
                      label_width_, "strategy", strategy_width_, "status", kStatusW, "median ms", kW[0], "noise",
                      kW[1], "vs best", kW[2], "TFLOP/s", kW[3], "GB/s", kW[4], "launches", launches_width_, "rel-err", kW[6]);
  std::size_t total = label_width_ + 2 + strategy_width_ + 1 + kStatusW;
  for (int w : kW) total += 1 + w;
  total += launches_width_ - kW[5];
  out_ += std::string(total, '-') + "\n";
  first_group_ = true;
}

void ConsolePrinter::do_group(const ProblemGroup& group) {
  (void)group;
  if (!first_group_) out_ += "\n";
  first_group_ = false;
}

void ConsolePrinter::do_row(const ProblemGroup& group, const RowView& r) {
  bool first = &r == &group.rows.front();
  bool fastest = group.fastest >= 0 && &r == &group.rows[group.fastest];
  bool fastest_own = group.fastest_own >= 0 && &r == &group.rows[group.fastest_own];
  std::string strategy = std::string(fastest ? "* " : fastest_own ? "+ " : "  ") + r.strategy;
  out_ += fmt::format("{:<{}}  {:<{}} {:<{}}", first ? group.label : "", label_width_, strategy, strategy_width_,
                      r.status, kStatusW);
  if (r.timed()) {
    out_ += fmt::format(" {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}", cell_median(r), kW[0],
                        cell_noise(r), kW[1], cell_ratio(r.median_ms / group.best_ms()), kW[2],
                        cell_rate(r.tflops), kW[3], cell_rate(r.gbps), kW[4], cell_launches(r), launches_width_,
                        cell_rel_err(r), kW[6]);
  } else {
    out_ += " " + cell_reason(r);
  }
  // Trailing spaces from padding are noise in logs and diffs.
  while (!out_.empty() && out_.back() == ' ') out_.pop_back();
  out_ += "\n";
}

void ConsolePrinter::do_end() {
  out_ += fmt::format(
      "\n* fastest ok row of its problem; vs best = median / fastest median; noise = stdev / mean (~ above its target:\n"
      "  a time or sample limit stopped it); @ the SM clock was below 80% of its maximum;\n"
      "  launches = measured/expected kernels per forward (! mismatch, ^ extra split-K reductions, ? not measured); rel-err = verify rel L2 "
      "error (! failed){}\n",
      any_peer_ ? ";\n  peer:* rows are PyTorch SDPA timed by scripts/peer_torch.py; + fastest attnbench strategy when a "
                  "peer is faster"
                : "");
  if (show_warnings_)
    for (const std::string& w : warnings_) out_ += "warning: " + w + "\n";
}

}  // namespace ab
