// On the GPU: peer:cudnn (peers/cudnn, docs/peers.md) loaded by the real binary with --peers and run beside fused
// on awkward shapes (odd
// and ragged lengths, a short last page, pages of 1 and 16, GQA and MQA, q_len 1, 4, 7 and a chunk, bottom-right
// causal, fp16 and bf16, contiguous and paged): every row the peer takes is verified against the reference; rows
// it refuses are `unsupported` with the library's reason; a problem cuDNN refuses is a row `unsupported` with
// cuDNN's words while fused still runs. Exits 77 (skipped) without a device, when the peer was not built, or when
// libcudnn does not load here.
#include <string>

#include "gpu/peer_rows.hpp"  // run_verified, skip_without

namespace {

using peer_test::Rows;
using peer_test::run_verified;

// The shapes every peer is tried on; a peer refuses what it cannot run (decode-only peers everything but q_len 1).
const char* const kShapes[] = {
    "--batch=3 --heads=8 --kv_heads=2 --seq_len=1000 --head_dim=128 --causal --dtype=fp16,bf16",
    "--batch=3 --heads=8 --kv_heads=1 --seq_len=1000 --q_len=1 --head_dim=128 --kv_layout=paged --page_size=16 --dtype=bf16",
    "--heads=32 --kv_heads=8 --kv_lens=list:1000,37,517 --q_len=1,4 --causal --head_dim=128 --kv_layout=paged --page_size=16",
    "--batch=2 --heads=4 --seq_len=300 --q_len=1 --head_dim=64 --kv_layout=paged --page_size=1",
    "--heads=8 --kv_heads=4 --kv_lens=list:77,300,129 --q_len=1,7 --causal --head_dim=64 --dtype=bf16",
    "--batch=1 --heads=1 --seq_len=129 --head_dim=64 --causal",
    "--batch=2 --heads=32 --kv_heads=8 --seq_len=2000 --q_len=333 --causal --head_dim=128 --kv_layout=paged,contiguous "
    "--page_size=16",
};

// Runs `peer` (its table name) on every shape: each of its rows ok and verified, or unsupported with a reason;
// at least `min_ok` rows ok in all. Skips the program when the peer's library does not load here.
void expect_peer_verified(const std::string& peer, int min_ok) {
  int ok = 0, unsupported = 0;
  for (const char* shape : kShapes) {
    Rows r = run_verified(std::string("--peers=") + peer + " --strategies=fused,peer:" + peer + " " + shape);
    EXPECT_EQ(r.rc, 0) << shape;
    ASSERT_FALSE(r.rows.empty()) << shape;
    for (const auto& row : r.rows) {
      if (row["strategy"] != "peer:" + peer) continue;
      if (row["status"] == "unsupported") {
        ++unsupported;
        std::string why = row.value("reason", "");
        EXPECT_FALSE(why.empty()) << row.dump();
        if (why.find("unavailable") != std::string::npos || why.find("not found") != std::string::npos)
          attnbench_testing::skip_test_program(peer + " does not load here: " + why);
        continue;
      }
      EXPECT_EQ(row["status"], "ok") << shape << "\n" << row.dump();
      if (row["status"] != "ok") continue;
      ++ok;
      EXPECT_TRUE(row["verify"]["passed"].get<bool>()) << row.dump();
      EXPECT_GE(row["launches"]["measured"]["kernels"].get<int>(), 1) << row.dump();
      EXPECT_FALSE(row.value("library_version", "").empty()) << row.dump();
    }
  }
  EXPECT_GE(ok, min_ok) << peer << ": " << ok << " rows ok, " << unsupported << " unsupported";
}
}  // namespace

TEST(PeerCudnn, verified_on_every_layout) { expect_peer_verified("cudnn", 11); }

