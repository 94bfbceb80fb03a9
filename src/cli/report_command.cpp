// `attnbench report FILE.json [--format=console|md|csv] [--output=FILE]`: render a stored report.
#include <memory>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "core/file_identity.hpp"
#include "report/printers.hpp"
#include "report/report_io.hpp"

namespace ab {

namespace {
struct ReportArgs {
  std::string file, format = "console", output;
};
}  // namespace

Command add_report_command(CLI::App& parent) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* app = parent.add_subcommand("report", "render a stored report as a console table, markdown or CSV");
  app->add_option("file", args->file, "report JSON written by attnbench --json (or scripts/peer_torch.py)")
      ->required();
  app->add_option("--format", args->format, "console (default), md (markdown for a PR or wiki), csv, or json (flat rows for scripts)");
  app->add_option("--output,-o", args->output, "write to FILE (atomically) instead of stdout");
  Command c;
  c.app = app;
  c.run = [args]() {
    check_format(args->format, "console|md|csv|json");
    check_outputs_distinct({{"--output", args->output}}, {{"the report", args->file}});
    Report report = read_report(args->file);
    emit_text(args->output, render_report(report, args->format));
    return 0;
  };
  return c;
}

}  // namespace ab
