/* attnbench plugin ABI, version 1: the one header a user's attention kernel implements to run beside
 * attnbench's built-in strategies (verified, timed, launch-counted, tuned and cached the same way).
 *
 * A plugin is a shared library exporting one C symbol, ATTNBENCH_PLUGIN_ENTRY ("attnbench_plugin"), that
 * returns a pointer to a static ab_plugin table. attnbench refuses (one line, exit code 2) a table whose
 * abi_version is not ATTNBENCH_PLUGIN_ABI_VERSION: rebuild the plugin against this header.
 *
 * attnbench never loads the library into its own process: a loader process reads the table (and is the only
 * one a crash, abort, exit or hang while the library loads can take down), and every row's child process
 * loads it again to run it, so the library's constructors run once in each.
 *
 * Life of a plugin row (attnbench runs every plugin row in a child process of its own, with a time limit):
 *   can_implement(problem, backend, config)  -> 0, or nonzero with a reason: the row is `unsupported`
 *   setup(problem, tensors, config, &state)   -> allocate workspace; not timed. Device work it does (a warm-up
 *                                                forward, a plan) must be finished or queued on tensors->stream
 *                                                when it returns: attnbench then poisons O on that stream
 *   forward(state) ...                        -> one forward each call, enqueued on tensors->stream; timed
 *   teardown(state)                           -> free everything setup allocated
 * A nonzero return from setup or forward makes the row `failed` with the message written into `err`. A
 * crash, an abort, a write outside the tensors (checked by guard regions after the forwards) or a hang past
 * --plugin_timeout makes the row `failed` too; a wrong output makes it `incorrect`.
 *
 * Peers (docs/peers.md): another library's kernels (cuDNN, FlashInfer) built by attnbench's project as a
 * plugin named libattnbench_peer_<name>.so, whose table's name is <name>, and loaded with --peers. A peer is a
 * plugin in every way but its strategy name, "peer:<name>", and two conventions it may use (both valid for any
 * plugin of this ABI version): kernels_per_forward may return -1 (its plan decides), and a peer whose library
 * cannot work here (libcudnn.so.9 absent, ...) still loads and says so in its version: "unavailable: <why>".
 *
 * Plain C (C99 and C++); no attnbench header or library is needed to build a plugin.
 */
#ifndef ATTNBENCH_PLUGIN_H
#define ATTNBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; a plugin reports the version it was built against. */
#define ATTNBENCH_PLUGIN_ABI_VERSION 1u
/* The symbol attnbench looks up with dlsym. */
#define ATTNBENCH_PLUGIN_ENTRY "attnbench_plugin"

#if defined(_WIN32)
#define ATTNBENCH_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ATTNBENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Element type of Q, K, V and O (the accumulation is the plugin's choice; attnbench's tolerance assumes fp32). */
enum ab_dtype { AB_DTYPE_FP16 = 0, AB_DTYPE_BF16 = 1 };
/* How K and V are stored. */
enum ab_kv_layout {
  AB_KV_CONTIGUOUS = 0, /* K, V: [batch, kv_heads, seq_len, head_dim], row-major (V: head_dim_v where set) */
  AB_KV_PAGED = 1       /* K, V: a pool of pool_slots slots, each [kv_heads, page_size, head_dim], reached
                           through block_table [batch, pages] (vLLM / FlashInfer style) */
};
/* How Q and O are laid out (ab_plugin.qo_layout). Both layouts hold the same elements; only their order differs
 * (O's rows are head_dim_v wide where ab_problem.head_dim_v is set). */
enum ab_qo_layout {
  AB_QO_HEAD_MAJOR = 0, /* Q, O: [batch, heads, q_len, head_dim] (attnbench's own layout; the default) */
  AB_QO_TOKEN_MAJOR = 1 /* Q, O: [batch * q_len, heads, head_dim], a sequence's query tokens one after another
                           with every head of a token together (FlashInfer's, vLLM's and FlashAttention's varlen
                           layout). attnbench hands the plugin Q in this order (permuted once, before setup)
                           and an O buffer of its own, which it permutes back to verify; neither permutation
                           is inside the timed forwards */
};
/* The attention variants a plugin may run (ab_plugin.variants, bits). A problem with a variant the plugin does
 * not declare never reaches it: its row is `unsupported` with the reason. */
