// Shards of a grid (`--shard=i/N`, Slurm job arrays, Kubernetes Indexed Jobs): shard i of N takes a
// deterministic part of the grid, balanced by each problem's estimated cost, so that the N shards together
// run every problem exactly once. The partition depends only on the grid and N, never on the machine.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace ab {

struct Shard {
  int index = 0, count = 1;  // 0 <= index < count
  bool whole() const { return count == 1; }
  std::string text() const;  // "2/4"
};

inline constexpr int kMaxShards = 100000;

// Parses "i/N" (0 <= i < N <= kMaxShards); throws UsageError "--shard: ..." naming what is wrong.
Shard parse_shard(const std::string& text);
// A shard from an index and count given elsewhere (environment variables named in `source` for errors).
Shard make_shard(long long index, long long count, const std::string& source);

// A rough relative cost of running every strategy on `p` once (a roofline of its FLOPs and bytes plus a
// per-launch term for the strategies that launch per head and page); only ratios matter.
double estimated_cost(const Problem& p);

// The grid indices of `problems` that shard `s` runs, in grid order. Problems are dealt out most costly
// first (ties by grid index), each to the shard with the least estimated cost so far (ties: the lowest
// shard), so shards differ in cost by at most one problem's.
std::vector<std::size_t> shard_problems(const std::vector<Problem>& problems, const Shard& s);

}  // namespace ab
