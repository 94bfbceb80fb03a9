// The --devices process pool: spawning pinned workers with pipes, the ready handshake, the task queue, and a
// dead worker's task reported and the worker restarted.
#include "orchestrate/worker_pool.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fd_write.hpp"
#include "core/stop_request.hpp"
#include "core/phase_trace.hpp"

extern char** environ;

namespace ab {

struct WorkerPool::Worker {
  pid_t pid = -1;
  int to = -1, from = -1;  // its stdin (we write), its stdout (we read)
  std::string pending;     // bytes read after the last newline
  bool ready = false;      // said "ready" since it was (re)started
  bool busy = false;       // holds the task below
  bool leaving = false;    // said it is exiting ("lost", "done ITEM retire"): no task goes to it
  bool dropped = false;    // failed to start again: no more tasks go to its device
  std::size_t item = 0, start = 0;
};

namespace {

bool flag_named(const std::string& a, const char* name) {
  return a == name || a.rfind(std::string(name) + "=", 0) == 0;
}

// How a waited-for worker ended, in words.
std::string ending(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "an unknown status";
}

// The last non-empty line of a worker's log ("" when none).
std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// The environment for a worker: ours, with CUDA_VISIBLE_DEVICES replaced when `visible` is set.
std::vector<std::string> worker_environment(const std::string& visible) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!visible.empty() && kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
    env.push_back(kv);
  }
  if (!visible.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + visible);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> worker_arguments(const std::vector<std::string>& argv) {
  static const char* const dropped_with_value[] = {"--devices", "--device", "--json", "--resume_at"};
  static const char* const dropped_flags[] = {"--mixed_devices", "--quiet", "-q", "--no_table", "--resume"};
  std::vector<std::string> args;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    bool drop = false;
    for (const char* name : dropped_with_value) {
      if (a == name) { drop = true; ++i; break; }
      if (flag_named(a, name)) { drop = true; break; }
    }
    for (const char* name : dropped_flags) drop = drop || a == name;
    if (!drop) args.push_back(a);
  }
  args.push_back("--quiet");
  return args;
}

std::vector<std::string> current_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

