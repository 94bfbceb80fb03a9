// read_host_inputs: the host copies attnbench hands the plugin, else synchronous copies of the device tensors.
#include "common/host_inputs.hpp"

#include <cuda_runtime_api.h>

#include "common/message.hpp"

namespace abfi {

namespace {

std::vector<int32_t> host_copy(const int32_t* host, const int32_t* device, int64_t count, const char* what) {
  std::vector<int32_t> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  if (host) {
    out.assign(host, host + count);
  } else {
    check_cuda(cudaMemcpy(out.data(), device, out.size() * sizeof(int32_t), cudaMemcpyDeviceToHost), what);
  }
  return out;
}

}  // namespace

HostInputs read_host_inputs(const ab_problem& p, const ab_tensors& t) {
  HostInputs in;
  in.kv_lens = host_copy(t.kv_lens_host, t.kv_lens, p.batch, "reading kv_lens back from the device");
  if (p.kv_layout == AB_KV_PAGED)
    in.block_table = host_copy(t.block_table_host, t.block_table, p.batch * p.pages,
                               "reading the block table back from the device");
  return in;
}

}  // namespace abfi
