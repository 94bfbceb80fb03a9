// The persistent warp-specialized Hopper (sm_90a) fused attention forward (tiles named "...wsp"): the kernel and
// its configuration; its launch policy and launch are fused_wsp_launch.cuh's, its work order PersistentWalk's
// (fused_tile_scheduler.cuh). Included by fused_wsp_launch.cuh only.
//
// The ws kernel (fused_kernel_ws.cuh) with a grid of the CTAs that fit on the SMs, each walking work items
// (batch*head, query block) in the static order of core/query_block_order.hpp (causal: pairs of blocks).
// What changes against the ws kernel:
//   - Q has two or three buffers (WspCfg::Q_BUFFERS), each with a full barrier (TMA bytes) and an empty barrier
//     (every consumer thread arrives as its epilogue starts: O leaves by TMA stores from a staging tile of its
//     own). The producer loads item n+1's Q while the consumers still run item n.
//   - Only the producer walks the order: it notes each item's geometry beside its Q buffer (ItemNote), and a
//     last note with run 0 ends the consumers' loop. The walk's divisions on the consumers' path between
//     items cost 3-9 % at S=512 and 0.4-3 % at D=128 (H200, session 25).
//   - The K/V ring and its barrier phases run on across items: tile t of a CTA's whole sequence of items
//     lands in stage t % STAGES, so the producer fills the next item's first K/V stages as soon as the
//     current item's last tiles are read, under the consumers' last P V and epilogue.
//   - Every producer thread waits on every tile's empty barriers (the items mix TMA and cp.async tiles), and
//     warp 0 refills a stage only after the producer's named barrier, once all of them saw it free. A
//     parity wait cannot tell phase k from phase k+2, so a thread that waits on a barrier must be one that
//     the barrier's next phase waits for: the consumers for the full barriers (they arrive on the empty
//     ones), every producer thread for the empty ones (through that named barrier). Without it a producer
//     thread that fell behind waited for a phase that never came: on an H200, 2 launches in 25,000 hung on
//     paged causal rows (fused_dev soak, session 24). Waiting in the leader alone was 3-12 % slower; a
//     barrier after both waits, before both copies, up to 16 % slower with two stages.
//   - The consumers release the last tile's V stage too (the ws kernel never refills it).
//   - CONSUMERS is 2 (BLOCK_M 128) or 3 (BLOCK_M 192: head_dim 64, where a third warpgroup has the
//     registers: 160 each).
//   - A mixed batch (VAR, KVarParams::q_lens): each sequence's own causal diagonal, and the producer skips its
//     padding blocks (no row under the sequence's query count) without a note.
//   - Each consumer warpgroup computes only the key tiles its own 64 rows see (none when they all lie past
//     q_len); it still waits for and releases the rest, so the ring's phases stay the producer's.
//   - Causal blocks start above row 0 where q_len is not a multiple of BM (core's causal_row_shift): the
//     warpgroups with no rows are in the first block, the one with the fewest key tiles.
//   - At head_dim 64 with 128-key tiles (TURNS) the consumer warpgroups take turns to issue their MMAs
//     (fused_wg_step.cuh: WgTurns), n_tiles + 1 turns each per item, those of the tiles they skip included.
//   - A TAIL config (m128n128w12s2wsp) shares a partial last round out over the grid by key tiles where the
//     walk finds it worth it (long non-causal blocks; core/query_block_order.hpp: tail_split): an item is then
//     key tiles [t_begin, t_end) of its block, noted relative to t_begin so the consumers' tile loop is the
//     same code, and each consumer warp ends it through TailMerge (fused_tail_merge.cuh) instead of the store.
// Loads (TMA boxes or cp.async by the producer warpgroup), masks, softmax and epilogue are the ws kernel's.
#pragma once
#include <type_traits>

