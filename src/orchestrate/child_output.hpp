// A child process of this binary whose standard output is its answer: started with stdin and stderr on
// /dev/null and stdout on a pipe, read (bounded) until it ends or its deadline passes (then it is killed).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "orchestrate/child_process.hpp"

namespace ab {

struct CapturedChild {
  std::string start_error;  // not empty: it was not started (why)
  ChildEnd end;             // how it ended (when started)
  std::string out;          // what it wrote on stdout, at most max_bytes
  bool overflow = false;    // it wrote more than max_bytes and was killed
};

// Runs /proc/self/exe with `args` (args[0] included) for at most `timeout_s` seconds.
CapturedChild run_self_capturing_stdout(const std::vector<std::string>& args, double timeout_s, std::size_t max_bytes);

}  // namespace ab
