//===- ScoreStage.h - what happens to S before exp2 -------------*- C++ -*-===//
//
// The score stage: everything between the QK^T MMA and the exponentials of
// the softmax: the scaling to log2 units and which keys a query row sees,
// including which KV blocks a work tile must visit at all and whether a
// block needs per-element masking. The Blackwell softmax role and the
// Hopper consumer both build their masking through this interface, so a
// new stage (sliding window, softcap, mask regions, sink) is a new
// implementation, not an edit of the roles.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_SCORESTAGE_H
#define FA4_TRANSFORMS_SPECIALIZE_SCORESTAGE_H

#include "KernelBuilder.h"

namespace mlir::fa4::specialize {

/// What the stage needs of one query row, computed once per work tile (by
/// rowKeys) and read per KV block.
struct RowKeys {
  Value limit; // the row sees keys [0, limit)
};

class ScoreStage : protected KernelOps {
public:
  explicit ScoreStage(KernelBuilder &kernel)
      : KernelOps(kernel.getBuilder(), kernel.getShape()), kernel(kernel) {}
  virtual ~ScoreStage();

  /// KV blocks [0, result) a work tile whose first query position is
  /// `position` visits; the blocks after them are fully masked for all of
  /// its rows.
  virtual Value tileBlocks(Value position) = 0;
  /// The keys query `position` sees.
  virtual RowKeys rowKeys(Value position) = 0;
  /// The scores in log2 units, from the raw QK^T `scores` and the
  /// scale-times-log2(e) `scale` splat to their shape.
  virtual Value scale(Value scores, Value scale);
  /// Whether `scale` is the product with the (positive) `scale` and nothing
  /// else: then the max of the raw scores, scaled, is the max of the scaled
  /// ones (rounding is monotonic), and a role may take its maxima on raw
  /// scores and fuse the product into the exponent's FMA. A stage that
  /// transforms scores otherwise (softcap) returns false.
  virtual bool linearScale() const { return true; }
  /// How many of the keys from `firstKey` on `row` sees, as i32 (negative
  /// or past the block's end where it sees none or all of them). Built once
  /// per KV block.
  virtual Value visibleKeys(const RowKeys &row, Value firstKey) = 0;
  /// Which elements of a fragment are kept: element i is key column
  /// `columns[i]` (i32) counted from the first key given to visibleKeys,
  /// `visible` the visibleKeys of each element's row in the same shape.
  virtual Value keyMask(Value columns, Value visible) = 0;
  /// Whether KV block `block` needs per-element masking for any row that
  /// sees at least the keys of `fewest`.
  virtual Value blockNeedsMask(const RowKeys &fewest, Value block) = 0;
  /// How many leading KV blocks of the `blocks` a tile visits need no
  /// per-element masking for any row that sees at least the keys of
  /// `fewest`: blocks [0, result) are unmasked, the rest may not be. (A
  /// stage that also masks leading blocks, a sliding window, makes this a
  /// range.)
  virtual Value unmaskedBlocks(const RowKeys &fewest, Value blocks) = 0;

protected:
  KernelBuilder &kernel;
};

/// The stage of the FA4 forward kernel: keys past Skv (the key tail) and,
/// when causal, past the row's bottom-right diagonal are masked.
std::unique_ptr<ScoreStage> createScoreStage(KernelBuilder &kernel);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_SCORESTAGE_H
