//===- FA4ToNVVM.cpp - lowering fa4 kernel ops to NVVM --------------------===//

#include "fa4/Conversion/FA4ToNVVM/FA4ToNVVM.h"
#include "fa4/Conversion/Passes.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_CONVERTFA4TONVVM
#include "fa4/Conversion/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

/// Address space of Tensor Memory pointers in the NVPTX backend.
static constexpr unsigned kTmemAddressSpace = 6;

namespace {

Type tmemPointerType(MLIRContext *ctx) {
  return LLVM::LLVMPointerType::get(ctx, kTmemAddressSpace);
}

Value i32Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(value));
}

/// `address` advanced by `delta` (lane << 16 | column units).
Value offsetTmemAddress(OpBuilder &b, Location loc, Value address,
                        Value delta) {
  Value asInt = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), address);
  Value sum = LLVM::AddOp::create(b, loc, asInt, delta);
  return LLVM::IntToPtrOp::create(b, loc, address.getType(), sum);
}

/// The TMEM address thread `tid.x` of a warpgroup uses for `region` at
/// `column`: warp w of the warpgroup owns lanes [32 (w mod 4), +32).
Value warpgroupRowAddress(OpBuilder &b, Location loc, Value region,
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
Value firstElementPointer(OpBuilder &b, Location loc,
                          const LLVMTypeConverter &converter, MemRefType type,
                          Value descriptor) {
  Value zero = LLVM::ConstantOp::create(b, loc, converter.getIndexType(),
                                        b.getIndexAttr(0));
  SmallVector<Value> indices(type.getRank(), zero);
  return LLVM::getStridedElementPtr(b, loc, converter, type, descriptor,
                                    indices);
}

/// Columns of the 32-bit registers a row fragment of `type` occupies.
int64_t registerCount(VectorType type) {
  return type.getNumElements() *
         type.getElementType().getIntOrFloatBitWidth() / 32;
}

/// The LLVM type tcgen05.ld/st use for `count` 32-bit registers.
Type registersType(MLIRContext *ctx, int64_t count) {
  Type i32 = IntegerType::get(ctx, 32);
  return count == 1 ? i32 : VectorType::get({count}, i32);
}

struct TmemAllocLowering : ConvertOpToLLVMPattern<TmemAllocOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value slot = firstElementPointer(rewriter, loc, *getTypeConverter(),
                             op.getSlot().getType(), adaptor.getSlot());
    NVVM::Tcgen05AllocOp::create(rewriter, loc, slot,
                                 i32Constant(rewriter, loc, op.getColumns()));
    // A kernel allocates once; letting other CTAs on the SM allocate as
    // soon as possible is what the permit is for.
    NVVM::Tcgen05RelinquishAllocPermitOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmemBaseLowering : ConvertOpToLLVMPattern<TmemBaseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemBaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value slot = firstElementPointer(rewriter, loc, *getTypeConverter(),
                             op.getSlot().getType(), adaptor.getSlot());
    Value address =
        LLVM::LoadOp::create(rewriter, loc, rewriter.getI32Type(), slot);
    rewriter.replaceOpWithNewOp<LLVM::IntToPtrOp>(
        op, tmemPointerType(getContext()), address);
    return success();
  }
};

struct TmemDeallocLowering : ConvertOpToLLVMPattern<TmemDeallocOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemDeallocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value columns = i32Constant(rewriter, op.getLoc(),
                                op.getTmem().getType().getNumColumns());
    rewriter.replaceOpWithNewOp<NVVM::Tcgen05DeallocOp>(op, adaptor.getTmem(),
                                                        columns);
    return success();
  }
};

struct TmemViewLowering : ConvertOpToLLVMPattern<TmemViewOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getColumn() == 0) {
      rewriter.replaceOp(op, adaptor.getSource());
      return success();
    }
    Location loc = op.getLoc();
    rewriter.replaceOp(op, offsetTmemAddress(
                               rewriter, loc, adaptor.getSource(),
                               i32Constant(rewriter, loc, op.getColumn())));
    return success();
  }
};

/// What a tcgen05.ld/st 32x32b of `fragment` at `offset` elements of
/// `region` (of `type`) needs: the thread's TMEM address and the register
/// type (16-bit values travel packed two per 32-bit register).
std::pair<Value, Type> rowFragmentAccess(OpBuilder &b, Location loc,
                                         Value region, TmemType type,
                                         int64_t offset, VectorType fragment) {
  int64_t column =
      offset * type.getElementType().getIntOrFloatBitWidth() / 32;
  return {warpgroupRowAddress(b, loc, region, column),
          registersType(b.getContext(), registerCount(fragment))};
}

