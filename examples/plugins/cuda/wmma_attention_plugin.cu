// Example attnbench plugin (user-side code, include/attnbench/plugin.h): a simple tensor-core attention
// kernel with WMMA (16x16x16 fp16/bf16 MMA, fp32 accumulate) and an online softmax. This is user code, so
// its __global__ lives here in examples/, not in attnbench's kernels/. One warp per CTA owns 16 queries of
// one (sequence, query head); each step stages KT keys and values in shared memory (from contiguous K/V or
// through the block table of a paged pool), computes S = Q K^T with WMMA, updates the softmax state and
// accumulates P V with WMMA into an fp32 tile in shared memory. Takes GQA/MQA, paged and contiguous,
// ragged lengths, q_len < KV length, bottom-right causal, fp16 and bf16, head_dim a multiple of 16 up to
// 128. Configurations: the key tile, "k32" (default) or "k64". One kernel per forward.
#include <attnbench/plugin.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstdio>
#include <new>

namespace {

using namespace nvcuda;

const char* const kConfigs[] = {"k32", "k64"};
const int kKeyTile[] = {32, 64};
constexpr int kQueries = 16;

struct Args {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const int32_t* block_table;
  const int32_t* kv_lens;
  int64_t heads, kv_heads, seq_len, q_len, page_size, pages;
  int paged, causal;
  float scale;
};

template <class T> __device__ T from_float(float x);
template <> __device__ __half from_float<__half>(float x) { return __float2half(x); }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

// Element offset of key j's row of KV head kvh in sequence b.
__device__ int64_t key_row(const Args& a, int64_t b, int64_t kvh, int64_t j, int D) {
  if (a.paged) {
    const int64_t slot = a.block_table[b * a.pages + j / a.page_size];
    return ((slot * a.kv_heads + kvh) * a.page_size + j % a.page_size) * D;
  }
  return ((b * a.kv_heads + kvh) * a.seq_len + j) * D;
}

// Shared memory of one CTA, in bytes, for head_dim D and key tile KT (every part a multiple of 32 bytes).
__host__ __device__ constexpr size_t smem_bytes(int D, int KT, size_t elem) {
  return size_t(kQueries) * D * 4 + size_t(kQueries) * KT * 4 + size_t(kQueries) * D * elem + 2 * size_t(KT) * D * elem +
         size_t(kQueries) * KT * elem + 3 * kQueries * 4 + 32;
}

template <class T, int KT, int D>
__global__ void wmma_attention(Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  float* acc = reinterpret_cast<float*>(smem);           // [16][D] unnormalised output
  float* s = acc + kQueries * D;                         // [16][KT] scores
  T* qs = reinterpret_cast<T*>(s + kQueries * KT);       // [16][D]
  T* ks = qs + kQueries * D;                             // [KT][D]
  T* vs = ks + KT * D;                                   // [KT][D]
  T* ps = vs + KT * D;                                   // [16][KT] probabilities
  float* m = reinterpret_cast<float*>(ps + kQueries * KT);
  float* l = m + kQueries;
  float* corr = l + kQueries;

  const int lane = threadIdx.x;
  const int64_t q0 = int64_t(blockIdx.x) * kQueries, h = blockIdx.y, b = blockIdx.z;
  const int64_t group = a.heads / a.kv_heads, kvh = h / group;
  const int64_t L = a.kv_lens[b];
  const T* q = static_cast<const T*>(a.q);
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);
  const int64_t qbase = ((b * a.heads + h) * a.q_len + q0) * D;

  for (int i = lane; i < kQueries * D; i += 32) {
    const int r = i / D;
    qs[i] = q0 + r < a.q_len ? q[qbase + i] : from_float<T>(0.f);
    acc[i] = 0.f;
  }
  if (lane < kQueries) {
    m[lane] = -INFINITY;
    l[lane] = 0.f;
  }
  // Keys the CTA's last valid query sees (bottom-right causal), else all L.
  const int64_t last = (q0 + kQueries < a.q_len ? q0 + kQueries : a.q_len) - 1;
  const int64_t keys = a.causal ? last + L - a.q_len + 1 : L;
  __syncwarp();

