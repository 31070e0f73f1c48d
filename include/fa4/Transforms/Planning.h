//===- Planning.h - choosing the plan of an attention kernel ----*- C++ -*-===//

#ifndef FA4_TRANSFORMS_PLANNING_H
#define FA4_TRANSFORMS_PLANNING_H

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include <optional>

namespace mlir::fa4 {

/// Overrides of the automatic choices; an unset field is chosen by
/// `choosePlan`.
struct PlanOptions {
  Arch arch = Arch::sm_100a;
  std::optional<int64_t> blockN, qStages, kvStages, gqaPack;
  std::optional<Scheduler> scheduler;
  std::optional<int64_t> softmaxRegs, correctionRegs, producerRegs;
  std::optional<int64_t> emulatedExp2, pvSplit, rescaleThreshold;
};

/// Chooses the plan of `op`, or reports at `op` why no kernel can compute
/// it and fails.
FailureOr<PlanAttr> choosePlan(AttentionOp op, const PlanOptions &options);

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
