// The tests' framework is GoogleTest (Debian's libgtest-dev). CPU tests link gtest_main; GPU tests define
// main() with the helpers below, which exit with 77 (CTest's SKIP_RETURN_CODE here) when no device is
// present, so that a machine without a GPU reports them as skipped, never as passed.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace attnbench_testing {

[[noreturn]] inline void skip_test_program(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::exit(77);
}

// The message of the UsageError that `f` throws, "" when it throws none.
inline std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ab::UsageError& e) {
    return e.what();
  }
  return "";
}

inline int run_all_tests(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

}  // namespace attnbench_testing
