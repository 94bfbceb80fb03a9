// Rendering a comparison: console table, markdown, CSV (one line per row, lone rows included) and JSON.
#include <algorithm>

#include <fmt/format.h>

#include "core/csv.hpp"
#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/text_table.hpp"
#include "measure/rounds.hpp"
#include "report/cells.hpp"
#include "report/compare.hpp"
#include "report/report_view.hpp"

namespace ab {

using nlohmann::json;

namespace {

bool is_regression(const CompareRow& r) { return r.verdict == Verdict::slower || r.verdict == Verdict::worse; }

std::string status_cell(const CompareRow& r) {
  return r.base.status == r.next.status ? r.base.status : r.base.status + " -> " + r.next.status;
}

// A side that stopped on a time or sample limit with its noise above target.
bool noise_unmet(const CompareRow& r) { return r.base.noise_met == 0 || r.next.noise_met == 0; }

// The noise column: ±k·u (the noise band), or "n<3" when a run had too few samples to know its noise;
// "~" after it when a side missed its noise target.
std::string noise_cell(const CompareResult& c, const CompareRow& r) {
  std::string mark = noise_unmet(r) ? "~" : "";
  if (std::isinf(r.noise)) return fmt::format("n<{}", kMinSamplesForNoise) + mark;
  return (std::isfinite(r.noise) ? "±" + cell_pct(c.options.noise_k * r.noise) : "-") + mark;
}

// The verdict column of the console and markdown tables: "*" after a verdict with a reason (the footnote).
std::string verdict_cell(const CompareRow& r) {
  return std::string(verdict_name(r.verdict)) + (r.verdict_reason.empty() ? "" : "*");
}

// The footnote of the rows marked "*": today only one-round rows.
std::string one_round_footnote(const CompareResult& c) {
  return fmt::format("* {} (a one-round change beyond {:g}x is still slower or faster)", one_round_note(),
                     c.options.one_round_allowance);
}

std::string summary_line(const CompareResult& c) {
  int one = c.one_round_ambiguous();
  return fmt::format("{} rows matched: {} slower, {} faster, {} same, {} ambiguous{}; status {} worse, {} better, "
                     "{} changed; {} missing, {} new",
                     c.rows.size(), c.count(Verdict::slower), c.count(Verdict::faster), c.count(Verdict::same),
                     c.count(Verdict::ambiguous), one ? fmt::format(" ({} of one round)", one) : "",
                     c.count(Verdict::worse), c.count(Verdict::better), c.count(Verdict::changed), c.missing.size(),
                     c.added.size());
}

std::string outcome_line(const CompareResult& c) {
  return c.regressed() ? "REGRESSION (exit 1)" : "no regression (exit 0)";
}

std::string rule_line(const CompareResult& c) {
  std::string s = fmt::format("threshold {}, noise factor k={:g}: slower/faster when |change| > max(threshold, k*u); "
                              "same when |change| and k*u are both within the threshold; else ambiguous",
                              cell_pct(c.options.threshold), c.options.noise_k);
  if (c.options.one_round_allowance > 1)
    s += fmt::format("; a row with one round on a side is slower/faster only beyond {:g}x", c.options.one_round_allowance);
  return s;
}

std::string side_line(const std::string& name, const Report& header) {
  return fmt::format("{} | {} | {}", name, device_line(header.device), tool_line(header.tool, header.created));
}

std::string lone_line(const LoneRow& l) {
  return fmt::format("{}  {}  {}{}", l.label, l.strategy, l.status,
                     std::isfinite(l.median_ms) ? " " + cell_ms(l.median_ms) + " ms" : "");
}

// At most kListMax lone rows are listed on the console; csv and json list them all.
constexpr std::size_t kListMax = 20;

std::string lone_list(const std::vector<LoneRow>& rows) {
  std::string o;
  for (std::size_t i = 0; i < rows.size() && i < kListMax; ++i) o += "  " + lone_line(rows[i]) + "\n";
  if (rows.size() > kListMax) o += fmt::format("  ... and {} more (--format=csv or json lists them all)\n", rows.size() - kListMax);
  return o;
}

std::string render_console(const CompareResult& c) {
  std::string o;
  o += "base: " + side_line(c.base_name, c.base_header) + "\n";
  o += "new:  " + side_line(c.new_name, c.new_header) + "\n";
  o += rule_line(c) + "\n";
  for (const std::string& w : c.warnings) o += "warning: " + w + "\n";
  std::size_t sw = 8;  // the strategy column: the longest name plus the "! " mark
  for (const CompareRow& r : c.rows) sw = std::max(sw, r.strategy.size());
  TextTable table({{"problem", Align::left, 7, true, 0},
                   {"strategy", Align::left, sw + 2, false, 2},
                   {"status", Align::left, 6, true, 1},
                   {"base ms", Align::right, 10, false, 1},
                   {"new ms", Align::right, 10, false, 1},
                   {"change", Align::right, 8, false, 1},
                   {"noise", Align::right, 8, false, 1},
                   {"verdict", Align::left, 0, false, 2}});
  table.set_rule_extra(6);
  std::string prev_label;
  for (const CompareRow& r : c.rows) {
    if (!prev_label.empty() && r.label != prev_label) table.add_break();
    table.add_row({r.label == prev_label ? "" : r.label, (is_regression(r) ? "! " : "  ") + r.strategy, status_cell(r),
                   cell_ms(r.base.median_ms), cell_ms(r.next.median_ms), cell_signed_pct(r.change), noise_cell(c, r),
                   verdict_cell(r)});
    prev_label = r.label;
  }
  o += "\n" + table.render();
  std::vector<const CompareRow*> changed;
  for (const CompareRow& r : c.rows)
    if (r.base.status != r.next.status) changed.push_back(&r);
  if (!changed.empty()) {
    o += fmt::format("\nstatus changes ({}):\n", changed.size());
    for (const CompareRow* r : changed)
      o += fmt::format("  {:<7} {}  {}: {} -> {}{}\n", verdict_name(r->verdict), r->label, r->strategy, r->base.status,
                       r->next.status, r->next.reason.empty() ? "" : " (" + r->next.reason + ")");
  }
  if (!c.missing.empty()) {
    o += fmt::format("\nmissing from the new run ({}):\n", c.missing.size()) + lone_list(c.missing);
  }
  if (!c.added.empty()) {
    o += fmt::format("\nnew in the new run ({}):\n", c.added.size()) + lone_list(c.added);
  }
  o += fmt::format("\n! marks a regression; change = (new - base) / base of the median time; noise = k*u, u = "
                   "sqrt(u_base^2 + u_new^2), each run's u the standard error of its median over rounds (>= {} rounds) "
                   "or its within-run noise; ~ a run missed its noise target\n", kMinRoundsForSpread);
  if (c.one_round_ambiguous() > 0) o += one_round_footnote(c) + "\n";
  o += summary_line(c) + "\n" + outcome_line(c) + "\n";
  return o;
}

std::string md_list(const std::vector<LoneRow>& rows) {
  std::string o;
  for (std::size_t i = 0; i < rows.size() && i < kListMax; ++i) o += "- " + md_escape(lone_line(rows[i])) + "\n";
  if (rows.size() > kListMax) o += fmt::format("- ... and {} more\n", rows.size() - kListMax);
  return o;
}

std::string render_markdown(const CompareResult& c) {
  std::string o = fmt::format("### attnbench compare: {}\n\n", c.regressed() ? "**REGRESSION**" : "no regression");
  o += "- base: " + md_escape(side_line(c.base_name, c.base_header)) + "\n";
  o += "- new: " + md_escape(side_line(c.new_name, c.new_header)) + "\n";
  o += "- " + md_escape(rule_line(c)) + "\n";
  o += "- " + summary_line(c) + "\n";
  for (const std::string& w : c.warnings) o += "\n> warning: " + md_escape(w) + "\n";
  o += "\n| problem | strategy | status | base ms | new ms | change | noise | verdict |\n";
  o += "|---|---|---|--:|--:|--:|--:|---|\n";
  std::string prev_label;
  for (const CompareRow& r : c.rows) {
    bool bad = is_regression(r);
    auto b = [&](const std::string& s) { return bad ? "**" + s + "**" : s; };
    o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                     r.label == prev_label ? "" : md_escape(r.label), b(md_escape(r.strategy)),
                     md_escape(status_cell(r)), cell_ms(r.base.median_ms), cell_ms(r.next.median_ms),
                     b(cell_signed_pct(r.change)),
                     noise_cell(c, r), b(md_escape(verdict_cell(r))));
    prev_label = r.label;
  }
  for (const CompareRow& r : c.rows)
    if (r.base.status != r.next.status && !r.next.reason.empty())
      o += fmt::format("\n- {} {}: {} -> {}: {}", md_escape(r.label), md_escape(r.strategy), r.base.status,
                       r.next.status, md_escape(r.next.reason));
  if (c.one_round_ambiguous() > 0) o += "\n\n\\" + md_escape(one_round_footnote(c));  // "\*": not a list item
  if (!c.missing.empty()) {
    o += fmt::format("\n\n**Missing from the new run ({}):**\n", c.missing.size()) + md_list(c.missing);
  }
  if (!c.added.empty()) {
    o += fmt::format("\n\n**New in the new run ({}):**\n", c.added.size()) + md_list(c.added);
  }
  return o + "\n";
}

// What compare's JSON says of a report: {"device", "tool", "created", "command"}.
json info_json(const Report& h) {
  json info = json::object();
  if (!h.device.empty()) info["device"] = h.device;
  info["tool"] = {{"name", h.tool.name}, {"version", h.tool.version}, {"git", h.tool.git}};
  if (!h.created.empty()) info["created"] = h.created;
  if (!h.command.empty()) info["command"] = h.command;
  return info;
}

std::string met_csv(int met) { return met < 0 ? "" : met ? "true" : "false"; }

// Compare's CSV columns after the problem's, in order; every line (matched, missing and new rows) names its
// cells, the others stay empty.
const char* const kCompareCsvColumns[] = {
    "strategy",        "base_status",     "new_status",     "base_ms",        "new_ms",     "change",
    "base_noise",      "new_noise",       "base_uncertainty", "new_uncertainty", "base_rounds", "new_rounds",
    "base_noise_met",  "new_noise_met",   "base_library_version", "new_library_version",
    "limit",           "verdict",         "reason",         "verdict_reason"};

// The problem's cells by column name.
std::vector<CsvWriter::Cell> problem_csv_named(const Problem& p) {
  std::vector<std::string> names = problem_csv_columns(), cells = problem_csv_cells(p);
  std::vector<CsvWriter::Cell> out;
  for (std::size_t i = 0; i < names.size(); ++i) out.push_back({names[i], cells[i]});
  return out;
}

std::string render_csv(const CompareResult& c) {
  std::vector<std::string> columns = problem_csv_columns();
  columns.insert(columns.end(), std::begin(kCompareCsvColumns), std::end(kCompareCsvColumns));
  CsvWriter csv(std::move(columns));
  auto add = [&](const Problem& p, std::vector<CsvWriter::Cell> cells) {
    std::vector<CsvWriter::Cell> line = problem_csv_named(p);
    line.insert(line.end(), cells.begin(), cells.end());
    csv.add_row(line);
  };
  for (const CompareRow& r : c.rows)
    add(r.problem, {{"strategy", r.strategy},
                    {"base_status", r.base.status},
                    {"new_status", r.next.status},
                    {"base_ms", csv_num(r.base.median_ms)},
                    {"new_ms", csv_num(r.next.median_ms)},
                    {"change", csv_num(r.change)},
                    {"base_noise", csv_num(r.base.noise)},
                    {"new_noise", csv_num(r.next.noise)},
                    {"base_uncertainty", csv_num(r.base.uncertainty)},
                    {"new_uncertainty", csv_num(r.next.uncertainty)},
                    {"base_rounds", std::to_string(r.base.rounds)},
                    {"new_rounds", std::to_string(r.next.rounds)},
                    {"base_noise_met", met_csv(r.base.noise_met)},
                    {"new_noise_met", met_csv(r.next.noise_met)},
                    {"base_library_version", r.base.library_version},
                    {"new_library_version", r.next.library_version},
                    {"limit", csv_num(r.limit)},
                    {"verdict", verdict_name(r.verdict)},
                    {"reason", r.next.reason},
                    {"verdict_reason", r.verdict_reason}});
  for (const LoneRow& l : c.missing)
    add(l.problem, {{"strategy", l.strategy}, {"base_status", l.status}, {"base_ms", csv_num(l.median_ms)},
                    {"verdict", "missing"}});
  for (const LoneRow& l : c.added)
    add(l.problem, {{"strategy", l.strategy}, {"new_status", l.status}, {"new_ms", csv_num(l.median_ms)},
                    {"verdict", "new"}});
  return csv.text();
}

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json lone_json(const LoneRow& l) {
  return {{"problem", problem_to_json(l.problem)}, {"label", problem_label(l.problem)}, {"strategy", l.strategy}, {"status", l.status}, {"median_ms", num_or_null(l.median_ms)}};
}

}  // namespace