#include "fused_cta_times.cuh"  // cta_time_mark: a developer build's load-balance record
#include "fused_kernel_ws.cuh"  // ws_pages_by_tma, regs_dec / regs_inc, encode_rows_map
#include "fused_ws_consumer.cuh"  // ws_tile_step: the consumers' key-tile step
#include "fused_ws_producer.cuh"  // WsKvLoader: the producer's K/V loads
#include "fused_ws_smem.cuh"  // WsRingSmem: the shared memory layout
#include "fused_tile_scheduler.cuh"  // PersistentWalk: the static work order
#include "fused_tail_merge.cuh"        // TailMerge: the pieces of a split last round merged

namespace ab::kernels::fused_detail {

// What the consumers need of an item, noted by the producer beside its Q buffer before the Q load (the
// load's arrive releases it, the consumers' wait on the buffer acquires it), so that the consumers do not walk
// the order themselves: its divisions sat on their path between items. run 0: no more items.
struct ItemNote {
  int bh, q_row0, kv_len, diag, n_tiles, first_copy, run;
  int key0;  // the item's first key (a piece's t_begin * BN): kv_len, diag and first_copy count from it
};
static_assert(sizeof(ItemNote) == 32, "wsp kernel: one 32-byte note per Q buffer");

// The producer's notes, one per Q buffer: its item, and with TAIL the piece of a split block it is.
template <int QB, bool TAIL>
struct WspNotes {
  ItemNote item[QB];
  TailPiece piece[QB];
};
template <int QB>
struct WspNotes<QB, false> {
  ItemNote item[QB];
};

template <int D_, int BN_, int ST_, int CONSUMERS_, int QB_ = 2, bool TAIL_ = false>
struct WspCfg {
  static constexpr int D = D_, BN = BN_, STAGES = ST_, CONSUMERS = CONSUMERS_;
  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int BM = CONSUMERS * 64;
  static constexpr int NT = BN / 8, DT = D / 8, KD = D / 16, KN = BN / 16, CPR = D / 8;
  static constexpr int ATOMS = D / 64;
  // Q buffers: two let the next item's Q load under the current one. At head_dim 64 with 192-row blocks (the
  // default tile) there is room for three, so that with items of 1-4 key tiles (S=512) the producer can
  // run another item ahead (H200, session 28: causal -2 %); with pages under a key tile it uses two
  // (16-row pages: +2 % with three).
  static constexpr int Q_BUFFERS = QB_;
  static constexpr int Q_BYTES = BM * D * 2;
  static constexpr int TILE_BYTES = BN * D * 2;
  // The ring: Q buffers (full/empty barriers each), K/V stages (full/empty barriers each).
  using Ring = WsRingSmem<Q_BYTES, Q_BUFFERS, true, TILE_BYTES, STAGES>;
  using Off = WsRingOffsets<Ring>;
  // After the barriers: per Q buffer, the producer's note of its item (ItemNote).
  // TAIL: the walk splits its last round (core/query_block_order.hpp: tail_split; launch_wsp launches this
  // kernel only where it does, else NoTail's); the note of a piece then says where its partial goes
  // (TailPiece, 16 bytes, after the ItemNotes). Its code in the consumers' epilogue costs 0.5-0.9 % where no
  // block is split (H200, session 33), hence the two kernels.
  static constexpr bool TAIL = TAIL_;
  using NoTail = WspCfg<D_, BN_, ST_, CONSUMERS_, QB_, false>;
  using Head = WsHeadSmem<Ring, WspNotes<Q_BUFFERS, TAIL>>;
  static constexpr int NOTES = static_cast<int>(offsetof(Head, notes));
  static constexpr int PIECES = NOTES + static_cast<int>(ws_pieces_offset<WspNotes<Q_BUFFERS, TAIL>, TAIL>());
  static constexpr int NOTES_END = static_cast<int>(sizeof(Head));
  // O leaves by TMA stores from a staging tile of its own (after the notes, 1024-byte aligned): each consumer
  // warp stages its 16 rows, its lane 0 stores them, and the warp reuses its rows an item later, once that
  // store has read them. On an H200 2-4 % faster on every head_dim-64 row than staging O in the Q buffer and
  // storing it from every thread (session 30); at head_dim 128 with the step's WAIT_AFTER_EXPS (session 31).
  static constexpr int O_BYTES = BM * D * 2;
  // Where that tile does not fit (160-key tiles at head_dim 128), O is staged in its item's own Q buffer
  // instead: a warp's rows there are its own warpgroup's Q rows, which no S reads once its last S landed. The
  // buffer then goes back to the producer only once the store has read it (at the next item's start).
  static constexpr bool O_IN_Q = 1024 + sizeof(WsOTileSmem<Head, O_BYTES>) > 227 * 1024;
  // The whole layout: the head, then the O staging tile where it has room.
  using Smem = WsOTileSmem<Head, O_IN_Q ? 0 : O_BYTES>;
  static constexpr int O_OFFSET = O_IN_Q ? 0 : static_cast<int>(ws_o_offset<Smem, !O_IN_Q>());
  // Where a warp waits for its previous store to have read its rows: at head_dim 128 when the next item
  // starts, at head_dim 64 just before it stages again. Each place gives its head_dim's fastest key-tile loop
  // schedule of those timed (H200, sessions 30-31: ptxas reorders the softmax with the epilogue's code).
  static constexpr bool STORE_WAIT_AT_ITEM_START = D == 128 || O_IN_Q;
  static constexpr int SMEM = 1024 + static_cast<int>(sizeof(Smem));
  // setmaxnreg moves registers within the CTA's launch allocation (ENTRY_REGS per thread, what
  // __launch_bounds__(THREADS, 1) leaves: 168 or 128). With two consumers the producer keeps 40 (its item
  // loop spills at 24 or 32: ptxas -v) and they take 224; with three it keeps 32 (a few spilled registers
  // of a warpgroup that mostly waits on barriers) so that they get 160, what 64 x 128 score tiles need.
  static constexpr int ENTRY_REGS = (65536 / THREADS) / 8 * 8;
  static constexpr int PRODUCER_REGS = CONSUMERS == 2 ? 40 : 32;
  static constexpr int CONSUMER_REGS = CONSUMERS == 2 ? 224 : 160;
  static constexpr int COPY_PASSES = BN * CPR / 128;
  // Turn-taking between the consumers: where the exp2 work of a tile equals its tensor work (D=64, 128-key
  // tiles) it lets one warpgroup's softmax run under another's MMAs (H200, session 23: 1-6 % faster at
  // S=512). At D=128 (session 20) and with 64-key tiles it was slower.
  static constexpr bool TURNS = D == 64 && BN == 128;
  // The softmax on a speculative base with 128-key tiles at head_dim 128 (fused_wg_step.cuh: WgStep's SPEC_BASE;
  // H200, session 34: 1.7-2.6 % faster on every head_dim-128 row). Its rare path reads K rows from global memory
  // (the consumers' k_row below). With 160-key tiles ptxas spills 69 registers for it, so those keep the exact
  // softmax.
  static constexpr bool SPEC_BASE = D == 128 && BN == 128;

