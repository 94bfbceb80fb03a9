// Three tiny kernels that tests/sass/sass_compare.sh builds twice alike, once changed (-DCHANGED: scale's body
// differs, an extra kernel appears, shift stays as it was) and once with a variant's template argument
// (-DVARIANT: scale<2, false> is scale<2>'s code, scale<2, true> new) to check scripts/sass-compare.sh's verdicts.
namespace {
__global__ void shift(float* a, int n) {  // anonymous namespace: its mangled name carries a per-file hash
  if (threadIdx.x < n) a[threadIdx.x] += 1.f;
}
}  // namespace

#ifdef VARIANT  // scale gains a template argument: scale<2, false> is the old code, scale<2, true> new
template <int N, bool V>
__global__ void scale(float* a) {
  a[threadIdx.x] *= N;
  if constexpr (V) a[threadIdx.x + 32] = 1.f;
}
template __global__ void scale<2, false>(float*);
template __global__ void scale<2, true>(float*);
#else
template <int N>
__global__ void scale(float* a) {
#ifdef CHANGED
  a[threadIdx.x] += N;
#else
  a[threadIdx.x] *= N;
#endif
}
template __global__ void scale<2>(float*);
#endif

#ifdef CHANGED
__global__ void extra(float* a) { a[0] = 0.f; }
#endif

void launch_shift(float* a, int n) { shift<<<1, 32>>>(a, n); }
