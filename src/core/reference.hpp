// The naive fp64 attention reference on host arrays, the oracle every strategy is checked against.
#pragma once
#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace ab {

// Host copies of a problem's tensors (raw dtype bits), in the layouts described in backend.hpp.
struct HostTensors {
  std::vector<std::uint16_t> q, k, v;     // q: [B,H,q_len,D]; k: contiguous [B,KVH,S,D] or pool [slots][KVH][ps][D];
                                          // v: the same with Dv (head_dim_v) for D
  std::vector<std::int32_t> block_table;  // [B, P], paged only; -1 past a sequence's last page
  std::vector<float> sinks;               // [H] sink logits in [-1, 5) when the problem has sinks, else empty
};

// Bytes make_random_inputs holds for `p` (q, k, v and the block table).
std::int64_t host_input_bytes(const Problem& p);

// Index of element (b, kvh, s, d) of K (kv_index, rows head_dim wide) or V (v_index, head_dim_v wide) in either
// layout (kvh: the KV head; s below kv_len(b) when paged).
std::int64_t kv_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                      std::int64_t s, std::int64_t d);
std::int64_t v_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                     std::int64_t s, std::int64_t d);

// Random inputs in [-1, 1) (never zeros), a random page placement for the paged layout, zeros in the
// unused tail rows of a sequence's last pool page, and with sinks one logit a head in [-1, 5). Each tensor is
// its own counter-based stream over the elements' logical indices, drawn on the host's cores: a paged
// problem holds the same Q, K and V values as the contiguous one of the same seed, and the sinks change no
// other tensor. Contiguous K/V rows past a ragged sequence's length hold random values too: a strategy that
// reads them must mask them.
HostTensors make_random_inputs(const Problem& p, std::uint64_t seed);

// O in fp64, [B,H,q_len,Dv]. Reads k/v through the layout: query head h reads KV head h / group(). With
// p.sinks, `sinks` holds head h's sink logit at [h] (core/softmax_sinks.hpp).
void reference_attention_fp64(const Problem& p, const void* q, const void* k, const void* v,
                              const std::int32_t* block_table, double* out, const float* sinks = nullptr);

// Comparison of an output (dtype bits) with a reference.
struct ErrorStats {
  double max_abs = 0;
  double rel_l2 = 0;
  std::int64_t nonfinite = 0;  // NaN/Inf elements (unwritten outputs are poisoned to NaN)
  std::int64_t count = 0;
};
// The statistics from their sums: relative L2 error sqrt(sq_err / sq_ref) (sqrt(sq_err) for a zero
// reference), infinite when any output is non-finite. Shared by the host compare and device compares.
ErrorStats error_stats_from_sums(std::int64_t count, double sq_err, double sq_ref, double max_abs, std::int64_t nonfinite);
ErrorStats compare_output(const Problem& p, const void* out, const double* ref);
ErrorStats compare_output(const Problem& p, const void* out, const float* ref);

// Tolerance on relative L2 error for a dtype (fp16 5e-3, bf16 2e-2).
double tolerance_for(DType t);

}  // namespace ab
