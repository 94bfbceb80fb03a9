// Problem construction, validation and derived quantities.
#include "core/problem.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"
#include "core/sizes.hpp"

namespace ab {

const char* kv_layout_name(KvLayout l) { return l == KvLayout::paged ? "paged" : "contiguous"; }

bool parse_kv_layout(const std::string& s, KvLayout* out) {
  if (s == "contiguous") { *out = KvLayout::contiguous; return true; }
  if (s == "paged") { *out = KvLayout::paged; return true; }
  return false;
}

std::int64_t Problem::min_kv_len() const {
  return kv_lens.empty() ? seq_len : *std::min_element(kv_lens.begin(), kv_lens.end());
}

std::int64_t Problem::total_kv_len() const {
  if (kv_lens.empty()) return batch * seq_len;
  std::int64_t t = 0;
  for (std::int64_t l : kv_lens) t += l;
  return t;
}

std::int64_t Problem::total_q_len() const {
  if (q_lens.empty()) return batch * q_len;
  std::int64_t t = 0;
  for (std::int64_t q : q_lens) t += q;
  return t;
}

std::int64_t Problem::page_len(std::int64_t b, std::int64_t p) const {
  std::int64_t start = p * page_size, len = kv_len(b);
  std::int64_t end = std::min(start + page_size, len);
  return end > start ? end - start : 0;
}

float Problem::scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))); }

std::int64_t Problem::visible_keys(std::int64_t b, std::int64_t qi) const {
  std::int64_t len = kv_len(b);
  if (!causal) return len;
  const std::int64_t q = q_len_of(b);
  return std::min(len, std::min(qi, q - 1) + len - q + 1);
}

std::int64_t Problem::first_visible_key(std::int64_t b, std::int64_t qi) const {
  if (window <= 0) return 0;
  const std::int64_t q = q_len_of(b);
  return std::max<std::int64_t>(0, std::min(qi, q - 1) + kv_len(b) - q - window);
}

std::vector<std::string> Problem::variants() const {
  std::vector<std::string> v;
  if (window > 0) v.push_back(kSlidingWindow);
  if (softcap > 0) v.push_back(kSoftCapping);
  if (sinks) v.push_back(kSinks);
  if (split_head_dim()) v.push_back(kValueHeadDim);
  if (mixed()) v.push_back(kQueryLengths);
  if (fp8_kv()) v.push_back(kFp8KvCache);
  return v;
}

std::vector<std::string> key_mask_variants() { return {kSlidingWindow, kSoftCapping, kQueryLengths}; }
std::vector<std::string> softmax_variants() { return {kSlidingWindow, kSoftCapping, kSinks, kValueHeadDim, kQueryLengths}; }

namespace {
// The sum over queries qi = 0 .. q-1 of max(0, a + qi): the keys before each query's window (a = L - q - window).
double keys_before_windows(double a, double q) {
  if (a >= 0) return q * a + q * (q - 1) / 2;
  const double n = a + q;  // the terms a + qi >= 1 are 1 .. n - 1
  return n > 1 ? n * (n - 1) / 2 : 0;
}
}  // namespace

double Problem::pairs() const {
  // Per sequence of length L: q·L keys without a mask; bottom-right causal: query i sees L - q + 1 + i; a window
  // takes away, from query i, the max(0, L - q + i - window) keys before it.
  double per_head = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const double q = static_cast<double>(q_len_of(b));
    const double L = static_cast<double>(kv_len(b));
    per_head += causal ? q * (L - q + 1) + q * (q - 1) / 2 : q * L;
    if (window > 0) per_head -= keys_before_windows(L - q - static_cast<double>(window), q);
  }
  return per_head * static_cast<double>(heads);
}

double Problem::flops() const { return 2.0 * pairs() * static_cast<double>(head_dim + head_dim_v); }

double Problem::bytes() const {
  const double es = static_cast<double>(dtype_size(dtype));
  // Q read and O written for the real query rows (a mixed batch's padding rows are not the problem's).
  const double qo = static_cast<double>(total_q_len()) * static_cast<double>(heads) *
                    static_cast<double>(head_dim + head_dim_v);
  double kv_rows = static_cast<double>(total_kv_len());
  for (std::int64_t b = 0; window > 0 && b < batch; ++b) kv_rows -= static_cast<double>(first_visible_key(b, 0));
  const double kv = static_cast<double>(kv_heads) * kv_rows * static_cast<double>(head_dim + head_dim_v);
  const double sink_logits = sinks ? 4.0 * static_cast<double>(heads) : 0.0;
  // K/V at their stored width (FP8: one byte) and an FP8 cache's fp32 scales.
  const double kv_scales = 4.0 * static_cast<double>(kv_scale_count(kv_format, kv_scale, kv_heads));
  return qo * es + kv * kv_element_bytes(kv_format, es) + kv_scales + sink_logits;
}

