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

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_PLANNING_H
