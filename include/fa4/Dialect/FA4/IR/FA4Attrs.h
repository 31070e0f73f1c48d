//===- FA4Attrs.h - fa4 attributes and hardware limits ----------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4ATTRS_H
#define FA4_DIALECT_FA4_IR_FA4ATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "fa4/Dialect/FA4/IR/FA4Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Attrs.h.inc"

namespace mlir::fa4::limits {
/// Tensor Memory of one SM: 128 lanes x 512 columns of 32 bits.
constexpr int64_t kTmemLanes = 128;
constexpr int64_t kTmemColumns = 512;
/// Largest dynamic shared memory one CTA may use (227 KB).
constexpr int64_t kSmemBytes = 227 * 1024;
/// Shared memory kept for mbarriers and the TMEM address slot.
constexpr int64_t kSmemReservedBytes = 1024;
/// 32-bit registers of one SM, all of which one CTA may claim.
constexpr int64_t kRegistersPerSm = 64 * 1024;
/// setmaxnreg accepts multiples of 8 in [24, 256].
constexpr int64_t kMinRegisters = 24;
constexpr int64_t kMaxRegisters = 256;
constexpr int64_t kThreadsPerWarpgroup = 128;

/// Registers per thread a CTA of `threads` threads is launched with (what
/// ptxas gives a kernel whose launch bounds say `threads` and one CTA per
/// SM: the most that fits the SM, in the 8-register allocation unit).
constexpr int64_t launchRegistersPerThread(int64_t threads) {
  int64_t fit = kRegistersPerSm / threads / 8 * 8;
  return fit < kMaxRegisters ? fit : kMaxRegisters;
}
/// The registers setmaxnreg redistributes among the CTA's warpgroups: those
/// of the launch, no more (setmaxnreg.inc waits for registers another
/// warpgroup's setmaxnreg.dec released). Three warpgroups hold 3 x 128 x
/// 168 = 64512, not 65536.
constexpr int64_t registerPool(int64_t warpgroups) {
  int64_t threads = warpgroups * kThreadsPerWarpgroup;
  return threads * launchRegistersPerThread(threads);
}

/// Plan bounds. The head dim is the N of the P V product (at most 256 for
/// tcgen05 and wgmma); the K/V ring has at most 16 slots (a deeper ring
/// hides no more latency); between rescales exponentials grow to at most
/// 2^64, so that row sums over 2^31 keys stay far inside f32; a tile's KV
/// blocks are split among at most 64 CTAs (past that the combine, which
/// reads every split's partial row, costs more than the split saves).
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kMaxKvSplits = 64;
/// CTAs of a thread-block cluster that exchange through distributed shared
/// memory: the portable cluster size (16 would need the kernel attribute
/// that allows non-portable sizes).
constexpr int64_t kMaxClusterCtas = 8;
constexpr int64_t kMaxKvStages = 16;
constexpr int64_t kMaxRescaleThreshold = 64;
/// The largest softcap ceiling (log2 units): P = 2^(s - B) >= 2^-2B = 2^-96
/// leaves bf16 P normal and O's f32 accumulator 30 binades for V.
constexpr int64_t kMaxSoftcapCeiling = 48;
/// The largest ceiling for f16 P: 2^-14 is f16's smallest normal.
constexpr int64_t kMaxF16SoftcapCeiling = 7;
/// FP8: P is rounded to e4m3, whose largest finite value is 448 < 2^9.
constexpr int64_t kMaxFp8RescaleThreshold = 8;
/// FP8: a paged cache's fewest keys per page. A key-major V box is 128
/// keys (one 128-byte atom per row, whatever the block), which must lie in
/// one page.
constexpr int64_t kFp8MinPageSize = 128;
} // namespace mlir::fa4::limits

#endif // FA4_DIALECT_FA4_IR_FA4ATTRS_H
