// TuneInputs: inputs, reference and the poisoned, verified forward used to reject wrong candidates.
#include "tune/tune_inputs.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/reference.hpp"

namespace ab {

namespace {
constexpr unsigned char kPoison = 0xFF;  // NaN in every fp16/bf16/fp32 element

std::int64_t kv_elements(const Problem& p) {
  if (p.kv_layout == KvLayout::paged) return p.pool_slots() * p.heads * p.page_size * p.head_dim;
  return p.qkv_elements() + kv_slack_rows(p) * p.head_dim;
}
}  // namespace

TuneInputs::TuneInputs(Backend& be, const Problem& p, std::uint64_t seed) : be_(be), p_(p) {
  HostTensors t = make_random_inputs(p, seed);
  std::size_t es = dtype_size(p.dtype);
  q_ = Buffer(be, p.qkv_elements() * es);
  o_ = Buffer(be, p.qkv_elements() * es);
  std::size_t kv_bytes = static_cast<std::size_t>(kv_elements(p)) * es;
  k_ = Buffer(be, kv_bytes);
  v_ = Buffer(be, kv_bytes);
  be.upload(q_.get(), t.q.data(), t.q.size() * sizeof(std::uint16_t));
  be.fill_bytes(k_.get(), 0, kv_bytes);  // zeroed slack rows / unused pool rows
  be.fill_bytes(v_.get(), 0, kv_bytes);
  be.upload(k_.get(), t.k.data(), t.k.size() * sizeof(std::uint16_t));
  be.upload(v_.get(), t.v.data(), t.v.size() * sizeof(std::uint16_t));
  block_table_host_ = t.block_table;
  if (!t.block_table.empty()) {
    block_table_ = Buffer(be, t.block_table.size() * sizeof(std::int32_t));
    be.upload(block_table_.get(), t.block_table.data(), t.block_table.size() * sizeof(std::int32_t));
  }
  ref_ = Buffer(be, p.qkv_elements() * sizeof(float));
  be.reference_attention(p, io(), ref_.as<float>());
  be.synchronize();
  ref_host_.resize(p.qkv_elements());
  be.download(ref_host_.data(), ref_.get(), ref_host_.size() * sizeof(float));
  ref_.reset();  // only the host copy is needed from here on
}

AttentionIO TuneInputs::io() const {
  AttentionIO a;
  a.q = q_.get();
  a.k = k_.get();
  a.v = v_.get();
  a.o = o_.get();
  a.block_table = block_table_.as<std::int32_t>();
  a.block_table_host = block_table_host_.empty() ? nullptr : block_table_host_.data();
  return a;
}

std::string TuneInputs::check_forward(const std::function<void()>& forward) {
  be_.fill_bytes(o_.get(), kPoison, o_.bytes());
  be_.synchronize();
  forward();
  be_.synchronize();
  out_host_.resize(o_.bytes());
  be_.download(out_host_.data(), o_.get(), out_host_.size());
  // compare_output's arithmetic (relative L2 error over every element, NaN/Inf counted), split over the
  // host's cores: an exhaustive search verifies thousands of candidates.
  const std::int64_t n = p_.qkv_elements();
  const std::int64_t chunks = std::min<std::int64_t>(64, std::max<std::int64_t>(1, n / 65536));
  std::vector<double> num(chunks, 0), den(chunks, 0);
  std::vector<std::int64_t> bad(chunks, 0);
  const void* out = out_host_.data();
  parallel_for(chunks, static_cast<double>(n) * 8, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t c = lo; c < hi; ++c) {
      double sn = 0, sd = 0;
      std::int64_t nb = 0;
      for (std::int64_t i = n * c / chunks, end = n * (c + 1) / chunks; i < end; ++i) {
        double x = load_element(out, i, p_.dtype), r = ref_host_[i];
        if (!std::isfinite(x)) {
          nb++;
          continue;
        }
        sn += (x - r) * (x - r);
        sd += r * r;
      }
      num[c] = sn;
      den[c] = sd;
      bad[c] = nb;
    }
  });
  std::int64_t nonfinite = 0;
  double tn = 0, td = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    nonfinite += bad[c];
    tn += num[c];
    td += den[c];
  }
  double rel = td > 0 ? std::sqrt(tn / td) : std::sqrt(tn);
  double tol = tolerance_for(p_.dtype);
  if (nonfinite) return fmt::format("incorrect: {} of {} outputs are NaN/Inf", nonfinite, n);
  if (!(rel <= tol)) return fmt::format("incorrect: rel L2 error {:.3g} over tolerance {:.3g}", rel, tol);
  return "";
}

void TuneInputs::forget_device_memory() {
  for (Buffer* b : {&q_, &k_, &v_, &o_, &block_table_, &ref_}) b->forget();
}

}  // namespace ab
