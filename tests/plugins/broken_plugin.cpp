// A deliberately broken attnbench plugin for the isolation tests, built once per failure (BROKEN_MODE):
// crash (SIGSEGV in forward), error (forward returns an error), oob (writes past the end of O), hang (never
// returns from forward), wrong (a finite but wrong output: `incorrect`), abi (built for another ABI version);
// and broken while it is loaded: entry_crash (SIGSEGV in attnbench_plugin()), ctor_abort, ctor_exit0 and
// ctor_hang (abort(), exit(0) or a hang in the library's constructor), too_many_configs (num_configs past the
// end of its configs array, where bad pointers follow), ctl_config (a configuration name with a line break and
// an escape sequence in it).
#include <attnbench/plugin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#ifndef BROKEN_MODE
#error "define BROKEN_MODE"
#endif
#define BROKEN_CRASH 1
#define BROKEN_ERROR 2
#define BROKEN_OOB 3
#define BROKEN_HANG 4
#define BROKEN_WRONG 5
#define BROKEN_ABI 6
#define BROKEN_ENTRY_CRASH 7
#define BROKEN_CTOR_ABORT 8
#define BROKEN_CTOR_EXIT0 9
#define BROKEN_CTOR_HANG 10
#define BROKEN_TOO_MANY_CONFIGS 11
#define BROKEN_CTL_CONFIG 12
#define BROKEN_BAD_LAYOUT 13
#define BROKEN_SHORT_TABLE 14
#define BROKEN_BAD_VARIANTS 15

namespace {

#if BROKEN_MODE == BROKEN_CTL_CONFIG
const char* const kConfigs[] = {"only", "two\nlines\x1b[31m red"};
#else
const char* const kConfigs[] = {"only"};
#endif
// too_many_configs: the table says 3 configurations; the one array entry is followed by pointers to nowhere.
struct Overrun {
  const char* configs[1];
  const char* past[2];
};
const Overrun kOverrun = {{"only"}, {reinterpret_cast<const char*>(16), reinterpret_cast<const char*>(16)}};

#if BROKEN_MODE == BROKEN_CTOR_ABORT || BROKEN_MODE == BROKEN_CTOR_EXIT0 || BROKEN_MODE == BROKEN_CTOR_HANG
__attribute__((constructor)) void on_load() {
  if (BROKEN_MODE == BROKEN_CTOR_ABORT) std::abort();
  if (BROKEN_MODE == BROKEN_CTOR_EXIT0) std::exit(0);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
#endif

struct State {
  ab_problem p;
  ab_tensors t;
};

int can_implement(const ab_problem*, int32_t backend, int32_t, char* reason, size_t size) {
  if (backend == AB_BACKEND_CPU) return 0;
  std::snprintf(reason, size, "CPU backend only");
  return 1;
}
int64_t kernels_per_forward(const ab_problem*, int32_t) { return 0; }
int setup(const ab_problem* p, const ab_tensors* t, int32_t, void** state, char*, size_t) {
  *state = new State{*p, *t};
  return 0;
}

volatile int* g_nowhere = nullptr;

int forward(void* state, char* err, size_t size) {
  State& s = *static_cast<State*>(state);
  const int64_t n = s.p.batch * s.p.heads * s.p.q_len * s.p.head_dim;
  auto* o = static_cast<uint16_t*>(s.t.o);
  (void)err;
  (void)size;
  switch (BROKEN_MODE) {
    case BROKEN_CRASH:
      *g_nowhere = 1;  // SIGSEGV
      return 0;
    case BROKEN_ERROR:
      std::snprintf(err, size, "simulated launch failure: too many resources requested");
      return 1;
    case BROKEN_OOB:
      std::memset(o, 0, static_cast<size_t>(n) * 2 + 8);  // 8 bytes past the end of O
      return 0;
    case BROKEN_HANG:
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    default:  // wrong: 1.0 everywhere (fp16 0x3C00, bf16 0x3F80)
      for (int64_t i = 0; i < n; ++i) o[i] = s.p.dtype == AB_DTYPE_BF16 ? 0x3F80 : 0x3C00;
      return 0;
  }
}
void teardown(void* state) { delete static_cast<State*>(state); }

#define STR2(x) #x
#define STR(x) STR2(x)

const ab_plugin kTable = {
    BROKEN_MODE == BROKEN_ABI ? 999u : ATTNBENCH_PLUGIN_ABI_VERSION,
    BROKEN_MODE == BROKEN_SHORT_TABLE ? 40u : static_cast<uint32_t>(sizeof(ab_plugin)),
    BROKEN_NAME,
    "0.0.1",
    "deliberately broken (tests/plugins)",
    BROKEN_MODE == BROKEN_TOO_MANY_CONFIGS ? 3 : static_cast<int32_t>(sizeof kConfigs / sizeof kConfigs[0]),
    BROKEN_MODE == BROKEN_TOO_MANY_CONFIGS ? kOverrun.configs : kConfigs,
    can_implement,
    kernels_per_forward,
    setup,
    forward,
    teardown,
    BROKEN_MODE == BROKEN_BAD_LAYOUT ? 7 : AB_QO_HEAD_MAJOR,
    BROKEN_MODE == BROKEN_BAD_VARIANTS ? (AB_VARIANT_SINKS | 0x40u) : 0u,
};

}  // namespace

extern "C" ATTNBENCH_PLUGIN_EXPORT const ab_plugin* attnbench_plugin(void) {
  if (BROKEN_MODE == BROKEN_ENTRY_CRASH) *g_nowhere = 1;  // SIGSEGV
  return &kTable;
}
