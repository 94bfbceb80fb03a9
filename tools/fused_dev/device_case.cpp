// Device copies of a harness problem through the CUDA backend's memory helpers.
#include "device_case.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "core/fused_decode_plan.hpp"
#include "core/fused_tail_layout.hpp"

namespace ab::fused_dev {

namespace {
constexpr void* kDefaultStream = nullptr;

template <class T>
void* upload_vector(cuda::AllocationTracker& mem, const std::vector<T>& host) {
  const std::size_t bytes = host.size() * sizeof(T);
  void* p = mem.alloc(bytes);
  cuda::upload(p, host.data(), bytes, kDefaultStream);
  return p;
}
}  // namespace

DeviceCase::DeviceCase(const Problem& p, const HostTensors& t) : o_elements_(p.q_elements()) {
  try {
    q_ = upload_vector(mem_, t.q);
    k_ = upload_vector(mem_, t.k);
    v_ = upload_vector(mem_, t.v);
    if (!t.block_table.empty()) block_table_ = upload_vector(mem_, t.block_table);
    if (p.ragged()) kv_lens_ = upload_vector(mem_, std::vector<std::int32_t>(p.kv_lens.begin(), p.kv_lens.end()));
    o_ = mem_.alloc(static_cast<std::size_t>(o_elements_) * sizeof(std::uint16_t));
    // Decode tiles: room for the split partials of any split count.
    if (fused_decode::takes_q_len(p.q_len)) {
      workspace_bytes_ = fused_decode::partial_bytes(p.batch, p.heads, p.q_len, p.head_dim, fused_decode::kMaxSplits);
      workspace_ = mem_.alloc(static_cast<std::size_t>(workspace_bytes_));
    } else {  // persistent tiles: the tail split's partials on the largest grid it runs on, counters zeroed
      workspace_bytes_ = fused_tail::any_tile_workspace_bytes(static_cast<int>(p.head_dim));
      if (workspace_bytes_ > 0) {
        workspace_ = mem_.alloc(static_cast<std::size_t>(workspace_bytes_));
        cuda::fill(workspace_, 0, static_cast<std::size_t>(workspace_bytes_), kDefaultStream);
      }
    }
  } catch (...) {
    release();
    throw;
  }
  AttentionIO io;
    io.q = q_;
    io.k = k_;
    io.v = v_;
    io.o = o_;
    io.block_table = static_cast<const std::int32_t*>(block_table_);
    io.kv_lens = static_cast<const std::int32_t*>(kv_lens_);
    params_ = kernels::fused_params(p, io);
    params_.workspace = workspace_;
    params_.workspace_bytes = workspace_bytes_;
}

DeviceCase::~DeviceCase() { release(); }

void DeviceCase::release() noexcept {
  for (void* p : {q_, k_, v_, o_, block_table_, kv_lens_, workspace_}) mem_.free(p);
  q_ = k_ = v_ = o_ = block_table_ = kv_lens_ = workspace_ = nullptr;
}

void DeviceCase::launch(const FusedTile& tile) const {
  cuda::check_launch(kernels::fused_launch(params_, tile, nullptr), "fused_attention");
}

void DeviceCase::poison_output() {
  cuda::fill(o_, 0xff, static_cast<std::size_t>(o_elements_) * sizeof(std::uint16_t), kDefaultStream);
}

std::vector<std::uint16_t> DeviceCase::download_output() const {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(o_elements_));
  cuda::download(out.data(), o_, out.size() * sizeof(std::uint16_t), kDefaultStream);
  return out;
}

}  // namespace ab::fused_dev