WorkerPool::WorkerPool(std::vector<std::string> worker_args, std::vector<PoolDevice> devices)
    : args_(std::move(worker_args)), devices_(std::move(devices)), finished_(devices_.size(), 0) {
  // The workers' pipes must not kill us when a worker dies before reading its task.
  std::signal(SIGPIPE, SIG_IGN);
  dir_ = (std::filesystem::temp_directory_path() / "attnbench-devices-XXXXXX").string();
  if (!mkdtemp(dir_.data())) throw BackendError("could not create a private directory for the device workers");
  for (std::size_t w = 0; w < devices_.size(); ++w) workers_.push_back(std::make_unique<Worker>());
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_) {
    if (w->pid > 0) {
      kill(w->pid, SIGKILL);
      while (waitpid(w->pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    if (w->to >= 0) close(w->to);
    if (w->from >= 0) close(w->from);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void WorkerPool::spawn(std::size_t w) {
  Worker& k = *workers_[w];
  const PoolDevice& d = devices_[w];
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0) throw BackendError("could not create a pipe to a device worker");
  if (pipe2(from, O_CLOEXEC) != 0) {
    close(to[0]);
    close(to[1]);
    throw BackendError("could not create a pipe from a device worker");
  }
  std::vector<std::string> args = {"/proc/self/exe"};
  args.insert(args.end(), args_.begin(), args_.end());
  args.push_back("--device=0");
  args.push_back("--worker_dir=" + dir_);
  args.push_back(fmt::format("--worker_device={}", d.index));
  std::vector<std::string> env = worker_environment(d.visible);
  const std::string log = fmt::format("{}/worker-{}.log", dir_, d.index);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: a terminal's Ctrl-C goes to the parent alone
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  auto cargs = c_strings(args);
  auto cenv = c_strings(env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/proc/self/exe", &actions, &attr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(to[0]);
  close(from[1]);
  if (rc != 0) {
    close(to[1]);
    close(from[0]);
    throw BackendError(fmt::format("could not start the worker for device {}: {}", d.index, std::strerror(rc)));
  }
  k.pid = pid;
  k.to = to[1];
  k.from = from[0];
  k.pending.clear();
  k.ready = false;
  k.busy = false;
  k.leaving = false;
}

bool WorkerPool::read_lines(std::size_t w, std::vector<std::string>* lines) {
  Worker& k = *workers_[w];
  char buf[65536];
  ssize_t n = read(k.from, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  k.pending.append(buf, static_cast<std::size_t>(n));
  std::size_t nl;
  while ((nl = k.pending.find('\n')) != std::string::npos) {
    lines->push_back(k.pending.substr(0, nl));
    k.pending.erase(0, nl + 1);
  }
  return true;
}

std::string WorkerPool::reap(std::size_t w) {
  Worker& k = *workers_[w];
  close(k.to);
  close(k.from);
  k.to = k.from = -1;
  int status = 0;
  while (waitpid(k.pid, &status, 0) < 0 && errno == EINTR) {
  }
  k.pid = -1;
  k.ready = false;
  std::string how = ending(status);
  std::string said = last_log_line(fmt::format("{}/worker-{}.log", dir_, devices_[w].index));
  return said.empty() ? how : fmt::format("{}; it said: {}", how, said);
}

std::vector<nlohmann::json> WorkerPool::start() {
  for (std::size_t w = 0; w < workers_.size(); ++w) spawn(w);
  trace_phase(fmt::format("pool: {} workers spawned", workers_.size()));
  std::vector<nlohmann::json> info(workers_.size());
  std::size_t waiting = workers_.size();
  while (waiting > 0) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> who;
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (!workers_[w]->ready) {
        fds.push_back({workers_[w]->from, POLLIN, 0});
        who.push_back(w);
      }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw BackendError("poll failed while the device workers started");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      const std::size_t w = who[i];
      std::vector<std::string> lines;
      const bool open = read_lines(w, &lines);
      for (const std::string& line : lines)
        if (line.rfind("ready ", 0) == 0 && !workers_[w]->ready) {
          info[w] = nlohmann::json::parse(line.substr(6), nullptr, false);
          if (!info[w].is_object()) info[w] = nlohmann::json::object();
          info[w]["index"] = devices_[w].index;
          workers_[w]->ready = true;
          --waiting;
        }
      if (open || workers_[w]->ready) continue;
      // A worker that ended before it was ready: its own error line decides how we end.
      std::string said = last_log_line(fmt::format("{}/worker-{}.log", dir_, devices_[w].index));
      std::string how = reap(w);
      for (const char* prefix : {"attnbench: error: "})
        if (said.rfind(prefix, 0) == 0) throw UsageError(said.substr(std::strlen(prefix)));
      throw BackendError(fmt::format("the worker for device {} did not start ({})", devices_[w].index, how));
    }
  }
  trace_phase("pool: every worker ready");
  return info;
}

void WorkerPool::run(std::size_t count, const std::function<void(const TaskOutcome&)>& done,
                     const std::function<void()>& progress,
                     const std::function<ReadyItems()>& more) {
  std::vector<std::size_t> items(count);
  for (std::size_t i = 0; i < count; ++i) items[i] = i;
  run(items, done, progress, more);
}

void WorkerPool::run(const std::vector<std::size_t>& items, const std::function<void(const TaskOutcome&)>& done,
                     const std::function<void()>& progress,
                     const std::function<ReadyItems()>& more) {
  std::deque<std::pair<std::size_t, std::size_t>> queue;
  for (std::size_t i : items) queue.emplace_back(i, 0);
  auto refill = [&] {
    if (!more) return;
    ReadyItems ready = more();
    for (auto it = ready.first.rbegin(); it != ready.first.rend(); ++it) queue.emplace_front(*it, 0);
    for (std::size_t i : ready.last) queue.emplace_back(i, 0);
  };
  auto busy = [&] {
    for (auto& w : workers_) if (w->busy) return true;
    return false;
  };
  auto any_worker = [&] {
    for (auto& w : workers_) if (w->pid > 0) return true;
    return false;
  };
  while (true) {
    if (stop_requested()) {  // no more tasks; the running ones are killed below, unfinished
      for (auto& k : workers_)
        if (k->pid > 0 && k->busy) kill(k->pid, SIGKILL);
      break;
    }
    refill();
    for (std::size_t w = 0; w < workers_.size() && !queue.empty(); ++w) {
      Worker& k = *workers_[w];
      if (k.pid <= 0 || !k.ready || k.busy || k.leaving) continue;
      std::tie(k.item, k.start) = queue.front();
      queue.pop_front();
      k.busy = true;
      (void)write_fully(k.to, fmt::format("{} {}\n", k.item, k.start));  // a worker gone: its end of file says so
    }
    if (queue.empty() && !busy()) break;
    if (!any_worker()) {  // every device's worker failed to start again: the rest cannot run
      while (!queue.empty()) {
        auto [item, start] = queue.front();
        queue.pop_front();
        done(TaskOutcome{item, start, -1, "", "no device worker is left to run it (each failed to restart)"});
        refill();
      }
      break;
    }
    std::vector<pollfd> fds;
    std::vector<std::size_t> who;
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (workers_[w]->pid > 0) {
        fds.push_back({workers_[w]->from, POLLIN, 0});
        who.push_back(w);
      }
    // A bounded wait: a stop request that comes just before poll() is seen within it.
    const int ready = poll(fds.data(), fds.size(), 250);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw BackendError("poll failed while the device workers ran");
    }
    if (ready == 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      const std::size_t w = who[i];
      Worker& k = *workers_[w];
      const int device = devices_[w].index;
      std::vector<std::string> lines;
      const bool open = read_lines(w, &lines);
      for (const std::string& line : lines) {
        std::size_t item = 0, next = 0;
        const std::string file = fmt::format("{}/task-{}-{}.json", dir_, k.item, k.start);
        if (line.rfind("ready ", 0) == 0) {
          k.ready = true;
        } else if (k.busy && std::sscanf(line.c_str(), "done %zu", &item) == 1 && item == k.item) {
          k.busy = false;
          k.leaving = line.find(" retire") != std::string::npos;
          ++finished_[w];
          done(TaskOutcome{k.item, k.start, device, file, ""});
          if (progress) progress();
        } else if (k.busy && std::sscanf(line.c_str(), "lost %zu %zu", &item, &next) == 2 && item == k.item &&
                   next > k.start) {
          k.busy = false;
          k.leaving = true;
          done(TaskOutcome{k.item, k.start, device, file, "", /*last=*/false});
          queue.emplace_front(item, next);  // the rest of the item, first, for a fresh worker
        }
      }
      if (open) continue;
      const bool was_ready = k.ready;
      const std::string how = reap(w);
      if (k.busy) {
        k.busy = false;
        ++finished_[w];
        done(TaskOutcome{k.item, k.start, device, "",
                         fmt::format("the worker on device {} died while running it ({})", device, how)});
        if (progress) progress();
      }
      if ((!queue.empty() || more) && was_ready && !k.dropped) {  // with `more`, items may still come
        spawn(w);
      } else if (!was_ready) {
        k.dropped = true;
        std::fprintf(stderr, "attnbench: warning: the worker for device %d could not start again (%s); the other devices go on\n",
                     device, how.c_str());
      }
    }
  }
  trace_phase("pool: every task has its outcome");
  // Every task has an outcome: end the workers (end of stdin), all of them first so that they release their
  // devices at the same time (a CUDA context takes about a second to tear down), then wait for each.
  for (std::size_t w = 0; w < workers_.size(); ++w)
    if (workers_[w]->pid > 0) {
      close(workers_[w]->to);
      workers_[w]->to = -1;
    }
  for (std::size_t w = 0; w < workers_.size(); ++w)
    if (workers_[w]->pid > 0) {
      std::vector<std::string> ignored;
      while (read_lines(w, &ignored)) {
      }
      close(workers_[w]->from);
      workers_[w]->from = -1;
      while (waitpid(workers_[w]->pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      workers_[w]->pid = -1;
    }
  trace_phase("pool: every worker exited");
}

}  // namespace ab
