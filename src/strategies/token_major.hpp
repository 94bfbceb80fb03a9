// Q and O between attnbench's head-major order [B, H, q_len, D] and the token-major order [B * q_len, H, D]
// that token-major plugins take (plugin.h, AB_QO_TOKEN_MAJOR). Host-side element permutations of 16-bit
// elements (fp16/bf16), used outside the timed forwards.
#pragma once
#include <cstdint>
#include <vector>

namespace ab {

// The shape both orders share.
struct QoShape {
  std::int64_t batch = 0, heads = 0, q_len = 0, head_dim = 0;
  std::int64_t elements() const { return batch * heads * q_len * head_dim; }
};

// [B, H, q_len, D] -> [B * q_len, H, D].
std::vector<std::uint16_t> to_token_major(const std::vector<std::uint16_t>& head_major, const QoShape& s);
// [B * q_len, H, D] -> [B, H, q_len, D].
std::vector<std::uint16_t> to_head_major(const std::vector<std::uint16_t>& token_major, const QoShape& s);

}  // namespace ab
