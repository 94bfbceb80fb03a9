// --json/--md/--csv for run and tune: files first (atomic), then stdout.
#include "cli/report_outputs.hpp"

#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command_notes.hpp"
#include "cli/output_file.hpp"
#include "core/errors.hpp"
#include "core/file_writer.hpp"

namespace ab {

namespace {
struct Output {
  const char* format;
  const std::string* path;
};

std::vector<std::string> split_forms(const std::string& forms) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t bar = forms.find('|', start);
    out.push_back(forms.substr(start, bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}
}  // namespace

void add_report_output_flags(CLI::App& app, ReportOutputs& out, const std::string& what, const std::string& json_help) {
  app.add_option("--json", out.json, json_help + " to FILE, or '-' for stdout");
  app.add_option("--md", out.md, "write " + what + " as markdown to FILE, or '-' for stdout");
  app.add_option("--csv", out.csv, "write " + what + " as CSV (one line per row, every column) to FILE, or '-' for stdout");
}

void add_json_output_flag(CLI::App& app, ReportOutputs& out, const std::string& json_help) {
  app.add_option("--json", out.json, json_help + " to FILE, or '-' for stdout");
}

void add_legacy_output_flags(CLI::App& app, LegacyOutput& legacy) {
  app.add_option("--format", legacy.format)->group("");
  app.add_option("--output,-o", legacy.output)->group("");
}

ConsoleTarget apply_legacy_output(const LegacyOutput& legacy, ReportOutputs& out, const std::string& forms,
                                  const std::string& command) {
  if (legacy.format.empty() && legacy.output.empty()) return {};
  const std::string format = legacy.format.empty() ? "console" : legacy.format;
  const bool console = format == "console" || format == "text";
  std::string* target = format == "json" ? &out.json : format == "md" ? &out.md : format == "csv" ? &out.csv : nullptr;
  const bool offered = console || (target && ("|" + forms + "|").find("|" + format + "|") != std::string::npos);
  if (!offered)
    throw UsageError(fmt::format("{}: --format={}: this command writes the console form{}", command, format,
                                 forms.empty() ? "" : fmt::format(", or --{}=FILE", fmt::join(split_forms(forms), "=FILE, --"))));
  const std::string file = legacy.output.empty() ? "-" : legacy.output;
  if (console) {
    defer_note(fmt::format("--format={}{} is the old spelling: the console form is the default{}", format,
                           legacy.output.empty() ? "" : " -o FILE", legacy.output.empty() ? "" : " (shell: > FILE)"));
    return {true, legacy.output};
  }
  if (!target->empty())
    throw UsageError(fmt::format("{}: --format={} and --{} both ask for the {} output; keep --{}", command, format, format,
                                 format, format));
  *target = file;
  defer_note(fmt::format("--format={}{} is the old spelling of --{}={}", format, legacy.output.empty() ? "" : " -o FILE",
                         format, legacy.output.empty() ? "-" : "FILE"));
  return {false, ""};
}

void emit_console(const ConsoleTarget& target, const ReportOutputs& out, const std::string& text) {
  if (target.show && !out.to_stdout()) emit_text(target.file, text);
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
