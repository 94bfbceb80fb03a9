// The one output grammar of every command: the console form goes to stdout; --json, --md and --csv (those
// a command writes) each take a file, or '-' for stdout in place of the console form. Files are written
// (atomically, core/file_writer.hpp) before anything goes to stdout, so that a reader that stops early
// (`attnbench run ... | head -3`) cannot cost the report. The old spellings of report, compare, list and
// grid (--format=F with --output/-o FILE) are still read, with a note naming the new one.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace ab {

struct ReportOutputs {
  std::string json, md, csv;  // "" none, "-" stdout, else a file
  // True when one of them goes to stdout (the console table then stays off stdout).
  bool to_stdout() const { return json == "-" || md == "-" || csv == "-"; }
};

// Adds --json, --md and --csv; `what` names what they write ("the report", "the tune summary").
void add_report_output_flags(CLI::App& app, ReportOutputs& out, const std::string& what, const std::string& json_help);
// Adds --json alone (list, grid).
void add_json_output_flag(CLI::App& app, ReportOutputs& out, const std::string& json_help);

// The old spellings, hidden from --help.
struct LegacyOutput {
  std::string format, output;
};
void add_legacy_output_flags(CLI::App& app, LegacyOutput& legacy);
// Where the console form goes: stdout (file ""), a file (the old -o FILE), or nowhere (the old --format=md
// wrote only the markdown).
struct ConsoleTarget {
  bool show = true;
  std::string file;
};
// Reads the old spellings into `out` with a note on stderr: --format=F [-o FILE] is --F=FILE (or --F=-), and
// then the console form is not shown, as before; console/text is the console form, to FILE when -o names one.
// `forms`: what this command writes besides the console ("json|md|csv", "json"). Throws UsageError on another
// format, or on an old and a new spelling of one output given together.
ConsoleTarget apply_legacy_output(const LegacyOutput& legacy, ReportOutputs& out, const std::string& forms,
                                  const std::string& command);
// The console form to its target, unless an output went to stdout in its place.
void emit_console(const ConsoleTarget& target, const ReportOutputs& out, const std::string& text);
// Before any work: each file can be written, and at most one of them is '-'. Throws UsageError.
void check_report_outputs(const ReportOutputs& out);
// Renders each format asked for (render("json" | "md" | "csv")), writes the files, then the one '-' to stdout.
// Throws UsageError when a file cannot be written; nothing reaches stdout before every file is written.
void write_report_outputs(const ReportOutputs& out, const std::function<std::string(const std::string&)>& render);

}  // namespace ab