struct TmemLoadLowering : ConvertOpToLLVMPattern<TmemLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    VectorType resultType = op.getResult().getType();
    auto [address, rawType] =
        rowFragmentAccess(rewriter, loc, adaptor.getSource(),
                          op.getSource().getType(), op.getOffset(), resultType);
    Value raw = NVVM::Tcgen05LdOp::create(rewriter, loc, rawType,
                                          /*pack=*/false,
                                          NVVM::Tcgen05LdStShape::SHAPE_32X32B,
                                          address, /*offset=*/Value());
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, resultType, raw);
    return success();
  }
};

struct TmemStoreLowering : ConvertOpToLLVMPattern<TmemStoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto [address, rawType] = rowFragmentAccess(
        rewriter, loc, adaptor.getDest(), op.getDest().getType(),
        op.getOffset(), op.getValue().getType());
    Value raw =
        LLVM::BitcastOp::create(rewriter, loc, rawType, adaptor.getValue());
    rewriter.replaceOpWithNewOp<NVVM::Tcgen05StOp>(
        op, /*unpack=*/false, NVVM::Tcgen05LdStShape::SHAPE_32X32B, address,
        raw, /*offset=*/Value());
    return success();
  }
};

struct Tcgen05WaitLowering : ConvertOpToLLVMPattern<Tcgen05WaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(Tcgen05WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::Tcgen05WaitOp>(
        op, op.getKind() == Tcgen05WaitKind::load
                ? NVVM::Tcgen05WaitKind::LOAD
                : NVVM::Tcgen05WaitKind::STORE);
    return success();
  }
};

