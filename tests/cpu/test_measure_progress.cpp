// Measurement engine, the grid progress line: plain lines off a TTY, one rewritten line on a TTY, ETA, quiet.
#include <string>
#include <vector>

#include "measure/progress.hpp"
#include "testing.hpp"

using namespace ab;

namespace {
struct Out {
  std::string text;
  double now = 0;
  Progress::Sink sink() {
    return [this](const std::string& s) { text += s; };
  }
  Progress::Clock clock() {
    return [this] { return now; };
  }
};
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}
}  // namespace

TEST(MeasureProgress, plain_lines_when_not_a_tty) {
  Out o;
  {
    Progress p(3, false, o.sink(), false, o.clock());
    p.begin_point(0, "b1 h2 s64");
    o.now = 2.0;
    p.end_point();
    p.begin_point(1, "b1 h2 s128");
    o.now = 4.0;
    p.end_point();
    p.begin_point(2, "b1 h2 s256");
    o.now = 6.5;
    p.end_point();
    p.finish();
  }
  EXPECT_EQ(o.text, std::string("[1/3] b1 h2 s64  elapsed 0.0s  ETA ?\n"
                               "[2/3] b1 h2 s128  elapsed 2.0s  ETA 4s\n"
                               "[3/3] b1 h2 s256  elapsed 4.0s  ETA 2s\n"
                               "[3/3] done  elapsed 6.5s\n"));
  EXPECT_EQ(count(o.text, "\r"), 0);
  EXPECT_EQ(count(o.text, "\x1b["), 0);
}

TEST(MeasureProgress, one_rewritten_line_on_a_tty) {
  Out o;
  Progress p(2, false, o.sink(), true, o.clock());
  p.begin_point(0, "first");
  o.now = 1.0;
  p.end_point();
  p.begin_point(1, "second");
  o.now = 1.5;
  p.end_point();
  p.finish();
  EXPECT_EQ(o.text, std::string("\r[1/2] first  elapsed 0.0s  ETA ?\x1b[K"
                               "\r[2/2] second  elapsed 1.0s  ETA 1s\x1b[K"
                               "\r[2/2] done  elapsed 1.5s\x1b[K\n"));
  EXPECT_EQ(count(o.text, "\n"), 1);
}

TEST(MeasureProgress, eta_from_mean_time_per_finished_point) {
  Out o;
  Progress p(10, false, o.sink(), false, o.clock());
  p.begin_point(0, "a");
  o.now = 3.0;
  p.end_point();
  p.begin_point(1, "b");
  o.now = 4.0;  // 1 s into point 2
  // 1 finished in 3 s; 9 left (the current one included) = 27 s, less 1 s already spent
  EXPECT_EQ(p.line(), std::string("[2/10] b  elapsed 4.0s  ETA 26s"));
  o.now = 9.0;
  p.end_point();  // 2 finished in 9 s: 4.5 s each
  p.begin_point(2, "c");
  EXPECT_EQ(p.line(), std::string("[3/10] c  elapsed 9.0s  ETA 36s"));
  o.now = 100.0;  // far past the estimate: ETA does not go negative
  EXPECT_EQ(p.line(), std::string("[3/10] c  elapsed 1m40s  ETA 0s"));
}

TEST(MeasureProgress, quiet_is_silent_but_messages_print) {
  Out o;
  {
    Progress p(2, true, o.sink(), true, o.clock());
    p.begin_point(0, "a");
    p.end_point();
    p.begin_point(1, "b");
    p.message("warning: x");
    p.end_point();
    p.finish();
  }
  EXPECT_EQ(o.text, std::string("warning: x\n"));
}

TEST(MeasureProgress, message_on_a_tty_clears_and_redraws) {
  Out o;
  Progress p(2, false, o.sink(), true, o.clock());
  p.begin_point(0, "a");
  p.message("SM clock low");
  EXPECT_EQ(o.text, std::string("\r[1/2] a  elapsed 0.0s  ETA ?\x1b[K"
                               "\r\x1b[KSM clock low\n"
                               "\r[1/2] a  elapsed 0.0s  ETA ?\x1b[K"));
}

TEST(MeasureProgress, line_is_cut_to_the_terminal_width) {
  Out o;
  Progress p(1, false, o.sink(), true, o.clock(), 20);
  p.begin_point(0, "a very long problem label that wraps");
  EXPECT_EQ(o.text, std::string("\r[1/1] a very long p\x1b[K"));  // 19 columns
}

TEST(MeasureProgress, destructor_closes_an_open_tty_line) {
  Out o;
  {
    Progress p(3, false, o.sink(), true, o.clock());
    p.begin_point(0, "a");
  }  // e.g. an exception unwound the grid loop
  EXPECT_EQ(o.text.back(), '\n');
  EXPECT_EQ(count(o.text, "done"), 0);
}

TEST(MeasureProgress, durations) {
  EXPECT_EQ(format_duration(12.34, 1), std::string("12.3s"));
  EXPECT_EQ(format_duration(45.4, 0), std::string("45s"));
  EXPECT_EQ(format_duration(59.96, 1), std::string("1m00s"));
  EXPECT_EQ(format_duration(65, 0), std::string("1m05s"));
  EXPECT_EQ(format_duration(3725, 0), std::string("1h02m"));
  EXPECT_EQ(format_duration(-3, 0), std::string("0s"));
}