enum ab_variant {
  AB_VARIANT_SLIDING_WINDOW = 1, /* ab_problem.window: query i (position i + L - q_len) sees no key before
                                    position - window */
  AB_VARIANT_SOFT_CAPPING = 2,   /* ab_problem.softcap: every scaled score s becomes softcap * tanh(s / softcap) */
  AB_VARIANT_SINKS = 4,          /* ab_tensors.sinks: head h's softmax denominator gains exp(sinks[h] - max) */
  AB_VARIANT_HEAD_DIM_V = 8      /* ab_problem.head_dim_v: V and O are head_dim_v wide, Q and K head_dim (MLA) */
};
/* Where the tensors live and what runs the forward. */
enum ab_backend {
  AB_BACKEND_CPU = 0, /* host memory; forward runs synchronously on the calling thread; stream is NULL */
  AB_BACKEND_CUDA = 1 /* device memory of `device`; forward enqueues work on `stream` (a cudaStream_t) and
                         must neither allocate nor synchronize (it may be captured into a CUDA graph) */
};

/* One attention problem: O = softmax(Q K^T * scale [+ causal mask]) V per (sequence, query head). */
typedef struct ab_problem {
  int64_t batch;     /* B: sequences */
  int64_t heads;     /* H: query heads */
  int64_t kv_heads;  /* KVH: K/V heads; heads is a multiple; query head h reads KV head h / (heads / kv_heads) */
  int64_t seq_len;   /* S: the longest KV length (every sequence's when kv_lens are all equal) */
  int64_t q_len;     /* queries per sequence: the LAST q_len positions of its KV (q_len <= every KV length) */
  int64_t head_dim;  /* D */
  int64_t page_size; /* tokens per KV page (== seq_len rounded up when pages == 1 and contiguous) */
  int64_t pages;     /* pages of the longest sequence: ceil(seq_len / page_size); block_table's row length */
  int64_t pool_slots;/* paged: slots in the pool (K and V each pool_slots * kv_heads * page_size * head_dim
                        elements; V head_dim_v where set); contiguous: 0 */
  int32_t dtype;     /* enum ab_dtype */
  int32_t kv_layout; /* enum ab_kv_layout */
  int32_t causal;    /* 1: bottom-right causal: query i (0-based among q_len) of a sequence of KV length L
                        sees keys 0 .. i + L - q_len; 0: every key 0 .. L-1 */
  int32_t ragged;    /* 1: sequences have their own KV lengths (kv_lens); keys past a sequence's length hold
                        values that must not be read into the result (contiguous) */
  float scale;       /* softmax scale, 1/sqrt(head_dim) */
  /* The variants (enum ab_variant); zero without them. Set only for a plugin whose table declares them. */
  int32_t window;    /* sliding window in keys (AB_VARIANT_SLIDING_WINDOW); 0: none */
  float softcap;     /* logit soft-cap (AB_VARIANT_SOFT_CAPPING); 0: none */
  int32_t sinks;     /* 1: tensors->sinks holds one logit a query head (AB_VARIANT_SINKS); 0: none */
  int32_t head_dim_v;/* V's and O's head dim, where it differs from head_dim (AB_VARIANT_HEAD_DIM_V): V is then
                        [.., head_dim_v] in either layout and O [B, H, q_len, head_dim_v]; 0: head_dim */
  int32_t reserved[3]; /* zero */
} ab_problem;

/* The problem's tensors, in attnbench's layouts, in backend memory (host for CPU, device for CUDA). Every
 * buffer is surrounded by guard regions that attnbench checks after the forwards. */
