// Developer build only (cmake -DATTNBENCH_CTA_TIMES=ON): the persistent kernel records, per CTA, when it
// started and when each of its consumer warpgroups finished (%globaltimer, ns), for the load-balance study of
// `fused_dev ctas`. In every other build cta_time_mark is empty and the kernels are unchanged.
#pragma once
#include "fused_dev_hooks.cuh"  // kCtaTimeSlots

namespace ab::kernels::fused_detail {

#ifdef AB_CTA_TIMES
__device__ unsigned long long* g_cta_times;  // [grid][kCtaTimeSlots], set by fused_set_cta_times
__device__ __forceinline__ void cta_time_mark(int cta, int slot) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  if (g_cta_times) g_cta_times[cta * kCtaTimeSlots + slot] = t;
}
#else
__device__ __forceinline__ void cta_time_mark(int, int) {}
#endif

}  // namespace ab::kernels::fused_detail
