// A plugin row's child process: its arguments, running it with a deadline (orchestrate/child_process.hpp), and
// reading its row back from a report in a private directory.
#include "orchestrate/plugin_process.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "orchestrate/child_process.hpp"
#include "core/json_document.hpp"
#include "core/problem_axes.hpp"
#include "report/report_io.hpp"
#include "strategies/plugin_library.hpp"
#include "run/launch_summary.hpp"

namespace ab {

namespace {

// Flags of the parent that the child replaces (with a value, as --flag=V or --flag V) or drops.
// A --devices worker's own flags (--worker_dir, --worker_device) are dropped: its rows' children are plain runs.
bool takes_value(const std::string& a) {
  for (const char* f : {"--json", "--resume_at", "--strategies", "--tile", "--isolated_point", "--peers", "--worker_dir",
                        "--worker_device"})
    if (a == f) return true;
  return false;
}
bool replaced(const std::string& a) {
  for (const char* f : {"--json=", "--resume_at=", "--strategies=", "--tile=", "--isolated_point=", "--peers=",
                        "--worker_dir=", "--worker_device="})
    if (a.rfind(f, 0) == 0) return true;
  // --resume: the child's report is a file of its own private directory, with no journal to continue.
  return a == "--no_table" || a == "--quiet" || a == "--resume";
}

// The --peers of a child that runs `strategy`: that peer alone (its library is the only one the child loads),
// or none.
std::string peers_argument(const std::string& strategy) {
  return "--peers=" + (is_peer_strategy(strategy) ? strategy.substr(std::string(kPeerPrefix).size()) : std::string("none"));
}

std::vector<std::string> child_arguments(const std::vector<std::string>& argv, std::size_t index,
                                         const std::string& strategy, const std::string& report_path) {
  std::vector<std::string> args = {"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (takes_value(argv[i])) { ++i; continue; }
    if (replaced(argv[i])) continue;
    args.push_back(argv[i]);
  }
  args.push_back(peers_argument(strategy));
  args.push_back("--strategies=" + strategy);
  args.push_back(fmt::format("--isolated_point={}", index));
  args.push_back("--json=" + report_path);
  args.push_back("--no_table");
  args.push_back("--quiet");
  return args;
}

ResultRow failed_row(const Problem& p, const Strategy& st, const std::string& why) {
  ResultRow row;
  row.problem = p;
  row.strategy = st.name();
  row.library_version = st.library_version();
  row.launches = summarize_launches(st.contract(p, StrategyOptions{}), std::nullopt);
  row.disposition = Disposition::failed;
  row.reason = fmt::format("{} / {}: {}", p.label(), st.name(), why);
  return row;
}

// The child's rows of `strategy`, or none when its report is missing or unreadable.
std::vector<ResultRow> child_rows(const std::string& path, const std::string& strategy,
                                  std::vector<std::string>* warnings) {
  std::vector<ResultRow> rows;
  try {
    Report child = report_from_json(read_report_document(path), fmt::format("'{}'", path));
    for (ResultRow& r : child.rows)
      if (r.strategy == strategy) rows.push_back(std::move(r));
    if (warnings)
      for (const std::string& w : child.warnings)
        if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) warnings->push_back(w);
  } catch (const std::exception&) {
    rows.clear();
  }
  return rows;
}

// This process's environment, plus the host copy bandwidth already measured here (the CPU backend's).
std::vector<std::string> child_environment(double copy_gbps) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "ATTNBENCH_HOST_COPY_GBPS=", 25) != 0) env.emplace_back(*e);
  if (copy_gbps > 0) env.push_back(fmt::format("ATTNBENCH_HOST_COPY_GBPS={}", copy_gbps));
  return env;
}

// Runs the child `args` (its report at `report_path`) with a deadline; its rows, or one failed row.
std::vector<ResultRow> rows_from_child(const std::vector<std::string>& args, const std::string& report_path, const Problem& p,
                                       const Strategy& st, double timeout_s, double copy_gbps,
                                       std::vector<std::string>* warnings) {
  const std::vector<std::string> env = child_environment(copy_gbps);
  // Its stdin is /dev/null and its stdout goes to stderr: what a plugin prints never reaches attnbench's stdout
  // (a report written to `-`) or a --devices worker's protocol pipes (orchestrate/worker_pool.hpp).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 2, 1);
  std::string start_error;
  const pid_t pid = spawn_self(args, &env, &actions, &start_error);
  posix_spawn_file_actions_destroy(&actions);
  std::vector<ResultRow> rows;
  if (pid < 0) {
    rows.push_back(failed_row(p, st, fmt::format("could not start its process: {}", start_error)));
  } else {
    ChildEnd end = wait_with_deadline(pid, timeout_s);
    if (end.timed_out) {
      rows.push_back(failed_row(p, st, fmt::format("timed out: no result within --plugin_timeout={:g} s; its process "
                                                   "was killed", timeout_s)));
    } else if (WIFSIGNALED(end.status)) {
      rows.push_back(failed_row(p, st, fmt::format("crashed: its process was killed by {}", signal_text(WTERMSIG(end.status)))));
    } else {
      rows = child_rows(report_path, st.name(), warnings);
      if (rows.empty())
        rows.push_back(failed_row(p, st, fmt::format("its process ended with exit code {} and no row",
                                                     WIFEXITED(end.status) ? WEXITSTATUS(end.status) : -1)));
    }
  }
  return rows;
}

// A private directory (mkdtemp: 0700, a fresh name) for one child's files, removed with them.
struct PrivateDir {
  std::string path = (std::filesystem::temp_directory_path() / "attnbench-plugin-XXXXXX").string();
  bool ok = mkdtemp(path.data()) != nullptr;
  ~PrivateDir() {
    std::error_code ec;
    if (ok) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

std::vector<ResultRow> run_plugin_rows_in_child(const std::vector<std::string>& argv, std::size_t index,
                                                const Problem& p, const Strategy& st, double timeout_s,
                                                double copy_gbps, std::vector<std::string>* warnings) {
  PrivateDir dir;
  if (!dir.ok) return {failed_row(p, st, "could not create a private directory for its process")};
  const std::string report_path = dir.path + "/row.json";
  std::vector<std::string> args = child_arguments(argv, index, st.name(), report_path);
  return rows_from_child(args, report_path, p, st, timeout_s, copy_gbps, warnings);
}

ResultRow run_plugin_trial_in_child(const PluginTrialSetup& s, const Problem& p, const Strategy& st,
                                    const std::string& config) {
  PrivateDir dir;
  if (!dir.ok) return failed_row(p, st, "could not create a private directory for its process");
  const std::string problem_path = dir.path + "/problem.json", report_path = dir.path + "/row.json";
  write_json_atomic(problem_path, problem_to_json(p));
  std::vector<std::string> args = {"/proc/self/exe", "run", "--isolated_problem=" + problem_path,
                                   "--backend=" + s.backend, fmt::format("--seed={}", s.seed),
                                   "--strategies=" + st.name(), "--plugin_config=" + config, "--verify",
                                   "--json=" + report_path, "--no_table", "--quiet"};
  if (s.backend == "cuda") args.push_back(fmt::format("--device={}", s.device));
  for (const LoadedPlugin& lp : loaded_plugins())
    if (lp.info.kind == PluginKind::plugin) args.push_back("--plugin=" + lp.info.path);
  args.push_back(peers_argument(st.name()));
  for (const std::string& f : s.measure_flags) args.push_back(f);
  std::vector<ResultRow> rows = rows_from_child(args, report_path, p, st, s.timeout_s, s.copy_gbps, nullptr);
  return rows.front();
}

}  // namespace ab
