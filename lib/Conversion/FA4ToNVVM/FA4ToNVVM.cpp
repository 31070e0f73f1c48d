//===- FA4ToNVVM.cpp - lowering fa4 kernel ops to NVVM --------------------===//

#include "fa4/Conversion/FA4ToNVVM/FA4ToNVVM.h"
#include "fa4/Conversion/Passes.h"
#include "fa4/Dialect/FA4/IR/Exp2.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Targets.h"
#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// A buffer has no address until fa4-allocate-tmem places it; say so rather
/// than fail to legalize it.
struct TmemBufferLowering : ConvertOpToLLVMPattern<TmemBufferOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmemBufferOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return op.emitOpError() << "has no columns yet; run fa4-allocate-tmem "
                               "before the NVVM conversion";
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

/// tcgen05 and Tensor Memory exist on sm_100a/sm_101a only, wgmma on sm_90a
/// only: refuses such kernel ops inside a gpu.module whose NVVM targets
/// include another chip.
LogicalResult verifyChipTargets(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    bool tcgen05 =
        isa<TmemAllocOp, TmemBaseOp, TmemDeallocOp, TmemViewOp, TmemBufferOp,
            TmemLoadOp, TmemStoreOp, Tcgen05WaitOp, Tcgen05FenceOp, MmaOp,
            MmaCommitOp>(op);
    bool wgmma = isa<WgmmaOp, WgmmaCommitOp, WgmmaWaitOp>(op);
    if (!tcgen05 && !wgmma)
      return WalkResult::advance();
    for (StringRef chip : enclosingNvvmChips(op)) {
      if (tcgen05 ? hasTcgen05(chip) : chip == "sm_90a")
        continue;
      op->emitOpError() << "needs "
                        << (tcgen05 ? "tcgen05 (sm_100a or sm_101a)"
                                    : "wgmma (sm_90a)")
                        << ", but gpu.module @"
                        << op->getParentOfType<gpu::GPUModuleOp>().getName()
                        << " targets " << chip;
      return WalkResult::interrupt();
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

/// A 64-bit shared-memory matrix descriptor of the matrix at `sharedAddress`
/// (i64): its start address with `fields` (tcgen05:: or
/// wgmma::smemDescriptorFields).
Value smemDescriptor(OpBuilder &b, Location loc, Value sharedAddress,
                     uint64_t fields) {
  Type i64 = b.getI64Type();
  auto c64 = [&](uint64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value start = LLVM::AndOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, sharedAddress, c64(4)),
      c64(0x3FFF));
  return LLVM::OrOp::create(b, loc, start, c64(fields));
}

/// The shared-window address (i64) of element [0, 0, 0] of a tile.
Value tileAddress(OpBuilder &b, Location loc,
                  const LLVMTypeConverter &converter, MemRefType type,
                  Value descriptor) {
  Value ptr = firstElementPointer(b, loc, converter, type, descriptor);
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
}

/// Bytes between consecutive atoms of a [atoms, rows, 64] tile.
int64_t atomStrideBytes(MemRefType type) {
  return type.getStridesAndOffset().first[0] * 2;
}

struct MmaLowering : ConvertOpToLLVMPattern<MmaOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  static constexpr int64_t kStep = tcgen05::kKStep;
  static constexpr int64_t kStepsPerAtom = tcgen05::kAtomElements / kStep;

  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType bType = op.getB().getType();
    SmallVector<int64_t> bStrides = bType.getStridesAndOffset().first;
    if (bStrides[1] != MmaOp::kAtomElements || bStrides[2] != 1)
      return rewriter.notifyMatchFailure(op, "b rows are not 128 bytes apart");
    bool bMnMajor = op.getBMajor() == OperandMajor::mn;
    Type i64 = rewriter.getI64Type();

    Value idesc = i32Constant(
        rewriter, loc,
        tcgen05::instructionDescriptor(bType.getElementType().isBF16(),
                                       bMnMajor, op.getM(), op.getN()));
    const LLVMTypeConverter &converter = *getTypeConverter();
    Value bAddress = tileAddress(rewriter, loc, converter, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, converter, aTile, adaptor.getA())
              : Value();
    int64_t steps = op.getK() / kStep;

    // One tcgen05.mma for K step `step` (i64).
    auto issue = [&](OpBuilder &b, Value step) {
      auto c64 = [&](int64_t v) {
        return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
      };
      // tcgen05::kMajorStepBytes on the (possibly dynamic) step.
      auto kMajorOffset = [&](MemRefType tile) {
        Value atom = LLVM::LShrOp::create(b, loc, step, c64(2));
        Value within = LLVM::AndOp::create(b, loc, step, c64(kStepsPerAtom - 1));
        return LLVM::AddOp::create(
            b, loc, LLVM::MulOp::create(b, loc, atom, c64(atomStrideBytes(tile))),
            LLVM::MulOp::create(b, loc, within, c64(kStep * 2)));
      };
      Value a;
      if (aTile) {
        a = smemDescriptor(
            b, loc, LLVM::AddOp::create(b, loc, aAddress, kMajorOffset(aTile)),
            tcgen05::smemDescriptorFields(tcgen05::kKMajorLeadingBytes,
                                          tcgen05::kKMajorStrideBytes));
      } else {
        // tcgen05::tmemStepColumns.
        Value step32 = LLVM::TruncOp::create(b, loc, b.getI32Type(), step);
        a = offsetTmemAddress(
            b, loc, adaptor.getA(),
            LLVM::MulOp::create(b, loc, step32, i32Constant(b, loc, kStep / 2)));
      }
      // tcgen05::mnMajorStepBytes; atoms along N one leading offset apart.
      Value bStart =
          bMnMajor
              ? LLVM::AddOp::create(
                    b, loc, bAddress,
                    LLVM::MulOp::create(b, loc, step, c64(tcgen05::mnMajorStepBytes(1))))
              : LLVM::AddOp::create(b, loc, bAddress, kMajorOffset(bType));
      Value bDesc = smemDescriptor(
          b, loc, bStart,
          tcgen05::smemDescriptorFields(bMnMajor ? atomStrideBytes(bType)
                                                 : tcgen05::kKMajorLeadingBytes,
                                        tcgen05::kPatternBytes));
      // Only the first step may overwrite the accumulator.
      Value later = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, step,
                                         c64(0));
      Value accumulate =
          LLVM::OrOp::create(b, loc, adaptor.getAccumulate(), later);
      NVVM::Tcgen05MMAOp::create(
          b, loc, NVVM::Tcgen05MMAKind::F16, NVVM::CTAGroupKind::CTA_1,
          NVVM::Tcgen05MMACollectorOp::DISCARD, /*aShift=*/false,
          adaptor.getD(), a, bDesc, idesc, accumulate, /*scaleInputD=*/Value(),
          /*disableOutputLane=*/Value());
    };

    // In a CFG (a function body after scf-to-cf) the steps become a loop, so
    // that only the operand bases stay live instead of one descriptor per
    // step; inside a structured region they are unrolled.
    if (!isa<FunctionOpInterface>(op->getParentOp())) {
      for (int64_t step = 0; step < steps; ++step)
        issue(rewriter, LLVM::ConstantOp::create(rewriter, loc, i64,
                                                 rewriter.getI64IntegerAttr(step)));
      rewriter.eraseOp(op);
      return success();
    }
    Block *entry = rewriter.getInsertionBlock();
    Block *exit = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
    Block *body = rewriter.createBlock(exit, {i64}, {loc});
    rewriter.setInsertionPointToEnd(entry);
    LLVM::BrOp::create(rewriter, loc,
                       ValueRange{LLVM::ConstantOp::create(
                           rewriter, loc, i64, rewriter.getI64IntegerAttr(0))},
                       body);
    rewriter.setInsertionPointToStart(body);
    Value step = body->getArgument(0);
    issue(rewriter, step);
    Value next = LLVM::AddOp::create(
        rewriter, loc, step,
        LLVM::ConstantOp::create(rewriter, loc, i64, rewriter.getI64IntegerAttr(1)));
    Value more = LLVM::ICmpOp::create(
        rewriter, loc, LLVM::ICmpPredicate::ult, next,
        LLVM::ConstantOp::create(rewriter, loc, i64,
                                 rewriter.getI64IntegerAttr(steps)));
    auto backedge = LLVM::CondBrOp::create(rewriter, loc, more, body,
                                           ValueRange{next}, exit, ValueRange{});
    // Unrolled, LLVM would hoist every step's descriptor out of enclosing
    // loops again.
    MLIRContext *ctx = getContext();
    auto noUnroll = LLVM::LoopUnrollAttr::get(
        ctx, BoolAttr::get(ctx, true), {}, {}, {}, {}, {}, {});
    backedge.setLoopAnnotationAttr(LLVM::LoopAnnotationAttr::get(
        ctx, {}, {}, {}, noUnroll, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
    rewriter.setInsertionPointToStart(exit);
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Warpgroup MMA (sm_90a)
//===----------------------------------------------------------------------===//

/// The LLVM struct of `count` f32 that wgmma accumulators travel in.
LLVM::LLVMStructType accumulatorStruct(MLIRContext *ctx, int64_t count) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(count, Float32Type::get(ctx)));
}

