// A small parallel-for over an index range on the host's cores, for the CPU backend and references.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace ab {

// Calls fn(begin, end) on disjoint chunks of [0, n). Runs inline when `work` (a rough operation count)
// is too small to pay for threads.
template <class Fn>
void parallel_for(std::int64_t n, double work, Fn&& fn) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::int64_t threads = std::min<std::int64_t>(hw, n);
  if (threads <= 1 || work < 2e6) {
    fn(std::int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::int64_t chunk = (n + threads - 1) / threads;
  for (std::int64_t t = 0; t < threads; ++t) {
    std::int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    pool.emplace_back([&fn, &errors, t, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();  // rethrown on the caller's thread
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& err : errors)
    if (err) std::rethrow_exception(err);
}

}  // namespace ab
