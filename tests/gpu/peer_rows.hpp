// What the GPU peer tests share (test_peer_cudnn, test_peer_flashinfer, test_peer_flashinfer_fa3): the real binary
// run on the GPU with --verify and a JSON report, its rows read back; a peer library's path beside the binary; the
// skip (77) when there is no device or a peer was not built.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "testing.hpp"

namespace peer_test {

struct Rows {
  int rc = -1;                                      // the binary's exit code (-1: it did not exit)
  nlohmann::json rows = nlohmann::json::array();   // the report's results
};

// The binary with `args` on the GPU (CUPTI timer, --verify, short rows) and a JSON report: its exit code and rows.
inline Rows run_verified(const std::string& args) {
  namespace fs = std::filesystem;
  const std::string json =
      (fs::temp_directory_path() / ("attnbench-peer-gpu-" + std::to_string(getpid()) + ".json")).string();
  const std::string cmd = std::string(ATTNBENCH_BINARY) +
                          " --backend=cuda --quiet --timer=cupti --verify --max_time=0.05 " + args + " --json=" + json +
                          " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  Rows r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(json);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  fs::remove(json);
  if (doc.is_object() && doc.contains("results")) r.rows = doc["results"];
  return r;
}

// The library of peer `name` where the binary looks for it (<binary>/peers).
inline std::filesystem::path peer_library(const std::string& name) {
  return std::filesystem::path(ATTNBENCH_BINARY).parent_path() / "peers" / ("libattnbench_peer_" + name + ".so");
}

// Skips the test program (exit 77) without a CUDA device or without one of the peers `names`; `how` says how to
// build them.
inline void skip_without(std::initializer_list<const char*> names, const std::string& how) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  for (const char* name : names)
    if (!std::filesystem::exists(peer_library(name)))
      attnbench_testing::skip_test_program(peer_library(name).string() + " not built (" + how + ")");
}

}  // namespace peer_test