/// The 32-bit registers of fragment `vector`: f32 elements as they are,
/// 16-bit elements two to a register (i32).
Value fragmentRegisters(OpBuilder &b, Location loc, Value vector) {
  auto type = cast<VectorType>(vector.getType());
  if (type.getElementType().isF32())
    return vector;
  return LLVM::BitcastOp::create(
      b, loc, VectorType::get({type.getNumElements() / 2}, b.getI32Type()),
      vector);
}

/// The registers of `fragments` (concatenated) packed into one struct.
Value packStruct(OpBuilder &b, Location loc, ValueRange fragments) {
  SmallVector<Value> elements;
  for (Value fragment : fragments) {
    Value registers = fragmentRegisters(b, loc, fragment);
    int64_t count = cast<VectorType>(registers.getType()).getNumElements();
    for (int64_t i = 0; i < count; ++i)
      elements.push_back(LLVM::ExtractElementOp::create(
          b, loc, registers, i32Constant(b, loc, i)));
  }
  SmallVector<Type> types;
  for (Value element : elements)
    types.push_back(element.getType());
  Value result = LLVM::UndefOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(b.getContext(), types));
  for (auto [i, element] : llvm::enumerate(elements))
    result = LLVM::InsertValueOp::create(b, loc, result, element, i);
  return result;
}

