//===- Targets.h - which chips a kernel is compiled for ---------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_TARGETS_H
#define FA4_DIALECT_FA4_IR_TARGETS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::fa4 {

/// Whether `chip` has tcgen05 and Tensor Memory.
inline bool hasTcgen05(StringRef chip) {
  return chip == "sm_100a" || chip == "sm_101a";
}

/// The chips of the #nvvm.target attributes of the gpu.module enclosing
/// `op`; empty outside a gpu.module or without NVVM targets.
SmallVector<StringRef> enclosingNvvmChips(Operation *op);

} // namespace mlir::fa4

#endif // FA4_DIALECT_FA4_IR_TARGETS_H
