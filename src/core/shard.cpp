// Shard parsing and the cost-balanced, deterministic partition of a grid.
#include "core/shard.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

namespace {

// A non-negative decimal integer of at most 9 digits, or -1.
long long parse_count(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(s);
}

}  // namespace

Shard make_shard(long long index, long long count, const std::string& source) {
  if (count < 1 || count > kMaxShards)
    throw UsageError(fmt::format("{}: the shard count must be between 1 and {}, got {}", source, kMaxShards, count));
  if (index < 0 || index >= count)
    throw UsageError(fmt::format("{}: shard index {} is out of range for {} shard(s) (0 to {})", source, index, count,
                                 count - 1));
  return Shard{static_cast<int>(index), static_cast<int>(count)};
}

Shard parse_shard(const std::string& text) {
  auto slash = text.find('/');
  long long i = slash == std::string::npos ? -1 : parse_count(text.substr(0, slash));
  long long n = slash == std::string::npos ? -1 : parse_count(text.substr(slash + 1));
  if (i < 0 || n < 0)
    throw UsageError(fmt::format("--shard: {} is not INDEX/COUNT (e.g. 0/4; the index counts from 0)", quoted_excerpt(text)));
  return make_shard(i, n, fmt::format("--shard={}", escaped_text(text, 40)));
}

double estimated_cost(const Problem& p) {
  // Nominal rates: what matters is that FLOPs, bytes and launches weigh in roughly as they do on a GPU.
  constexpr double kFlopsPerSecond = 4e14, kBytesPerSecond = 3e12, kSecondsPerLaunch = 4e-6, kFixedSeconds = 1e-4;
  const double launches = static_cast<double>(p.bh()) * static_cast<double>(p.pages);
  return p.flops() / kFlopsPerSecond + p.bytes() / kBytesPerSecond + launches * kSecondsPerLaunch + kFixedSeconds;
}

std::vector<std::size_t> shard_problems(const std::vector<Problem>& problems, const Shard& s) {
  std::vector<std::size_t> order(problems.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  if (s.whole()) return order;
  std::vector<double> cost(problems.size());
  for (std::size_t i = 0; i < problems.size(); ++i) cost[i] = estimated_cost(problems[i]);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(static_cast<std::size_t>(s.count), 0.0);
  std::vector<std::size_t> mine;
  for (std::size_t i : order) {
    auto lightest = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[static_cast<std::size_t>(lightest)] += cost[i];
    if (lightest == s.index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace ab
