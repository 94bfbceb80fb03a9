// Continuing a run in a fresh process: a private directory for the child's report, the child's arguments
// (the parent's, told where to resume), spawning and waiting, and reading the child's rows back.
#include "orchestrate/fresh_process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "report/report_io.hpp"

namespace ab {

namespace {

// The parent's arguments without its --json, --md, --csv, --resume_at and --no_table, then the child's own: its report
// goes to `report_path`, it starts at `at` and leaves the table to the parent.
std::vector<std::string> child_arguments(const std::vector<std::string>& argv, const ResumePoint& at,
                                         const std::string& report_path) {
  std::vector<std::string> args = {"/proc/self/exe"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    bool dropped = false;
    for (const char* flag : {"--json", "--md", "--csv", "--resume_at"}) {
      if (a.rfind(std::string(flag) + "=", 0) == 0) dropped = true;
      if (a == flag) { dropped = true; ++i; }
    }
    if (dropped) continue;
    if (a == "--no_table") continue;
    args.push_back(a);
  }
  args.push_back("--json=" + report_path);
  args.push_back(fmt::format("--resume_at={}:{}", at.problem, at.strategy));
  args.push_back("--no_table");
  return args;
}

// How a waited-for child ended, in words.
std::string exit_description(int status) {
  return WIFEXITED(status)     ? fmt::format("exit code {}", WEXITSTATUS(status))
         : WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                               : "unknown status";
}

// Starts this binary with `args` and waits for it; false when it could not be started, else true with how
// it ended in `how`.
bool spawn_and_wait(std::vector<std::string>& args, std::string* how) {
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(), environ) != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *how = exit_description(status);
  return true;
}

// Appends the child's rows and its warnings not already present, then says where the rows came from;
// false (with a warning naming `how` the child ended) when it left no readable report.
bool take_child_report(const std::string& report_path, const std::vector<std::string>& args, const std::string& how,
                       std::vector<ResultRow>* rows, std::vector<std::string>* warnings) {
  try {
    Report child = report_from_json(read_report_document(report_path), fmt::format("'{}'", report_path));
    for (ResultRow& r : child.rows) rows->push_back(std::move(r));
    for (const std::string& w : child.warnings)
      if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) warnings->push_back(w);
    warnings->push_back(fmt::format(
        "a device error could not be recovered in-process; rows after it come from a fresh process ({})",
        join_arguments(args)));
    return true;
  } catch (const std::exception&) {
    warnings->push_back(fmt::format("the fresh process continuing after a device error produced no report ({})", how));
    return false;
  }
}

}  // namespace

std::string join_arguments(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

bool continue_in_fresh_process(const std::vector<std::string>& argv, const ResumePoint& at,
                               std::vector<ResultRow>* rows, std::vector<std::string>* warnings) {
  // The child's report goes into a private directory (mkdtemp: 0700, a fresh name), never a guessable path.
  std::string dir = (std::filesystem::temp_directory_path() / "attnbench-resume-XXXXXX").string();
  if (!mkdtemp(dir.data())) {
    warnings->push_back("could not create a private directory to continue after a device error");
    return false;
  }
  const std::string report_path = dir + "/rows.json";
  std::vector<std::string> args = child_arguments(argv, at, report_path);
  std::fprintf(stderr, "attnbench: the device context was lost; continuing in a fresh process at point %zu, strategy %zu\n",
               at.problem + 1, at.strategy + 1);
  std::string how;
  if (!spawn_and_wait(args, &how)) {
    rmdir(dir.c_str());
    warnings->push_back("could not start a fresh process to continue after a device error");
    return false;
  }
  const bool ok = take_child_report(report_path, args, how, rows, warnings);
  std::remove(report_path.c_str());
  rmdir(dir.c_str());
  return ok;
}

}  // namespace ab
