// `attnbench merge OUT.json IN.json...`: shard reports into one report, or tune caches into one cache
// (orchestrate/merge.hpp); every input read and checked before OUT is written, atomically.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/command_notes.hpp"
#include "cli/commands.hpp"
#include "orchestrate/fresh_process.hpp"
#include "orchestrate/merge.hpp"
#include "core/errors.hpp"
#include "core/file_identity.hpp"
#include "core/file_writer.hpp"
#include "core/json_document.hpp"
#include "core/json_file.hpp"
#include "run/run_report.hpp"
#include "tune/heuristic_cache.hpp"

namespace ab {

namespace {

struct MergeArgs {
  std::string output;               // --json=OUT
  std::vector<std::string> inputs;  // the positional paths (the old spelling: OUT first, when --json is not given)
  std::string on_conflict = "refuse";
  bool quiet = false;
};

// OUT must be new or an earlier merge result: never one of the inputs, never a shard's own report.
void check_output(const MergeArgs& a) {
  for (const std::string& in : a.inputs)
    if (same_file(a.output, in))
      throw UsageError(fmt::format("merge: the output '{}' is also an input", a.output));
  check_writable(a.output);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(a.output, ec)) return;
  try {
    nlohmann::json doc = read_json_file(a.output);
    if (doc.is_object() && doc.contains("shard"))
      throw UsageError(fmt::format("merge: the output '{}' is a shard's report; name a new file for --json", a.output));
  } catch (const UsageError& e) {
    if (std::string(e.what()).rfind("merge:", 0) == 0) throw;
  }
}

int merge_main(const MergeArgs& a, const std::string& command) {
  check_output(a);
  std::vector<MergeInput> inputs;
  std::string schema;
  for (const std::string& path : a.inputs) {
    nlohmann::json doc = read_json_file(path);
    std::string s = doc.is_object() && doc.contains("schema") && doc["schema"].is_string() ? doc["schema"].get<std::string>() : "";
    if (s != kReportSchema && s != kCacheSchema)
      throw UsageError(fmt::format("merge: '{}' is neither a report ({}) nor a heuristic cache ({})", path, kReportSchema,
                                   kCacheSchema));
    if (!schema.empty() && s != schema)
      throw UsageError(fmt::format("merge: '{}' is {} but '{}' is {}: reports and caches do not merge", path, s,
                                   a.inputs.front(), schema));
    schema = s;
    inputs.push_back({path, std::move(doc)});
  }
  std::vector<std::string> notes;
  nlohmann::json out = schema == kReportSchema ? merge_reports(inputs, command, &notes)
                                               : merge_caches(inputs, a.on_conflict == "fastest", &notes);
  write_json_atomic(a.output, out);
  if (!a.quiet) {
    for (const std::string& n : notes) std::fprintf(stderr, "attnbench merge: note: %s\n", n.c_str());
    if (schema == kReportSchema)
      std::printf("merged %zu rows from %zu report(s) into %s\n", out["results"].size(), inputs.size(), a.output.c_str());
    else
      std::printf("merged %zu GEMM and %zu fused entries from %zu cache(s) into %s\n", out.value("gemm", nlohmann::json::array()).size(),
                  out.value("fused", nlohmann::json::array()).size(), inputs.size(), a.output.c_str());
  }
  return 0;
}

}  // namespace

Command add_merge_command(CLI::App& parent) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* app = parent.add_subcommand(
      "merge", "merge shard reports into one report, or tune caches into one cache: merge IN.json... --json=OUT.json");
  app->add_option("inputs", a->inputs, "reports (attnbench.report/1) or caches (attnbench.cache/1)")->required();
  app->add_option("--json", a->output, "the merged report or cache to write (atomically) to FILE");
  app->add_option("--on_conflict,--on-conflict", a->on_conflict,
                  "caches: an entry tuned differently in two inputs is refused, or the faster kept (fastest)")
      ->capture_default_str()
      ->check(CLI::IsMember({"refuse", "fastest"}));
  app->add_flag("--quiet,-q", a->quiet, "no summary line");
  return Command{app, [a]() {
                   if (a->output.empty()) {  // the old spelling: merge OUT IN...
                     if (a->inputs.size() < 2)
                       throw UsageError("merge: name the output with --json=OUT (merge IN.json... --json=OUT.json)");
                     a->output = a->inputs.front();
                     a->inputs.erase(a->inputs.begin());
                     defer_note("merge OUT IN... is the old spelling of merge IN... --json=OUT");
                   }
                   std::vector<std::string> words = {"attnbench", "merge"};
                   words.insert(words.end(), a->inputs.begin(), a->inputs.end());
                   words.push_back("--json=" + a->output);
                   if (a->on_conflict != "refuse") words.push_back("--on_conflict=" + a->on_conflict);
                   return merge_main(*a, join_arguments(words));
                 }};
}

}  // namespace ab
