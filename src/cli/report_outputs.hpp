// The nvbench-style output flags of run and tune: --json, --md and --csv, each a file or '-' for stdout.
// Files are written (atomically, core/file_writer.hpp) before anything goes to stdout, so that a reader
// that stops early (`attnbench run ... | head -3`) cannot cost the report.
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
// Before any work: each file can be written, and at most one of them is '-'. Throws UsageError.
void check_report_outputs(const ReportOutputs& out);
// Renders each format asked for (render("json" | "md" | "csv")), writes the files, then the one '-' to stdout.
// Throws UsageError when a file cannot be written; nothing reaches stdout before every file is written.
void write_report_outputs(const ReportOutputs& out, const std::function<std::string(const std::string&)>& render);

}  // namespace ab
