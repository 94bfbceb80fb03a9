// Launch contract against launch record.
#include "run/launch_summary.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace ab {

namespace {

// Kernels named as cuBLASLt split-K reductions ("cublasLt::splitKreduce_kernel<...>"), counted from
// "name xN" entries. The split GEMM's own kernel may carry "splitK" in its name too (cuBLASLt 13's
// "nvjet_..._splitK_NNN"): only a reduction is an extra launch.
std::int64_t splitk_reduction_kernels(const std::vector<std::string>& names) {
  std::int64_t n = 0;
  for (const std::string& s : names) {
    if (s.find("educe") == std::string::npos) continue;
    auto x = s.rfind(" x");
    n += x == std::string::npos ? 1 : std::atoll(s.c_str() + x + 2);
  }
  return n;
}

}  // namespace

RowLaunches summarize_launches(const LaunchContract& c, const std::optional<LaunchRecord>& r) {
  RowLaunches l;
  l.has_contract = c.declared;
  l.expected_gemm = c.gemm_calls;
  l.expected_kernels = c.kernels;
  l.formula = c.formula;
  if (!r) return l;
  l.measured = MeasuredLaunches{r->kernels, r->gemm_calls, r->other_kernels, r->kernel_names, r->source};
  // No contract (a library peer's plan decides): the count is reported, with no verdict to give.
  if (!l.has_contract) {
    l.match = true;
    return l;
  }
  // cuBLASLt may split one GEMM call into a split-K kernel plus a reduction; such extra kernels are
  // explained by their names and do not count as a broken contract.
  std::int64_t extra = r->kernels - c.total();
  std::int64_t reductions = splitk_reduction_kernels(r->kernel_names);
  l.match = extra == 0 || (extra > 0 && extra == reductions);
  if (extra > 0 && extra == reductions)
    l.explained = fmt::format("{} extra cuBLASLt split-K reduction kernel(s)", reductions);
  return l;
}

}  // namespace ab