/// The struct `packed` split back into fragments of `types`.
SmallVector<Value> unpackStruct(OpBuilder &b, Location loc, Value packed,
                                TypeRange types) {
  SmallVector<Value> fragments;
  int64_t position = 0;
  for (Type type : types) {
    auto vectorType = cast<VectorType>(type);
    bool f32 = vectorType.getElementType().isF32();
    int64_t count = vectorType.getNumElements() / (f32 ? 1 : 2);
    auto registersType =
        f32 ? vectorType : VectorType::get({count}, b.getI32Type());
    Value registers = LLVM::UndefOp::create(b, loc, registersType);
    for (int64_t i = 0; i < count; ++i)
      registers = LLVM::InsertElementOp::create(
          b, loc, registers,
          LLVM::ExtractValueOp::create(b, loc, packed, position++),
          i32Constant(b, loc, i));
    fragments.push_back(
        f32 ? registers : LLVM::BitcastOp::create(b, loc, type, registers));
  }
  return fragments;
}

/// Outputs of the register classes of `types` (f32: "f", i32: "r") tied to
/// as many inputs, then `rest`.
std::string tiedConstraints(ArrayRef<Type> types, StringRef rest) {
  SmallVector<std::string> constraints;
  for (Type type : types)
    constraints.push_back(type.isF32() ? "=f" : "=r");
  for (size_t i = 0; i < types.size(); ++i)
    constraints.push_back(std::to_string(i));
  if (!rest.empty())
    constraints.push_back(rest.str());
  return llvm::join(constraints, ",");
}

/// `{$first, ..., $(first + count - 1)}`.
std::string operandList(int64_t first, int64_t count) {
  std::string list = "{";
  for (int64_t i = 0; i < count; ++i)
    list += (i ? ", $" : "$") + std::to_string(first + i);
  return list + "}";
}

