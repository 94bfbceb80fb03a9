// Q and O between head-major and token-major order (strategies/token_major.hpp).
#include "strategies/token_major.hpp"

#include <algorithm>
#include <stdexcept>

namespace ab {

namespace {

// Copies every D-element row between the orders: row (b, h, t) sits at ((b*H + h)*q + t)*D head-major and at
// ((b*q + t)*H + h)*D token-major.
std::vector<std::uint16_t> permute(const std::vector<std::uint16_t>& src, const QoShape& s, bool to_tokens) {
  if (static_cast<std::int64_t>(src.size()) != s.elements())
    throw std::invalid_argument("Q/O permutation: the buffer does not hold B*H*q_len*D elements");
  std::vector<std::uint16_t> dst(src.size());
  const std::int64_t D = s.head_dim;
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t h = 0; h < s.heads; ++h)
      for (std::int64_t t = 0; t < s.q_len; ++t) {
        const std::int64_t head_row = ((b * s.heads + h) * s.q_len + t) * D;
        const std::int64_t token_row = ((b * s.q_len + t) * s.heads + h) * D;
        const std::int64_t from = to_tokens ? head_row : token_row, to = to_tokens ? token_row : head_row;
        std::copy_n(src.begin() + from, D, dst.begin() + to);
      }
  return dst;
}

}  // namespace

std::vector<std::uint16_t> to_token_major(const std::vector<std::uint16_t>& head_major, const QoShape& s) {
  return permute(head_major, s, true);
}

std::vector<std::uint16_t> to_head_major(const std::vector<std::uint16_t>& token_major, const QoShape& s) {
  return permute(token_major, s, false);
}

}  // namespace ab
