// Example attnbench plugin (user-side code, include/attnbench/plugin.h): exact attention on the CPU backend,
// key-blocked with an online softmax and fp32 accumulation. It takes every layout attnbench has (contiguous
// and paged K/V, grouped KV heads, ragged lengths, q_len below the KV length, bottom-right causal, fp16 and
// bf16) and the variants of plugin.h's ab_variant (a sliding window, soft-capping, sinks); its configurations
// are the key block (64, 16 or 256 keys), which `attnbench tune` searches.
#include <attnbench/plugin.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

// The table's name, version and launch count; attnbench's tests build this file again as a peer
// (tests/plugins/CMakeLists.txt) under another version and with an undeclared count (-1, plugin.h).
#ifndef EXAMPLE_PLUGIN_NAME
#define EXAMPLE_PLUGIN_NAME "cpu-example"
#endif
#ifndef EXAMPLE_PLUGIN_VERSION
#define EXAMPLE_PLUGIN_VERSION "1.0.0"
#endif
#ifndef EXAMPLE_KERNELS_PER_FORWARD
#define EXAMPLE_KERNELS_PER_FORWARD 0
#endif
// The Q/O order the table declares (plugin.h, ab_qo_layout) and the order forward indexes; the tests build a
// token-major copy, one that indexes token-major but declares head-major (its rows must be `incorrect`), and one
// whose table stops at teardown as tables built before qo_layout existed do.
#ifndef EXAMPLE_QO_LAYOUT
#define EXAMPLE_QO_LAYOUT AB_QO_HEAD_MAJOR
#endif
#ifndef EXAMPLE_QO_INDEXING
#define EXAMPLE_QO_INDEXING EXAMPLE_QO_LAYOUT
#endif
#ifndef EXAMPLE_TABLE_SIZE
#define EXAMPLE_TABLE_SIZE sizeof(ab_plugin)
#endif
// 1: the whole computation runs once in setup and forward writes nothing (a broken plugin whose rows must be
// `incorrect`: attnbench poisons the output it verifies after setup).
#ifndef EXAMPLE_SETUP_ONLY
#define EXAMPLE_SETUP_ONLY 0
#endif

