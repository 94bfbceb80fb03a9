// On the GPU: peer:flashinfer-fa3 (peers/flashinfer/fa3: FlashInfer's Hopper FA3 paged prefill, Q/O token-major)
// loaded by the real binary with --peers and verified against the reference on awkward cases: ragged KV lengths
// with last pages of 13 and 1 tokens, pages of 1 and 16 tokens, contiguous K/V (as 16-token pages), GQA groups 1,
// 4 and 8, q_len 1, 17 and 300 (one query tile, a partial one, several), causal and not, fp16 and bf16, and a
// batch wide enough that FlashInfer's plan picks its one-schedule-for-all-heads kernel. One kernel per forward.
// Its sliding-window instances on windows that end inside a page, longer than the sequence, of 1, causal and not.
// What it refuses is unsupported with its reason. Skipped (77) without a device, without the peer
// (scripts/fetch-peers.sh; ATTNBENCH_PEER_FLASHINFER_FA3) or on a GPU that is not sm_90 (its kernels are sm_90a).
// Expects the default build's instances (fp16 and bf16, head_dim 128); head_dims 64 and 256 are verified when compiled.
#include <string>

#include "gpu/peer_rows.hpp"  // run_verified, skip_without

namespace {

const char* const kFa3 = "peer:flashinfer-fa3";

using peer_test::Rows;

// The peer on `shape`, with --verify and a JSON report: the exit code and its rows.
Rows run_fa3(const std::string& shape) {
  return peer_test::run_verified(std::string("--peers=flashinfer-fa3 --strategies=") + kFa3 + " " + shape);
}

bool not_compiled(const nlohmann::json& r) {
  return r["status"] == "unsupported" && r.value("reason", "").find("not compiled") != std::string::npos;
}

// A row that ran: ok, verified, FlashInfer's one FA3 kernel.
void expect_verified(const nlohmann::json& r) {
  EXPECT_EQ(r["status"], "ok") << r.dump();
  if (r["status"] != "ok") return;
  EXPECT_TRUE(r["verify"]["passed"].get<bool>()) << r.dump();
  EXPECT_EQ(r["launches"]["measured"]["kernels"].get<int>(), 1) << r.dump();
  EXPECT_NE(r.value("library_version", "").find("FlashInfer"), std::string::npos) << r.dump();
}

void expect_unsupported(const nlohmann::json& r, const std::string& reason_part) {
  EXPECT_EQ(r["status"], "unsupported") << r.dump();
  EXPECT_NE(r.value("reason", "").find(reason_part), std::string::npos) << reason_part << ": " << r.dump();
}

// Every row of `shape` (`problems` problems) verified; with `other_head_dims_optional`, a row of a head_dim other
// than 128 may instead say it is not compiled (ATTNBENCH_FLASHINFER_FA3_HEAD_DIMS is 128 by default).
void expect_all_verified(const std::string& shape, std::size_t problems, bool other_head_dims_optional = false) {
  auto r = run_fa3(shape);
  EXPECT_EQ(r.rc, 0) << shape;
  ASSERT_EQ(r.rows.size(), problems) << shape;
  for (const auto& row : r.rows) {
    if (other_head_dims_optional && row["problem"]["head_dim"] != 128 && not_compiled(row)) continue;
    expect_verified(row);
  }
}

}  // namespace

TEST(PeerFlashInferFa3, ragged_paged_prefill_with_short_last_pages) {
  // 77 and 129 tokens leave last pages of 13 and 1 tokens at page_size 16; q_len 17 is one partial query tile.
  expect_all_verified("--batch=3 --heads=8 --kv_heads=8 --kv_lens=list:77,200,129 --q_len=17 --head_dim=128 "
                      "--kv_layout=paged --page_size=1,16 --dtype=fp16,bf16 --causal=false,true",
                      8);
}

TEST(PeerFlashInferFa3, gqa_groups_1_4_8_at_q_len_1_17_300) {
  // FA3 runs each query head's tiles (no GQA packing): the KV head is the query head / group size.
  expect_all_verified("--batch=3 --heads=8 --kv_heads=8,2,1 --kv_lens=list:333,301,310 --q_len=1,17,300 "
                      "--head_dim=128 --kv_layout=paged --page_size=16 --dtype=fp16 --causal=true",
                      9);
  expect_all_verified("--batch=2 --heads=16 --kv_heads=4,2 --kv_lens=list:300,517 --q_len=300 --head_dim=128 "
                      "--kv_layout=paged --page_size=16 --dtype=bf16 --causal=false,true",
                      4);
}

