// --json/--md/--csv for run and tune: files first (atomic), then stdout.
#include "cli/report_outputs.hpp"

#include <fmt/format.h>

#include "cli/output_file.hpp"
#include "core/errors.hpp"
#include "core/file_writer.hpp"

namespace ab {

namespace {
struct Output {
  const char* format;
  const std::string* path;
};
}  // namespace

void add_report_output_flags(CLI::App& app, ReportOutputs& out, const std::string& what, const std::string& json_help) {
  app.add_option("--json", out.json, json_help + " to FILE, or '-' for stdout");
  app.add_option("--md", out.md, "write " + what + " as markdown to FILE, or '-' for stdout");
  app.add_option("--csv", out.csv, "write " + what + " as CSV (one line per row, every column) to FILE, or '-' for stdout");
}

void check_report_outputs(const ReportOutputs& out) {
  const Output all[] = {{"json", &out.json}, {"md", &out.md}, {"csv", &out.csv}};
  std::string first_stdout;
  for (const Output& o : all) {
    if (o.path->empty()) continue;
    if (*o.path == "-") {
      if (!first_stdout.empty())
        throw UsageError(fmt::format("--{}=- and --{}=-: only one output can go to stdout; write the other to a file",
                                     first_stdout, o.format));
      first_stdout = o.format;
      continue;
    }
    check_writable(*o.path);
  }
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      if (!all[a].path->empty() && *all[a].path != "-" && *all[a].path == *all[b].path)
        throw UsageError(fmt::format("--{} and --{} both write '{}'", all[a].format, all[b].format, *all[a].path));
}

void write_report_outputs(const ReportOutputs& out, const std::function<std::string(const std::string&)>& render) {
  const Output all[] = {{"json", &out.json}, {"md", &out.md}, {"csv", &out.csv}};
  std::string for_stdout;
  for (const Output& o : all) {
    if (o.path->empty()) continue;
    if (*o.path == "-") for_stdout = render(o.format);
    else write_file_atomic(*o.path, render(o.format));
  }
  if (out.to_stdout()) emit_text("", for_stdout);
}

}  // namespace ab
