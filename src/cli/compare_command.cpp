// `attnbench compare BASE.json NEW.json`: the CI perf gate (exit 0 no regression, 1 regression, 2 unusable input).
// The exit code is CompareResult::exit_code(): 1 when a row is slower or worse (or missing, with
// --fail_on_missing); ambiguous rows, the one-round ones included (report/compare.hpp, kOneRoundAllowance),
// never fail.
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/report_outputs.hpp"
#include "core/file_identity.hpp"
#include "core/errors.hpp"
#include "measure/rounds.hpp"
#include "report/compare.hpp"
#include "report/report_io.hpp"

namespace ab {

namespace {

struct CompareArgs {
  std::string base, next, threshold;
  ReportOutputs outputs;
  LegacyOutput legacy;
  double noise_k = 2.0;
  bool ignore_device = false, fail_on_missing = false;
};

// "5%" -> 0.05, "0.05" -> 0.05. A bare number must be a fraction below 1, so "5" is refused, not read as 500%.
double parse_threshold(const std::string& text) {
  std::size_t pos = 0;
  double v = NAN;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    pos = 0;
  }
  std::string rest = pos ? text.substr(pos) : text;
  bool pct = rest == "%";
  if (pos == 0 || !(rest.empty() || pct) || !std::isfinite(v) || v < 0)
    throw UsageError(fmt::format("--threshold: '{}' is not a percentage (5%) or a fraction (0.05)", text));
  if (pct) return v / 100;
  if (v >= 1) throw UsageError(fmt::format("--threshold: '{}' would be {:g}%; write {}% or {:g}", text, v * 100, text, v / 100));
  return v;
}

}  // namespace

Command add_compare_command(CLI::App& parent) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* app = parent.add_subcommand(
      "compare",
      fmt::format("compare two reports row by row (problem, strategy); exit 0: no regression (ambiguous rows never "
                  "fail; a row with one round on a side is slower/faster only beyond {:g}x, run both with --rounds>={} "
                  "to judge smaller changes), 1: a row got slower or its status got worse, 2: unusable input",
                  kOneRoundAllowance, kMinRoundsForSpread));
  app->add_option("base", a->base, "baseline report JSON")->required();
  app->add_option("new", a->next, "new report JSON")->required();
  app->add_option("--threshold", a->threshold,
                  fmt::format("smallest relative change of the median that counts, e.g. 5% or 0.05 (default {:g}%)",
                              kDefaultThreshold * 100));
  app->add_option("--noise_k,--noise-k", a->noise_k,
                  "a change must also exceed k*sqrt(u_base^2 + u_new^2), u each run's uncertainty of its median, to be "
                  "faster/slower (default 2)");
  app->add_flag("--ignore_device,--ignore-device", a->ignore_device, "compare reports from different devices");
  app->add_flag("--fail_on_missing,--fail-on-missing", a->fail_on_missing,
                "a baseline row missing from the new report is a regression (exit 1)");
  add_report_output_flags(*app, a->outputs, "the comparison", "write the comparison (attnbench.compare/1)");
  add_legacy_output_flags(*app, a->legacy);
  Command c;
  c.app = app;
  c.run = [a]() {
    ReportOutputs& out = a->outputs;
    ConsoleTarget console = apply_legacy_output(a->legacy, out, "json|md|csv", "compare");
    std::string console_file;  // the old `-o FILE` (console form): the table went to FILE and to stdout
    if (!a->legacy.output.empty()) {
      if (console.show) console_file = console.file;
      console = {};
    }
    check_report_outputs(out);
    check_outputs_distinct({{"--json", out.json}, {"--md", out.md}, {"--csv", out.csv}, {"--output", console_file}},
                           {{"the base report", a->base}, {"the new report", a->next}});
    CompareOptions opt;
    if (!a->threshold.empty()) opt.threshold = parse_threshold(a->threshold);
    if (!(a->noise_k >= 0) || !std::isfinite(a->noise_k))
      throw UsageError(fmt::format("--noise_k: {} must be zero or positive", a->noise_k));
    opt.noise_k = a->noise_k;
    opt.ignore_device = a->ignore_device;
    opt.fail_on_missing = a->fail_on_missing;
    Report base = read_report(a->base);
    Report next = read_report(a->next);
    CompareResult result = compare_reports(base, next, opt, a->base, a->next);
    write_report_outputs(out, [&result](const std::string& format) { return render_compare(result, format); });
    if (!console_file.empty()) emit_text(console_file, render_compare(result, "console"));
    emit_console(console, out, render_compare(result, "console"));
    return result.exit_code();
  };
  return c;
}

}  // namespace ab