struct WgmmaLowering : ConvertOpToLLVMPattern<WgmmaOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WgmmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    MemRefType bType = op.getB().getType();
    SmallVector<int64_t> bStrides = bType.getStridesAndOffset().first;
    if (bStrides[1] != MmaOp::kAtomElements || bStrides[2] != 1)
      return rewriter.notifyMatchFailure(op, "b rows are not 128 bytes apart");
    bool bMnMajor = op.getBMajor() == OperandMajor::mn;
    bool bf16 = bType.getElementType().isBF16();
    int64_t n = op.getN(), steps = op.getK() / wgmma::kKStep;
    int64_t registers = n / 2;
    Type i64 = rewriter.getI64Type();
    auto c64 = [&](int64_t v) {
      return LLVM::ConstantOp::create(rewriter, loc, i64,
                                      rewriter.getI64IntegerAttr(v));
    };
    const LLVMTypeConverter &converter = *getTypeConverter();
    Value bAddress = tileAddress(rewriter, loc, converter, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, converter, aTile, adaptor.getA())
              : Value();
    // A register operand as 32-bit registers, two elements each.
    Value aRegisters;
    if (!aTile)
      aRegisters = LLVM::BitcastOp::create(
          rewriter, loc, VectorType::get({op.getK() / 4}, rewriter.getI32Type()),
          adaptor.getA());

    auto structType = accumulatorStruct(ctx, registers);
    Value acc = adaptor.getAcc() ? packStruct(rewriter, loc, adaptor.getAcc())
                                 : LLVM::UndefOp::create(rewriter, loc, structType);
    // The accumulator registers were last written by ordinary instructions.
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    auto shape = NVVM::MMAShapeAttr::get(ctx, WgmmaOp::kM, n,
                                         wgmma::kKStep);
    auto elementType = NVVM::WGMMATypesAttr::get(
        ctx, bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
    auto scaleIn = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
    for (int64_t step = 0; step < steps; ++step) {
      // Only the first step of a product without accumulator overwrites.
      bool accumulate = adaptor.getAcc() || step > 0;
      int64_t bOffset = bMnMajor ? tcgen05::mnMajorStepBytes(step)
                                 : tcgen05::kMajorStepBytes(
                                       step, atomStrideBytes(bType));
      Value bDesc = smemDescriptor(
          rewriter, loc, LLVM::AddOp::create(rewriter, loc, bAddress, c64(bOffset)),
          wgmma::smemDescriptorFields(bMnMajor ? atomStrideBytes(bType)
                                               : tcgen05::kKMajorLeadingBytes,
                                      tcgen05::kPatternBytes));
      if (aTile) {
        Value aDesc = smemDescriptor(
            rewriter, loc,
            LLVM::AddOp::create(
                rewriter, loc, aAddress,
                c64(tcgen05::kMajorStepBytes(step, atomStrideBytes(aTile)))),
            wgmma::smemDescriptorFields(tcgen05::kKMajorLeadingBytes,
                                        tcgen05::kKMajorStrideBytes));
        // B layout `row` is the transposed (MN-major) B.
        acc = NVVM::WgmmaMmaAsyncOp::create(
            rewriter, loc, structType, acc, aDesc, bDesc, shape, elementType,
            elementType, NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
            NVVM::WGMMAScaleOutAttr::get(ctx, accumulate
                                                  ? NVVM::WGMMAScaleOut::one
                                                  : NVVM::WGMMAScaleOut::zero),
            scaleIn, scaleIn,
            NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
            NVVM::MMALayoutAttr::get(ctx, bMnMajor ? NVVM::MMALayout::row
                                                   : NVVM::MMALayout::col),
            /*satfinite=*/nullptr);
        continue;
      }
      // A from registers has no NVVM op in LLVM 22: the RS form in PTX.
      SmallVector<Value> operands;
      for (int64_t i = 0; i < registers; ++i)
        operands.push_back(LLVM::ExtractValueOp::create(rewriter, loc, acc, i));
      for (int64_t r = 0; r < 4; ++r)
        operands.push_back(LLVM::ExtractElementOp::create(
            rewriter, loc, aRegisters, i32Constant(rewriter, loc, 4 * step + r)));
      operands.push_back(bDesc);
      operands.push_back(i32Constant(rewriter, loc, accumulate ? 1 : 0));
      StringRef type = bf16 ? "bf16" : "f16";
      std::string ptx =
          "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
          std::to_string(2 * registers + 5) +
          ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
          "k16.f32." + type.str() + "." + type.str() + " " +
          operandList(0, registers) + ", " + operandList(2 * registers, 4) +
          ", $" + std::to_string(2 * registers + 4) + ", p, 1, 1, " +
          (bMnMajor ? "1" : "0") + ";\n}\n";
      acc = LLVM::InlineAsmOp::create(
                rewriter, loc, structType, operands, ptx,
                tiedConstraints(structType.getBody(), "r,r,r,r,l,n"),
                /*has_side_effects=*/true, /*is_align_stack=*/false,
                LLVM::TailCallKind::None, /*asm_dialect=*/nullptr,
                /*operand_attrs=*/nullptr)
                .getResult(0);
    }
    rewriter.replaceOp(
        op, unpackStruct(rewriter, loc, acc,
                         {converter.convertType(op.getResult().getType())}));
    return success();
  }
};

/// An op without operands or results that is one NVVM op of the same kind.
template <typename SourceOp, typename TargetOp>
struct NullaryLowering : ConvertOpToLLVMPattern<SourceOp> {
  using ConvertOpToLLVMPattern<SourceOp>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<TargetOp>(op);
    return success();
  }
};

