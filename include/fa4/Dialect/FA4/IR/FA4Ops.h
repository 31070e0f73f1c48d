//===- FA4Ops.h - fa4 operations --------------------------------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4OPS_H
#define FA4_DIALECT_FA4_IR_FA4OPS_H

#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/Dialect/FA4/IR/FA4Interfaces.h"
#include "fa4/Dialect/FA4/IR/FA4Types.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#define GET_OP_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Ops.h.inc"

namespace mlir::fa4 {
/// The bytes of a statically shaped memref of integers or floats, or nullopt
/// for other memrefs and sizes past int64.
std::optional<int64_t> getStaticSizeInBytes(MemRefType type);
/// Whether `type` is in shared memory (#gpu.address_space<workgroup>).
bool isWorkgroupMemRef(MemRefType type);

/// Refuses, at the op that defines it, a value under `root` wider than a
/// thread's 255 32-bit registers (vectors, scalars, LLVM arrays and structs;
/// sizes computed without overflow).
LogicalResult verifyRegisterValues(Operation *root);

/// Packed sequences with a key-major (FP8) V: sequence b's keys start at
/// row packedValueStart(cu_seqlens_k[b], b) of V, a multiple of 16 (TMA's
/// rule for a box's innermost coordinate, a key-major V's first key), and
/// V holds at least total_k + 16 B rows. Rows outside every sequence are
/// read under masked keys, so they must hold finite values.
constexpr int64_t kPackedValueAlignment = 16;
constexpr int64_t packedValueStart(int64_t keyStart, int64_t sequence) {
  return (keyStart + kPackedValueAlignment - 1) / kPackedValueAlignment *
             kPackedValueAlignment +
         kPackedValueAlignment * sequence;
}
} // namespace mlir::fa4

#endif // FA4_DIALECT_FA4_IR_FA4OPS_H
