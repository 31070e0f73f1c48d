//===- FA4Interfaces.h - what passes ask of kernel ops ----------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4INTERFACES_H
#define FA4_DIALECT_FA4_IR_FA4INTERFACES_H

#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Types.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::fa4 {

/// Tensor Memory, the resource of every TMEM op's memory effects.
struct TensorMemoryResource
    : public SideEffects::Resource::Base<TensorMemoryResource> {
  StringRef getName() final { return "TensorMemory"; }
};

/// Attaches the fa4 interfaces to the upstream ops that need them (the
/// nvgpu TMA copies are asynchronous accesses).
void registerExternalModels(DialectRegistry &registry);

} // namespace mlir::fa4

#include "fa4/Dialect/FA4/IR/FA4Interfaces.h.inc"

#endif // FA4_DIALECT_FA4_IR_FA4INTERFACES_H