  for (int64_t j0 = 0; j0 < keys; j0 += KT) {
    for (int i = lane; i < KT * (D / 8); i += 32) {  // 16-byte chunks of K and V rows
      const int r = i / (D / 8), c = i % (D / 8);
      uint4 kz = make_uint4(0, 0, 0, 0), vz = kz;
      if (j0 + r < L) {
        const int64_t row = key_row(a, b, kvh, j0 + r, D);
        kz = reinterpret_cast<const uint4*>(k + row)[c];
        vz = reinterpret_cast<const uint4*>(v + row)[c];
      }
      reinterpret_cast<uint4*>(ks + r * D)[c] = kz;
      reinterpret_cast<uint4*>(vs + r * D)[c] = vz;
    }
    __syncwarp();
    // S = Q K^T, KT/16 tiles of 16x16.
    for (int n = 0; n < KT / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
      wmma::fill_fragment(sf, 0.f);
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> af;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bf;
        wmma::load_matrix_sync(af, qs + kk * 16, D);
        wmma::load_matrix_sync(bf, ks + n * 16 * D + kk * 16, D);
        wmma::mma_sync(sf, af, bf, sf);
      }
      wmma::store_matrix_sync(s + n * 16, sf, KT, wmma::mem_row_major);
    }
    __syncwarp();
    // Online softmax: lane r owns query row r.
    if (lane < kQueries) {
      const int64_t qi = q0 + lane;
      const int64_t visible = qi >= a.q_len ? 0 : (a.causal ? qi + L - a.q_len + 1 : L);
      float mx = m[lane];
      for (int c = 0; c < KT; ++c) {
        const float x = j0 + c < visible ? s[lane * KT + c] * a.scale : -INFINITY;
        s[lane * KT + c] = x;
        mx = fmaxf(mx, x);
      }
      const float c0 = mx == -INFINITY ? 1.f : __expf(m[lane] - mx);
      float sum = 0.f;
      for (int c = 0; c < KT; ++c) {
        const float p = mx == -INFINITY ? 0.f : __expf(s[lane * KT + c] - mx);
        const T pt = from_float<T>(p);
        ps[lane * KT + c] = pt;
        sum += p;
      }
      l[lane] = l[lane] * c0 + sum;
      m[lane] = mx;
      corr[lane] = c0;
    }
    __syncwarp();
    for (int i = lane; i < kQueries * D; i += 32) acc[i] *= corr[i / D];
    __syncwarp();
    // acc += P V, D/16 tiles of 16x16.
    for (int d = 0; d < D / 16; ++d) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
      wmma::load_matrix_sync(of, acc + d * 16, D, wmma::mem_row_major);
      for (int kk = 0; kk < KT / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> vf;
        wmma::load_matrix_sync(pf, ps + kk * 16, KT);
        wmma::load_matrix_sync(vf, vs + kk * 16 * D + d * 16, D);
        wmma::mma_sync(of, pf, vf, of);
      }
      wmma::store_matrix_sync(acc + d * 16, of, D, wmma::mem_row_major);
    }
    __syncwarp();
  }
  T* o = static_cast<T*>(a.o);
  for (int i = lane; i < kQueries * D; i += 32) {
    const int r = i / D;
    if (q0 + r < a.q_len) o[qbase + i] = from_float<T>(l[r] > 0.f ? acc[i] / l[r] : 0.f);
  }
}

struct State {
  ab_problem p;
  ab_tensors t;
  int config;
};

void say(char* buf, size_t size, const char* text) {
  if (buf && size) std::snprintf(buf, size, "%s", text);
}

using Kernel = void (*)(Args);

