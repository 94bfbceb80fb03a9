// The input and output files of run and tune, by the flag that named them.
#include "cli/command_paths.hpp"

#include <filesystem>
#include <set>

#include "cli/plugin_flags.hpp"
#include "core/grid.hpp"
#include "core/journal_file.hpp"

namespace ab {

std::vector<RolePath> grid_input_paths(const SharedFlags& f, const std::vector<Problem>& problems) {
  std::vector<RolePath> in;
  if (!f.config.empty())
    for (const std::string& name : suite_names(f.config)) {
      std::error_code ec;
      std::string suite = std::filesystem::exists(name, ec) ? name : resolve_suite_path(name);
      in.push_back({"the suite file of --config", suite});
    }
  for (const std::string& p : plugin_paths(f)) in.push_back({"--plugin", p});
  std::set<std::string> files;
  for (const Problem& p : problems)
    if (p.kv_lens_spec.rfind("file:", 0) == 0 && files.insert(p.kv_lens_spec.substr(5)).second)
      in.push_back({"a lengths file (--kv_lens)", p.kv_lens_spec.substr(5)});
  return in;
}

std::vector<RolePath> report_output_paths(const ReportOutputs& out, bool json_journal) {
  std::vector<RolePath> paths = {{"--json", out.json}, {"--md", out.md}, {"--csv", out.csv}};
  if (json_journal && !out.json.empty() && out.json != "-")
    paths.push_back({"the journal of --json", journal_path_for(out.json)});
  return paths;
}

}  // namespace ab
