// run --devices: one problem at a time to whichever worker is free, the longest estimated first; each task's
// rows read back, a dead worker's problem recorded as failed rows, every row stamped with its device, one
// report in grid order.
#include "orchestrate/run_devices.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "orchestrate/finished_rows.hpp"
#include "orchestrate/fresh_process.hpp"
#include "orchestrate/pool_devices.hpp"
#include "orchestrate/worker_loop.hpp"
#include "orchestrate/worker_pool.hpp"
#include "core/utc_timestamp.hpp"
#include "report/report_io.hpp"
#include "run/run_estimate.hpp"
#include "strategies/registry.hpp"

namespace ab {

namespace {

// What the parent gathers as tasks end: each problem's rows by the strategy its task started at.
struct Gathered {
  std::map<std::size_t, std::map<std::size_t, std::vector<ResultRow>>> rows;
  std::vector<std::string> warnings;
  nlohmann::json settings;
};

void add_warning(std::vector<std::string>& warnings, const std::string& w) {
  if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
}

// A task that left no rows (its worker died): every strategy from its start is a failed row saying why.
std::vector<ResultRow> failed_rows(const RunOptions& opt, const TaskOutcome& t) {
  std::vector<ResultRow> rows;
  const Problem& p = opt.problems[t.item];
  auto strategies = make_strategies(opt.strategies);
  for (std::size_t s = t.start; s < strategies.size(); ++s) {
    ResultRow row;
    row.problem = p;
    row.strategy = strategies[s]->name();
    row.library_version = strategies[s]->library_version();
    row.disposition = Disposition::failed;
    row.reason = fmt::format("{} / {}: {}", p.label(), row.strategy, t.failure);
    row.device = t.device;
    rows.push_back(std::move(row));
  }
  return rows;
}

void take_outcome(const RunOptions& opt, const TaskOutcome& t, Gathered& g) {
  std::vector<ResultRow> rows;
  if (t.file.empty()) {
    rows = failed_rows(opt, t);
  } else {
    Report part = report_from_json(read_report_document(t.file), "a device worker's report");
    for (const auto& w : part.warnings) add_warning(g.warnings, w);
    if (g.settings.is_null()) g.settings = part.settings;
    rows = std::move(part.rows);
    for (ResultRow& r : rows) r.device = t.device;
  }
  g.rows[t.item][t.start] = std::move(rows);
}

}  // namespace

DevicesRun run_grid_on_devices(const DevicePoolOptions& o, const RunOptions& opt, const std::vector<std::string>& argv,
                               const DevicesJournal& dj, const std::vector<double>& estimated_s) {
  WorkerPool pool(worker_arguments(argv), pool_devices(o));
  std::vector<nlohmann::json> devices = pool.start();
  Gathered g;
  const std::string mixed = check_device_models(devices, o.mixed_devices);
  if (!mixed.empty()) add_warning(g.warnings, mixed);

  DevicesRun out;
  GridJournal journal = dj.open ? dj.open(devices.front()) : GridJournal();
  {
    FinishedRows done(opt.problems, journal, dj.strategies);  // reads (and checks) what the journal resumes
    std::vector<std::size_t> items;
    for (std::size_t i = 0; i < opt.problems.size(); ++i)
      if (!journal.done(i)) items.push_back(i);
    items = longest_first(std::move(items), estimated_s);
    PoolProgress progress(pool, items.size(), o.quiet);
    pool.run(items, [&](const TaskOutcome& t) {
      take_outcome(opt, t, g);
      if (!t.last) return;  // a lost context: the rest of the problem comes in a later task
      std::vector<ResultRow> rows;
      for (auto& [start, part] : g.rows[t.item])
        for (ResultRow& r : part) rows.push_back(std::move(r));
      g.rows.erase(t.item);
      done.add(t.item, rows);  // journaled now: an interrupted run keeps it
    }, [&] { progress.task_finished(); });
    progress.finish();
    out.report.rows = done.in_grid_order();
    out.finished = done.problems();
  }
  out.journal = std::move(journal);
  Report& report = out.report;
  report.tool = this_tool();
  report.command = join_arguments(argv);
  report.created = utc_timestamp();
  report.device = devices.front();
  report.device.erase("index");
  report.devices = devices;
  report.settings = g.settings.is_null() ? nlohmann::json::object() : g.settings;
  report.warnings = g.warnings;
  return out;
}

int serve_run_tasks(const WorkerSeat& seat, Backend& backend, const RunOptions& opt,
                    const std::vector<std::string>& warnings, const nlohmann::json& settings) {
  const nlohmann::json device = backend.device_info().to_json();
  // Strategies whose rows ran in a child process of their own: their failures never touch this context.
  std::vector<std::string> in_children;
  if (opt.isolated_rows)
    for (const auto& s : make_strategies(opt.strategies))
      if (s->runs_isolated()) in_children.push_back(s->name());
  return serve_worker_tasks(seat.dir, seat.device, device, [&](const WorkerTask& task) {
    RunOptions one = opt;
    one.problems = {opt.problems.at(task.item)};
    one.seed = opt.seed + task.item;  // the inputs a one-process run draws for this problem
    one.start_problem = 0;
    one.start_strategy = task.start;
    one.quiet = true;
    // Plugin rows' children are told the problem by its grid index (the worker's own grid is the parent's).
    if (opt.isolated_rows)
      one.isolated_rows = [&opt, item = task.item](std::size_t, const Problem& p, const Strategy& st) {
        return opt.isolated_rows(item, p, st);
      };
    Report part;
    part.warnings = warnings;
    ResumePoint resume;
    part.rows = run_grid_rows(backend, one, &part.warnings, &resume);
    part.tool = this_tool();
    part.device = device;
    part.settings = settings;
    write_json_atomic(task.file, to_json(part));
    TaskEnd end;
    if (resume.needed) end.next = resume.strategy;
    // A failed row may have left the context broken: a fresh worker takes the rest of the queue (not for a row
    // that failed in its own child process).
    end.retire = std::any_of(part.rows.begin(), part.rows.end(), [&](const ResultRow& r) {
      return r.disposition == Disposition::failed &&
             std::find(in_children.begin(), in_children.end(), r.strategy) == in_children.end();
    });
    return end;
  });
}

}  // namespace ab