/// tcgen05 and Tensor Memory exist on sm_100a/sm_101a only: refuses kernel
/// ops inside a gpu.module whose NVVM targets include another chip.
LogicalResult verifyTcgen05Targets(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (op->getName().getDialectNamespace() !=
            FA4Dialect::getDialectNamespace() ||
        isa<AttentionOp>(op))
      return WalkResult::advance();
    auto module = op->getParentOfType<gpu::GPUModuleOp>();
    std::optional<ArrayAttr> targets =
        module ? module.getTargets() : std::nullopt;
    if (!targets || !*targets)
      return WalkResult::advance();
    for (Attribute target : *targets) {
      auto nvvmTarget = dyn_cast<NVVM::NVVMTargetAttr>(target);
      if (!nvvmTarget)
        continue;
      StringRef chip = nvvmTarget.getChip();
      if (chip != "sm_100a" && chip != "sm_101a") {
        op->emitOpError() << "needs tcgen05 (sm_100a or sm_101a), but gpu.module @"
                          << module.getName() << " targets " << chip;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct Tcgen05FenceLowering : ConvertOpToLLVMPattern<Tcgen05FenceOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(Tcgen05FenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::Tcgen05FenceOp>(
        op, op.getKind() == Tcgen05FenceKind::before_thread_sync
                ? NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC
                : NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    return success();
  }
};

/// The 32-bit tcgen05 instruction descriptor of a kind::f16 MMA with an f32
/// accumulator (PTX ISA, "Instruction descriptor").
uint32_t f16InstructionDescriptor(Type elementType, bool bMnMajor, int64_t m,
                                  int64_t n) {
  uint32_t type = elementType.isBF16() ? 1 : 0;
  return (1u << 4)                       // D is f32
         | (type << 7) | (type << 10)    // A, B element types
         | (uint32_t(bMnMajor) << 16)    // B transposed (MN-major)
         | (uint32_t(n >> 3) << 17)      // N / 8
         | (uint32_t(m >> 4) << 24);     // M / 16
}

/// A 64-bit shared-memory matrix descriptor for 128-byte swizzled operands
/// (PTX ISA, "Shared memory descriptor"): start address, leading and stride
/// byte offsets in 16-byte units, the fixed sm_100 version bit 46 and
/// swizzle mode 2 (128 bytes).
Value smemDescriptor(OpBuilder &b, Location loc, Value sharedAddress,
                     int64_t byteOffset, int64_t leadingBytes,
                     int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto c64 = [&](uint64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value address = LLVM::AddOp::create(b, loc, sharedAddress, c64(byteOffset));
  Value start = LLVM::AndOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, address, c64(4)), c64(0x3FFF));
  uint64_t fixed = ((uint64_t(leadingBytes >> 4) & 0x3FFF) << 16) |
                   ((uint64_t(strideBytes >> 4) & 0x3FFF) << 32) |
                   (1ull << 46) | (2ull << 61);
  return LLVM::OrOp::create(b, loc, start, c64(fixed));
}

struct MmaLowering : ConvertOpToLLVMPattern<MmaOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  /// The shared-window address (i64) of element [0, 0, 0] of a tile.
  Value tileAddress(OpBuilder &b, Location loc, MemRefType type,
                    Value descriptor) const {
    Value ptr =
        firstElementPointer(b, loc, *getTypeConverter(), type, descriptor);
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
  }

  /// Bytes between consecutive atoms of a tile.
  static int64_t atomStrideBytes(MemRefType type) {
    return type.getStridesAndOffset().first[0] * 2;
  }

  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType bType = op.getB().getType();
    SmallVector<int64_t> bStrides = bType.getStridesAndOffset().first;
    if (bStrides[1] != MmaOp::kAtomElements || bStrides[2] != 1)
      return rewriter.notifyMatchFailure(op, "b rows are not 128 bytes apart");
    bool bMnMajor = op.getBMajor() == OperandMajor::mn;
    constexpr int64_t kStep = 16, atomBytes = 128, patternBytes = 1024;
    Type elementType = bType.getElementType();

    Value idesc = i32Constant(
        rewriter, loc,
        f16InstructionDescriptor(elementType, bMnMajor, op.getM(), op.getN()));
    Value bAddress = tileAddress(rewriter, loc, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, aTile, adaptor.getA()) : Value();
    Value always = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(),
                                            rewriter.getBoolAttr(true));

    for (int64_t k = 0; k < op.getK(); k += kStep) {
      // A: a K-major tile advances inside its atom, then to the next atom;
      // a TMEM operand advances by k 16-bit elements = k / 2 columns.
      Value a;
      if (aTile) {
        int64_t offset = (k / MmaOp::kAtomElements) * atomStrideBytes(aTile) +
                         (k % MmaOp::kAtomElements) * 2;
        a = smemDescriptor(rewriter, loc, aAddress, offset, 16, patternBytes);
      } else {
        a = offsetTmemAddress(rewriter, loc, adaptor.getA(),
                              i32Constant(rewriter, loc, k / 2));
      }
      // B: k-major like A; mn-major advances by k rows, with atoms along N
      // one leading byte offset apart.
      Value b =
          bMnMajor
              ? smemDescriptor(rewriter, loc, bAddress, k * atomBytes,
                               atomStrideBytes(bType), patternBytes)
              : smemDescriptor(rewriter, loc, bAddress,
                               (k / MmaOp::kAtomElements) *
                                       atomStrideBytes(bType) +
                                   (k % MmaOp::kAtomElements) * 2,
                               16, patternBytes);
      Value accumulate = k == 0 ? adaptor.getAccumulate() : always;
      NVVM::Tcgen05MMAOp::create(
          rewriter, loc, NVVM::Tcgen05MMAKind::F16, NVVM::CTAGroupKind::CTA_1,
          NVVM::Tcgen05MMACollectorOp::DISCARD, /*aShift=*/false,
          adaptor.getD(), a, b, idesc, accumulate, /*scaleInputD=*/Value(),
          /*disableOutputLane=*/Value());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct MmaCommitLowering : ConvertOpToLLVMPattern<MmaCommitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(MmaCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType barriersType = nvgpu::getMBarrierMemrefType(
        getContext(), op.getBarriers().getType());
    Value barrier = LLVM::getStridedElementPtr(
        rewriter, loc, *getTypeConverter(), barriersType, adaptor.getBarriers(),
        {adaptor.getIndex()});
    rewriter.replaceOpWithNewOp<NVVM::Tcgen05CommitOp>(op, barrier,
                                                       /*multicastMask=*/Value());
    return success();
  }
};

struct ConvertFA4ToNVVMPass
    : public fa4::impl::ConvertFA4ToNVVMBase<ConvertFA4ToNVVMPass> {
  void runOnOperation() override {
    if (failed(verifyTcgen05Targets(getOperation())))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    // The GPU address spaces (workgroup = 3, ...) as NVVM numbers them.
    configureGpuToNVVMTypeConverter(converter);
    populateFA4ToNVVMTypeConversions(converter);
    RewritePatternSet patterns(ctx);
    populateFA4ToNVVMConversionPatterns(converter, patterns);

    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<NVVM::NVVMDialect>();
    target.addIllegalDialect<FA4Dialect>();
    // The semantic op is compiled by the kernel pipeline, not lowered here.
    target.addLegalOp<AttentionOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fa4::populateFA4ToNVVMTypeConversions(
    LLVMTypeConverter &converter) {
  converter.addConversion(
      [](TmemType type) { return tmemPointerType(type.getContext()); });
  // The barrier group as the memref of i64 it lowers to, exactly as the
  // upstream NVGPU conversion does, so both can meet in one module.
  converter.addConversion([&converter](nvgpu::MBarrierGroupType type) {
    return converter.convertType(
        nvgpu::getMBarrierMemrefType(type.getContext(), type));
  });
}

void mlir::fa4::populateFA4ToNVVMConversionPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TmemAllocLowering, TmemBaseLowering, TmemDeallocLowering,
               TmemViewLowering, TmemLoadLowering, TmemStoreLowering,
               Tcgen05WaitLowering, Tcgen05FenceLowering, MmaLowering,
               MmaCommitLowering>(converter);
}
