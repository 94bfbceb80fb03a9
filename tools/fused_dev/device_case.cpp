// Device copies of a harness problem through the CUDA backend's memory helpers.
#include "device_case.hpp"

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
    o_ = mem_.alloc(static_cast<std::size_t>(o_elements_) * sizeof(std::uint16_t));
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
    params_ = kernels::fused_params(p, io);
}

DeviceCase::~DeviceCase() { release(); }

void DeviceCase::release() noexcept {
  for (void* p : {q_, k_, v_, o_, block_table_}) mem_.free(p);
  q_ = k_ = v_ = o_ = block_table_ = nullptr;
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
