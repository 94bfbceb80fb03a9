// Q/O between head-major [B, H, q_len, D] and token-major [B * q_len, H, D] (strategies/token_major.hpp): each
// element lands where both orders say, the two permutations undo each other, and a buffer of the wrong size is
// refused.
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "strategies/token_major.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

// Element (b, h, t, d) carries its own coordinates, so a misplaced copy shows which.
std::uint16_t tag(std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t d) {
  return static_cast<std::uint16_t>(((b * 8 + h) * 16 + t) * 8 + d);
}

}  // namespace

TEST(TokenMajor, every_element_lands_where_both_orders_say) {
  const QoShape s{3, 5, 7, 4};  // B=3 H=5 q_len=7 D=4: no two extents alike
  std::vector<std::uint16_t> head(static_cast<std::size_t>(s.elements()));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t h = 0; h < s.heads; ++h)
      for (std::int64_t t = 0; t < s.q_len; ++t)
        for (std::int64_t d = 0; d < s.head_dim; ++d)
          head[((b * s.heads + h) * s.q_len + t) * s.head_dim + d] = tag(b, h, t, d);
  const std::vector<std::uint16_t> tokens = to_token_major(head, s);
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t t = 0; t < s.q_len; ++t)
      for (std::int64_t h = 0; h < s.heads; ++h)
        for (std::int64_t d = 0; d < s.head_dim; ++d)
          ASSERT_EQ(tokens[((b * s.q_len + t) * s.heads + h) * s.head_dim + d], tag(b, h, t, d))
              << "b=" << b << " t=" << t << " h=" << h << " d=" << d;
  EXPECT_EQ(to_head_major(tokens, s), head);
}

TEST(TokenMajor, one_query_token_is_the_same_memory) {
  const QoShape s{2, 3, 1, 5};
  std::vector<std::uint16_t> q(static_cast<std::size_t>(s.elements()));
  std::iota(q.begin(), q.end(), std::uint16_t(1));
  EXPECT_EQ(to_token_major(q, s), q);
}

TEST(TokenMajor, a_buffer_of_another_size_is_refused) {
  const QoShape s{1, 2, 3, 4};
  EXPECT_THROW(to_token_major(std::vector<std::uint16_t>(23), s), std::invalid_argument);
  EXPECT_THROW(to_head_major(std::vector<std::uint16_t>(25), s), std::invalid_argument);
}