typedef struct ab_tensors {
  const void* q;               /* [B, H, q_len, D]; token-major plugins (ab_qo_layout): [B * q_len, H, D] */
  const void* k;               /* see ab_kv_layout */
  const void* v;               /* same layout as k */
  void* o;                     /* laid out as q (rows head_dim_v wide where set); every element must be written by
                                  each forward */
  const int32_t* block_table;  /* paged: [B, pages] slot of each page, -1 past a sequence's last page;
                                  contiguous: NULL */
  const int32_t* kv_lens;      /* [B] KV length of each sequence (always set) */
  const int32_t* block_table_host; /* the same table in host memory (for setup-time planning), or NULL */
  const int32_t* kv_lens_host;     /* the same lengths in host memory */
  int32_t backend;             /* enum ab_backend */
  int32_t device;              /* CUDA device ordinal (current when setup and forward are called); CPU: 0 */
  void* stream;                /* CUDA: the cudaStream_t to enqueue on; CPU: NULL */
  const float* sinks;          /* problem->sinks: [H] fp32 sink logits in backend memory; else NULL */
  void* reserved[3];           /* NULL */
} ab_tensors;

/* The table a plugin exports. Strings and the configs array are static (they outlive the library's use).
 * Every string is one line of UTF-8 (no control characters): the version at most 256 bytes, the description
 * 1024, each configuration name 256 (non-empty, each listed once); a table breaking this is refused.
 * Functions write at most err_size bytes (NUL-terminated) into their message buffer. */
typedef struct ab_plugin {
  uint32_t abi_version;        /* ATTNBENCH_PLUGIN_ABI_VERSION the plugin was built against */
  uint32_t struct_size;        /* sizeof(ab_plugin) as the plugin was built (see the fields at the end) */
  const char* name;            /* short name [A-Za-z0-9_.-]+; the strategy shows as "plugin:<name>" (a peer's
                                  as "peer:<name>") */
  const char* version;         /* the plugin's own version, free text (e.g. "1.2.0"); every row it runs carries
                                  it (the report's library_version; compare flags a change). A library that
                                  cannot run here says "unavailable: <why>" (attnbench list shows it; --peers
                                  refuses or skips it) */
  const char* description;     /* one line */
  int32_t num_configs;         /* 1..4096: tunable configurations (tiles, algorithms...) */
  const char* const* configs;  /* num_configs names; configs[0] is the default; `attnbench tune` tries each
                                  and caches the fastest verified one per problem */

  /* 0 when `config` can run `problem` on `backend` (enum ab_backend); else nonzero with the reason. */
  int (*can_implement)(const ab_problem* problem, int32_t backend, int32_t config, char* reason, size_t reason_size);
  /* The launch contract: kernels one forward launches on CUDA (attnbench counts them with CUPTI and flags a
   * mismatch). CPU plugins return 0. -1: not declared, decided by the library's plan at setup (a library peer
   * such as cuDNN); the row then has no contract, and its launches are still counted and reported. */
  int64_t (*kernels_per_forward)(const ab_problem* problem, int32_t config);
  /* Prepare to run: keep the pointers, allocate workspace, build plans. *state is passed to forward and
   * teardown. 0 on success, else nonzero with a message (teardown is not called then). */
  int (*setup)(const ab_problem* problem, const ab_tensors* tensors, int32_t config, void** state, char* err,
               size_t err_size);
  /* One forward into tensors->o. 0 on success, else nonzero with a message. */
  int (*forward)(void* state, char* err, size_t err_size);
  /* Release what setup allocated. */
  void (*teardown)(void* state);

  /* Fields added within ABI version 1. attnbench reads a field only when struct_size covers it, so a table
   * built against an earlier copy of this header (struct_size ending at teardown) keeps each at its default. */
  int32_t qo_layout;           /* enum ab_qo_layout of q and o in ab_tensors; default AB_QO_HEAD_MAJOR */
  uint32_t variants;           /* enum ab_variant bits the plugin runs; default 0 (none) */
} ab_plugin;

/* The size of the first version-1 table (through teardown), the smallest struct_size attnbench accepts. */
#define ATTNBENCH_PLUGIN_TABLE_MIN_SIZE (offsetof(ab_plugin, teardown) + sizeof(void (*)(void*)))

/* The entry point every plugin defines:
 *   ATTNBENCH_PLUGIN_EXPORT const ab_plugin* attnbench_plugin(void) { return &my_table; }  */
typedef const ab_plugin* (*ab_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNBENCH_PLUGIN_H */
