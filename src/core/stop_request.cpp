// The stop flag: one lock-free atomic, written from a signal handler, read by the loops.
#include "core/stop_request.hpp"

#include <atomic>

namespace ab {

namespace {
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is set from a signal handler");
}  // namespace

void request_stop(int signal) noexcept {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal > 0 ? signal : -1);
}
bool stop_requested() noexcept { return g_stop_signal.load() != 0; }
int stop_signal() noexcept {
  int s = g_stop_signal.load();
  return s > 0 ? s : 0;
}
void clear_stop_request() noexcept { g_stop_signal.store(0); }

}  // namespace ab
