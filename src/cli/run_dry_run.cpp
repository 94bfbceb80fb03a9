// The dry run's table (cli/run_dry_run.hpp).
#include "cli/run_dry_run.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "run/run_estimate.hpp"
#include "strategies/registry.hpp"

namespace ab {

namespace {

std::string duration(double s) {
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 100) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s / 60, 60));
}

}  // namespace

void print_dry_run(Backend& backend, const RunOptions& opt, std::FILE* out) {
  const DeviceInfo dev = backend.device_info();
  auto strategies = make_strategies(opt.strategies);
  double total = estimate_startup_seconds(dev), longest = total;
  std::size_t rows = 0;
  std::string text = fmt::format("{:<56} {:>4} {:>9} {:>12}\n", "problem (dry run: nothing is measured)", "rows",
                                 "launches", "est. time");
  for (const Problem& p : opt.problems) {
    const ProblemEstimate e = estimate_problem(p, strategies, backend, opt, dev);
    rows += static_cast<std::size_t>(e.rows);
    total += e.seconds;
    longest += e.longest_s;
    text += fmt::format("{:<56} {:>4} {:>9} {:>12}\n", p.label(), e.rows, e.launches, duration(e.seconds));
  }
  text += fmt::format("{} problem(s), {} row(s) on {} ({}): estimated {}, at most about {} if every row runs to "
                      "--max_time={:g} s; a rough guide\n",
                      opt.problems.size(), rows, dev.name, dev.backend, duration(total), duration(longest),
                      opt.measure.max_time_s);
  std::fputs(text.c_str(), out);
}

}  // namespace ab
