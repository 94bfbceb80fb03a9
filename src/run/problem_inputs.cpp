// ProblemInputs: inputs, reference and the poisoned, verified forward.
#include "run/problem_inputs.hpp"

#include <utility>

#include <fmt/format.h>

#include "core/random_inputs.hpp"
#include "core/sizes.hpp"

namespace ab {

namespace {

// Elements of the K (rows head_dim wide) or V (head_dim_v) allocation: the pool, or contiguous with its slack rows.
std::int64_t k_elements(const Problem& p) {
  if (p.kv_layout == KvLayout::paged) return p.pool_elements();
  return size_add(p.kv_elements(), size_mul(kv_slack_rows(p), p.head_dim));
}
std::int64_t v_elements(const Problem& p) {
  if (p.kv_layout == KvLayout::paged) return p.v_pool_elements();
  return size_add(p.v_elements(), size_mul(kv_slack_rows(p), p.head_dim_v));
}
}  // namespace

std::int64_t ProblemInputs::device_bytes(const Problem& p, bool with_reference) {
  std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype));
  std::int64_t b = size_add(size_add(size_mul(size_add(p.q_elements(), p.o_elements()), es),
                                     size_mul(size_add(k_elements(p), v_elements(p)), es),
                                     size_mul(p.batch, p.pages, 4), size_mul(p.batch, 8)),
                            size_mul(8, kGuardOverheadBytes), p.sinks ? size_mul(p.heads, 4) : 0);
  return with_reference ? size_add(b, size_mul(p.o_elements(), 4)) : b;
}

ProblemInputs::ProblemInputs(Backend& be, const Problem& p, std::uint64_t seed, bool with_reference)
    : be_(be), p_(p) {
  allocate(random_block_table(p, seed), random_sinks(p, seed));
  // Drawn where they live (DeviceMemory::fill_random): the same values as make_random_inputs, no host copy.
  const auto* table = block_table_.as<const std::int32_t>();
  const auto* lens = kv_lens_.as<const std::int32_t>();
  be.memory().fill_random(q_.get(), input_fill(p, InputTensor::q, seed, nullptr, nullptr));
  be.memory().fill_random(k_.get(), input_fill(p, InputTensor::k, seed, table, lens));
  be.memory().fill_random(v_.get(), input_fill(p, InputTensor::v, seed, table, lens));
  if (with_reference) compute_reference();
}

ProblemInputs::ProblemInputs(Backend& be, const Problem& p, const HostTensors& t, bool with_reference)
    : be_(be), p_(p) {
  allocate(t.block_table, t.sinks);
  be.memory().upload(q_.get(), t.q.data(), t.q.size() * sizeof(std::uint16_t));
  be.memory().upload(k_.get(), t.k.data(), t.k.size() * sizeof(std::uint16_t));
  be.memory().upload(v_.get(), t.v.data(), t.v.size() * sizeof(std::uint16_t));
  if (with_reference) compute_reference();
}

void ProblemInputs::allocate(std::vector<std::int32_t> block_table, std::vector<float> sinks) {
  Backend& be = be_;
  const Problem& p = p_;
  std::size_t es = dtype_size(p.dtype);
  q_ = GuardedBuffer(be.memory(), p.q_elements() * es, "Q");
  o_ = GuardedBuffer(be.memory(), p.o_elements() * es, "O");
  const std::size_t k_bytes = static_cast<std::size_t>(k_elements(p)) * es;
  const std::size_t v_bytes = static_cast<std::size_t>(v_elements(p)) * es;
  k_ = GuardedBuffer(be.memory(), k_bytes, "K");
  v_ = GuardedBuffer(be.memory(), v_bytes, "V");
  be.memory().fill_bytes(k_.get(), 0, k_bytes);  // zeroed slack rows / unused pool rows
  be.memory().fill_bytes(v_.get(), 0, v_bytes);
  block_table_host_ = std::move(block_table);
  if (!block_table_host_.empty()) {
    block_table_ = GuardedBuffer(be.memory(), block_table_host_.size() * sizeof(std::int32_t), "the block table");
    be.memory().upload(block_table_.get(), block_table_host_.data(), block_table_host_.size() * sizeof(std::int32_t));
  }
  kv_lens_host_ = kv_lens_of(p);
  kv_lens_ = GuardedBuffer(be.memory(), kv_lens_host_.size() * sizeof(std::int32_t), "kv_lens");
  be.memory().upload(kv_lens_.get(), kv_lens_host_.data(), kv_lens_host_.size() * sizeof(std::int32_t));
  q_lens_host_ = q_lens_of(p);
  q_lens_ = GuardedBuffer(be.memory(), q_lens_host_.size() * sizeof(std::int32_t), "q_lens");
  be.memory().upload(q_lens_.get(), q_lens_host_.data(), q_lens_host_.size() * sizeof(std::int32_t));
  sinks_host_ = std::move(sinks);
  if (!sinks_host_.empty()) {
    sinks_ = GuardedBuffer(be.memory(), sinks_host_.size() * sizeof(float), "the sink logits");
    be.memory().upload(sinks_.get(), sinks_host_.data(), sinks_host_.size() * sizeof(float));
  }
  for (const GuardedBuffer* g : {&q_, &k_, &v_, &o_, &block_table_, &kv_lens_, &q_lens_, &sinks_}) guards_.add(g);
}

void ProblemInputs::compute_reference() {
  ScopedRange r(be_.profiler(), "reference");
  ref_ = Buffer(be_.memory(), p_.o_elements() * sizeof(float));
  be_.verifier().reference_attention(p_, io(), ref_.as<float>());
  be_.memory().synchronize();
}

AttentionIO ProblemInputs::io() const {
  AttentionIO a;
  a.q = q_.get();
  a.k = k_.get();
  a.v = v_.get();
  a.o = o_.get();
  a.block_table = block_table_.as<std::int32_t>();
  a.block_table_host = block_table_host_.empty() ? nullptr : block_table_host_.data();
  a.kv_lens = kv_lens_.as<std::int32_t>();
  a.kv_lens_host = kv_lens_host_.data();
  a.q_lens = q_lens_.as<std::int32_t>();
  a.q_lens_host = q_lens_host_.data();
  a.sinks = sinks_.as<float>();
  a.sinks_host = sinks_host_.empty() ? nullptr : sinks_host_.data();
  a.guards = &guards_;
  return a;
}

void ProblemInputs::poison_output() {
  be_.memory().fill_bytes(o_.get(), kOutputPoison, o_.bytes());
  be_.memory().synchronize();
}

ErrorStats ProblemInputs::verify_output() { return be_.verifier().compare_to_reference(p_, o_.get(), ref_.as<float>()); }

std::string verify_failure(const Problem& p, const ErrorStats& e) {
  double tol = tolerance_for(p.dtype);
  if (e.nonfinite)
    return fmt::format("{} of {} outputs are NaN/Inf (unwritten or overflowed)", e.nonfinite, e.count);
  if (!(e.rel_l2 <= tol)) return fmt::format("rel L2 error {:.3g} over tolerance {:.3g}", e.rel_l2, tol);
  return "";
}

std::string ProblemInputs::check_forward(const std::function<void()>& forward) {
  poison_output();
  forward();
  be_.memory().synchronize();
  std::string why = verify_failure(p_, verify_output());
  return why.empty() ? why : "incorrect: " + why;
}

void ProblemInputs::forget_device_memory() {
  for (GuardedBuffer* b : {&q_, &k_, &v_, &o_, &block_table_, &kv_lens_, &q_lens_, &sinks_}) b->forget();
  ref_.forget();
}

}  // namespace ab