namespace {

const char* const kConfigs[] = {"keys64", "keys16", "keys256"};
const int kKeyBlock[] = {64, 16, 256};

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) { man <<= 1; --exp; }
      bits = sign | (exp << 23) | ((man & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {  // round to nearest even
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t man = x & 0x7FFFFFu;
  if (((x >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (man ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (man >> 13), rem = man & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu)) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7FFFu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

struct State {
  ab_problem p;
  ab_tensors t;
  int key_block;
};

void write_message(char* buf, size_t size, const char* text) {
  if (buf && size) std::snprintf(buf, size, "%s", text);
}

int can_implement(const ab_problem* p, int32_t backend, int32_t config, char* reason, size_t size) {
  if (backend != AB_BACKEND_CPU) {
    write_message(reason, size, "the CPU example plugin runs on the CPU backend only (--backend=cpu)");
    return 1;
  }
  if (config < 0 || config >= 3) {
    write_message(reason, size, "unknown configuration");
    return 1;
  }
  if (p->head_dim > 512 || p->head_dim_v > 512) {
    write_message(reason, size, "head_dim above 512");
    return 1;
  }
  return 0;
}

int64_t kernels_per_forward(const ab_problem*, int32_t) { return EXAMPLE_KERNELS_PER_FORWARD; }  // on the CPU: 0

// Element e of a [.., D] row-major fp16/bf16 tensor as float.
inline float load(const uint16_t* base, int64_t e, bool bf16) { return bf16 ? bf16_to_float(base[e]) : half_to_float(base[e]); }

// V's and O's head dim (AB_VARIANT_HEAD_DIM_V; 0: head_dim).
int64_t value_dim(const ab_problem& p) { return p.head_dim_v > 0 ? p.head_dim_v : p.head_dim; }

// Offset (in elements) of key j's row of KV head kvh in sequence b, in a K or V tensor of rows `width` wide.
int64_t key_row(const State& s, int64_t b, int64_t kvh, int64_t j, int64_t width) {
  const ab_problem& p = s.p;
  if (p.kv_layout == AB_KV_PAGED) {
    int64_t slot = s.t.block_table[b * p.pages + j / p.page_size];
    return ((slot * p.kv_heads + kvh) * p.page_size + j % p.page_size) * width;
  }
  return ((b * p.kv_heads + kvh) * p.seq_len + j) * width;
}

// One forward of the problem `s` describes into its O.
void attend(const State& s) {
  const ab_problem& p = s.p;
  const bool bf16 = p.dtype == AB_DTYPE_BF16;
  const auto* q = static_cast<const uint16_t*>(s.t.q);
  const auto* k = static_cast<const uint16_t*>(s.t.k);
  const auto* v = static_cast<const uint16_t*>(s.t.v);
  auto* o = static_cast<uint16_t*>(s.t.o);
  const int64_t D = p.head_dim, Dv = value_dim(p), group = p.heads / p.kv_heads;
  std::vector<float> qrow(D), acc(Dv), scores(s.key_block);
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t L = s.t.kv_lens[b];
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t kvh = h / group;
      for (int64_t i = 0; i < p.q_len; ++i) {
        const int64_t token = EXAMPLE_QO_INDEXING == AB_QO_TOKEN_MAJOR ? (b * p.q_len + i) * p.heads + h
                                                                       : (b * p.heads + h) * p.q_len + i;
        const int64_t row = token * D, out_row = token * Dv;
        const int64_t visible = p.causal ? i + L - p.q_len + 1 : L;
        // A sliding window: no key before the query's position (i + L - q_len) minus the window.
        const int64_t first = p.window > 0 && i + L - p.q_len - p.window > 0 ? i + L - p.q_len - p.window : 0;
        for (int64_t d = 0; d < D; ++d) qrow[d] = load(q, row + d, bf16);
        for (int64_t d = 0; d < Dv; ++d) acc[d] = 0;
        float m = -INFINITY, l = 0;
        for (int64_t j0 = first; j0 < visible; j0 += s.key_block) {
          const int64_t n = visible - j0 < s.key_block ? visible - j0 : s.key_block;
          float block_max = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            const int64_t kr = key_row(s, b, kvh, j0 + j, D);
            float dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += qrow[d] * load(k, kr + d, bf16);
            scores[j] = dot * p.scale;
            if (p.softcap > 0) scores[j] = p.softcap * std::tanh(scores[j] / p.softcap);
            block_max = scores[j] > block_max ? scores[j] : block_max;
          }
          const float m_new = m > block_max ? m : block_max;
          const float correction = std::exp(m - m_new);
          l *= correction;
          for (int64_t d = 0; d < Dv; ++d) acc[d] *= correction;
          for (int64_t j = 0; j < n; ++j) {
            const float w = std::exp(scores[j] - m_new);
            l += w;
            const int64_t vr = key_row(s, b, kvh, j0 + j, Dv);
            for (int64_t d = 0; d < Dv; ++d) acc[d] += w * load(v, vr + d, bf16);
          }
          m = m_new;
        }
        if (p.sinks) l += std::exp(s.t.sinks[h] - m);  // the head's sink logit joins the denominator
        for (int64_t d = 0; d < Dv; ++d) {
          const float out = l > 0 ? acc[d] / l : 0.0f;
          o[out_row + d] = bf16 ? float_to_bf16(out) : float_to_half(out);
        }
      }
    }
  }
}

int setup(const ab_problem* p, const ab_tensors* t, int32_t config, void** state, char* err, size_t size) {
  State* s = new (std::nothrow) State{*p, *t, kKeyBlock[config]};
  if (!s) {
    write_message(err, size, "out of host memory");
    return 1;
  }
  *state = s;
  if (EXAMPLE_SETUP_ONLY) attend(*s);
  return 0;
}

int forward(void* state, char*, size_t) {
  if (!EXAMPLE_SETUP_ONLY) attend(*static_cast<const State*>(state));
  return 0;
}

void teardown(void* state) { delete static_cast<State*>(state); }

const ab_plugin kTable = {
    ATTNBENCH_PLUGIN_ABI_VERSION,
    static_cast<uint32_t>(EXAMPLE_TABLE_SIZE),
    EXAMPLE_PLUGIN_NAME,
    EXAMPLE_PLUGIN_VERSION,
    "exact key-blocked online-softmax attention on the CPU (every layout attnbench has)",
    3,
    kConfigs,
    can_implement,
    kernels_per_forward,
    setup,
    forward,
    teardown,
    EXAMPLE_QO_LAYOUT,
    AB_VARIANT_SLIDING_WINDOW | AB_VARIANT_SOFT_CAPPING | AB_VARIANT_SINKS | AB_VARIANT_HEAD_DIM_V,
};

}  // namespace

extern "C" ATTNBENCH_PLUGIN_EXPORT const ab_plugin* attnbench_plugin(void) { return &kTable; }
