//===- Modifiers.h - the score and mask regions on the host -----*- C++ -*-===//
//
// The reference's side of the score and mask regions: the launch keeps the
// attention's regions, and the reference evaluates them per element on the
// host tensors, with the same scalar semantics (arith, math) the kernel's
// inlined copies are simulated with.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_MODIFIERS_H
#define FA4_LIB_SIMULATOR_MODIFIERS_H

#include "Interpreter.h"
#include "Values.h"

namespace mlir::fa4::sim {

/// Where a score element is: its batch, query head, query and key.
struct ElementCoords {
  int64_t batch, head, query, key;
};

/// The value `region` (a score or mask region) yields for `score` at `at`,
/// reading `captures` (the launch's, in order); nullopt with `error` set when
/// an op cannot be evaluated or a load is out of bounds.
std::optional<Val> evaluateModifier(Region &region, float score,
                                    const ElementCoords &at,
                                    ArrayRef<const GlobalTensor *> captures,
                                    std::string &error);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_MODIFIERS_H
