// One problem's tensors on the backend for tuning: random inputs (K/V with kv_slack_rows of zeroed slack),
// the output buffer, the reference output on the host, and a check of one forward's output against it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/problem.hpp"

namespace ab {

class TuneInputs {
 public:
  // Allocates, uploads random inputs (seeded) and computes the reference with backend.reference_attention.
  // Throws BackendError on device failures.
  TuneInputs(Backend& backend, const Problem& p, std::uint64_t seed);
  TuneInputs(const TuneInputs&) = delete;
  TuneInputs& operator=(const TuneInputs&) = delete;

  AttentionIO io() const;
  const Problem& problem() const { return p_; }

  // Poisons O, calls `forward` once, synchronizes and compares O with the reference. Returns "" when it
  // passes (no NaN/Inf, relative L2 error within tolerance_for(dtype)), else the reason.
  std::string check_forward(const std::function<void()>& forward);

  // After the backend rebuilt its context (recover), the allocations are gone: drop them without freeing.
  void forget_device_memory();

 private:
  Backend& be_;
  Problem p_;
  Buffer q_, k_, v_, o_, block_table_, ref_;
  std::vector<std::int32_t> block_table_host_;
  std::vector<float> ref_host_;
  std::vector<unsigned char> out_host_;
};

}  // namespace ab