/// The fragments pass through the wait as tied operands of the PTX, so that
/// no read of a wgmma result is scheduled above it.
struct WgmmaWaitLowering : ConvertOpToLLVMPattern<WgmmaWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WgmmaWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    uint32_t pending = op.getPending();
    if (op.getFragments().empty()) {
      rewriter.replaceOpWithNewOp<NVVM::WgmmaWaitGroupSyncOp>(op, pending);
      return success();
    }
    Value packed = packStruct(rewriter, loc, adaptor.getFragments());
    ArrayRef<Type> registers =
        cast<LLVM::LLVMStructType>(packed.getType()).getBody();
    int64_t count = registers.size();
    SmallVector<Value> operands;
    for (int64_t i = 0; i < count; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(rewriter, loc, packed, i));
    Value waited =
        LLVM::InlineAsmOp::create(
            rewriter, loc, packed.getType(), operands,
            "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
            tiedConstraints(registers, ""), /*has_side_effects=*/true,
            /*is_align_stack=*/false, LLVM::TailCallKind::None,
            /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
            .getResult(0);
    SmallVector<Type> types;
    for (Value fragment : adaptor.getFragments())
      types.push_back(fragment.getType());
    rewriter.replaceOp(op, unpackStruct(rewriter, loc, waited, types));
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

template <typename SourceOp, typename NVVMOp>
struct NamedBarrierLowering : ConvertOpToLLVMPattern<SourceOp> {
  using ConvertOpToLLVMPattern<SourceOp>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value id = i32Constant(rewriter, loc, op.getId());
    Value threads = i32Constant(rewriter, loc, op.getThreads());
    if constexpr (std::is_same_v<NVVMOp, NVVM::BarrierOp>)
      NVVM::BarrierOp::create(rewriter, loc, Type(), id, threads,
                              NVVM::BarrierReductionAttr(), Value());
    else
      NVVMOp::create(rewriter, loc, id, threads);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ElectLowering : ConvertOpToLLVMPattern<ElectOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ElectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::ElectSyncOp>(op, rewriter.getI1Type(),
                                                   /*membermask=*/Value());
    return success();
  }
};

struct WarpAnyLowering : ConvertOpToLLVMPattern<WarpAnyOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WarpAnyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value allLanes = i32Constant(rewriter, op.getLoc(), -1);
    rewriter.replaceOpWithNewOp<NVVM::VoteSyncOp>(
        op, rewriter.getI1Type(), allLanes, adaptor.getPredicate(),
        NVVM::VoteSyncKind::any);
    return success();
  }
};

struct FenceProxyAsyncLowering : ConvertOpToLLVMPattern<FenceProxyAsyncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(FenceProxyAsyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::FenceProxyOp>(
        op, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(getContext(), NVVM::SharedSpace::shared_cta));
    return success();
  }
};

struct TmaStoreWaitLowering : ConvertOpToLLVMPattern<TmaStoreWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmaStoreWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncBulkWaitGroupOp>(
        op, op.getPending(), op.getRead() ? rewriter.getUnitAttr() : nullptr);
    return success();
  }
};

/// A call of the f32 NVVM intrinsic `name`. The NVVM intrinsics, not the
/// generic llvm.intr.* ones, because GPU-to-NVVM rewrites those into
/// libdevice calls and because they name the exact PTX instruction.
Value callF32Intrinsic(OpBuilder &b, Location loc, StringRef name,
                       ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(name), args)
      .getResult(0);
}

/// 2^x on the FMA pipe: the exponent's integer part goes into the float's
/// exponent bits, its fraction through the cubic of Exp2.h.
Value emulatedExp2(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto f32Constant = [&](float v) {
    return LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(v));
  };
  auto fma = [&](Value a, Value m, Value c) {
    return callF32Intrinsic(b, loc, "llvm.nvvm.fma.rn.f", {a, m, c});
  };
  Value clamped = callF32Intrinsic(b, loc, "llvm.nvvm.fmax.f",
                                   {x, f32Constant(exp2poly::kMinInput)});
  Value whole = callF32Intrinsic(b, loc, "llvm.nvvm.floor.f", {clamped});
  Value f = LLVM::FSubOp::create(b, loc, clamped, whole);
  Value p = fma(f32Constant(exp2poly::kC3), f, f32Constant(exp2poly::kC2));
  p = fma(p, f, f32Constant(exp2poly::kC1));
  p = fma(p, f, f32Constant(1.0f));
  Value exponent = LLVM::ShlOp::create(
      b, loc, LLVM::FPToSIOp::create(b, loc, i32, whole), i32Constant(b, loc, 23));
  Value bits = LLVM::AddOp::create(
      b, loc, LLVM::BitcastOp::create(b, loc, i32, p), exponent);
  return LLVM::BitcastOp::create(b, loc, f32, bits);
}

