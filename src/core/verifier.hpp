// The verification interface of a backend: the reference attention and the error statistics of an
// output against it, computed where the data lives.
#pragma once
#include <string>

#include "core/attention_kernels.hpp"
#include "core/problem.hpp"
#include "core/reference.hpp"

namespace ab {

class Verifier {
 public:
  virtual ~Verifier() = default;
  // Reference attention, ignoring io.o, into `out` (backend memory, fp32 [B,H,S,D]).
  // cpu: naive fp64 math; cuda: a simple fp32 kernel (checked against the cpu one by a test).
  virtual void reference_attention(const Problem& p, const AttentionIO& io, float* out) = 0;
  virtual std::string reference_name() const = 0;
  // Error statistics of `out` (p's output in p.dtype, backend memory) against `ref` (fp32, backend
  // memory), computed where the data lives (cuda: on the GPU, only the statistics are copied back).
  virtual ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) = 0;
};

}  // namespace ab
