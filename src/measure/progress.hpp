// The grid run's progress line on stderr: "[i/N] <problem label>  elapsed 12.3s  ETA 45s".
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace ab {

// Usage by the grid runner:
//   Progress progress(points.size(), quiet);
//   for (std::size_t i = 0; i < points.size(); ++i) {
//     progress.begin_point(i, label);   // i is 0-based; the line shows i+1
//     ... measure ...;  for each warning: progress.message(w);
//     progress.end_point();
//   }
//   progress.finish();                  // the destructor only ends an open TTY line
// On a TTY (isatty(2)) one line is rewritten in place ('\r', text, clear to end of line) and cut to the
// terminal width; otherwise each begin_point prints a plain line. ETA = mean wall time per finished point
// times the points left, less the time already spent on the current one ("ETA ?" before any finished).
// quiet silences the progress lines; message() always prints.
class Progress {
 public:
  using Sink = std::function<void(const std::string&)>;
  using Clock = std::function<double()>;  // seconds, monotonic

  Progress(std::int64_t total_points, bool quiet);
  // For tests: output to `sink`, TTY behaviour forced, a scripted clock, `width` columns (0: no cut).
  Progress(std::int64_t total_points, bool quiet, Sink sink, bool tty, Clock clock, int width = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void begin_point(std::int64_t index, const std::string& label);
  void end_point();
  // A line of its own (a warning) without breaking the progress line, which is redrawn after it on a TTY.
  void message(const std::string& text);
  // Final line "[N/N] done  elapsed 1m05s" (unless quiet) and, on a TTY, the newline ending the rewritten line.
  void finish();

  // A total that grows while running (work split as it is discovered: tune --devices' units).
  void set_total(std::int64_t total_points) { total_ = total_points; }

  // The text of the current progress line (no '\r', no escape codes); for tests.
  std::string line() const;

 private:
  void draw(const std::string& text);
  std::string fit(const std::string& text) const;

  std::int64_t total_;
  bool quiet_;
  Sink sink_;
  bool tty_;
  Clock clock_;
  int width_;
  double t0_ = 0;
  double point_t0_ = 0;
  std::int64_t index_ = -1;  // current point, 0-based
  std::int64_t finished_ = 0;
  double finished_s_ = 0;   // summed wall time of finished points
  bool in_point_ = false;
  bool line_open_ = false;  // a TTY line is drawn without its newline
  bool finished_run_ = false;
  std::string label_;
};

// "12.3s" under a minute (decimals digits), then "4m05s", then "2h03m".
std::string format_duration(double seconds, int decimals);

}  // namespace ab
