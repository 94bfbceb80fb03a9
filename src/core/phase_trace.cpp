// The phase trace (core/phase_trace.hpp): lines of a wall clock and this process's elapsed seconds.
#include "core/phase_trace.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ab {

namespace {

struct TraceSink {
  bool enabled = false;
  int fd = -1;  // stderr or the appended file
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  TraceSink() {
    const char* v = std::getenv("ATTNBENCH_TRACE");
    if (!v || !*v || std::strcmp(v, "0") == 0) return;
    enabled = true;
    fd = std::strcmp(v, "1") == 0 ? STDERR_FILENO : ::open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) fd = STDERR_FILENO;  // an unwritable file: the lines still go somewhere
  }
};

TraceSink& sink() {
  static TraceSink s;
  return s;
}

}  // namespace

bool phase_trace_enabled() { return sink().enabled; }

void trace_phase(const std::string& phase) {
  TraceSink& s = sink();
  if (!s.enabled) return;
  const double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  char line[512];
  const int n = std::snprintf(line, sizeof line, "attnbench trace: %.3f +%.3f pid %d: %s\n", wall, since,
                              static_cast<int>(::getpid()), phase.c_str());
  if (n > 0) (void)!::write(s.fd, line, static_cast<std::size_t>(n < static_cast<int>(sizeof line) ? n : sizeof line - 1));
}

}  // namespace ab
