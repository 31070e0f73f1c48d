//===- BlackwellRoles.h - the FA4 prefill role set (sm_100a) ---*- C++ -*-===//
//
// The FlashAttention-4 CTA: a softmax warpgroup per Q stage reading S from
// and writing P to Tensor Memory, a correction warpgroup rescaling O and
// writing the epilogue, one MMA warp issuing tcgen05 MMAs, and the shared
// TMA load and store warps. With kvInterleave = 2 the two softmax
// warpgroups share one Q stage and take its KV blocks in turn (even and odd
// blocks of the CTA's sequence of blocks), each with its own S, P and O;
// the correction warpgroup combines their rows before the store. With
// shared keys (sharedKey = 2 or 4) a Q stage is 128 / sharedKey rows, its
// S and O come from weight-stationary MMAs folded over the warpgroup's
// lanes (thread t: row t mod rows, column share t / rows), the threads of a
// row agree on its maximum through a shared-memory exchange, and P goes to
// the PV MMA through shared memory.
//
// BlackwellRoles.cpp builds the buffers, channels and softmax warpgroups,
// BlackwellCorrection.cpp the correction warpgroup and its epilogues,
// BlackwellMma.cpp the MMA warp.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_BLACKWELLROLES_H
#define FA4_TRANSFORMS_SPECIALIZE_BLACKWELLROLES_H

#include "RoleSet.h"
#include "WorkSchedule.h"

namespace mlir::fa4::specialize {

class BlackwellPrefillRoles final : public RoleSet {
public:
  using RoleSet::RoleSet;

  SmallVector<SharedBuffer> sharedBuffers() const override;
  void build(Block &roles) override;

private:
  void buildSoftmax(int64_t warpgroup);
  void buildCorrection();
  /// The correction's epilogue of an interleaved tile: both warpgroups'
  /// partial rows combined, normalized and staged for the store.
  void buildCombinedEpilogue(const Tile &tile, Value row);
  void buildMma();
  void buildInterleavedMma();
  /// The MMA warp's operands of the two PV MMAs: the key ranges [0,
  /// pvSplit) and [pvSplit, blockN) of the V tile of K/V hand-off
  /// `handoff`, and of a warpgroup's P (`region`).
  std::pair<Value, Value> valueParts(Value handoff);
  std::pair<Value, Value> pHalves(Value region);
  /// The V tile of K/V hand-off `handoff`, and its keys [first, first +
  /// keys).
  Value valueTile(Value handoff);
  Value valueKeys(Value vTile, int64_t first, int64_t keys);
  /// P as hi + lo: the two parts of chunk `c` of P, each a 16-bit view of
  /// half of the chunk's columns of S (`region`).
  std::pair<Value, Value> pParts(Value region, int64_t c);
  /// The PV MMAs into `warpgroup`'s O of the block whose hand-off is `k`
  /// with the V tile of hand-off `vHandoff`, each once the softmax handed
  /// over its part of P: P's two halves (`pTop`, `pBottom`); with hi + lo,
  /// per 32-key chunk of P its hi and then its lo.
  void issuePv(int64_t warpgroup, Value k, Value pTop, Value pBottom,
               Value vHandoff, Value accumulate);
  /// Stages a chunk (whole 16-byte pieces) of a normalized O row (f32)
  /// for the TMA store, in the output type and the 128-byte swizzle.
  void stageChunk(Value normalized, int64_t firstColumn, Value staging,
                  Value row);

  /// Shared keys: the reduction of the `keyShares` threads of this
  /// thread's row of `warpgroup` over their `partial`s (the maximum, or with
  /// `max` false the sum), folded in share order so that every thread of
  /// the row gets the same bits. `sequence` numbers the warpgroup's
  /// exchanges, one more each time: its parity picks the buffer half, so
  /// that one named barrier per exchange suffices (a thread can be at most
  /// one exchange ahead of another, whose reads are then in the other half).
  Value exchangeRow(int64_t warpgroup, Value partial, bool max, Value sequence,
                    Value thread, Value row);
  /// Shared keys: `warpgroup`'s P tile (rows x blockN keys, K-major).
  Value pTile(int64_t warpgroup);
  /// The M of the weight-stationary MMAs with shared keys (null without).
  IntegerAttr foldedRows() {
    return keyShares > 1 ? b.getI64IntegerAttr(shape.qRows()) : IntegerAttr();
  }

  /// Interleaved: which softmax warpgroup takes the tile's block `n`.
  Value warpgroupOf(const Tile &tile, Value n) {
    return rem(add(tile.kvBase, n), 2);
  }
  /// The hand-off number of block `n` on its softmax warpgroup's S, P and
  /// statistics channels: the CTA's blocks so far, or with interleaving
  /// the warpgroup's (its blocks are every other one of the CTA's).
  Value blockHandoff(const Tile &tile, Value n) {
    Value k = add(tile.kvBase, n);
    return interleaved ? div(k, 2) : k;
  }
  Value statsHandoff(const Tile &tile, Value n) {
    return interleaved ? add(blockHandoff(tile, n), tile.ordinal)
                       : add(tile.statsBase, n);
  }
  /// The tile's last statistics hand-off of `warpgroup` (its row totals):
  /// after its blocks of this and earlier tiles, and one per earlier tile.
  Value finalStatsHandoff(const Tile &tile, int64_t warpgroup) {
    if (!interleaved)
      return add(tile.statsBase, tile.blocks);
    return add(blocksBefore(add(tile.kvBase, tile.blocks), warpgroup),
               tile.ordinal);
  }
  /// Interleaved: the CTA's first `k` blocks that `warpgroup` took.
  Value blocksBefore(Value k, int64_t warpgroup) {
    return div(add(k, 1 - warpgroup), 2);
  }

  /// Softmax warpgroups, each with its own S, P, O and channels; the Q
  /// stage a warpgroup's rows belong to.
  int64_t warpgroups = 0;
  bool interleaved = false;
  /// Threads per row (sharedKey; 1: a thread per row).
  int64_t keyShares = 1;
  int64_t qStageOf(int64_t warpgroup) const {
    return interleaved ? 0 : warpgroup;
  }
  /// RoPE: the softmax warpgroup of Q stage `stage` (this thread `thread`
  /// of it) rotates the stage's Q tile of `tile` and hands it to the MMA
  /// warp; the slot's previous Q goes back to the load warp first.
  void rotateQuery(const Tile &tile, int64_t stage, Value thread);
  /// The statistics exchange of the softmax and correction warpgroups:
  /// [softmax warpgroup, acc_scale or row_sum / row max, row].
  Value statistics();

  // Channels: shared with the load and store roles, then per softmax
  // warpgroup.
  Value q, kv, epi;
  // With a rotary embedding, Q as its softmax warpgroup rotated it for the
  // MMA warp (q then ends at the softmax warpgroup).
  Value qRotated;
  SmallVector<Value> s, pFirst, pSecond, stats, oReady;
  // Tensor Memory per softmax warpgroup.
  // P only without hi + lo (pPrecision), which writes into S.
  SmallVector<Value> sTmem, pTmem, oTmem;
};

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_BLACKWELLROLES_H
