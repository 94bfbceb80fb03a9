// Where element i of an output O [B][H][rows][width] lies: its sequence and its query row. A mixed batch's rows at
// or past a sequence's query count are padding, neither compared nor counted: the host compare
// (core/reference.cpp) and the GPU one (kernels/compare_output.cu) both skip them by this.
#pragma once
#include <cstdint>

#include "core/host_device.hpp"

namespace ab {

struct ORow {
  std::int64_t seq, row;
};

AB_HOST_DEVICE inline ORow o_row_of(std::int64_t i, std::int64_t width, std::int64_t rows, std::int64_t heads) {
  const std::int64_t r = i / width;
  return {r / rows / heads, r % rows};
}

}  // namespace ab
