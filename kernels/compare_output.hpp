// Host launcher of the output-against-reference comparison kernel: the verification statistics computed on
// the GPU, so checking a forward moves a few numbers to the host instead of the whole output. No CUDA headers.
#pragma once
#include <cstdint>

namespace ab::kernels {

// Each block writes kCompareFields doubles to partials[block * kCompareFields]: sum of squared errors, sum
// of squared reference values, largest absolute error and the count of non-finite outputs (as a double).
constexpr int kCompareFields = 4;
constexpr int kCompareBlocks = 264;  // a grid-stride loop over two blocks per H100/H200 SM
constexpr int kCompareThreads = 256;

struct CompareParams {
  const void* out = nullptr;  // n elements, fp16 or bf16
  const float* ref = nullptr; // n fp32 elements
  std::int64_t n = 0;
  bool bf16 = false;
  double* partials = nullptr; // kCompareBlocks * kCompareFields doubles
  // A mixed batch: [B] queries per sequence (device memory); element i of O [B,H,rows,width] is then compared only
  // where its row i / width % rows is under its sequence's count. nullptr: every element.
  const std::int32_t* q_lens = nullptr;
  std::int64_t rows = 0, heads = 0, width = 0;
};

// One launch of kCompareBlocks blocks on `stream` (cudaStream_t); returns the cudaError_t of the launch.
int launch_compare_output(const CompareParams& p, void* stream);

}  // namespace ab::kernels
