// `attnbench report FILE.json [--json=F] [--md=F] [--csv=F]`: render a stored report (the console table to
// stdout; each other form to its file, or to stdout for '-'). The old --format=F [-o FILE] still reads.
#include <memory>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/report_outputs.hpp"
#include "core/file_identity.hpp"
#include "report/printers.hpp"
#include "report/report_io.hpp"

namespace ab {

namespace {
struct ReportArgs {
  std::string file;
  ReportOutputs outputs;
  LegacyOutput legacy;
};
}  // namespace

Command add_report_command(CLI::App& parent) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* app = parent.add_subcommand("report", "render a stored report as a console table, markdown, CSV or flat JSON");
  app->add_option("file", args->file, "report JSON written by attnbench --json (or scripts/peer_torch.py)")
      ->required();
  add_report_output_flags(*app, args->outputs, "the report",
                          "write the report's flat rows (attnbench.rows/1: label, key, cache key and every column)");
  add_legacy_output_flags(*app, args->legacy);
  Command c;
  c.app = app;
  c.run = [args]() {
    ReportOutputs& out = args->outputs;
    const ConsoleTarget console = apply_legacy_output(args->legacy, out, "json|md|csv", "report");
    check_report_outputs(out);
    check_outputs_distinct({{"--json", out.json}, {"--md", out.md}, {"--csv", out.csv}, {"--output", console.file}},
                           {{"the report", args->file}});
    Report report = read_report(args->file);
    write_report_outputs(out, [&report](const std::string& format) { return render_report(report, format); });
    emit_console(console, out, render_report(report, "console"));
    return 0;
  };
  return c;
}

}  // namespace ab