template <class T, int KT>
Kernel pick_d(int64_t d) {
  switch (d) {
    case 16: return wmma_attention<T, KT, 16>;
    case 32: return wmma_attention<T, KT, 32>;
    case 48: return wmma_attention<T, KT, 48>;
    case 64: return wmma_attention<T, KT, 64>;
    case 80: return wmma_attention<T, KT, 80>;
    case 96: return wmma_attention<T, KT, 96>;
    case 112: return wmma_attention<T, KT, 112>;
    case 128: return wmma_attention<T, KT, 128>;
    default: return nullptr;
  }
}

Kernel pick(const ab_problem& p, int config) {
  const bool bf16 = p.dtype == AB_DTYPE_BF16;
  if (config == 0) return bf16 ? pick_d<__nv_bfloat16, 32>(p.head_dim) : pick_d<__half, 32>(p.head_dim);
  return bf16 ? pick_d<__nv_bfloat16, 64>(p.head_dim) : pick_d<__half, 64>(p.head_dim);
}

int can_implement(const ab_problem* p, int32_t backend, int32_t config, char* reason, size_t size) {
  if (backend != AB_BACKEND_CUDA) return say(reason, size, "the WMMA example plugin needs the CUDA backend"), 1;
  if (config < 0 || config > 1) return say(reason, size, "unknown configuration"), 1;
  if (p->head_dim % 16 != 0 || p->head_dim > 128)
    return say(reason, size, "head_dim must be a multiple of 16 up to 128"), 1;
  if (p->q_len > 65535LL * kQueries || p->heads > 65535 || p->batch > 65535)
    return say(reason, size, "grid too large (q_len/16, heads and batch are each at most 65535)"), 1;
  return 0;
}

int64_t kernels_per_forward(const ab_problem*, int32_t) { return 1; }

int setup(const ab_problem* p, const ab_tensors* t, int32_t config, void** state, char* err, size_t size) {
  Kernel kern = pick(*p, config);
  if (!kern) return say(err, size, "no kernel for this head_dim"), 1;
  const size_t bytes = smem_bytes(static_cast<int>(p->head_dim), kKeyTile[config], 2);
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (e != cudaSuccess) return say(err, size, cudaGetErrorString(e)), 1;
  State* s = new (std::nothrow) State{*p, *t, config};
  if (!s) return say(err, size, "out of host memory"), 1;
  *state = s;
  return 0;
}

int forward(void* state, char* err, size_t size) {
  const State& s = *static_cast<const State*>(state);
  const ab_problem& p = s.p;
  Args a{s.t.q, s.t.k, s.t.v, s.t.o, s.t.block_table, s.t.kv_lens, p.heads, p.kv_heads, p.seq_len, p.q_len,
         p.page_size, p.pages, p.kv_layout == AB_KV_PAGED, p.causal, p.scale};
  dim3 grid(static_cast<unsigned>((p.q_len + kQueries - 1) / kQueries), static_cast<unsigned>(p.heads),
            static_cast<unsigned>(p.batch));
  const size_t bytes = smem_bytes(static_cast<int>(p.head_dim), kKeyTile[s.config], 2);
  pick(p, s.config)<<<grid, 32, bytes, static_cast<cudaStream_t>(s.t.stream)>>>(a);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return say(err, size, cudaGetErrorString(e)), 1;
  return 0;
}

void teardown(void* state) { delete static_cast<State*>(state); }

const ab_plugin kTable = {
    ATTNBENCH_PLUGIN_ABI_VERSION,
    sizeof(ab_plugin),
    "wmma-example",
    "1.0.0",
    "one-warp WMMA tensor-core attention with an online softmax (example)",
    2,
    kConfigs,
    can_implement,
    kernels_per_forward,
    setup,
    forward,
    teardown,
    AB_QO_HEAD_MAJOR,
};

}  // namespace

extern "C" ATTNBENCH_PLUGIN_EXPORT const ab_plugin* attnbench_plugin(void) { return &kTable; }
