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
/// rowKeys) and read per KV block: the row sees keys [lower, limit).
struct RowKeys {
  Value lower; // null: from key 0
  Value limit;
};

/// The keys of one row a fragment keeps, counted from the fragment's first
/// key: element c is kept if low <= c < high (i32; low null: no lower
/// bound). Built once per KV block, broadcast by the role to its fragment.
struct VisibleKeys {
  Value low, high;
};

/// KV blocks [first, first + count) of a work tile.
struct KvBlocks {
  Value first, count;
};

/// Where the elements of one thread's score fragment sit, for stages that
/// compute with coordinates (the score and mask regions): element e is in
/// row rowOf[e] of the thread's rows (row 0 for all when rowOf is empty)
/// and holds key firstKey + columns[e]. Roles build it only when a stage
/// asks (the callback of `transform`).
struct FragmentCoords {
  Value batch;
  SmallVector<Value, 2> positions, heads; // per row of the thread (index)
  ArrayRef<int64_t> rowOf;
  Value firstKey;
  ArrayRef<int32_t> columns;
  /// Whether every key of the fragment is below Skv (no key tail).
  bool keysInRange;
  /// The lengths of the tile's sequence.
  Value seqQ, seqKv;
};
using FragmentCoordsFn = function_ref<FragmentCoords()>;

class ScoreStage : protected KernelOps {
public:
  explicit ScoreStage(KernelBuilder &kernel)
      : KernelOps(kernel.getBuilder(), kernel.getShape()), kernel(kernel) {}
  virtual ~ScoreStage();

  /// The KV blocks work tile `tile` visits (from its first query position
  /// and its sequence's lengths); the blocks outside them are fully masked
  /// for all of its rows.
  virtual KvBlocks tileBlocks(const Tile &tile) = 0;
  /// The keys query `position` of `tile`'s sequence sees.
  virtual RowKeys rowKeys(const Tile &tile, Value position) = 0;
  /// The scores in log2 units are `outerScale(descale) * transform(scores,
  /// descale)` of the raw QK^T `scores`, with `transform` nondecreasing
  /// and the factor positive: rounding keeps the product monotonic, so the
  /// roles take their maxima on transformed scores, scale the maxima, and
  /// fuse the factor into the exponent's FMA (`t outer - ref`). Without a
  /// stage of its own, `transform` is the identity; `coords` says where
  /// the elements are, for stages that need it. `descale` (f32, FP8: the
  /// factor that dequantizes the raw scores, positive) is null otherwise.
  virtual Value transform(Value scores, FragmentCoordsFn coords,
                          Value descale) {
    return scores;
  }
  /// The factor (f32): the softmax scale times log2(e), times what the
  /// stage folds into it (the descale factor; softcap: the cap instead).
  virtual Value outerScale(Value descale);
  /// A ceiling of every score in log2 units (`outerScale * transform`),
  /// when the softmax may take it as each row's exponent reference in place
  /// of the running maximum: no row maximum per block and never a rescale.
  /// `usable` (i1, uniform over the kernel) says whether the ceiling is low
  /// enough that 2^(score - bound) keeps P's precision; null values when
  /// the stage bounds nothing.
  struct Ceiling {
    Value bound, usable;
    /// `body(reference)` built once with a null reference (the running
    /// maximum) where there is no ceiling, else once on each side of the
    /// run-time test (an scf.if of `types`): `body(bound)` where it is
    /// usable, `body(null)` where not. Returns the results.
    SmallVector<Value> onEachSide(ImplicitLocOpBuilder &b, TypeRange types,
                                  function_ref<SmallVector<Value>(Value)> body);
  };
  virtual Ceiling ceiling() { return {}; }
  /// Which of the keys from `firstKey` on `row` sees.
  virtual VisibleKeys visibleKeys(const RowKeys &row, Value firstKey) = 0;
  /// `scores` with the elements the row does not see set to `masked` (a
  /// splat): element i is key column `columns[i]` (i32) counted from the
  /// first key given to visibleKeys, `visible` the visibleKeys of each
  /// element's row in the same shape.
  virtual Value maskScores(Value scores, Value columns,
                           const VisibleKeys &visible, Value masked) = 0;
  /// Whether KV block `block` needs per-element masking for any row from
  /// `first` to `last` (rows see keys in order: later rows' bounds are
  /// never below earlier rows').
  virtual Value blockNeedsMask(const RowKeys &first, const RowKeys &last,
                               Value block) = 0;
  /// The blocks of `blocks` that need no per-element masking for any row
  /// from `first` to `last`: a range [begin, end) inside it, masked blocks
  /// before and after.
  virtual std::pair<Value, Value> unmaskedBlocks(const RowKeys &first,
                                                 const RowKeys &last,
                                                 const KvBlocks &blocks) = 0;
  /// Whether blocks before the unmasked ones may be masked (a window's left
  /// bound); without, roles build no loop for them.
  virtual bool masksLeadingBlocks() const = 0;

protected:
  KernelBuilder &kernel;
};

/// The stage of the FA4 forward kernel: keys past Skv (the key tail) and
/// outside the row's window (causal: past its bottom-right diagonal) are
/// masked; with a softcap, scores are capped before; with score or mask
/// regions, they are applied to the capped scores (createModifierStage).
std::unique_ptr<ScoreStage> createScoreStage(KernelBuilder &kernel);

/// `base` followed by the tiled program's score and mask regions, inlined
/// per element (ScoreRegions.cpp).
std::unique_ptr<ScoreStage>
createModifierStage(KernelBuilder &kernel, std::unique_ptr<ScoreStage> base);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_SCORESTAGE_H