json compare_to_json(const CompareResult& c) {
  json rows = json::array(), missing = json::array(), added = json::array();
  for (const CompareRow& r : c.rows) {
    auto side = [](const CompareSide& s) {
      json j{{"status", s.status},           {"reason", s.reason},
             {"median_ms", num_or_null(s.median_ms)}, {"noise", num_or_null(s.noise)},
             {"samples", s.samples},         {"rounds", s.rounds},
             {"uncertainty", num_or_null(s.uncertainty)}, {"sm_clock_mhz", s.sm_clock_mhz},
             {"clock_low", s.clock_low}};
      if (s.noise_met >= 0) j["noise_met"] = s.noise_met == 1;
      if (!s.library_version.empty()) j["library_version"] = s.library_version;
      return j;
    };
    rows.push_back({{"problem", problem_to_json(r.problem)}, {"label", problem_label(r.problem)}, {"strategy", r.strategy}, {"base", side(r.base)}, {"new", side(r.next)},
                    {"change", num_or_null(r.change)}, {"combined_noise", num_or_null(r.noise)},
                    {"limit", num_or_null(r.limit)}, {"verdict", verdict_name(r.verdict)}});
    if (!r.verdict_reason.empty()) rows.back()["verdict_reason"] = r.verdict_reason;
    if (r.library_changed()) rows.back()["library_changed"] = true;
  }
  for (const LoneRow& l : c.missing) missing.push_back(lone_json(l));
  for (const LoneRow& l : c.added) added.push_back(lone_json(l));
  json counts = json::object();
  for (Verdict v : {Verdict::faster, Verdict::slower, Verdict::same, Verdict::ambiguous, Verdict::worse,
                    Verdict::better, Verdict::changed, Verdict::not_applicable})
    counts[verdict_name(v)] = c.count(v);
  counts["ambiguous_one_round"] = c.one_round_ambiguous();
  counts["missing"] = c.missing.size();
  counts["new"] = c.added.size();
  return {{"schema", "attnbench.compare/1"},
          {"base", {{"file", c.base_name}, {"info", info_json(c.base_header)}}},
          {"new", {{"file", c.new_name}, {"info", info_json(c.new_header)}}},
          {"threshold", c.options.threshold},
          {"noise_k", c.options.noise_k},
          {"fail_on_missing", c.options.fail_on_missing},
          {"one_round_allowance", c.options.one_round_allowance},
          {"rule", "slower/faster when |change| > max(threshold, noise_k*u), u = sqrt(u_base^2+u_new^2); same when "
                   "|change| <= threshold and noise_k*u <= threshold; ambiguous otherwise; a row with one round on "
                   "a side is slower/faster only when new/base or base/new exceeds one_round_allowance (ambiguous "
                   "with a verdict_reason otherwise)"},
          {"warnings", c.warnings},
          {"rows", rows},
          {"missing", missing},
          {"new_rows", added},
          {"counts", counts},
          {"regressed", c.regressed()},
          {"exit_code", c.exit_code()}};
}

std::string render_compare(const CompareResult& c, const std::string& format) {
  if (format == "console") return render_console(c);
  if (format == "md" || format == "markdown") return render_markdown(c);
  if (format == "csv") return render_csv(c);
  if (format == "json") return compare_to_json(c).dump(2) + "\n";
  throw UsageError(fmt::format("--format: '{}' is not one of console, md, csv, json", format));
}

}  // namespace ab
