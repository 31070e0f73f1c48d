//===- Exp2.h - the FMA exp2 polynomial --------------------------*- C++ -*-===//
//
// The cubic that fa4.exp2 evaluates on the FMA pipe for 2^f, f in [0, 1):
// p(f) = 1 + f (c1 + f (c2 + f c3)). Fitted here for minimal relative error
// (max 8.6e-5, below the 2^-8 of bf16 and the 2^-11 of f16). Kernels and the
// simulator evaluate the same polynomial, in the same order.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_EXP2_H
#define FA4_DIALECT_FA4_IR_EXP2_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mlir::fa4::exp2poly {
constexpr float kC1 = 0.695116193f;
constexpr float kC2 = 0.227647661f;
constexpr float kC3 = 0.0770646048f;
/// Inputs are clamped from below so that the exponent stays representable;
/// 2^-127 is already 0 after flush-to-zero.
constexpr float kMinInput = -127.0f;
/// 1.5 * 2^23: x + kFloorShift rounded down is kFloorShift + floor(x) for
/// |x| < 2^22, with floor(x) in its low mantissa bits (the kernel's floor).
constexpr float kFloorShift = 12582912.0f;

/// The emulated 2^x exactly as the kernel computes it (fmaf = fma.rn.f32).
inline float evaluate(float x) {
  x = std::fmax(x, kMinInput);
  float whole = std::floor(x);
  float f = x - whole;
  float p = std::fmaf(std::fmaf(std::fmaf(kC3, f, kC2), f, kC1), f, 1.0f);
  int32_t bits;
  std::memcpy(&bits, &p, sizeof(bits));
  bits += static_cast<int32_t>(whole) << 23;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}
} // namespace mlir::fa4::exp2poly

#endif // FA4_DIALECT_FA4_IR_EXP2_H
