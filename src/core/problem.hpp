// One attention problem as inference runs it: B sequences, H query heads sharing KV heads in groups (GQA;
// one KV head is MQA), q_len queries per sequence against KV lengths that may differ per sequence (ragged),
// K/V contiguous or in pages, dtype, causal (bottom-right aligned), and the variants of issue 47: a sliding
// window (a query sees at most `window` keys before its own position), logit soft-capping (c·tanh(s/c) of
// the scaled scores), attention sinks (a per-head logit added to the softmax's denominator, gpt-oss) and a
// value head dim of its own (head_dim_v: V and O are that wide, Q and K head_dim; MLA decode, 576 / 512). Also
// the quantities derived from it:
// page geometry, the FLOPs of the (query, key) pairs computed, the bytes a forward must move, tensor sizes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/kv_format.hpp"

namespace ab {

enum class KvLayout { contiguous, paged };
const char* kv_layout_name(KvLayout l);
bool parse_kv_layout(const std::string& s, KvLayout* out);

struct Problem {
  std::int64_t batch = 1;
  std::int64_t heads = 1;      // query heads
  std::int64_t kv_heads = 1;   // KV heads; heads is a multiple (group() query heads share one)
  std::int64_t seq_len = 1;    // KV length (the longest, when ragged)
  std::int64_t q_len = 1;      // queries per sequence, the last q_len positions of its KV (1 <= q_len <= every KV length);
                               // with q_lens, the longest (Q and O hold q_len rows a head, a sequence's first q_lens[b] real)
  std::int64_t head_dim = 64;    // Q and K (the QK^T GEMM's depth)
  std::int64_t head_dim_v = 64;  // V and O (the PV GEMM's width); head_dim unless given (Problem::split_head_dim)
  std::int64_t pages = 1;      // pages of the longest sequence: ceil(seq_len / page_size)
  std::int64_t page_size = 1;  // tokens per KV page; a sequence's last page may be shorter
  KvLayout kv_layout = KvLayout::contiguous;
  DType dtype = DType::fp16;
  bool causal = false;         // query i of a sequence of KV length L sees keys 0 ... i + L - q_len
  std::int64_t window = 0;     // sliding window: query i (position i + L - q_len) sees no key before position - window; 0: none
  std::int64_t softcap = 0;    // soft-capping: scores s (scaled) become softcap·tanh(s / softcap); 0: none
  bool sinks = false;          // attention sinks: head h's softmax denominator gains exp(sink_h - max) (core/softmax_sinks.hpp)
  KvFormat kv_format = KvFormat::native;  // K/V stored as dtype, or FP8 E4M3 with kv_scale scales (issue 46)
  KvScale kv_scale = KvScale::tensor;     // FP8: one scale per tensor (K, V) or per KV head; tensor otherwise
  std::vector<std::int64_t> kv_lens;  // ragged: one KV length per sequence (max = seq_len); empty: all seq_len
  std::string kv_lens_spec;           // how the lengths were given ("uniform:512:8192:1", "list:...", "file:..."); "" when not ragged
  // A mixed batch: one query count per sequence (max = q_len; each at most its KV length): sequence b's queries are
  // the last q_lens[b] positions of its KV, in rows 0 .. q_lens[b]-1 of its heads; rows past them are padding
  // (computed as copies of its last query, so never an empty row; never counted). Empty: every sequence has q_len.
  std::vector<std::int64_t> q_lens;
  std::string q_lens_spec;            // how they were given ("list:1,1,512", ...); "" when not
  std::int64_t pages_requested = 0;   // what the user asked for (0: given as page_size); not part of ==

  std::int64_t bh() const { return batch * heads; }
  std::int64_t b_kvh() const { return batch * kv_heads; }
  std::int64_t group() const { return heads / kv_heads; }
  bool ragged() const { return !kv_lens.empty(); }
  std::int64_t kv_len(std::int64_t b) const { return kv_lens.empty() ? seq_len : kv_lens[b]; }
  bool mixed() const { return !q_lens.empty(); }
  bool fp8_kv() const { return kv_format == KvFormat::fp8_e4m3; }
  std::int64_t q_len_of(std::int64_t b) const { return q_lens.empty() ? q_len : q_lens[b]; }
  std::int64_t total_q_len() const;  // sum over sequences of their queries
  std::int64_t min_kv_len() const;
  std::int64_t total_kv_len() const;  // sum over sequences
  // Pages sequence b uses, and the length of its page p (0 past its end).
  std::int64_t pages_of(std::int64_t b) const { return (kv_len(b) + page_size - 1) / page_size; }
  std::int64_t page_len(std::int64_t b, std::int64_t p) const;
  std::int64_t page_start(std::int64_t p) const { return p * page_size; }
  // Length of page p of the longest sequence, and of its last page (the page shapes a GEMM strategy plans for).
  std::int64_t longest_page_len(std::int64_t p) const { return p == pages - 1 ? last_page_len() : page_size; }
  std::int64_t last_page_len() const { return seq_len - (pages - 1) * page_size; }
  std::int64_t padded_seq() const { return pages * page_size; }
  float scale() const;

