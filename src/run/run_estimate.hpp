// How long a run will take, before it runs (`attnbench run --dry_run`): per row, a roofline of the problem's
// FLOPs and bytes on the device's measured rates (the CPU backend's scalar fp64 loops at a nominal rate per
// core), plus the strategy's launches, times the forwards the stopping rule will likely take, plus the
// inputs, the L2 flushes and the reference. A rough guide (within 2-3x), not a measurement.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/problem.hpp"
#include "core/strategy.hpp"
#include "measure/measure.hpp"
#include "run/runner.hpp"

namespace ab {

struct RowEstimate {
  double forward_s = 0;  // one forward
  double row_s = 0;      // the row: warm-up, samples, rounds, its share of setup
  double longest_s = 0;  // the row if every round runs to --max_time
};

RowEstimate estimate_row(const Problem& p, const LaunchContract& launches, bool fused, const DeviceInfo& dev,
                         const MeasureSettings& m);
// The reference a problem is verified against, once per problem (fp64 on the CPU, fp32 on a GPU).
double estimate_reference_seconds(const Problem& p, const DeviceInfo& dev);
// Opening the device and measuring its copy bandwidth (and, on a GPU, its GEMM peak), once per process.
double estimate_startup_seconds(const DeviceInfo& dev);

// One problem's rows: those `strategies` run on `backend` (Strategy::can_run), each estimated with `dev`'s rates,
// and the reference when opt.verify.
struct ProblemEstimate {
  double seconds = 0;    // the rows and the reference
  double longest_s = 0;  // if every row ran to --max_time
  std::int64_t launches = 0, rows = 0;
};
ProblemEstimate estimate_problem(const Problem& p, const std::vector<std::unique_ptr<Strategy>>& strategies,
                                 Backend& backend, const RunOptions& opt, const DeviceInfo& dev);

// The order in which a pool hands out `items`: the longest estimated first (`seconds` per item index; ties and
// items without an estimate keep their order), so that the slowest problems do not start last while the other
// devices wait (longest-processing-time first).
std::vector<std::size_t> longest_first(std::vector<std::size_t> items, const std::vector<double>& seconds);

}  // namespace ab
