// The TTY-aware progress line for grid runs (stderr).
#include "measure/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace ab {

std::string format_duration(double seconds, int decimals) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 60) {
    // Round first so 59.96 does not print as "60.0s".
    double p = std::pow(10.0, decimals);
    double r = std::round(seconds * p) / p;
    if (r < 60) return fmt::format("{:.{}f}s", r, decimals);
  }
  long total = std::lround(seconds);
  if (total < 3600) return fmt::format("{}m{:02d}s", total / 60, total % 60);
  long minutes = std::lround(seconds / 60.0);
  return fmt::format("{}h{:02d}m", minutes / 60, minutes % 60);
}

namespace {
int terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Progress::Progress(std::int64_t total_points, bool quiet)
    : Progress(
          total_points, quiet,
          [](const std::string& s) {
            std::fputs(s.c_str(), stderr);
            std::fflush(stderr);
          },
          isatty(STDERR_FILENO) != 0, steady_seconds, 0) {
  if (tty_) width_ = terminal_width();
}

Progress::Progress(std::int64_t total_points, bool quiet, Sink sink, bool tty, Clock clock, int width)
    : total_(total_points), quiet_(quiet), sink_(std::move(sink)), tty_(tty), clock_(std::move(clock)),
      width_(width) {
  t0_ = clock_();
}

Progress::~Progress() {
  // Not finish(): after an exception a "done" line would be false. Only end a line left open on a TTY.
  try {
    if (tty_ && line_open_) sink_("\n");
  } catch (...) {
  }
}

std::string Progress::line() const {
  double now = clock_();
  std::string eta = "?";
  if (finished_ > 0) {
    double per_point = finished_s_ / static_cast<double>(finished_);
    double left = per_point * static_cast<double>(total_ - finished_);
    if (in_point_) left -= now - point_t0_;
    eta = format_duration(left < 0 ? 0 : left, 0);
  }
  return fmt::format("[{}/{}] {}  elapsed {}  ETA {}", index_ + 1, total_, label_, format_duration(now - t0_, 1), eta);
}

std::string Progress::fit(const std::string& text) const {
  // Leave the last column free so the terminal never wraps the line.
  if (width_ > 1 && text.size() >= static_cast<std::size_t>(width_)) return text.substr(0, width_ - 1);
  return text;
}

void Progress::draw(const std::string& text) {
  if (tty_) {
    sink_("\r" + fit(text) + "\x1b[K");
    line_open_ = true;
  } else {
    sink_(text + "\n");
  }
}

void Progress::begin_point(std::int64_t index, const std::string& label) {
  if (in_point_) end_point();
  index_ = index;
  label_ = label;
  point_t0_ = clock_();
  in_point_ = true;
  finished_run_ = false;
  if (!quiet_) draw(line());
}

void Progress::end_point() {
  if (!in_point_) return;
  finished_s_ += clock_() - point_t0_;
  ++finished_;
  in_point_ = false;
}

void Progress::message(const std::string& text) {
  if (tty_ && line_open_) {
    sink_("\r\x1b[K" + text + "\n");
    line_open_ = false;
    if (!quiet_ && in_point_) draw(line());
  } else {
    sink_(text + "\n");
  }
}

void Progress::finish() {
  if (finished_run_) return;
  finished_run_ = true;
  if (in_point_) end_point();
  if (quiet_) return;
  draw(fmt::format("[{}/{}] done  elapsed {}", finished_, total_, format_duration(clock_() - t0_, 1)));
  if (tty_ && line_open_) {
    sink_("\n");
    line_open_ = false;
  }
}

}  // namespace ab