  // Keys [first_visible_key, visible_keys) are the ones query qi (0-based among q_len_of(b)) of sequence b sees: from
  // 0, or with a window from its position (qi + L - q_len_of(b)) minus the window; up to L, or with causal its position.
  // A mixed batch's padding row (qi >= q_len_of(b)) sees what its last query sees.
  std::int64_t visible_keys(std::int64_t b, std::int64_t qi) const;
  std::int64_t first_visible_key(std::int64_t b, std::int64_t qi) const;
  // V and O narrower or wider than Q and K.
  bool split_head_dim() const { return head_dim_v != head_dim; }
  // The variants of the problem a strategy must run to take it ("sliding window", "soft-capping", "sinks",
  // "value head dim"); empty: none.
  std::vector<std::string> variants() const;
  // (query, key) pairs the math computes, over every sequence and query head.
  double pairs() const;
  // 2·D + 2·Dv per pair (QK^T over D and PV over Dv, a multiply-add each).
  double flops() const;
  // Q read and O written for every query head; K and V read once per KV head and token that some query sees
  // (with a window, the keys before the first query's window are never read); with sinks, one fp32 logit a head.
  double bytes() const;
  // Elements of Q [B, H, q_len, D] and of O [B, H, q_len, Dv].
  std::int64_t q_elements() const { return batch * heads * q_len * head_dim; }
  std::int64_t o_elements() const { return batch * heads * q_len * head_dim_v; }
  // The elements of O a compare counts: a mixed batch's real query rows only (core/o_rows.hpp), else all.
  std::int64_t compared_o_elements() const { return total_q_len() * heads * head_dim_v; }
  // Elements of contiguous K [B, KVH, seq_len, D] and V [B, KVH, seq_len, Dv].
  std::int64_t kv_elements() const { return batch * kv_heads * seq_len * head_dim; }
  std::int64_t v_elements() const { return batch * kv_heads * seq_len * head_dim_v; }
  // Slots in the paged pools: one per page some sequence uses, each [KVH, page_size, D] in K's pool and
  // [KVH, page_size, Dv] in V's.
  std::int64_t pool_slots() const;
  std::int64_t pool_elements() const { return pool_slots() * kv_heads * page_size * head_dim; }
  std::int64_t v_pool_elements() const { return pool_slots() * kv_heads * page_size * head_dim_v; }
  // Fraction of the padded [B, seq_len] KV area that is padding (0 unless ragged).
  double padded_fraction() const;

  std::string label() const;  // "B=32 H=12 S=512 D=64 P=1 contiguous fp16"
  bool operator==(const Problem& o) const;
};

// The names of the problem variants (Problem::variants), and those the key mask carries to the softmax primitives
// and fused kernels that apply it (core/key_mask.hpp: the window and the soft-cap).
inline constexpr const char* kSlidingWindow = "sliding window";
inline constexpr const char* kSoftCapping = "soft-capping";
inline constexpr const char* kSinks = "sinks";
inline constexpr const char* kValueHeadDim = "value head dim";
inline constexpr const char* kQueryLengths = "per-sequence query lengths";
inline constexpr const char* kFp8KvCache = "FP8 K/V cache";
std::vector<std::string> key_mask_variants();
// The variants the built-in GEMM strategies carry through their primitives: the key mask's (per-sequence query
// lengths among them), the sinks their combine and finalize steps add (core/softmax_sinks.hpp), and a value head
// dim (their PV GEMM's width and the primitives' accumulator rows).
std::vector<std::string> softmax_variants();

// The largest tensor make_problem accepts (2^50 elements: 8 PiB in fp64), so that every size derived from a
// problem fits in 64 bits.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 50;

// A problem's sizes as the user gave them. 0 for kv_heads / q_len: the defaults (heads, seq_len). When
// kv_lens is set, seq_len is its maximum (a seq_len given too must equal it).
struct ProblemSpec {
  std::int64_t batch = 0, heads = 0, kv_heads = 0, seq_len = 0, q_len = 0, head_dim = 0, pages = 0, page_size = 0;
  KvLayout kv_layout = KvLayout::contiguous;
  DType dtype = DType::fp16;
  bool causal = false;
  std::vector<std::int64_t> kv_lens;
  std::string kv_lens_spec;
  std::int64_t window = 0, softcap = 0;  // 0: none; given, a positive integer
  bool sinks = false;
  std::int64_t head_dim_v = 0;  // 0: head_dim
  std::vector<std::int64_t> q_lens;  // a mixed batch: one query count per sequence (q_len, if given, their most)
  std::string q_lens_spec;
  KvFormat kv_format = KvFormat::native;  // FP8 E4M3 K/V (issue 46); kv_scale = head only with it
  KvScale kv_scale = KvScale::tensor;
};

// Builds a problem. Exactly one of pages / page_size is > 0. Throws UsageError (one line) on zero or
// negative sizes (a negative window, soft-cap or head_dim_v included), KV heads that do not divide heads, q_len above the shortest KV length, a length list
// that is not one per sequence, more pages than tokens, or a tensor of more than kMaxTensorElements.
Problem make_problem(const ProblemSpec& s);
// Self-attention (kv_heads = heads, q_len = seq_len, one length): the first version's constructor.
Problem make_problem(std::int64_t batch, std::int64_t heads, std::int64_t seq_len, std::int64_t head_dim,
                     std::int64_t pages, std::int64_t page_size, KvLayout layout, DType dtype, bool causal);

}  // namespace ab
