//===- Layout.h - operands to fa4's [B, S, H, D] and back -------*- C++ -*-===//
//
// fa4-raise-attention gives every dimension of Q, K, V and O a role; these
// functions bring an operand from its own layout to fa4's [batch,
// sequence, heads, head dim] (transpose, then reshapes) and the raised O
// back to the original output's layout.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_RAISE_LAYOUT_H
#define FA4_TRANSFORMS_RAISE_LAYOUT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fa4::raise {

/// What a dimension of an attention operand is. A query head is the pair
/// (Head, Group): key/value head and member of its group.
enum class Role { Batch, Head, Group, Query, Key, HeadDim, ValueDim };

/// `source` permuted and reshaped to [batch, sequence, heads, inner]:
/// batch dimensions collapse in the order of `batchKeys` (one key per
/// dimension, the same in every operand), Head before Group, and an
/// absent batch or head becomes a unit dimension.
Value toFa4Layout(RewriterBase &rewriter, Location loc, Value source,
                  ArrayRef<Role> roles, ArrayRef<unsigned> batchKeys,
                  Role sequence, Role inner);

/// The inverse for the raised O [batch, sequence, heads, value dim]: the
/// original output's layout (`roles`, `batchKeys` per dimension), sizes
/// `sizes`, and finally its type `outputType` (a tensor.cast where the two
/// know different sizes statically).
Value fromFa4Layout(RewriterBase &rewriter, Location loc, Value result,
                    ArrayRef<Role> roles, ArrayRef<unsigned> batchKeys,
                    ArrayRef<OpFoldResult> sizes,
                    RankedTensorType outputType);

} // namespace mlir::fa4::raise

#endif // FA4_TRANSFORMS_RAISE_LAYOUT_H
