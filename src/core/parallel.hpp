// A small parallel-for over an index range on the host's cores, for the CPU backend and references. It
// answers a stop request (Ctrl-C) within a fraction of a second: the range is cut into pieces of about
// kParallelPieceWork operations, each thread takes the next piece until none is left or a stop was asked
// for, and then StopRequestedError is thrown on the caller's thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "core/stop_request.hpp"

namespace ab {

// About 10-50 ms of the CPU backend's scalar loops: the longest a stop request waits.
inline constexpr double kParallelPieceWork = 2e7;

// Calls fn(begin, end) on disjoint pieces of [0, n). Runs on the calling thread alone when `work` (a rough
// operation count for the whole range) is too small to pay for threads.
template <class Fn>
void parallel_for(std::int64_t n, double work, Fn&& fn) {
  if (stop_requested()) throw StopRequestedError();
  if (n <= 0) return;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t threads = work < 2e6 ? 1 : std::min<std::int64_t>(hw, n);
  const std::int64_t pieces = std::clamp<std::int64_t>(static_cast<std::int64_t>(work / kParallelPieceWork), threads, n);
  const std::int64_t piece = (n + pieces - 1) / pieces;
  std::atomic<std::int64_t> next{0};
  auto worker = [&]() {
    for (;;) {
      if (stop_requested()) return;
      const std::int64_t b = next.fetch_add(piece);
      if (b >= n) return;
      fn(b, std::min(n, b + piece));
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
    for (std::int64_t t = 0; t < threads; ++t)
      pool.emplace_back([&worker, &errors, t] {
        try {
          worker();
        } catch (...) {
          errors[static_cast<std::size_t>(t)] = std::current_exception();  // rethrown on the caller's thread
        }
      });
    for (auto& th : pool) th.join();
    for (auto& err : errors)
      if (err) std::rethrow_exception(err);
  }
  if (stop_requested() && next.load() < n) throw StopRequestedError();  // pieces left undone
}

}  // namespace ab
