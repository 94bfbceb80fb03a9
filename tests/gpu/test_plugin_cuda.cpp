// On the GPU: the CUDA example plugin (examples/plugins/cuda, a WMMA kernel) loaded by the real binary with
// --plugin runs beside fused over contiguous and paged K/V, GQA, ragged lengths, causal q_len < S, fp16 and
// bf16, D=64 and 128, both of its configurations: every row verified, one kernel per forward counted by
// CUPTI against its declared contract. Skipped (exit 77) without a device.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "testing.hpp"

namespace {

std::string plugin_path() {
  return (std::filesystem::path(ATTNBENCH_BINARY).parent_path() / "plugins" / "libcuda_example_plugin.so").string();
}

// Runs the binary with `args` plus the plugin, --verify and a JSON report; returns the report's rows.
nlohmann::json run_rows(const std::string& args, int* rc) {
  std::string json = (std::filesystem::temp_directory_path() / ("attnbench-plugin-gpu-" + std::to_string(getpid()) + ".json")).string();
  std::string cmd = std::string(ATTNBENCH_BINARY) + " --backend=cuda --quiet --timer=cupti --verify --max_time=0.05 --plugin=" +
                    plugin_path() + " --strategies=fused,plugin:wmma-example " + args + " --json=" + json + " >/dev/null";
  int status = std::system(cmd.c_str());
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(json);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  std::filesystem::remove(json);
  return doc.is_object() ? doc["results"] : nlohmann::json::array();
}

void expect_plugin_rows_verified(const std::string& args, std::size_t problems) {
  int rc = 0;
  nlohmann::json rows = run_rows(args, &rc);
  EXPECT_EQ(rc, 0) << args;
  ASSERT_EQ(rows.size(), 2 * problems) << args;
  for (const auto& r : rows) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    if (r["status"] != "ok") continue;
    EXPECT_TRUE(r["verify"]["passed"].get<bool>()) << r.dump();
    if (r["strategy"] == "plugin:wmma-example") {
      EXPECT_EQ(r["launches"]["expected"]["kernels"], 1) << r.dump();
      EXPECT_EQ(r["launches"]["measured"]["kernels"], 1) << r.dump();
    }
  }
}

}  // namespace

TEST(PluginCuda, example_plugin_verified_on_contiguous_and_paged_shapes) {
  ASSERT_TRUE(std::filesystem::exists(plugin_path())) << plugin_path();
  expect_plugin_rows_verified("--batch=2 --heads=8 --seq_len=300 --head_dim=64,128 --kv_layout=contiguous,paged "
                              "--page_size=64 --dtype=fp16,bf16", 8);
}

TEST(PluginCuda, example_plugin_verified_on_inference_shapes) {
  expect_plugin_rows_verified("--batch=3 --heads=8 --kv_heads=2,1 --kv_lens=list:77,200,129 --q_len=1,17 "
                              "--head_dim=128 --kv_layout=paged --page_size=16 --causal=false,true", 8);
}

int main(int argc, char** argv) {
  if (ab::cuda_device_count() == 0) attnbench_testing::skip_test_program("no CUDA device");
  return attnbench_testing::run_all_tests(argc, argv);
}
