//===- Planning.h - choosing the plan of an attention kernel ----*- C++ -*-===//

#ifndef FA4_TRANSFORMS_PLANNING_H
#define FA4_TRANSFORMS_PLANNING_H

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

namespace mlir::fa4 {

/// Chooses the plan of `op` under the overrides of `options` (fa4-plan's
/// options, declared in Passes.td: 0, -1 or "" leave a choice to the
/// planner), or reports at `op` why no kernel can compute it and fails.
FailureOr<PlanAttr> choosePlan(AttentionOp op, const FA4PlanOptions &options);

/// Split-KV for `op` on `arch` with work tiles of `positionsPerTile` query
/// positions, `blockN`-key blocks and `gqaPack` packed heads: splitsFor on
/// its static sizes, 1 where one is dynamic or the batch packed.
int64_t chooseKvSplits(AttentionOp op, Arch arch, int64_t positionsPerTile,
                       int64_t blockN, int64_t gqaPack);
/// CTAs that share each of `tiles` work tiles of `kvBlocks` KV blocks: more
/// than one only where the tiles fill at most a quarter of `arch`'s SMs and
/// each has at least 8 blocks; then as many as fit one wave of the SMs, each
/// with at least 4 blocks, at most limits::kMaxKvSplits. The Python runtime,
/// which knows dynamic sizes, applies the same rule
/// (fa4.runtime.kv_splits_for).
int64_t splitsFor(Arch arch, int64_t tiles, int64_t kvBlocks);

/// The rule a paged FP8 KV cache breaks with pages below
/// limits::kFp8MinPageSize keys: a key-major V box is 128 keys (its
/// innermost 128 bytes), which cannot span pages.
StringRef fp8PagesRule();

/// Checks that the kernel of `plan` can run `op`, or reports at `op` why not
/// and fails: static sizes within the 32-bit values the kernel computes
/// with (its batch and length parameters, tile counts, TMA coordinates and
/// LSE offsets), strides TMA can describe (16-byte multiples below 2^40
/// bytes, a 16-byte aligned offset), a contiguous LSE, and a scale whose
/// log2-scaled value an f32 holds. choosePlan checks its plans; fa4-tile
/// checks plans written by hand.
LogicalResult checkKernelLimits(AttentionOp op, PlanAttr plan);

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_PLANNING_H
