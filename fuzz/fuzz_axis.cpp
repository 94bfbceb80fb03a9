// libFuzzer target: the size-axis grammar (parse_axis, split_list) and grid expansion on arbitrary text.
// Any exception other than UsageError, and any sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ab::parse_axis("batch", text);
  } catch (const ab::UsageError&) {
  }
  try {
    ab::split_list("dtype", text);
  } catch (const ab::UsageError&) {
  }
  // The text as every size axis of a grid at once (the expansion refuses grids over 100000 points).
  try {
    ab::GridSpec g;
    g.set("batch", text).set("heads", text).set("seq_len", text).set("head_dim", "8");
    ab::expand_grid(g);
  } catch (const ab::UsageError&) {
  }
  return 0;
}