struct Exp2Lowering : ConvertOpToLLVMPattern<Exp2Op> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(Exp2Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t emulated = static_cast<int64_t>(op.getEmulated());
    Value result = LLVM::PoisonOp::create(rewriter, loc, op.getType());
    for (int64_t i = 0, e = op.getType().getNumElements(); i < e; ++i) {
      Value index = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI32Type(),
                                             rewriter.getI32IntegerAttr(i));
      Value x = LLVM::ExtractElementOp::create(rewriter, loc, adaptor.getX(),
                                               index);
      Value y = i % 16 < emulated
                    ? emulatedExp2(rewriter, loc, x)
                    : callF32Intrinsic(rewriter, loc,
                                       "llvm.nvvm.ex2.approx.ftz.f32", {x});
      result =
          LLVM::InsertElementOp::create(rewriter, loc, result, y, index);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertFA4ToNVVMPass
    : public fa4::impl::ConvertFA4ToNVVMBase<ConvertFA4ToNVVMPass> {
  void runOnOperation() override {
    if (failed(verifyChipTargets(getOperation())))
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
  populateNVGPUTypeConversions(converter);
}

void mlir::fa4::populateNVGPUTypeConversions(LLVMTypeConverter &converter) {
  // The same forms the upstream convert-nvgpu-to-nvvm pass gives them, so
  // that values crossing the two conversions meet in one type.
  converter.addConversion([&converter](nvgpu::MBarrierGroupType type) {
    return converter.convertType(
        nvgpu::getMBarrierMemrefType(type.getContext(), type));
  });
  converter.addConversion([](nvgpu::MBarrierTokenType type) {
    return IntegerType::get(type.getContext(), 64);
  });
  converter.addConversion([](nvgpu::TensorMapDescriptorType type) {
    return LLVM::LLVMPointerType::get(type.getContext());
  });
}

namespace {
/// Lets every convert-to-LLVM style pass (convert-gpu-to-nvvm among them)
/// lower the fa4 kernel ops.
struct FA4ToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void loadDependentDialects(MLIRContext *context) const final {
    context->loadDialect<NVVM::NVVMDialect>();
  }
  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    populateFA4ToNVVMTypeConversions(converter);
    populateFA4ToNVVMConversionPatterns(converter, patterns);
  }
};

/// The same for nvgpu, which upstream lowers only in its own pass: kernel
/// signatures holding TMA descriptors and barrier groups can then be
/// converted by convert-gpu-to-nvvm.
struct NVGPUToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void loadDependentDialects(MLIRContext *context) const final {
    context->loadDialect<NVVM::NVVMDialect>();
  }
  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    populateNVGPUTypeConversions(converter);
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
  }
};
} // namespace

void mlir::fa4::registerConvertFA4ToLLVMInterfaces(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, FA4Dialect *dialect) {
    dialect->addInterfaces<FA4ToLLVMInterface>();
  });
  registry.addExtension(+[](MLIRContext *, nvgpu::NVGPUDialect *dialect) {
    dialect->addInterfaces<NVGPUToLLVMInterface>();
  });
}

void mlir::fa4::populateFA4ToNVVMConversionPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TmemAllocLowering, TmemBufferLowering, TmemBaseLowering, TmemDeallocLowering,
               TmemViewLowering, TmemLoadLowering, TmemStoreLowering,
               Tcgen05WaitLowering, Tcgen05FenceLowering, MmaLowering,
               MmaCommitLowering,
               NamedBarrierLowering<NamedBarrierSyncOp, NVVM::BarrierOp>,
               NamedBarrierLowering<NamedBarrierArriveOp, NVVM::BarrierArriveOp>,
               ElectLowering, WarpAnyLowering, FenceProxyAsyncLowering,
               NullaryLowering<TmaStoreCommitOp, NVVM::CpAsyncBulkCommitGroupOp>,
               TmaStoreWaitLowering, Exp2Lowering, WgmmaLowering,
               NullaryLowering<WgmmaCommitOp, NVVM::WgmmaGroupSyncAlignedOp>,
               WgmmaWaitLowering>(
      converter);
}
