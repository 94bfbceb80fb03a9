// The naive fp64 reference and output comparison.
#include "core/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/dtype.hpp"
#include "core/o_rows.hpp"
#include "core/parallel.hpp"
#include "core/sizes.hpp"

namespace ab {

namespace {
// Element (b, kvh, s, d) of a K or V tensor whose rows are `width` wide.
std::int64_t kv_row_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                          std::int64_t s, std::int64_t d, std::int64_t width) {
  if (p.kv_layout == KvLayout::contiguous) return ((b * p.kv_heads + kvh) * p.seq_len + s) * width + d;
  std::int64_t slot = block_table[b * p.pages + s / p.page_size];
  return ((slot * p.kv_heads + kvh) * p.page_size + s % p.page_size) * width + d;
}
}  // namespace

std::int64_t kv_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                      std::int64_t s, std::int64_t d) {
  return kv_row_index(p, block_table, b, kvh, s, d, p.head_dim);
}

std::int64_t v_index(const Problem& p, const std::int32_t* block_table, std::int64_t b, std::int64_t kvh,
                     std::int64_t s, std::int64_t d) {
  return kv_row_index(p, block_table, b, kvh, s, d, p.head_dim_v);
}

void reference_attention_fp64(const Problem& p, const void* q, const void* k, const void* v,
                              const std::int32_t* block_table, double* out, const float* sinks) {
  if (p.sinks && !sinks) throw std::invalid_argument("reference_attention_fp64: a problem with sinks needs their logits");
  const std::int64_t S = p.seq_len, D = p.head_dim, Dv = p.head_dim_v, Q = p.q_len;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const double cap = static_cast<double>(p.softcap);  // 0: no soft-capping
  // One task per (sequence, KV head): its K/V are loaded once for the group of query heads that share them.
  parallel_for(p.b_kvh(), p.flops(), [&](std::int64_t lo, std::int64_t hi) {
    std::vector<double> kk(S * D), vv(S * Dv), qrow(D), s(S);
    for (std::int64_t task = lo; task < hi; ++task) {
      std::int64_t b = task / p.kv_heads, kvh = task % p.kv_heads, len = p.kv_len(b);
      for (std::int64_t j = 0; j < len; ++j) {
        for (std::int64_t d = 0; d < D; ++d) kk[j * D + d] = load_element(k, kv_index(p, block_table, b, kvh, j, d), p.dtype);
        for (std::int64_t d = 0; d < Dv; ++d) vv[j * Dv + d] = load_element(v, v_index(p, block_table, b, kvh, j, d), p.dtype);
      }
      for (std::int64_t h = kvh * p.group(); h < (kvh + 1) * p.group(); ++h) {
        const std::int64_t bh = b * p.heads + h;
        for (std::int64_t i = 0; i < Q; ++i) {
          for (std::int64_t d = 0; d < D; ++d) qrow[d] = load_element(q, (bh * Q + i) * D + d, p.dtype);
          // Keys [j0, n): the window's first to the mask's limit (Problem::first_visible_key, visible_keys).
          const std::int64_t j0 = p.first_visible_key(b, i), n = p.visible_keys(b, i);
          double m = -std::numeric_limits<double>::infinity();
          for (std::int64_t j = j0; j < n; ++j) {
            double acc = 0;
            for (std::int64_t d = 0; d < D; ++d) acc += qrow[d] * kk[j * D + d];
            s[j] = acc * scale;
            if (cap > 0) s[j] = cap * std::tanh(s[j] / cap);
            m = std::max(m, s[j]);
          }
          double l = p.sinks ? std::exp(static_cast<double>(sinks[h]) - m) : 0.0;
          for (std::int64_t j = j0; j < n; ++j) {
            s[j] = std::exp(s[j] - m);
            l += s[j];
          }
          double* o = out + (bh * Q + i) * Dv;
          for (std::int64_t d = 0; d < Dv; ++d) o[d] = 0;
          for (std::int64_t j = j0; j < n; ++j) {
            double w = s[j] / l;
            for (std::int64_t d = 0; d < Dv; ++d) o[d] += w * vv[j * Dv + d];
          }
        }
      }
    }
  });
}

namespace {
// Relative L2 error over every element, NaN/Inf counted, split over the host's cores: the tuner verifies
// thousands of candidate outputs of millions of elements. A mixed batch's padding rows (row i >= q_len_of(b) of a
// head of sequence b) are not the problem's: not compared, not counted, whatever a strategy left there.
template <class RefAt>
ErrorStats compare_impl(const Problem& p, const void* out, RefAt ref_at) {
  const std::int64_t n = p.o_elements();
  const std::int64_t width = p.head_dim_v, rows = p.q_len;
  auto padding = [&](std::int64_t i) {
    const ORow o = o_row_of(i, width, rows, p.heads);
    return o.row >= p.q_len_of(o.seq);
  };
  const std::int64_t chunks = std::min<std::int64_t>(64, std::max<std::int64_t>(1, n / 65536));
  std::vector<double> num(chunks, 0), den(chunks, 0), max_abs(chunks, 0);
  std::vector<std::int64_t> bad(chunks, 0);
  parallel_for(chunks, static_cast<double>(n) * 8, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t c = lo; c < hi; ++c)
      for (std::int64_t i = n * c / chunks, end = n * (c + 1) / chunks; i < end; ++i) {
        if (p.mixed() && padding(i)) continue;
        double x = load_element(out, i, p.dtype);
        double r = ref_at(i);
        if (!std::isfinite(x)) {
          bad[c]++;
          continue;
        }
        double d = std::fabs(x - r);
        max_abs[c] = std::max(max_abs[c], d);
        num[c] += d * d;
        den[c] += r * r;
      }
  });
  double tn = 0, td = 0, worst = 0;
  std::int64_t nonfinite = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    nonfinite += bad[c];
    worst = std::max(worst, max_abs[c]);
    tn += num[c];
    td += den[c];
  }
  return error_stats_from_sums(p.compared_o_elements(), tn, td, worst, nonfinite);
}
}  // namespace

ErrorStats error_stats_from_sums(std::int64_t count, double sq_err, double sq_ref, double max_abs, std::int64_t nonfinite) {
  ErrorStats e;
  e.count = count;
  e.max_abs = max_abs;
  e.nonfinite = nonfinite;
  e.rel_l2 = sq_ref > 0 ? std::sqrt(sq_err / sq_ref) : std::sqrt(sq_err);
  if (nonfinite) e.rel_l2 = std::numeric_limits<double>::infinity();
  return e;
}

ErrorStats compare_output(const Problem& p, const void* out, const double* ref) {
  return compare_impl(p, out, [&](std::int64_t i) { return ref[i]; });
}

ErrorStats compare_output(const Problem& p, const void* out, const float* ref) {
  return compare_impl(p, out, [&](std::int64_t i) { return static_cast<double>(ref[i]); });
}

double tolerance_for(DType t) { return t == DType::bf16 ? 2e-2 : 5e-3; }

}  // namespace ab