std::int64_t Problem::pool_slots() const {
  if (kv_lens.empty()) return batch * pages;
  std::int64_t n = 0;
  for (std::int64_t b = 0; b < batch; ++b) n += pages_of(b);
  return n;
}

double Problem::padded_fraction() const {
  double padded = static_cast<double>(batch) * static_cast<double>(seq_len);
  return padded > 0 ? 1.0 - static_cast<double>(total_kv_len()) / padded : 0.0;
}

std::string Problem::label() const { return problem_label(*this); }  // from the axis table

bool Problem::operator==(const Problem& o) const {
  return batch == o.batch && heads == o.heads && kv_heads == o.kv_heads && seq_len == o.seq_len &&
         q_len == o.q_len && head_dim == o.head_dim && head_dim_v == o.head_dim_v && pages == o.pages && page_size == o.page_size &&
         kv_layout == o.kv_layout && dtype == o.dtype && causal == o.causal && window == o.window &&
         softcap == o.softcap && sinks == o.sinks && kv_lens == o.kv_lens && kv_lens_spec == o.kv_lens_spec &&
         q_lens == o.q_lens && q_lens_spec == o.q_lens_spec && kv_format == o.kv_format && kv_scale == o.kv_scale;
}

namespace {
void require_positive(const char* name, std::int64_t v) {
  if (v <= 0) throw UsageError(fmt::format("{} must be a positive integer, got {}", name, v));
}

// Per-sequence counts `v` of `axis` (kv_lens: KV lengths, q_lens: query counts): one per sequence of `batch`, each
// positive. Returns the largest, which a size also given (`size_name` seq_len or q_len; `given` 0: none) must equal.
std::int64_t per_sequence_largest(const char* axis, const char* what, const std::vector<std::int64_t>& v,
                                  std::int64_t batch, const char* size_name, std::int64_t given) {
  if (static_cast<std::int64_t>(v.size()) != batch)
    throw UsageError(fmt::format("{}: {} {}s for batch {} (give one per sequence)", axis, v.size(), what, batch));
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] <= 0) throw UsageError(fmt::format("{}: {} {} of sequence {} is not a positive integer", axis, what, v[i], i));
  const std::int64_t largest = *std::max_element(v.begin(), v.end());
  if (given > 0 && given != largest)
    throw UsageError(fmt::format("{}={} is not the largest of the {} ({}); give one of them", size_name, given, axis, largest));
  return largest;
}
}  // namespace

