//===- WorkSchedule.h - which work tiles a CTA visits, in order -*- C++ -*-===//
//
// The work schedule: the persistent loop of a CTA over its work tiles
// (batch, block of packed query heads, qStages Q tiles), in the order of the
// plan's scheduler. Roles see a tile only as a Tile; a new schedule (e.g.
// variable-length batches) is a new implementation and a case of
// createWorkSchedule, not an edit of the roles.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_WORKSCHEDULE_H
#define FA4_TRANSFORMS_SPECIALIZE_WORKSCHEDULE_H

#include "KernelBuilder.h"

#include <functional>

namespace mlir::fa4::specialize {

/// One work tile of the persistent loop, as every role sees it.
struct Tile {
  Value ordinal;          // tiles this CTA processed before
  Value batch, headBlock; // which (batch, block of packed query heads)
  Value position;         // first query position of Q stage 0
  Value firstBlock;       // the first KV block the tile visits
  Value blocks;           // KV blocks it visits, from firstBlock on
  Value kvBase;           // KV blocks this CTA visited before
  Value statsBase;        // statistics hand-offs before (blocks + 1 each)
  /// The lengths of the tile's sequence (the kernel's Sq and Skv, or a
  /// packed sequence's) and its KV blocks.
  Value seqQ, seqKv, kvBlocks;
  /// Packed sequences: the sequence's first query and key rows in the
  /// packed tensors; null for a dense batch.
  Value queryStart, keyStart;
  /// Split-KV: which of the plan's splits of the tile's KV blocks this is
  /// (firstBlock and blocks are then the split's share); null without.
  Value split;
  /// Builds batch, headBlock and position again from the schedule's loop
  /// index for the epilogue (KernelBuilder::epilogueTile), so that they
  /// need not stay in registers through the KV loop; empty where the
  /// schedule keeps them.
  std::function<void(Tile &)> recompute;
};

class WorkSchedule : protected KernelOps {
public:
  explicit WorkSchedule(KernelBuilder &kernel)
      : KernelOps(kernel.getBuilder(), kernel.getShape()), kernel(kernel) {}
  virtual ~WorkSchedule();

  /// Builds this CTA's loop over its work tiles at the insertion point and
  /// `body` once inside it. Hand-off numbers continue across tiles, so the
  /// loop carries the tiles and KV blocks visited so far (tiles visit
  /// different numbers of blocks when causal).
  virtual void forEachTile(function_ref<void(const Tile &)> body) = 0;

protected:
  /// The tile after `ordinal` tiles and `kvBase` KV blocks of this CTA;
  /// the schedule fills in its coordinates.
  Tile nextTile(Value ordinal, Value kvBase);
  /// Builds `body` on `tile` with the KV blocks the score stage says it
  /// visits, then yields the counts carried to the next tile (`yield`
  /// false: returns them, for a loop that yields more).
  SmallVector<Value> visit(Tile &tile, function_ref<void(const Tile &)> body,
                           bool yield = true);

  KernelBuilder &kernel;
};

/// The schedule of the plan's scheduler: linear, LPT or paired; with
/// packed sequences of variable lengths, the one that walks their table.
std::unique_ptr<WorkSchedule> createWorkSchedule(KernelBuilder &kernel);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_WORKSCHEDULE_H
