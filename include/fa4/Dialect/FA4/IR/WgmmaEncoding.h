//===- WgmmaEncoding.h - sm_90a wgmma descriptors ---------------*- C++ -*-===//
//
// How a fa4.wgmma becomes wgmma.mma_async instructions. The shared-memory
// operands are the same 128-byte-swizzled tiles as tcgen05's, so the start
// address, leading/stride byte offsets and per-K-step advances are those of
// Tcgen05Encoding.h; only the fixed bits of the sm_90 descriptor differ:
// there is no version field, and 128-byte swizzling is 1 in bits 62-63.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_WGMMAENCODING_H
#define FA4_DIALECT_FA4_IR_WGMMAENCODING_H

#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"

namespace mlir::fa4::wgmma {

using tcgen05::kKStep;
using tcgen05::stepElements;

/// The layout-type field value of 128-byte swizzling (bits 62-63).
constexpr uint64_t kSwizzle128B = 1;

/// The fields of a 64-bit sm_90 matrix descriptor other than the start
/// address: leading and stride byte offsets in 16-byte units and the
/// swizzle.
constexpr uint64_t smemDescriptorFields(int64_t leadingBytes,
                                        int64_t strideBytes) {
  return ((uint64_t(leadingBytes >> 4) & 0x3FFF) << 16) |
         ((uint64_t(strideBytes >> 4) & 0x3FFF) << 32) | (kSwizzle128B << 62);
}

/// The descriptor of the matrix at shared-window address `address`.
constexpr uint64_t smemDescriptor(uint64_t address, int64_t leadingBytes,
                                  int64_t strideBytes) {
  return ((address >> 4) & 0x3FFF) |
         smemDescriptorFields(leadingBytes, strideBytes);
}

/// Row of the 64-row tile that accumulator element `i` of warpgroup thread
/// `t` holds (PTX ISA, "Matrix fragments for wgmma.mma_async"): warp t / 32
/// owns 16 rows; element pairs alternate between a row and the row 8 below.
constexpr int64_t accumulatorRow(int64_t t, int64_t i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
}

/// Column of accumulator element `i` of thread `t`: 8 columns per 4
/// elements, a quad's 4 threads 2 columns apart.
constexpr int64_t accumulatorColumn(int64_t t, int64_t i) {
  return 8 * (i / 4) + 2 * (t % 4) + i % 2;
}

/// Row of the 64-row tile that element `i` of a register A operand of
/// `bits`-bit elements holds in thread `t`: per K step four 32-bit
/// registers, alternating between the accumulator's two rows.
constexpr int64_t operandRow(int64_t t, int64_t i, int64_t bits) {
  int64_t perRegister = 32 / bits;
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / perRegister) % 2);
}

/// K column of element `i` of such an operand: registers 2 and 3 of a step
/// hold its second half; a quad's threads hold consecutive runs of a
/// register's elements. For 16-bit elements this is accumulatorColumn, so
/// a 16-bit truncation of an accumulator is an A operand; 8-bit elements
/// take 4 consecutive columns per register, not the accumulator's pairs.
constexpr int64_t operandColumn(int64_t t, int64_t i, int64_t bits) {
  int64_t perRegister = 32 / bits, perStep = 4 * perRegister;
  int64_t reg = (i % perStep) / perRegister;
  return stepElements(bits) * (i / perStep) +
         stepElements(bits) / 2 * (reg / 2) + perRegister * (t % 4) +
         i % perRegister;
}

} // namespace mlir::fa4::wgmma

#endif // FA4_DIALECT_FA4_IR_WGMMAENCODING_H