  static_assert(CONSUMERS == 2 || CONSUMERS == 3, "wsp kernel: two or three consumer warpgroups");
  static_assert(128 * PRODUCER_REGS + CONSUMERS * 128 * CONSUMER_REGS <= THREADS * ENTRY_REGS,
                "wsp kernel: register budget");
  static_assert(D % 64 == 0 && D <= 256, "wsp kernel: head_dim a multiple of 64, at most 256");
  static_assert(BN % 16 == 0 && BN <= 256 && BM <= 256, "wsp kernel: TMA boxes of at most 256 rows");
  static_assert(STAGES >= 2, "wsp kernel: at least two stages");
  static_assert((BN * CPR) % 128 == 0, "wsp kernel: the cp.async fill splits evenly over the producer warpgroup");
  static_assert(SMEM <= 227 * 1024, "wsp kernel: shared memory above Hopper's 227 KB");
};

// An item's Q buffer and the phase of its barriers, the buffers used round robin (`buffers` of them, at most QB).
template <int QB>
struct QSlot {
  int b = 0;
  std::uint32_t ph = 0;
  __device__ __forceinline__ int buf() const { return b; }
  __device__ __forceinline__ std::uint32_t phase() const { return ph; }
  __device__ __forceinline__ void next(int buffers) {
    if (++b == buffers) {
      b = 0;
      ph ^= 1u;
    }
  }
};
// Two buffers: both from the item count, as the two-buffer kernels always had them (another form moves ptxas's
// register allocation: a spill in the head_dim-128 producer).
template <>
struct QSlot<2> {
  int n = 0;
  __device__ __forceinline__ int buf() const { return n & 1; }
  __device__ __forceinline__ std::uint32_t phase() const { return (n >> 1) & 1; }
  __device__ __forceinline__ void next(int) { ++n; }
};

// VAR: the instance that applies the variants (KVarParams): an item's key tiles start at its first row's window
// (a piece of its block, as the tail split's), the consumers mask each row's window and soft-cap the scores
// (WgRows<..., true>, the exact softmax), the epilogue adds the head's sink; never with the tail split.
template <class C, bool BF16, bool VAR = false>
__global__ void __launch_bounds__(C::THREADS, 1)
    fused_attention_fwd_wsp(const KParamsOf<VAR> p, const __grid_constant__ CUtensorMap tm_q,
                            const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v,
                            const __grid_constant__ CUtensorMap tm_o) {
#ifdef AB_FUSED_WGMMA
  constexpr int D = C::D, BM = C::BM, BN = C::BN, ST = C::STAGES;
  static_assert(!(VAR && C::TAIL), "wsp kernel: the variants' instances run without the tail split");

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  const std::uint32_t sQ_a0 = smem_u32(smem);                      // Q_BUFFERS buffers
  using Off = typename C::Off;  // offsets of the ring's members (C::Smem)
  const std::uint32_t sK_a = sQ_a0 + Off::K;  // ST slots
  const std::uint32_t sV_a = sQ_a0 + Off::V;  // ST slots
  const WsBars<Off> bars{sQ_a0};  // the Q buffers' and K/V stages' barriers
  const std::uint32_t sO_a0 = sQ_a0 + C::O_OFFSET;  // the O staging tile (O_IN_Q: item's Q buffer added)
  constexpr int QB = C::Q_BUFFERS;
  ItemNote* const notes = reinterpret_cast<ItemNote*>(smem + C::NOTES);  // per Q buffer
  TailPiece* const piece_notes = reinterpret_cast<TailPiece*>(smem + C::PIECES);  // TAIL: per Q buffer

  const int tid = threadIdx.x;
  const int warp = __shfl_sync(0xffffffffu, tid >> 5, 0);
  const int lane = tid & 31;
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
  const int bh_count = p.batch * p.heads;
  const int grid = static_cast<int>(gridDim.x), cta = static_cast<int>(blockIdx.x);
  const bool paged = p.paged != 0;
  const int ps = p.page_size;
  const bool pages_by_tma = paged && ws_pages_by_tma(ps, BN);
  const int row_shift = causal_row_shift(p.q_len, BM, p.causal != 0);  // whole warpgroups above row 0
  const int q_bufs = QB > 2 && paged && ps < BN ? 2 : QB;  // the Q buffers in use (Q_BUFFERS)

  // One work item's geometry, the producer's (the consumers get their part of it through ItemNote).
  struct Geom {
    int bh, b, kvh, b_kvh, q_row0, S, diag, n_tiles;
    int first_copy;  // the first tile that goes by cp.async (ws_first_copy_tile)
  };
  auto geom_of = [&](const QueryBlock& w) {
    Geom g;
    g.bh = w.bh;
    g.b = w.bh / p.heads;
    g.kvh = (w.bh - g.b * p.heads) / p.group;
    g.b_kvh = g.b * p.kv_heads + g.kvh;
    g.q_row0 = w.m_block * BM - row_shift;  // the Q box's rows above 0 land as zeros (TMA fills them)
    g.S = p.kv_lens ? __ldg(p.kv_lens + g.b) : p.seq_len;
    g.diag = causal_diag(g.S, p.q_len);
    if constexpr (VAR) {
      if (p.q_lens) g.diag = causal_diag(g.S, __ldg(p.q_lens + g.b));  // a mixed batch: this sequence's queries
    }
    const int kv_end = kv_end_for_rows(g.q_row0 + BM, g.S, g.diag, p.causal);
    g.n_tiles = max(1, (kv_end + BN - 1) / BN);
    g.first_copy = ws_first_copy_tile(paged, pages_by_tma, g.S, p.seq_len, g.n_tiles, BN);
    return g;
  };

  if (tid == 0) ws_init_barriers(bars, C::CONSUMERS * 128);  // fused_ws_smem.cuh
  __syncthreads();  // the only CTA-wide barrier
  if (tid == 0) cta_time_mark(cta, 0);

  if (wg == 0) {
    // ---- producer ----
    regs_dec<C::PRODUCER_REGS>();
    const bool leader = warp == 0 && lane == 0;
    const int ptid = tid;  // 0..127
    int tile_seq = 0;      // tiles this CTA has loaded over all its items: the ring position
    QSlot<QB> q;  // this item's Q buffer and its phase
    const PersistentWalk walk{cta, grid, bh_count};  // fused_tile_scheduler.cuh
    for (int step = 0;; ++step) {
      const PersistentStep st = walk.step(p, step);
      if (st.step == WalkStep::done) break;
      if (st.step == WalkStep::skip) continue;
      const Geom g = geom_of(st.block);
      if constexpr (VAR) {  // a mixed batch's padding block (every row past its sequence's queries): no work, no note
        if (p.q_lens && g.q_row0 >= __ldg(p.q_lens + g.b)) continue;  // (no tail split under VAR: static_assert above)
      }
      // The item's key tiles [t_begin, t_end): the block's, or a piece's. The consumers count them from 0: the
      // note's key length, diagonal and first cp.async tile are moved by t_begin tiles.
      int t_begin = 0, t_end = g.n_tiles;
      if constexpr (C::TAIL) {
        if (st.tail >= 0) {
          t_begin = st.t_begin;
          t_end = st.t_end;
        }
      }
      if constexpr (VAR) {  // from the tile of the block's first row's window start
        if (p.window > 0) t_begin = min(t_end - 1, max(0, max(g.q_row0, 0) + g.diag - p.window) / BN);
      }
      const std::int32_t* __restrict__ bt = p.block_table + static_cast<std::int64_t>(g.b) * p.pages;
      const int qb = q.buf();
      if (leader) {  // Q of this item, once the epilogue of the item q_bufs back has left the buffer
        mbar_wait(bars.empty_q(qb), q.phase() ^ 1u);
        const int shift = t_begin * BN;
        notes[qb] = ItemNote{g.bh, g.q_row0, g.S - shift, g.diag - shift, t_end - t_begin,
                             max(0, g.first_copy - t_begin), 1, shift};
        if constexpr (C::TAIL) {
          TailPiece tp{-1, 0, 0, 0};
          if (st.tail >= 0) {
            const unsigned ug = static_cast<unsigned>(grid), i = static_cast<unsigned>(st.tail);
            const unsigned first = p.tail.first_cta(i, ug);
            tp = TailPiece{st.tail, 2 * cta + st.piece, static_cast<int>(p.tail.slot(i, first, ug)),
                           static_cast<int>(p.tail.last_cta(i, ug) - first) + 1};
          }
          piece_notes[qb] = tp;
        }
        ws_load_q<BM, D>(sQ_a0 + qb * C::Q_BYTES, tm_q, g.q_row0, g.bh, bars.full_q(qb));  // fused_ws_producer.cuh
      }
      const WsKvLoader<D, BN, true> kv{p, paged, ps, bt, g.b_kvh, g.kvh, g.S, ptid};  // fused_ws_producer.cuh
      // A paged tile's page rows, loaded a tile ahead (WsKvLoader::page_row); none for cp.async tiles.
      int row = t_begin < min(t_end, g.first_copy) ? kv.page_row(t_begin) : 0;
      for (int t = t_begin; t < t_end; ++t, ++tile_seq) {
        const int s = tile_seq % ST;
        const std::uint32_t free_parity = ((tile_seq / ST) & 1) ^ 1;  // round 0 of the ring passes at once
        const std::uint32_t dk = sK_a + s * C::TILE_BYTES, dv = sV_a + s * C::TILE_BYTES;
        const int next_row = t + 1 < min(t_end, g.first_copy) ? kv.page_row(t + 1) : 0;
        kv.fill(tm_k, tm_v, t < g.first_copy, true, leader, t, dk, dv,
                WsStageBars{bars.full_k(s), bars.empty_k(s), bars.full_v(s), bars.empty_v(s)}, free_parity, row);
        row = next_row;
      }
      q.next(q_bufs);
    }
    if (leader) {  // no more items: a note saying so, in the next buffer once it is free
      const int qb = q.buf();
      mbar_wait(bars.empty_q(qb), q.phase() ^ 1u);
      notes[qb].run = 0;
      mbar_arrive(bars.full_q(qb));
    }
  } else {
    // ---- consumers ----
    regs_inc<C::CONSUMER_REGS>();
    const int cw = warp - 4;  // warp index among the consumers: rows cw*16 .. +15 of the CTA tile
    const int gq = lane >> 2, tq = lane & 3;
    const float sl2 = p.scale_log2;
    using Rows = WgRows<BN, D, BF16, VAR>;
    const std::uint64_t dk = sw128_desc(sK_a, 16, 1024);
    const std::uint64_t dv = sw128_desc(sV_a, BN * 128, 1024);

    WgStep<BN, D, BF16, C::SPEC_BASE && !VAR, VAR> w;  // fused_wg_step.cuh
    using Turns = std::conditional_t<C::TURNS, WgTurns, NoTurns>;
    const Turns turns(wg, C::CONSUMERS);
    if (wg == C::CONSUMERS) turns.pass();  // the first consumer warpgroup has the first turn
    int tile_seq = 0;  // the ring position, as the producer's
    // Tile seq's stage and the parity of its round (unsigned: % and / by ST are masks and shifts).
    auto stage_of = [](unsigned seq) { return static_cast<int>(seq % ST); };
    auto round_of = [](unsigned seq) { return (seq / ST) & 1u; };
    int staged_qb = -1;  // O_IN_Q: the Q buffer that holds the previous item's staged O
    for (QSlot<QB> q;; q.next(q_bufs)) {  // the item's Q buffer, as the producer counts them
      const int qb = q.buf();
      if constexpr (C::O_IN_Q) {  // the previous item's store has read its Q buffer: it goes back
        if (lane == 0) bulk_wait_read<0>();
        __syncwarp();
        if (staged_qb >= 0) mbar_arrive(bars.empty_q(staged_qb));
        staged_qb = qb;
      }
      mbar_wait(bars.full_q(qb), q.phase());
      const ItemNote g = notes[qb];
      if constexpr (C::STORE_WAIT_AT_ITEM_START && !C::O_IN_Q) {
        if (lane == 0) bulk_wait_read<0>();
        __syncwarp();
      }
      if (!g.run) break;
      const typename Rows::Geom rg = [&] {
        if constexpr (VAR) {
          return WgVarGeom{{g.q_row0 + cw * 16, gq, tq, g.kv_len, g.diag, p.causal != 0}, p.window, p.cap_in, p.cap_out};
        } else {
          return WgRowGeom{g.q_row0 + cw * 16, gq, tq, g.kv_len, g.diag, p.causal != 0};
        }
      }();
      w.begin();
      float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
      const std::uint32_t sQ_a = sQ_a0 + qb * C::Q_BYTES;
      const std::uint64_t dq = sw128_desc(sQ_a + (wg - 1) * 64 * 128, 16, 1024);

      // This warpgroup's own tile count: none where its 64 rows are all past q_len (the last block of a
      // 192-row tile) or above row 0 (a causal first block: causal_row_shift moves blocks by whole
      // warpgroups), fewer than the item's where its rows end before the item's last keys (causal, BM > BN).
      const int wg_row0 = g.q_row0 + (wg - 1) * 64;
      const int wg_row_end = min(wg_row0 + 64, p.q_len);
      const int wg_tiles =
          wg_row_end <= wg_row0 || wg_row0 < 0
              ? 0
              : min(g.n_tiles, max(1, (kv_end_for_rows(wg_row_end, g.kv_len, g.diag, p.causal) + BN - 1) / BN));

      // The tiles this warpgroup's rows do not see (before its first, past its last): wait for each (an arrive
      // before the fill could count toward the previous round of its stage) and release it; their turns pass unused.
      auto pass_tile = [&](int t) {
        const unsigned seq = static_cast<unsigned>(tile_seq + t);
        const int s = stage_of(seq);
        mbar_wait(bars.full_k(s), round_of(seq));
        mbar_arrive(bars.empty_k(s));
        mbar_wait(bars.full_v(s), round_of(seq));
        mbar_arrive(bars.empty_v(s));
        turns.wait();
        turns.pass();
      };
      int j = 0;
      // VAR with a window: this warpgroup starts at the tile of its first row's window start (the item's first
      // tile is its block's first row's); the tiles before it hold no key its rows see.
      int wg_first = 0;
      if constexpr (VAR) {
        if (p.window > 0 && wg_tiles > 0) wg_first = min(wg_tiles - 1, max(0, wg_row0 + g.diag - p.window) / BN);
        for (; j < wg_first; ++j) pass_tile(j);
      }
      if (wg_tiles > 0) {
        do {
          const unsigned seq = static_cast<unsigned>(tile_seq + j);
          const int s = stage_of(seq);
          const int sp = stage_of(seq + ST - 1);  // stage of tile j-1
          bool has_pv = j > 0;
          if constexpr (VAR) has_pv = j > wg_first;
          ws_tile_step<BM, C::TILE_BYTES>(  // fused_ws_consumer.cuh
              w, bars, dq, dk, dv, has_pv, j, s, sp, [&] { return round_of(seq); }, [&] { return round_of(seq - 1); },
              g.first_copy, rg, sl2, row_max, row_sum,
              turns, [&](int key_rel) -> const std::uint16_t* {  // K rows for the speculative base's rare path
                if (key_rel >= g.kv_len) return nullptr;
                // ws_kv_row's row, written out: through that function ptxas schedules the key-tile loop differently.
                const int b = g.bh / p.heads, kvh = (g.bh - b * p.heads) / p.group, key = g.key0 + key_rel;
                std::int64_t row;
                if (paged) {
                  const int page = key / ps;
                  row = (static_cast<std::int64_t>(__ldg(p.block_table + static_cast<std::int64_t>(b) * p.pages + page)) *
                             p.kv_heads + kvh) * ps + (key - page * ps);
                } else {
                  row = (static_cast<std::int64_t>(b) * p.kv_heads + kvh) * p.seq_len + key;
                }
                return p.k + row * D;
              });
        } while (++j < wg_tiles);
        // ---- the last tile's P V ----
        {
          const unsigned seq = static_cast<unsigned>(tile_seq + wg_tiles - 1);
          const int sl = stage_of(seq);
          ws_last_pv<C::TILE_BYTES>(w, bars, dv, wg_tiles - 1, sl, [&] { return round_of(seq); }, g.first_copy, turns);
          mbar_arrive(bars.empty_v(sl));  // the next item's tiles reuse this stage
        }
      }
      for (; j < g.n_tiles; ++j) {
        const unsigned seq = static_cast<unsigned>(tile_seq + j);
        const int s = stage_of(seq);
        mbar_wait(bars.full_k(s), round_of(seq));
        mbar_arrive(bars.empty_k(s));
        mbar_wait(bars.full_v(s), round_of(seq));
        mbar_arrive(bars.empty_v(s));
        turns.wait();
        turns.pass();
      }
      if (wg_tiles == 0) {  // and the turn of the last P V
        turns.wait();
        turns.pass();
      }
      tile_seq += g.n_tiles;

      // ---- epilogue: Q is no longer read (every S of the item has landed), so the buffer goes back at once
      // (O_IN_Q: at the next item's start). O / l goes to this warp's 16 rows of the staging tile once its
      // previous store has read them, then to O by a TMA store from lane 0 (rows past q_len are not written) ----
      TailPiece tp{-1, 0, 0, 0};
      if constexpr (C::TAIL) tp = piece_notes[qb];  // before the buffer (and its note) goes back
      if constexpr (!C::O_IN_Q) mbar_arrive(bars.empty_q(qb));
      const std::uint32_t o_off = C::O_IN_Q ? qb * C::Q_BYTES : 0;
      const std::uint32_t sO_a = sO_a0 + o_off;
      bool whole = true;  // not a piece of a split block: O goes out through the staging tile
      if constexpr (C::TAIL) {
        if (wg_tiles > 0 && tp.block >= 0) {  // a piece: its partial to the workspace, the last piece merges
          const int row0 = g.q_row0 + cw * 16;
          // The merge is out of line (TailMerge::finish says why): it gets copies of the registers.
          float o_copy[D / 8][4], m_copy[2], l_copy[2];
#pragma unroll
          for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e) o_copy[dt][e] = w.acc_o[dt][e];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            m_copy[h] = row_max[h];
            l_copy[h] = row_sum[h];
          }
          TailMerge<D, BM, BF16>::finish(p.tail_ws, tp, cw, lane, o_copy, m_copy, l_copy, sl2,
                                         p.o + (static_cast<std::int64_t>(g.bh) * p.q_len + row0) * D,
                                         p.q_len - row0);
          whole = false;
        }
      }
      if (wg_tiles > 0 && whole) {
        if constexpr (!C::STORE_WAIT_AT_ITEM_START) {
          if (lane == 0) bulk_wait_read<0>();
          __syncwarp();
        }
        // VAR with sinks: the head's sink in every row's denominator.
        Rows::template stage_rows_of<BM>(p, g.bh % p.heads, w.acc_o, row_sum, row_max, sl2, smem + C::O_OFFSET + o_off,
                                         cw * 16, rg);
        fence_proxy_async();  // the staged rows (generic proxy writes) before the TMA reads them
        __syncwarp();
        if (lane == 0) {
#pragma unroll
          for (int a = 0; a < C::ATOMS; ++a)
            tma_store_3d(tm_o, sO_a + a * BM * 128 + cw * 16 * 128, a * 64, rg.warp_row0, g.bh);
          bulk_commit();
        }
      }
    }
    if (lane == 0) bulk_wait_read<0>();  // the staging tile stays until the last store has read it
    if (wg == 1) turns.wait();  // the last warpgroup's last pass
    if ((tid & 127) == 0) cta_time_mark(cta, wg);
  }
#else
  (void)p;
  (void)tm_q;
  (void)tm_k;
  (void)tm_v;
  (void)tm_o;
  __trap();  // built without sm_90a; fused_can_implement refuses these tiles on such devices
#endif
}

}  // namespace ab::kernels::fused_detail