TEST(PeerFlashInferFa3, contiguous_kv_as_16_token_pages) {
  expect_all_verified("--batch=3 --heads=8 --kv_heads=2 --kv_lens=list:77,200,129 --q_len=1,17 --head_dim=128 "
                      "--kv_layout=contiguous --dtype=fp16,bf16 --causal=false,true",
                      8);
  expect_all_verified("--batch=1 --heads=32 --kv_heads=8 --seq_len=1000 --q_len=300 --head_dim=128 "
                      "--kv_layout=contiguous --causal=true --dtype=fp16",
                      1);
}

TEST(PeerFlashInferFa3, head_dims_64_and_256_when_compiled) {
  // Query tiles of 192 rows at head_dim 64; KV tiles of 32 at head_dim 256.
  expect_all_verified("--batch=2 --heads=8 --kv_heads=4 --kv_lens=list:377,400 --q_len=17,300 --head_dim=64,256 "
                      "--kv_layout=paged --page_size=16 --dtype=fp16,bf16 --causal=true",
                      8, /*other_head_dims_optional=*/true);
}

TEST(PeerFlashInferFa3, wide_batch_takes_the_same_schedule_for_all_heads) {
  // 4100 sequences of one query: more than 4096 work items per head, so FlashInfer's plan runs one schedule for
  // every head (its other kernel instance).
  expect_all_verified("--batch=4100 --heads=2 --kv_heads=1 --seq_len=40 --q_len=1 --head_dim=128 "
                      "--kv_layout=paged --page_size=16 --dtype=fp16,bf16",
                      2);
}

// Its sliding-window instances (ATTNBENCH_FLASHINFER_FA3_WINDOW, on by default): windows of 1, 13 (ending inside a
// page), 40 and one longer than every sequence, causal and not, q_len 1, 17 and 300, ragged with short last pages,
// GQA, fp16 and bf16, against the reference that applies the window. The soft-cap and sinks are not declared:
// unsupported naming them (fused runs beside, so that the grid is not refused whole).
TEST(PeerFlashInferFa3, sliding_window) {
  expect_all_verified("--batch=3 --heads=8 --kv_heads=2 --kv_lens=list:77,300,129 --q_len=1,17 --head_dim=128 "
                      "--kv_layout=paged --page_size=16 --window=1,13,40,5000 --dtype=fp16,bf16 --causal=false,true",
                      32);
  expect_all_verified("--batch=2 --heads=4 --kv_heads=4 --kv_lens=list:333,301 --q_len=300 --head_dim=128 "
                      "--kv_layout=paged --page_size=16 --window=64 --causal=true --dtype=bf16",
                      1);
  auto r = peer_test::run_verified(std::string("--peers=flashinfer-fa3 --strategies=fused,") + kFa3 +
                                   " --batch=2 --heads=4 --seq_len=100 --q_len=17 --head_dim=128 --kv_layout=paged "
                                   "--page_size=16 --softcap=30");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows)
    if (row["strategy"] == kFa3) expect_unsupported(row, "soft");
}

TEST(PeerFlashInferFa3, refusals_say_why) {
  // A head_dim FlashInfer's FA3 has no kernel for, and so never compiled.
  auto r = run_fa3("--batch=2 --heads=4 --seq_len=100 --q_len=17 --head_dim=96 --kv_layout=paged --page_size=16");
  EXPECT_EQ(r.rc, 0);
  ASSERT_EQ(r.rows.size(), 1u);
  expect_unsupported(r.rows[0], "head_dim 96 is not compiled");
}

int main(int argc, char** argv) {
  peer_test::skip_without({"flashinfer-fa3"}, "scripts/fetch-peers.sh; ATTNBENCH_PEER_FLASHINFER_FA3");
  // Its kernels are sm_90a SASS: on another GPU its setup says so, and there is nothing to test.
  auto probe = run_fa3("--batch=1 --heads=2 --seq_len=64 --q_len=17 --head_dim=128 --kv_layout=paged --page_size=16");
  for (const auto& row : probe.rows)
    if (row["status"] == "failed" && row.dump().find("sm_90a (Hopper) only") != std::string::npos)
      attnbench_testing::skip_test_program("flashinfer-fa3's kernels run on sm_90 only: " + row.dump());
  return attnbench_testing::run_all_tests(argc, argv);
}
