// One problem's tensors on a backend: random inputs (seeded; contiguous K/V with kv_slack_rows zeroed
// rows of slack, unused pool rows zeroed), the output buffer, the fp32 reference output in backend memory,
// and the poisoned, verified forward that the runner and the tuner both use.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/guarded_buffer.hpp"
#include "core/problem.hpp"
#include "core/random_inputs.hpp"
#include "core/reference.hpp"

namespace ab {

class ProblemInputs {
 public:
  // Allocates the inputs and draws them in backend memory (the values of make_random_inputs(p, seed)) and,
  // with `with_reference`, computes the reference with backend.reference_attention. Throws BackendError on
  // device failures.
  ProblemInputs(Backend& backend, const Problem& p, std::uint64_t seed, bool with_reference = true);
  // The same from host tensors (a test's inputs changed after make_random_inputs), uploaded.
  ProblemInputs(Backend& backend, const Problem& p, const HostTensors& t, bool with_reference = true);
  ProblemInputs(const ProblemInputs&) = delete;
  ProblemInputs& operator=(const ProblemInputs&) = delete;

  // Bytes of backend memory the inputs, output and (optionally) the reference need, for the estimate made
  // before anything is allocated.
  static std::int64_t device_bytes(const Problem& p, bool with_reference);

  AttentionIO io() const;
  const Problem& problem() const { return p_; }

  // Fills O with NaN bytes, so that any element a forward leaves unwritten fails verification.
  void poison_output();
  // Compares O with the reference where both live (backend.compare_to_reference; requires with_reference).
  ErrorStats verify_output();
  // Poisons O, calls `forward` once, synchronizes and verifies. Returns "" when it passes (no NaN/Inf,
  // relative L2 error within tolerance_for(dtype)), else the reason.
  std::string check_forward(const std::function<void()>& forward);

  // After the backend rebuilt its context (recover), the allocations are gone: drop them without freeing.
  void forget_device_memory();

 private:
  // Allocates every buffer (K and V zeroed), uploads the block table, lengths and sinks; Q, K, V are filled after.
  void allocate(std::vector<std::int32_t> block_table, std::vector<float> sinks);
  void compute_reference();

  Backend& be_;
  Problem p_;
  // The tensors a strategy sees sit between guard regions (checked for plugins: core/guarded_buffer.hpp).
  GuardedBuffer q_, k_, v_, o_, block_table_, kv_lens_, q_lens_, sinks_;
  GuardRegions guards_;
  Buffer ref_;
  std::vector<std::int32_t> block_table_host_, kv_lens_host_, q_lens_host_;
  std::vector<float> sinks_host_;
};

// Why a verification failed ("" when it passed).
std::string verify_failure(const Problem& p, const ErrorStats& e);

}  // namespace ab
