// A minimal test framework: TEST(name) registers a case, CHECK/CHECK_EQ/CHECK_NEAR record failures and
// keep going, REQUIRE stops the case. main() runs every case and prints "N passed, N failed".
// GPU tests call skip_test_program(reason) to exit with 77, which CTest reports as skipped.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace testing {

struct Case {
  const char* name;
  std::function<void()> fn;
};
inline std::vector<Case>& cases() {
  static std::vector<Case> v;
  return v;
}
inline int& failures() {
  static int f = 0;
  return f;
}
struct Registrar {
  Registrar(const char* n, std::function<void()> f) { cases().push_back({n, std::move(f)}); }
};
struct RequireFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline void fail(const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, msg.c_str());
  failures()++;
}
[[noreturn]] inline void skip_test_program(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::exit(77);
}

}  // namespace testing

#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)
#define TEST(name)                                                              \
  static void name();                                                           \
  static testing::Registrar AB_CAT(reg_, name)(#name, name);                    \
  static void name()

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) testing::fail(__FILE__, __LINE__, "CHECK(" #cond ")");         \
  } while (0)
#define REQUIRE(cond)                                                           \
  do {                                                                          \
    if (!(cond)) {                                                              \
      testing::fail(__FILE__, __LINE__, "REQUIRE(" #cond ")");                  \
      throw testing::RequireFailed(#cond);                                      \
    }                                                                           \
  } while (0)
#define CHECK_EQ(a, b)                                                          \
  do {                                                                          \
    auto _va = (a);                                                             \
    auto _vb = (b);                                                             \
    if (!(_va == _vb)) {                                                        \
      std::ostringstream _os;                                                   \
      _os << "CHECK_EQ(" #a ", " #b "): " << _va << " != " << _vb;              \
      testing::fail(__FILE__, __LINE__, _os.str());                             \
    }                                                                           \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                                   \
  do {                                                                          \
    double _va = (a), _vb = (b);                                                \
    if (!(std::fabs(_va - _vb) <= (tol))) {                                     \
      std::ostringstream _os;                                                   \
      _os << "CHECK_NEAR(" #a ", " #b "): " << _va << " vs " << _vb;            \
      testing::fail(__FILE__, __LINE__, _os.str());                             \
    }                                                                           \
  } while (0)
#define CHECK_THROWS(expr)                                                      \
  do {                                                                          \
    bool _thrown = false;                                                       \
    try {                                                                       \
      (void)(expr);                                                             \
    } catch (...) {                                                             \
      _thrown = true;                                                           \
    }                                                                           \
    if (!_thrown) testing::fail(__FILE__, __LINE__, "expected a throw: " #expr); \
  } while (0)

// Defines main() for a test program; include in exactly one translation unit per test executable.
#define TEST_MAIN()                                                             \
  int main() {                                                                  \
    int passed = 0, failed = 0;                                                 \
    for (auto& c : testing::cases()) {                                          \
      int before = testing::failures();                                         \
      try {                                                                     \
        c.fn();                                                                 \
      } catch (const testing::RequireFailed&) {                                 \
      } catch (const std::exception& e) {                                       \
        testing::fail(__FILE__, __LINE__, std::string("exception: ") + e.what()); \
      }                                                                         \
      bool ok = testing::failures() == before;                                  \
      std::printf("[%s] %s\n", ok ? "PASS" : "FAIL", c.name);                   \
      (ok ? passed : failed)++;                                                 \
    }                                                                           \
    std::printf("%d passed, %d failed\n", passed, failed);                      \
    return failed ? 1 : 0;                                                      \
  }
