// On the GPU: the FlashInfer peers (peers/flashinfer) loaded by the real binary with --peers: peer:flashinfer-decode
// (FlashInfer's CUDA-core batch decode) and peer:flashinfer-prefill (its FA2 batch prefill; on q_len 1 its
// tensor-core decode; Q/O token-major), verified against the reference on awkward cases: odd and ragged KV lengths,
// last pages of 13 and 1 tokens, pages of 1 and 16, contiguous K/V (as 16-token pages), GQA group sizes 1, 2, 4, 5,
// 8 and 16 (prefill: with q_len > 1 too), MQA, q_len 1, 4, 17 and 300 (query tiles 16, 64 and 128), head_dim 64, 128 and (decode) 256, causal, fp16 and bf16, a plan
// that splits the KV (two kernels: partial attention, then the merge) and one that does not (one kernel). What a
// peer refuses is unsupported with its reason. The sliding window and the logit soft-cap their tables declare. Skipped (77) without a device or without the peers
// (scripts/fetch-peers.sh; ATTNBENCH_PEER_FLASHINFER).
#include <string>
#include <utility>

#include "gpu/peer_rows.hpp"  // run_verified, skip_without

namespace {

const char* const kDecode = "peer:flashinfer-decode";
const char* const kPrefill = "peer:flashinfer-prefill";

using peer_test::Rows;

// Both peers on `shape`, with --verify and a JSON report: the exit code and the rows of both.
Rows run_both(const std::string& shape) {
  return peer_test::run_verified(std::string("--peers=flashinfer-decode,flashinfer-prefill --strategies=") + kDecode +
                                 "," + kPrefill + " " + shape);
}

bool is(const nlohmann::json& row, const char* strategy) { return row["strategy"] == strategy; }

// A row that ran: ok, verified, one FlashInfer kernel or two (when its plan split the KV).
void expect_verified(const nlohmann::json& r) {
  EXPECT_EQ(r["status"], "ok") << r.dump();
  if (r["status"] != "ok") return;
  EXPECT_TRUE(r["verify"]["passed"].get<bool>()) << r.dump();
  const int kernels = r["launches"]["measured"]["kernels"].get<int>();
  EXPECT_GE(kernels, 1) << r.dump();
  EXPECT_LE(kernels, 2) << r.dump();
  EXPECT_NE(r.value("library_version", "").find("FlashInfer"), std::string::npos) << r.dump();
}

void expect_unsupported(const nlohmann::json& r, const std::string& reason_part) {
  EXPECT_EQ(r["status"], "unsupported") << r.dump();
  EXPECT_NE(r.value("reason", "").find(reason_part), std::string::npos) << reason_part << ": " << r.dump();
}

// Every row of `shape` (`problems` problems, both peers) verified.
void expect_all_verified(const std::string& shape, std::size_t problems) {
  auto r = run_both(shape);
  EXPECT_EQ(r.rc, 0) << shape;
  ASSERT_EQ(r.rows.size(), 2 * problems) << shape;
  for (const auto& row : r.rows) expect_verified(row);
}

}  // namespace

TEST(PeerFlashInfer, decode_and_tensor_core_decode_on_ragged_pages) {
  // 77 and 129 tokens leave last pages of 13 and 1 tokens at page_size 16; group sizes 1 and 4.
  expect_all_verified("--batch=3 --heads=8 --kv_heads=8,2 --kv_lens=list:77,200,129 --q_len=1 --head_dim=64,128 "
                      "--kv_layout=paged --page_size=1,16 --dtype=fp16,bf16 --causal=false,true",
                      32);
}

TEST(PeerFlashInfer, decode_on_contiguous_kv_as_16_token_pages) {
  expect_all_verified("--batch=3 --heads=8 --kv_heads=1,4 --kv_lens=list:77,200,129 --q_len=1 --head_dim=128 "
                      "--kv_layout=contiguous --dtype=fp16,bf16",
                      4);
  expect_all_verified("--batch=2 --heads=4 --seq_len=333 --q_len=1 --head_dim=64 --kv_layout=contiguous", 1);
}