// The variants its table declares (a sliding window, sinks): its rows verified against the reference that applies
// them, with GQA, paged and contiguous, decode and q_len > 1, causal and not, a window of 1 and one ending inside
// a page; soft-capping, which it does not declare, is an unsupported row naming it (Strategy::can_run).
TEST(PeerCudnn, runs_the_window_and_the_sinks_it_declares) {
  int ok = 0;
  for (const char* shape :
       {"--batch=2 --heads=8 --kv_heads=2 --seq_len=700 --q_len=1,7 --head_dim=128 --window=1,13 --sinks=false,true "
        "--causal --kv_layout=paged,contiguous --page_size=16 --dtype=bf16",
        "--batch=2 --heads=4 --seq_len=300 --head_dim=64 --window=40 --sinks"}) {
    Rows r = run_verified(std::string("--peers=cudnn --strategies=fused,peer:cudnn ") + shape);
    EXPECT_EQ(r.rc, 0) << shape;
    for (const auto& row : r.rows) {
      if (row["strategy"] != "peer:cudnn") continue;
      if (row["status"] == "unsupported") {  // cuDNN may refuse a combination; never silently wrong
        EXPECT_FALSE(row.value("reason", "").empty()) << row.dump();
        continue;
      }
      EXPECT_EQ(row["status"], "ok") << shape << "\n" << row.dump();
      ok += row["status"] == "ok" && row["verify"]["passed"].get<bool>();
    }
  }
  EXPECT_GE(ok, 8) << "rows of peer:cudnn ok and verified with a window or sinks";
  Rows capped = run_verified("--peers=cudnn --strategies=fused,peer:cudnn --batch=1 --heads=2 --seq_len=64 "
                             "--head_dim=64 --softcap=30");
  for (const auto& row : capped.rows)
    if (row["strategy"] == "peer:cudnn") {
      EXPECT_EQ(row["status"], "unsupported") << row.dump();
      EXPECT_NE(row.value("reason", "").find("soft-capping"), std::string::npos) << row.dump();
    }
}

// A value head dim of its own (AB_VARIANT_HEAD_DIM_V): DeepSeek-V3's expanded prefill (192 / 128), causal, paged
// with a short last page and contiguous, q_len below the KV length, and MLA's absorbed decode (576 / 512, one KV
// head), which cuDNN may refuse (a head dim over its limit) but never runs wrong.
TEST(PeerCudnn, runs_a_value_head_dim_of_its_own) {
  int ok = 0;
  for (const char* shape :
       {"--batch=2 --heads=8 --seq_len=300 --q_len=300,37 --head_dim=192 --head_dim_v=128 --causal "
        "--kv_layout=paged,contiguous --page_size=64 --dtype=bf16",
        "--batch=2 --heads=16 --kv_heads=1 --seq_len=300 --q_len=1 --head_dim=576 --head_dim_v=512 "
        "--kv_layout=paged --page_size=64 --dtype=bf16"}) {
    Rows r = run_verified(std::string("--peers=cudnn --strategies=fully_batched,peer:cudnn ") + shape);
    EXPECT_EQ(r.rc, 0) << shape;
    for (const auto& row : r.rows) {
      if (row["strategy"] != "peer:cudnn") continue;
      if (row["status"] == "unsupported") {
        EXPECT_FALSE(row.value("reason", "").empty()) << row.dump();
        continue;
      }
      EXPECT_EQ(row["status"], "ok") << shape << "\n" << row.dump();
      ok += row["status"] == "ok" && row["verify"]["passed"].get<bool>();
    }
  }
  // cuDNN documents 192 / 128 for Hopper prefill; with pages, padding and bottom-right causal it depends on the
  // version, so two of the four prefill rows at least (refusals must give cuDNN's reason, above).
  EXPECT_GE(ok, 2) << "rows of peer:cudnn ok and verified at DeepSeek-V3's prefill widths";
}

TEST(PeerCudnn, refusal_is_unsupported_with_its_reason) {
  Rows r = run_verified("--peers=cudnn --strategies=fused,peer:cudnn --batch=1 --heads=2 --seq_len=64 --head_dim=12");
  bool refused = false;
  for (const auto& row : r.rows)
    if (row["strategy"] == "peer:cudnn") {
      EXPECT_EQ(row["status"], "unsupported") << row.dump();
      EXPECT_NE(row.value("reason", "").find("cuDNN"), std::string::npos) << row.dump();
      refused = true;
    }
  EXPECT_TRUE(refused);
}

int main(int argc, char** argv) {
  peer_test::skip_without({"cudnn"}, "scripts/fetch-peers.sh, docs/peers.md");
  return attnbench_testing::run_all_tests(argc, argv);
}
