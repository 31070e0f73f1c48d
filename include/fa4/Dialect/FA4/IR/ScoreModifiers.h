//===- ScoreModifiers.h - the score and mask regions ------------*- C++ -*-===//
//
// fa4.attention, fa4.tile.modify and fa4.launch carry the same two optional
// regions: a score region (the new score of an element) and a mask region
// (whether the element's key is kept). This is their contract: the block
// arguments, what the bodies may hold, and what the captured operands they
// read must be. fa4-specialize inlines the bodies into the score stage and
// fa4-sim's reference evaluates them, so both rely on these checks.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_SCOREMODIFIERS_H
#define FA4_DIALECT_FA4_IR_SCOREMODIFIERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

namespace mlir::fa4 {

/// The leading block arguments of both regions, before one per capture.
enum ModifierArgument : unsigned {
  kModifierScore,
  kModifierBatch,
  kModifierHead,
  kModifierQuery,
  kModifierKey,
  kModifierCoordinates
};

/// Checks the score region `score` and mask region `mask` of `op` (each
/// empty or one block with the arguments above plus one per `captures`
/// type, ending in fa4.yield of f32 / i1, holding only arith ops and isModifierMathOp ops on
/// scalars and memref.load / memref.dim of the captures, tensor.extract /
/// tensor.dim where they are tensors), and that each memref capture is
/// contiguous in global memory.
LogicalResult verifyScoreModifiers(Operation *op, Region &score, Region &mask,
                                   TypeRange captures);

/// Whether `op` is one of the math ops regions may hold: those the pipeline
/// lowers to NVVM (directly or through libdevice) and fa4-sim evaluates.
bool isModifierMathOp(Operation *op);

/// Whether `type` is a capture the kernels can read: a row-major (identity
/// layout) memref in the default memory space, or a tensor (bufferized to
/// one).
bool isReadableCapture(ShapedType type);

} // namespace mlir::fa4

#endif // FA4_DIALECT_FA4_IR_SCOREMODIFIERS_H