TEST(PeerFlashInfer, decode_at_head_dim_256) {
  // Compiled into flashinfer-decode only; prefill says so.
  auto r = run_both("--batch=3 --heads=16 --kv_heads=8,1 --kv_lens=list:77,200,129 --q_len=1 --head_dim=256 "
                    "--kv_layout=paged,contiguous --page_size=16 --dtype=fp16,bf16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 16u);
  for (const auto& row : r.rows) {
    if (is(row, kDecode)) expect_verified(row);
    if (is(row, kPrefill)) expect_unsupported(row, "not compiled");
  }
}

TEST(PeerFlashInfer, split_kv_plan_launches_two_kernels_and_a_wide_batch_one) {
  // Two sequences of 4099 tokens fill a few CTAs: both plans split the KV (partial attention, then the merge).
  auto r = run_both("--batch=2 --heads=8 --kv_heads=2 --seq_len=4099 --q_len=1 --head_dim=128 --kv_layout=paged "
                    "--page_size=16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) {
    expect_verified(row);
    EXPECT_EQ(row["launches"]["measured"]["kernels"], 2) << "expected a split-KV plan: " << row.dump();
  }
  // 128 sequences of 64 tokens: more CTAs than the GPU holds at once, nothing to split.
  r = run_both("--batch=128 --heads=8 --kv_heads=8 --seq_len=64 --q_len=1 --head_dim=128 --kv_layout=paged "
               "--page_size=16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) {
    expect_verified(row);
    EXPECT_EQ(row["launches"]["measured"]["kernels"], 1) << "expected an unsplit plan: " << row.dump();
  }
}

TEST(PeerFlashInfer, prefill_on_every_query_tile_causal_ragged_paged_and_contiguous) {
  // q_len 4, 17 and 300 make FlashInfer pick query tiles 16, 64 and 128; decode refuses q_len > 1.
  const std::pair<const char*, std::size_t> shapes[] = {
      {"--batch=3 --heads=4 --kv_heads=4 --kv_lens=list:77,200,129 --q_len=4 --head_dim=64,128 --kv_layout=paged "
       "--page_size=1,16 --dtype=fp16,bf16 --causal=false,true",
       16},
      {"--batch=3 --heads=4 --kv_heads=4 --kv_lens=list:77,200,129 --q_len=4,17 --head_dim=128 "
       "--kv_layout=contiguous --dtype=fp16,bf16 --causal=true",
       4},
      {"--batch=2 --heads=4 --kv_heads=4 --seq_len=300 --q_len=300 --head_dim=64,128 --kv_layout=paged "
       "--page_size=16 --causal=false,true",
       4},
  };
  for (const auto& [shape, problems] : shapes) {
    auto r = run_both(shape);
    EXPECT_EQ(r.rc, 0) << shape;
    ASSERT_EQ(r.rows.size(), 2 * problems) << shape;
    for (const auto& row : r.rows) {
      if (is(row, kPrefill)) expect_verified(row);
      if (is(row, kDecode)) expect_unsupported(row, "q_len 1");
    }
  }
}

TEST(PeerFlashInfer, prefill_with_gqa_and_mqa_on_token_major_q_and_o) {
  // Prefill's Q/O are token-major (plugin.h): a KV head's query heads share FlashInfer's tiles. Group sizes 2, 5
  // and 8 (MQA: one KV head), q_len 4, 17 and 300 (query tiles 16, 64, 128 of packed rows), ragged and causal,
  // pages of 1 and 16 with short last pages, contiguous K/V, fp16 and bf16.
  const std::pair<const char*, std::size_t> shapes[] = {
      {"--batch=3 --heads=8 --kv_heads=4,1 --kv_lens=list:77,200,129 --q_len=4,17 --head_dim=64,128 "
       "--kv_layout=paged --page_size=1,16 --dtype=fp16,bf16 --causal=true",
       32},
      {"--batch=2 --heads=10 --kv_heads=2 --kv_lens=list:333,301 --q_len=300 --head_dim=128 --kv_layout=paged "
       "--page_size=16 --causal=false,true --dtype=bf16",
       2},
      {"--batch=1 --heads=32 --kv_heads=8 --seq_len=1000 --q_len=17 --head_dim=128 --kv_layout=contiguous "
       "--causal=true --dtype=fp16",
       1},
  };
  for (const auto& [shape, problems] : shapes) {
    auto r = run_both(shape);
    EXPECT_EQ(r.rc, 0) << shape;
    ASSERT_EQ(r.rows.size(), 2 * problems) << shape;
    for (const auto& row : r.rows) {
      if (is(row, kPrefill)) expect_verified(row);
      if (is(row, kDecode)) expect_unsupported(row, "q_len 1");
    }
  }
}

// The variants their tables declare (FlashInfer's DefaultAttention with its sliding window and logit soft-cap): rows
// verified against the reference that applies them: a window of 1, one ending inside a page, one longer than the
// sequence, ragged lengths with a short last page, GQA, decode and (prefill) q_len > 1 causal and not, with and
// without the cap (Gemma-2's 50 and a tight 3), fp16 and bf16. Sinks are not theirs: unsupported naming them.
TEST(PeerFlashInfer, run_the_window_and_the_soft_cap_they_declare) {
  const std::string decode = "--batch=3 --heads=8 --kv_heads=2 --kv_lens=list:77,200,129 --q_len=1 --head_dim=64,128 "
                             "--kv_layout=paged --page_size=16 --window=1,13,500 --dtype=fp16,bf16";
  expect_all_verified(decode, 12);
  expect_all_verified(decode + " --softcap=50", 12);
  expect_all_verified("--batch=2 --heads=4 --seq_len=300 --q_len=1 --head_dim=128 --kv_layout=paged --page_size=16 "
                      "--softcap=3",
                      1);  // the cap alone: FlashInfer's window instance with window_left -1
  const std::string prefill = std::string("--peers=flashinfer-prefill --strategies=") + kPrefill +
                              " --batch=2 --heads=8 --kv_heads=2 --kv_lens=list:300,77 --q_len=17 --head_dim=128 "
                              "--kv_layout=paged --page_size=16 --causal=false,true --window=13,40";
  for (const std::string& cap : {"", " --softcap=3"}) {
    auto r = peer_test::run_verified(prefill + cap);
    EXPECT_EQ(r.rc, 0) << cap;
    ASSERT_EQ(r.rows.size(), 4u) << cap;
    for (const auto& row : r.rows) expect_verified(row);
  }
  // fused runs it beside them: a grid no strategy can run is refused as a whole (exit 2, no report).
  auto r = peer_test::run_verified(std::string("--peers=flashinfer-decode,flashinfer-prefill --strategies=fused,") +
                                   kDecode + "," + kPrefill +
                                   " --batch=2 --heads=4 --seq_len=100 --q_len=1 --head_dim=64 --kv_layout=paged "
                                   "--page_size=16 --sinks");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 3u);
  for (const auto& row : r.rows) {
    if (is(row, "fused")) {
      EXPECT_EQ(row["status"], "ok") << row.dump();
      EXPECT_TRUE(row.value("verify", nlohmann::json::object()).value("passed", false)) << row.dump();
    } else {
      expect_unsupported(row, "sinks");
    }
  }
}

TEST(PeerFlashInfer, refusals_say_why) {
  // Group size 5: decode has no instance for it; prefill's group size is a runtime value.
  auto r = run_both("--batch=2 --heads=10 --kv_heads=2 --seq_len=100 --q_len=1 --head_dim=64 --kv_layout=paged "
               "--page_size=16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) {
    if (is(row, kDecode)) expect_unsupported(row, "group sizes");
    if (is(row, kPrefill)) expect_verified(row);
  }
  // A head_dim not compiled.
  r = run_both("--batch=2 --heads=4 --seq_len=100 --q_len=1 --head_dim=96 --kv_layout=paged --page_size=16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) expect_unsupported(row, "not compiled");
}

int main(int argc, char** argv) {
  peer_test::skip_without({"flashinfer-decode", "flashinfer-prefill"}, "scripts/fetch-peers.sh; ATTNBENCH_PEER_FLASHINFER");
  return attnbench_testing::run_all_tests(argc, argv);
}
