//===- Values.h - runtime values of the simulated kernel --------*- C++ -*-===//
//
// The value one thread holds for an SSA value, and the evaluation of the
// side-effect-free arith and vector ops on such values, with the rounding
// of the hardware.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_VALUES_H
#define FA4_LIB_SIMULATOR_VALUES_H

#include "Hardware.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <string>

namespace mlir::fa4::sim {

/// A runtime value: numbers (scalars are one-element) or a reference.
struct Val {
  enum class Kind : uint8_t {
    number,
    memref,
    tmem,
    barriers,
    tensorMap,
    pointer,
    token
  };
  Kind kind = Kind::number;
  /// A fa4.tmem.load result before the thread's fa4.tcgen05.wait load.
  Operation *pendingLoad = nullptr;
  SmallVector<int64_t, 1> ints;
  SmallVector<float, 1> floats;
  /// memref: shared byte offset; tmem: first column; barriers: first
  /// barrier; tensorMap: the map; pointer: the tensor.
  int64_t base = 0;
  /// memref: element offset; pointer: byte offset.
  int64_t offset = 0;
  SmallVector<int64_t, 4> strides;
};

inline Type elementOf(Type type) { return getElementTypeOrSelf(type); }

inline unsigned widthOf(Type type) {
  Type element = elementOf(type);
  return element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
}

inline int64_t signExtend(uint64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(value);
  uint64_t mask = (1ull << width) - 1, sign = 1ull << (width - 1);
  value &= mask;
  return static_cast<int64_t>((value ^ sign) - sign);
}

inline uint64_t zeroExtend(int64_t value, unsigned width) {
  return width >= 64 ? static_cast<uint64_t>(value)
                     : static_cast<uint64_t>(value) & ((1ull << width) - 1);
}

/// `x` rounded to float type `type`.
inline float roundTo(Type type, float x) {
  Type element = elementOf(type);
  if (element.isBF16() || element.isF16() || isa<Float8E4M3FNType>(element))
    return roundTo(formatOf(element), x);
  return x;
}

inline int64_t bytesOf(Type element) {
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// Flush-to-zero: a denormal becomes a zero of its sign.
inline float ftz(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? 0.0f * x : x;
}

/// Evaluates `op`, an arith, math or vector op without memory effects, on
/// its operand values `in` into `out`. Returns false with `error` set when
/// the simulator has no semantics for it.
bool evaluate(Operation *op, ArrayRef<const Val *> in, Val &out,
              std::string &error);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_VALUES_H