Problem make_problem(const ProblemSpec& s) {
  require_positive("batch", s.batch);
  require_positive("heads", s.heads);
  require_positive("head_dim", s.head_dim);
  if (s.kv_heads < 0) throw UsageError(fmt::format("kv_heads must be a positive integer, got {}", s.kv_heads));
  if (s.q_len < 0) throw UsageError(fmt::format("q_len must be a positive integer, got {}", s.q_len));
  if ((s.pages > 0) == (s.page_size > 0)) throw UsageError("give exactly one of --pages and --page_size");
  Problem p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (p.kv_heads > p.heads || p.heads % p.kv_heads != 0)
    throw UsageError(fmt::format("kv_heads={} does not divide heads={} (each KV head serves a group of query heads)",
                                 p.kv_heads, p.heads));
  p.head_dim = s.head_dim;
  if (s.head_dim_v < 0) throw UsageError(fmt::format("head_dim_v must be a positive integer, got {}", s.head_dim_v));
  p.head_dim_v = s.head_dim_v > 0 ? s.head_dim_v : s.head_dim;
  p.kv_layout = s.kv_layout;
  p.dtype = s.dtype;
  p.causal = s.causal;
  if (s.window < 0)
    throw UsageError(fmt::format("window must be a positive integer (the keys a query sees before its own), got {}", s.window));
  if (s.softcap < 0) throw UsageError(fmt::format("softcap must be a positive integer, got {}", s.softcap));
  p.window = s.window;
  p.softcap = s.softcap;
  p.sinks = s.sinks;
  if (s.kv_scale == KvScale::head && s.kv_format != KvFormat::fp8_e4m3)
    throw UsageError("--kv_scale=head: per-head scales belong to an FP8 K/V cache (--kv_dtype=fp8_e4m3)");
  p.kv_format = s.kv_format;
  p.kv_scale = s.kv_scale;
  if (!s.kv_lens.empty()) {
    p.seq_len = per_sequence_largest("kv_lens", "length", s.kv_lens, s.batch, "seq_len", s.seq_len);
    p.kv_lens = s.kv_lens;
    p.kv_lens_spec = s.kv_lens_spec.empty() ? "list" : s.kv_lens_spec;
  } else {
    require_positive("seq_len", s.seq_len);
    p.seq_len = s.seq_len;
  }
  if (p.seq_len > 0x7fffffff)
    throw UsageError(fmt::format("seq_len={} is more than the 2^31-1 keys a sequence may hold", p.seq_len));
  if (!s.q_lens.empty()) {
    p.q_len = per_sequence_largest("q_lens", "query count", s.q_lens, s.batch, "q_len", s.q_len);
    for (std::size_t i = 0; i < s.q_lens.size(); ++i)
      if (s.q_lens[i] > p.kv_len(static_cast<std::int64_t>(i)))
        throw UsageError(fmt::format("q_lens: sequence {} has {} queries, more than its KV length {}", i, s.q_lens[i],
                                     p.kv_len(static_cast<std::int64_t>(i))));
    p.q_lens = s.q_lens;
    p.q_lens_spec = s.q_lens_spec.empty() ? "list" : s.q_lens_spec;
  } else {
    p.q_len = s.q_len > 0 ? s.q_len : p.seq_len;
  }
  if (!p.mixed() && p.q_len > p.min_kv_len())
    throw UsageError(p.ragged() ? s.q_len > 0
                                      ? fmt::format("q_len={} is more than the shortest KV length {}", p.q_len, p.min_kv_len())
                                      : fmt::format("a ragged batch needs --q_len (at most its shortest KV length {}; "
                                                    "1 for decode): q_len defaults to seq_len, the longest, {}",
                                                    p.min_kv_len(), p.seq_len)
                                : fmt::format("q_len={} is more than seq_len={}", p.q_len, p.seq_len));
  if (s.pages > 0) {
    if (s.pages > p.seq_len)
      throw UsageError(fmt::format("pages={} is more than seq_len={} tokens", s.pages, p.seq_len));
    p.page_size = (p.seq_len + s.pages - 1) / s.pages;
  } else {
    if (s.page_size > p.seq_len)
      throw UsageError(fmt::format("page_size={} is larger than seq_len={}", s.page_size, p.seq_len));
    p.page_size = s.page_size;
  }
  // With page_size = ceil(S/P) some requested counts leave trailing pages empty (S=10, P=6 gives 5
  // pages of 2); the effective count is the number of non-empty pages.
  p.pages = (p.seq_len + p.page_size - 1) / p.page_size;
  p.pages_requested = s.pages > 0 ? s.pages : 0;
  // Every count derived from a problem (elements, fp64 bytes, pool slots, launches) must fit in 64 bits;
  // the refusal prints the true size, computed in floating point.
  const std::int64_t widest = std::max(p.head_dim, p.head_dim_v);
  if (size_mul(p.batch, p.heads, p.seq_len, widest) > kMaxTensorElements) {
    double elements = static_cast<double>(p.batch) * p.heads * p.seq_len * widest;
    throw UsageError(fmt::format("problem {}: a [B,H,S,D] tensor has {:.4g} elements ({} in {}), more than the "
                                 "2^50 this tool can address; refused",
                                 p.label(), elements, human_bytes(elements * dtype_size(p.dtype)), dtype_name(p.dtype)));
  }
  return p;
}

Problem make_problem(std::int64_t batch, std::int64_t heads, std::int64_t seq_len, std::int64_t head_dim,
                     std::int64_t pages, std::int64_t page_size, KvLayout layout, DType dtype, bool causal) {
  ProblemSpec s;
  s.batch = batch;
  s.heads = heads;
  s.seq_len = seq_len;
  s.head_dim = head_dim;
  s.pages = pages;
  s.page_size = page_size;
  s.kv_layout = layout;
  s.dtype = dtype;
  s.causal = causal;
  return make_problem(s);
}

}  // namespace ab
