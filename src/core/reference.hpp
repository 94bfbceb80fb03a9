// The naive fp64 attention reference on host arrays, the oracle every strategy is checked against.
#pragma once
#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace ab {

// Index of element (b, kvh, s, d) of K (kv_index, rows head_dim wide) or V (v_index, head_dim_v wide) in either
// layout (kvh: the KV head; s below kv_len(b) when paged).
std::int64_t kv_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                      std::int64_t s, std::int64_t d);
std::int64_t v_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                     std::int64_t s, std::int64_t d);

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
