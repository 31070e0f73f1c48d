//===- WgmmaToNVVM.cpp - lowering the sm_90a warpgroup MMA ops ------------===//
//
// fa4.wgmma, fa4.wgmma.commit and fa4.wgmma.wait to NVVM: the shared-memory
// form through nvvm.wgmma.mma_async, the register-A form and the tied wait
// through inline PTX.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::lowering;

namespace {

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
    fragments.push_back(f32 ? registers
                            : LLVM::BitcastOp::create(b, loc, type, registers));
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
    const LLVMTypeConverter &converter = *getTypeConverter();
    Value bAddress =
        tileAddress(rewriter, loc, converter, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, converter, aTile, adaptor.getA())
              : Value();
    // A register operand as 32-bit registers, two elements each.
    Value aRegisters;
    if (!aTile)
      aRegisters = LLVM::BitcastOp::create(
          rewriter, loc,
          VectorType::get({op.getK() / 4}, rewriter.getI32Type()),
          adaptor.getA());

    auto structType = accumulatorStruct(ctx, registers);
    Value acc = adaptor.getAcc()
                    ? packStruct(rewriter, loc, adaptor.getAcc())
                    : LLVM::UndefOp::create(rewriter, loc, structType);
    // The accumulator registers were last written by ordinary instructions.
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    auto shape = NVVM::MMAShapeAttr::get(ctx, WgmmaOp::kM, n, wgmma::kKStep);
    auto elementType = NVVM::WGMMATypesAttr::get(
        ctx, bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16);
    auto scaleIn = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
    // Descriptors of step 0; a later step's operand starts a constant number
    // of 16-byte units further, which adds to the start-address field
    // without carrying out of it (shared addresses stay below 2^18). Each
    // step's add is pinned to its wgmma: a plain add of a loop-invariant
    // base (Q's) would be hoisted out of the KV loop by LLVM, every step's
    // descriptor then live through it (24 registers at head dim 192).
    Value bStart = smemDescriptor(
        rewriter, loc, bAddress,
        wgmma::smemDescriptorFields(bMnMajor ? atomStrideBytes(bType)
                                             : tcgen05::kKMajorLeadingBytes,
                                    tcgen05::kPatternBytes));
    Value aStart =
        aTile ? smemDescriptor(rewriter, loc, aAddress,
                               wgmma::smemDescriptorFields(
                                   tcgen05::kKMajorLeadingBytes,
                                   tcgen05::kKMajorStrideBytes))
              : Value();
    auto stepDescriptor = [&](Value start, int64_t bytes) -> Value {
      if (bytes == 0)
        return start;
      return LLVM::InlineAsmOp::create(
                 rewriter, loc, i64, ValueRange{start},
                 "add.s64 $0, $1, " + std::to_string(bytes / 16) + ";",
                 "=l,l", /*has_side_effects=*/true, /*is_align_stack=*/false,
                 LLVM::TailCallKind::None, /*asm_dialect=*/nullptr,
                 /*operand_attrs=*/nullptr)
          .getResult(0);
    };
    for (int64_t step = 0; step < steps; ++step) {
      // Only the first step of a product without accumulator overwrites.
      bool accumulate = adaptor.getAcc() || step > 0;
      int64_t bOffset =
          bMnMajor ? tcgen05::mnMajorStepBytes(step)
                   : tcgen05::kMajorStepBytes(step, atomStrideBytes(bType));
      Value bDesc = stepDescriptor(bStart, bOffset);
      if (aTile) {
        Value aDesc = stepDescriptor(
            aStart, tcgen05::kMajorStepBytes(step, atomStrideBytes(aTile)));
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
            rewriter, loc, aRegisters,
            i32Constant(rewriter, loc, 4 * step + r)));
      operands.push_back(bDesc);
      operands.push_back(i32Constant(rewriter, loc, accumulate ? 1 : 0));
      StringRef type = bf16 ? "bf16" : "f16";
      std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                        std::to_string(2 * registers + 5) +
                        ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                        std::to_string(n) + "k16.f32." + type.str() + "." +
                        type.str() + " " + operandList(0, registers) + ", " +
                        operandList(2 * registers, 4) + ", $" +
                        std::to_string(2 * registers + 4) + ", p, 1, 1, " +
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
      operands.push_back(
          LLVM::ExtractValueOp::create(rewriter, loc, packed, i));
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

} // namespace

void mlir::fa4::lowering::populateWgmmaToNVVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WgmmaLowering, WgmmaWaitLowering>(converter);
}
