//===- LoweringUtils.h - helpers shared by the fa4 NVVM lowerings --*- C++
//-*-===//
//
// Private to lib/Conversion/FA4ToNVVM: building LLVM/NVVM values that the
// tcgen05 and the wgmma lowerings both need.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_CONVERSION_FA4TONVVM_LOWERINGUTILS_H
#define FA4_LIB_CONVERSION_FA4TONVVM_LOWERINGUTILS_H

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::fa4::lowering {

inline Value i32Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

/// `address` advanced by `delta` (lane << 16 | column units).
inline Value offsetTmemAddress(OpBuilder &b, Location loc, Value address,
                               Value delta) {
  Value asInt = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), address);
  Value sum = LLVM::AddOp::create(b, loc, asInt, delta);
  return LLVM::IntToPtrOp::create(b, loc, address.getType(), sum);
}

/// The TMEM address thread `tid.x` of a warpgroup uses for `region` at
/// `column`: warp w of the warpgroup owns lanes [32 (w mod 4), +32).
inline Value warpgroupRowAddress(OpBuilder &b, Location loc, Value region,
                                 int64_t column) {
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value warp = LLVM::LShrOp::create(b, loc, tid, i32Constant(b, loc, 5));
  Value quarter = LLVM::AndOp::create(b, loc, warp, i32Constant(b, loc, 3));
  // (quarter * 32) << 16 == quarter << 21.
  Value lane = LLVM::ShlOp::create(b, loc, quarter, i32Constant(b, loc, 21));
  Value delta = LLVM::AddOp::create(b, loc, lane, i32Constant(b, loc, column));
  return offsetTmemAddress(b, loc, region, delta);
}

/// The pointer to the first element (all indices 0) of a memref.
inline Value firstElementPointer(OpBuilder &b, Location loc,
                                 const LLVMTypeConverter &converter,
                                 MemRefType type, Value descriptor) {
  Value zero = LLVM::ConstantOp::create(b, loc, converter.getIndexType(),
                                        b.getIndexAttr(0));
  SmallVector<Value> indices(type.getRank(), zero);
  return LLVM::getStridedElementPtr(b, loc, converter, type, descriptor,
                                    indices);
}

/// Columns of the 32-bit registers a row fragment of `type` occupies.
inline int64_t registerCount(VectorType type) {
  return type.getNumElements() * type.getElementType().getIntOrFloatBitWidth() /
         32;
}

/// The LLVM type tcgen05.ld/st use for `count` 32-bit registers.
inline Type registersType(MLIRContext *ctx, int64_t count) {
  Type i32 = IntegerType::get(ctx, 32);
  return count == 1 ? i32 : VectorType::get({count}, i32);
}

/// A 64-bit shared-memory matrix descriptor of the matrix at `sharedAddress`
/// (i64): its start address with `fields` (tcgen05:: or
/// wgmma::smemDescriptorFields).
inline Value smemDescriptor(OpBuilder &b, Location loc, Value sharedAddress,
                            uint64_t fields) {
  Type i64 = b.getI64Type();
  auto c64 = [&](uint64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value start = LLVM::AndOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, sharedAddress, c64(4)), c64(0x3FFF));
  return LLVM::OrOp::create(b, loc, start, c64(fields));
}

/// The shared-window address (i64) of element [0, 0, 0] of a tile.
inline Value tileAddress(OpBuilder &b, Location loc,
                         const LLVMTypeConverter &converter, MemRefType type,
                         Value descriptor) {
  Value ptr = firstElementPointer(b, loc, converter, type, descriptor);
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
}

/// Bytes between consecutive atoms of an [atoms, rows, 128 bytes] tile.
inline int64_t atomStrideBytes(MemRefType type) {
  return type.getStridesAndOffset().first[0] *
         type.getElementType().getIntOrFloatBitWidth() / 8;
}

/// Adds the patterns of the sm_90a warpgroup MMA ops (WgmmaToNVVM.cpp).
void populateWgmmaToNVVMPatterns(const LLVMTypeConverter &converter,
                                 RewritePatternSet &patterns);

/// Adds the patterns of the thread-block cluster ops (ClusterToNVVM.cpp).
void populateClusterToNVVMPatterns(const LLVMTypeConverter &converter,
                                   RewritePatternSet &patterns);

} // namespace mlir::fa4::lowering

#endif // FA4_LIB_CONVERSION_FA4TONVVM_LOWERINGUTILS_H
