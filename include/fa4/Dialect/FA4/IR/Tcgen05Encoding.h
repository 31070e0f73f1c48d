//===- Tcgen05Encoding.h - tcgen05 MMA descriptors --------------*- C++ -*-===//
//
// How a fa4.mma becomes tcgen05.mma instructions: the instruction
// descriptor, the shared-memory matrix descriptors and how each K step (32
// bytes: 16 16-bit or 32 e4m3 elements) advances its operands (PTX ISA, "Matrix
// Descriptors"). The NVVM lowering emits exactly these encodings; the simulator
// executes them through its model of the Tensor Core, so a wrong choice here
// shows up as wrong numbers there.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_TCGEN05ENCODING_H
#define FA4_DIALECT_FA4_IR_TCGEN05ENCODING_H

#include <cstdint>

namespace mlir::fa4::tcgen05 {

/// Elements of K one tcgen05.mma kind::f16 consumes (16-bit operands;
/// kind::f8f6f4 consumes 32 e4m3, the same 32 bytes: stepElements).
constexpr int64_t kKStep = 16;
/// 16-bit elements in one 128-byte swizzle atom row.
constexpr int64_t kAtomElements = 64;
/// Bytes of one swizzle atom row.
constexpr int64_t kRowBytes = 128;
/// Bytes of K one MMA step consumes per row: 16 16-bit or 32 8-bit
/// elements (kind::f16 and wgmma's k16; wgmma's k32 for 8-bit types).
constexpr int64_t kStepBytes = 32;

/// Elements of `bits` bits in one 128-byte swizzle atom row.
constexpr int64_t atomElements(int64_t bits) { return kRowBytes * 8 / bits; }
/// Elements of `bits` bits of K one MMA step consumes.
constexpr int64_t stepElements(int64_t bits) { return kStepBytes * 8 / bits; }
/// Bytes after which the 128-byte swizzle pattern repeats (8 rows).
constexpr int64_t kPatternBytes = 1024;
/// The swizzle-mode field value of 128-byte swizzling.
constexpr uint64_t kSwizzle128B = 2;

/// The A and B format fields of the instruction descriptor: kind::f16's
/// F16 and BF16, kind::f8f6f4's E4M3 (the kind itself is the instruction's).
constexpr uint32_t kFormatF16 = 0, kFormatBF16 = 1, kFormatE4M3 = 0;

/// The 32-bit instruction descriptor of a kind::f16 or kind::f8f6f4 MMA
/// with A and B in `format` and an f32 accumulator.
constexpr uint32_t instructionDescriptor(uint32_t format, bool bMnMajor,
                                         int64_t m, int64_t n,
                                         bool aMnMajor = false) {
  return (1u << 4)                        // D is f32
         | (format << 7) | (format << 10) // A, B element types
         | (uint32_t(aMnMajor) << 15)     // A transposed (MN-major)
         | (uint32_t(bMnMajor) << 16)     // B transposed (MN-major)
         | (uint32_t(n >> 3) << 17)       // N / 8
         | (uint32_t(m >> 4) << 24);      // M / 16
}

/// The fields of a 64-bit shared-memory matrix descriptor other than the
/// start address: leading and stride byte offsets in 16-byte units, the
/// fixed sm_100 version bit 46 and 128-byte swizzling.
constexpr uint64_t smemDescriptorFields(int64_t leadingBytes,
                                        int64_t strideBytes) {
  return ((uint64_t(leadingBytes >> 4) & 0x3FFF) << 16) |
         ((uint64_t(strideBytes >> 4) & 0x3FFF) << 32) | (1ull << 46) |
         (kSwizzle128B << 61);
}

/// The descriptor of the matrix at shared-window address `address`.
constexpr uint64_t smemDescriptor(uint64_t address, int64_t leadingBytes,
                                  int64_t strideBytes) {
  return ((address >> 4) & 0x3FFF) |
         smemDescriptorFields(leadingBytes, strideBytes);
}

/// Leading and stride byte offsets of a K-major operand: LBO is unused with
/// 128-byte swizzling (encoded 16 bytes); 8-row groups are a pattern apart.
constexpr int64_t kKMajorLeadingBytes = 16;
constexpr int64_t kKMajorStrideBytes = kPatternBytes;

/// Byte offset of K step `step` in a K-major tile whose atoms are
/// `atomStrideBytes` apart: 32 bytes per step inside an atom, whatever the
/// element width.
constexpr int64_t kMajorStepBytes(int64_t step, int64_t atomStrideBytes) {
  constexpr int64_t stepsPerAtom = kRowBytes / kStepBytes;
  return (step / stepsPerAtom) * atomStrideBytes +
         (step % stepsPerAtom) * kStepBytes;
}

/// Byte offset of K step `step` in an MN-major tile: 16 rows of 128 bytes.
/// Its atoms along MN are one leading byte offset (the atom stride) apart,
/// its 8-row groups along K one pattern.
constexpr int64_t mnMajorStepBytes(int64_t step) {
  return step * kKStep * kRowBytes;
}

/// 32-bit columns a Tensor Memory A operand advances per K step: 32 bytes
/// of each lane (16-bit elements two per column, e4m3 four).
constexpr int64_t tmemStepColumns(int64_t step) {
  return step * kStepBytes / 4;
}

} // namespace mlir::fa4::tcgen05

#endif // FA4_DIALECT_FA4_IR_TCGEN05ENCODING_H
