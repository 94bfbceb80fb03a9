// The process pool behind --devices: one worker per device (this binary again, pinned to its device), tasks
// handed out from one queue as workers become free (a faster device takes more), a dead worker's task
// reported and the worker restarted for the rest of the queue. Backend-agnostic: the CPU backend runs the same
// pool with several worker processes. The worker's side of the protocol is orchestrate/worker_loop.hpp.
//
// Protocol (one line each way, over the worker's stdin and stdout; its stderr goes to a log in the pool's
// private directory): the worker says "ready <device JSON>" once its backend is up; the pool sends "ITEM
// START" (a grid problem, and the strategy to start at); the worker writes DIR/task-ITEM-START.json and says
// "done ITEM" ("done ITEM retire" when it exits next, for a fresh worker to take the queue on), or "lost ITEM NEXT" when the device context broke at strategy NEXT-1 and the worker is exiting
// (the pool queues ITEM from NEXT first, for a fresh worker). End of stdin ends a worker.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ab {

struct PoolDevice {
  int index = 0;             // as the user named it (--devices)
  std::string visible;       // CUDA_VISIBLE_DEVICES for its worker; "" leaves the environment alone (CPU)
};

// What became of one task (a problem from a strategy on): the worker's file, or why there is none.
struct TaskOutcome {
  std::size_t item = 0, start = 0;
  int device = 0;
  std::string file;    // the worker's result; "" when the worker died (then `failure` says how)
  std::string failure;
  bool last = true;    // the item's last task (false: a lost context handed the rest of the item on)
};

// Items that became ready while a pool runs: `first` to the front of its queue, `last` to the back.
struct ReadyItems {
  std::vector<std::size_t> first;
  std::vector<std::size_t> last;
};

class WorkerPool {
 public:
  // `worker_args`: the worker's command line after the binary (the pool adds --worker_dir and --device=0).
  WorkerPool(std::vector<std::string> worker_args, std::vector<PoolDevice> devices);
  ~WorkerPool();  // kills workers still running, removes the private directory
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts every worker and waits until each is ready. Returns their device JSON with "index" added, in
  // device order. A worker that exits first ends the pool: UsageError (exit 2) or BackendError with the line
  // it printed.
  std::vector<nlohmann::json> start();
  // Runs items 0..count-1 from strategy 0, calling `done` once per task as it ends (a lost context adds a
  // task for the rest of its item). `more`, when set, is asked before every hand-out for items that became
  // ready (from strategy 0), so items can depend on others' outcomes (tune --devices' split search): its
  // `first` items go ahead of the queued ones (work that ends a problem, which should not wait behind every
  // other problem's screens and so end the run on one device), its `last` items behind them.
  // Returns when every task has an outcome and `more` has none left, or at once when a stop is requested
  // (SIGINT/SIGTERM, core/stop_request.hpp): then no task is handed out, the workers still running one are
  // killed (their tasks get no outcome: the item is not finished). Workers run in a
  // process group of their own, so a terminal's Ctrl-C reaches only this process, which decides.
  void run(std::size_t count, const std::function<void(const TaskOutcome&)>& done,
           const std::function<void()>& progress = nullptr,
           const std::function<ReadyItems()>& more = nullptr);
  // The same over the given items (a resumed run leaves out those its journal holds).
  void run(const std::vector<std::size_t>& items, const std::function<void(const TaskOutcome&)>& done,
           const std::function<void()>& progress = nullptr,
           const std::function<ReadyItems()>& more = nullptr);
  // The pool's private directory (workers write their task files there; it is removed with the pool).
  const std::string& directory() const { return dir_; }
  // Items finished per device so far (whole items; a resumed remainder counts where it ended), for progress.
  const std::vector<int>& finished_per_device() const { return finished_; }
  const std::vector<PoolDevice>& devices() const { return devices_; }

 private:
  struct Worker;
  void spawn(std::size_t w);
  bool read_lines(std::size_t w, std::vector<std::string>* lines);
  std::string reap(std::size_t w);
  std::vector<std::string> args_;
  std::vector<PoolDevice> devices_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<int> finished_;
  std::string dir_;
};

// The worker's arguments from the parent's: everything after the binary but the flags the pool sets or the
// parent keeps (--devices, --mixed_devices, --device, --json, --quiet, --no_table, --resume, --resume_at), then
// --quiet.
std::vector<std::string> worker_arguments(const std::vector<std::string>& argv);
// This process's command line, argv[0] first (/proc/self/cmdline), for commands not handed argv.
std::vector<std::string> current_arguments();

}  // namespace ab
