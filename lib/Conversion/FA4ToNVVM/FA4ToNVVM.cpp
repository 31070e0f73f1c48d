//===- FA4ToNVVM.cpp - lowering fa4 kernel ops to NVVM --------------------===//

#include "LoweringUtils.h"

#include "fa4/Conversion/FA4ToNVVM/FA4ToNVVM.h"
#include "fa4/Conversion/Passes.h"
#include "fa4/Dialect/FA4/IR/Exp2.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Targets.h"
#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include <numeric>

namespace mlir::fa4 {
#define GEN_PASS_DEF_CONVERTFA4TONVVM
#include "fa4/Conversion/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::lowering;

/// Address space of Tensor Memory pointers in the NVPTX backend.
static constexpr unsigned kTmemAddressSpace = 6;

namespace {

Type tmemPointerType(MLIRContext *ctx) {
  return LLVM::LLVMPointerType::get(ctx, kTmemAddressSpace);
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

/// tcgen05 and Tensor Memory exist on sm_100a/sm_101a only, wgmma on sm_90a
/// only: refuses such kernel ops inside a gpu.module whose NVVM targets
/// include another chip.
LogicalResult verifyChipTargets(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    bool tcgen05 =
        isa<TmemAllocOp, TmemBaseOp, TmemDeallocOp, TmemViewOp, TmemBufferOp,
            TmemLoadOp, TmemStoreOp, MmaOp, MmaCommitOp>(op);
    bool wgmma = isa<WgmmaOp, WgmmaQuantizeOp, WgmmaWaitOp>(op);
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

struct MmaLowering : ConvertOpToLLVMPattern<MmaOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  // Every K step reads 32 bytes of each operand row: 4 steps per atom.
  static constexpr int64_t kStepsPerAtom =
      tcgen05::kRowBytes / tcgen05::kStepBytes;

  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType bType = op.getB().getType();
    Type element = bType.getElementType();
    unsigned bits = element.getIntOrFloatBitWidth();
    SmallVector<int64_t> bStrides = bType.getStridesAndOffset().first;
    if (bStrides[1] != tcgen05::atomElements(bits) || bStrides[2] != 1)
      return rewriter.notifyMatchFailure(op, "b rows are not 128 bytes apart");
    bool bMnMajor = op.getBMajor() == OperandMajor::mn;
    bool aMnMajor = op.isAMnMajor();
    Type i64 = rewriter.getI64Type();

    // e4m3 operands: kind::f8f6f4, 32 elements per step.
    bool fp8 = bits == 8;
    uint32_t format = fp8                ? tcgen05::kFormatE4M3
                      : element.isBF16() ? tcgen05::kFormatBF16
                                         : tcgen05::kFormatF16;
    NVVM::Tcgen05MMAKind kind =
        fp8 ? NVVM::Tcgen05MMAKind::F8F6F4 : NVVM::Tcgen05MMAKind::F16;
    Value idesc =
        i32Constant(rewriter, loc,
                    tcgen05::instructionDescriptor(format, bMnMajor, op.getM(),
                                                   op.getN(), aMnMajor));
    const LLVMTypeConverter &converter = *getTypeConverter();
    Value bAddress = tileAddress(rewriter, loc, converter, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, converter, aTile, adaptor.getA())
              : Value();
    int64_t steps = op.getK() / tcgen05::stepElements(bits);
    MLIRContext *ctx = getContext();
    Type i32 = rewriter.getI32Type();

    // Descriptors of step 0. A later step's operand starts a constant
    // number of 16-byte units further (tcgen05::kMajorStepBytes,
    // mnMajorStepBytes), which adds to the descriptor's start-address
    // field without carrying out of it (shared addresses stay below 2^18),
    // or a constant number of TMEM columns (tmemStepColumns): each step is
    // one add per operand, not a new encoding.
    auto c64 = [&](OpBuilder &b, int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    // An MN-major operand's leading byte offset is its atom stride (atoms
    // along M or N), a K-major one's unused.
    Value aStart =
        aTile ? smemDescriptor(rewriter, loc, aAddress,
                               tcgen05::smemDescriptorFields(
                                   aMnMajor ? atomStrideBytes(aTile)
                                            : tcgen05::kKMajorLeadingBytes,
                                   tcgen05::kKMajorStrideBytes))
              : adaptor.getA();
    Value bStart = smemDescriptor(
        rewriter, loc, bAddress,
        tcgen05::smemDescriptorFields(bMnMajor ? atomStrideBytes(bType)
                                               : tcgen05::kKMajorLeadingBytes,
                                      tcgen05::kPatternBytes));
    auto aOffset = [&](int64_t step) {
      if (!aTile)
        return tcgen05::tmemStepColumns(step);
      return (aMnMajor
                  ? tcgen05::mnMajorStepBytes(step)
                  : tcgen05::kMajorStepBytes(step, atomStrideBytes(aTile))) /
             16;
    };
    auto bOffset = [&](int64_t step) {
      return (bMnMajor ? tcgen05::mnMajorStepBytes(step)
                       : tcgen05::kMajorStepBytes(step, atomStrideBytes(bType))) /
             16;
    };
    // One tcgen05.mma for the step `step` after the operands `a` and `b`;
    // only the first step of the op may overwrite the accumulator.
    auto issue = [&](OpBuilder &b, Value a, Value bDesc, int64_t step,
                     Value accumulate) {
      Value aStep = aTile ? LLVM::AddOp::create(b, loc, a, c64(b, aOffset(step)))
                                .getResult()
                          : offsetTmemAddress(b, loc, a,
                                              i32Constant(b, loc, aOffset(step)));
      Value bStep = LLVM::AddOp::create(b, loc, bDesc, c64(b, bOffset(step)));
      if (op.getWs()) {
        // The weight-stationary MMA (M = 32 or 64): B through the default
        // collector buffer, discarded after each instruction.
        NVVM::Tcgen05MMAWsOp::create(
            b, loc, kind, NVVM::Tcgen05MMACollectorBBuffer::B0,
            NVVM::Tcgen05MMACollectorOp::DISCARD, adaptor.getD(), aStep, bStep,
            idesc, accumulate, /*zeroColMask=*/Value());
        return;
      }
      NVVM::Tcgen05MMAOp::create(
          b, loc, kind, NVVM::CTAGroupKind::CTA_1,
          NVVM::Tcgen05MMACollectorOp::DISCARD, /*aShift=*/false,
          adaptor.getD(), aStep, bStep, idesc, accumulate,
          /*scaleInputD=*/Value(), /*disableOutputLane=*/Value());
    };
    Value always = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(),
                                            rewriter.getBoolAttr(true));

    // In a CFG (a function body after scf-to-cf) the steps become a loop
    // over groups of steps, unrolled within a group, so that only the two
    // group bases stay live: unrolled, LLVM would hoist every step's
    // operands out of enclosing loops. TMEM columns and MN-major rows
    // advance linearly; a K-major operand advances within its 64-element
    // atom, then by the atom stride, so its groups must not straddle atoms:
    // a group of a whole atom advances by the stride, a smaller one (a K
    // that is not a multiple of 64, e.g. head dim 96) within the atom and,
    // after the atom's last group, to the next atom. The largest group of at
    // most an atom's steps that leaves at least two groups; inside a
    // structured region, or with no such group, the steps are unrolled.
    bool kMajor = (aTile && !aMnMajor) || !bMnMajor;
    int64_t groupSteps = 0;
    for (int64_t g = kStepsPerAtom; g >= 1 && !groupSteps; --g)
      if (steps % g == 0 && steps / g >= 2 &&
          (!kMajor || steps <= kStepsPerAtom || kStepsPerAtom % g == 0))
        groupSteps = g;
    bool crossesAtoms =
        kMajor && steps > kStepsPerAtom && groupSteps != kStepsPerAtom;
    if (!isa<FunctionOpInterface>(op->getParentOp()) || !groupSteps) {
      for (int64_t step = 0; step < steps; ++step)
        issue(rewriter, aStart, bStart, step,
              step == 0 ? adaptor.getAccumulate() : always);
      rewriter.eraseOp(op);
      return success();
    }
    int64_t groups = steps / groupSteps;
    Block *entry = rewriter.getInsertionBlock();
    Block *exit = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
    Type aType = aStart.getType();
    Block *body = rewriter.createBlock(exit, {i32, aType, i64}, {loc, loc, loc});
    rewriter.setInsertionPointToEnd(entry);
    LLVM::BrOp::create(rewriter, loc,
                       ValueRange{i32Constant(rewriter, loc, 0), aStart, bStart},
                       body);
    rewriter.setInsertionPointToStart(body);
    Value group = body->getArgument(0), a = body->getArgument(1),
          bDesc = body->getArgument(2);
    Value later = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ne,
                                       group, i32Constant(rewriter, loc, 0));
    for (int64_t step = 0; step < groupSteps; ++step)
      issue(rewriter, a, bDesc, step,
            step == 0 ? LLVM::OrOp::create(rewriter, loc,
                                           adaptor.getAccumulate(), later)
                            .getResult()
                      : always);
    Value nextGroup = LLVM::AddOp::create(rewriter, loc, group,
                                          i32Constant(rewriter, loc, 1));
    // The next group's offset from this one's: the group's steps, or, for a
    // K-major operand whose atom ends with this group, the way from the
    // atom's last group to the next atom's start.
    Value atomEnd;
    if (crossesAtoms)
      atomEnd = LLVM::ICmpOp::create(
          rewriter, loc, LLVM::ICmpPredicate::eq,
          LLVM::AndOp::create(
              rewriter, loc, nextGroup,
              i32Constant(rewriter, loc, kStepsPerAtom / groupSteps - 1)),
          i32Constant(rewriter, loc, 0));
    auto advance = [&](auto offset, bool operandKMajor, Type type) -> Value {
      auto constant = [&](int64_t value) -> Value {
        return type == i64 ? c64(rewriter, value).getResult()
                           : i32Constant(rewriter, loc, value);
      };
      Value within = constant(offset(groupSteps));
      if (!crossesAtoms || !operandKMajor)
        return within;
      Value across = constant(offset(kStepsPerAtom) -
                              offset(kStepsPerAtom - groupSteps));
      return LLVM::SelectOp::create(rewriter, loc, atomEnd, across, within);
    };
    Value nextA =
        aTile ? LLVM::AddOp::create(rewriter, loc, a,
                                    advance(aOffset, !aMnMajor, i64))
                    .getResult()
              : offsetTmemAddress(rewriter, loc, a,
                                  advance(aOffset, false, i32));
    Value nextB = LLVM::AddOp::create(rewriter, loc, bDesc,
                                      advance(bOffset, !bMnMajor, i64));
    Value more = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ult,
                                      nextGroup,
                                      i32Constant(rewriter, loc, groups));
    rewriter.setInsertionPointToEnd(body);
    auto backedge = LLVM::CondBrOp::create(rewriter, loc, more, body,
                                           ValueRange{nextGroup, nextA, nextB},
                                           exit, ValueRange{});
    // LLVM must not unroll the group loop again.
    auto noUnroll = LLVM::LoopUnrollAttr::get(
        ctx, BoolAttr::get(ctx, true), {}, {}, {}, {}, {}, {});
    backedge.setLoopAnnotationAttr(LLVM::LoopAnnotationAttr::get(
        ctx, {}, {}, {}, noUnroll, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
    rewriter.setInsertionPointToStart(exit);
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

/// A call of the f32 NVVM intrinsic `name`. The NVVM intrinsics, not the
/// generic llvm.intr.* ones, because GPU-to-NVVM rewrites those into
/// libdevice calls and because they name the exact PTX instruction.
Value callF32Intrinsic(OpBuilder &b, Location loc, StringRef name,
                       ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(name), args)
      .getResult(0);
}

/// 2^x on the FMA and integer pipes: adding 1.5 * 2^23 rounded down puts
/// floor(x) into the low mantissa bits (|x| <= 127 here), and shifting those
/// bits by 23 makes floor(x) the float's exponent; the fraction goes through
/// the cubic of Exp2.h. No FRND or F2I, which issue to the unit MUFU.EX2
/// runs on: emulation is to take work off that unit. The floor, fraction
/// and bits are those of exp2poly::evaluate.
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
  Value magic = f32Constant(exp2poly::kFloorShift);
  Value shifted =
      callF32Intrinsic(b, loc, "llvm.nvvm.add.rm.f", {clamped, magic});
  Value whole = LLVM::FSubOp::create(b, loc, shifted, magic);
  Value f = LLVM::FSubOp::create(b, loc, clamped, whole);
  Value p = fma(f32Constant(exp2poly::kC3), f, f32Constant(exp2poly::kC2));
  p = fma(p, f, f32Constant(exp2poly::kC1));
  p = fma(p, f, f32Constant(1.0f));
  Value exponent =
      LLVM::ShlOp::create(b, loc, LLVM::BitcastOp::create(b, loc, i32, shifted),
                          i32Constant(b, loc, 23));
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

/// Whether `op` rounds f32 to e4m3 (f8E4M3FN), scalar or vector: the
/// conversion LLVM has no instruction for, which this pass lowers.
bool isTruncToE4m3(arith::TruncFOp op) {
  return isa<Float8E4M3FNType>(getElementTypeOrSelf(op.getType())) &&
         getElementTypeOrSelf(op.getIn().getType()).isF32();
}

/// arith.truncf of f32 to f8E4M3FN (the sm_100a FP8 softmax's P): pairs of
/// elements through cvt.rn.satfinite.e4m3x2.f32, the first of a pair in the
/// low byte. PTX converts to e4m3 only with satfinite: a value beyond 448
/// in magnitude becomes +-448 where arith.truncf would give NaN (P is in
/// [0, 2^threshold] with a threshold of at most 8).
struct TruncFToE4m3Lowering : ConvertOpToLLVMPattern<arith::TruncFOp> {
  TruncFToE4m3Lowering(const LLVMTypeConverter &converter)
      : ConvertOpToLLVMPattern(converter, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isTruncToE4m3(op))
      return rewriter.notifyMatchFailure(op, "not f32 to f8E4M3FN");
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "cvt rounds to nearest even");
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type(), i16 = rewriter.getI16Type();
    Type e4m3 = rewriter.getType<Float8E4M3FNType>();
    Value zero = LLVM::ConstantOp::create(rewriter, loc, rewriter.getF32Type(),
                                          rewriter.getF32FloatAttr(0.0f));
    // Elements (i, i + 1) as an i16, element i in the low byte.
    auto pair = [&](Value low, Value high) -> Value {
      return NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, i16, high, low, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, e4m3);
    };
    auto vectorType = dyn_cast<VectorType>(op.getType());
    if (!vectorType) {
      rewriter.replaceOpWithNewOp<LLVM::TruncOp>(op, i8,
                                                 pair(adaptor.getIn(), zero));
      return success();
    }
    if (vectorType.getRank() != 1 || vectorType.isScalable())
      return rewriter.notifyMatchFailure(op, "not a fixed 1-D vector");
    int64_t n = vectorType.getNumElements();
    auto element = [&](int64_t i) -> Value {
      if (i >= n)
        return zero;
      return LLVM::ExtractElementOp::create(rewriter, loc, adaptor.getIn(),
                                            i32Constant(rewriter, loc, i));
    };
    // Pairs into an i16 vector, its bytes the result; an odd tail's pair
    // is cut back to n bytes.
    int64_t pairs = llvm::divideCeil(n, 2);
    Value packed =
        LLVM::PoisonOp::create(rewriter, loc, VectorType::get({pairs}, i16));
    for (int64_t i = 0; i < pairs; ++i)
      packed = LLVM::InsertElementOp::create(
          rewriter, loc, packed, pair(element(2 * i), element(2 * i + 1)),
          i32Constant(rewriter, loc, i));
    Value bytes = LLVM::BitcastOp::create(
        rewriter, loc, VectorType::get({2 * pairs}, i8), packed);
    if (2 * pairs != n) {
      SmallVector<int32_t> first(n);
      std::iota(first.begin(), first.end(), 0);
      bytes = LLVM::ShuffleVectorOp::create(rewriter, loc, bytes, bytes, first);
    }
    rewriter.replaceOp(op, bytes);
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
    // The one arith conversion LLVM cannot express (TruncFToE4m3Lowering).
    target.addDynamicallyLegalOp<arith::TruncFOp>(
        [](arith::TruncFOp op) { return !isTruncToE4m3(op); });
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
  patterns
      .add<TmemAllocLowering, TmemBufferLowering, TmemBaseLowering,
           TmemDeallocLowering, TmemViewLowering, TmemLoadLowering,
           TmemStoreLowering, MmaLowering, MmaCommitLowering,
           NamedBarrierLowering<NamedBarrierSyncOp, NVVM::BarrierOp>,
           NamedBarrierLowering<NamedBarrierArriveOp, NVVM::BarrierArriveOp>,
           Exp2Lowering, TruncFToE4m3Lowering>(converter);
  lowering::populateWgmmaToNVVMPatterns(converter, patterns);
  lowering::populateClusterToNVVMPatterns(converter, patterns);
}
