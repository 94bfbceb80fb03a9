// Three tiny kernels that tests/sass/sass_compare.sh builds twice alike and once changed (-DCHANGED: scale's
// body differs, an extra kernel appears, shift stays as it was) to check scripts/sass-compare.sh's verdicts.
namespace {
__global__ void shift(float* a, int n) {  // anonymous namespace: its mangled name carries a per-file hash
  if (threadIdx.x < n) a[threadIdx.x] += 1.f;
}
}  // namespace

template <int N>
__global__ void scale(float* a) {
#ifdef CHANGED
  a[threadIdx.x] += N;
#else
  a[threadIdx.x] *= N;
#endif
}
template __global__ void scale<2>(float*);

#ifdef CHANGED
__global__ void extra(float* a) { a[0] = 0.f; }
#endif

void launch_shift(float* a, int n) { shift<<<1, 32>>>(a, n); }
