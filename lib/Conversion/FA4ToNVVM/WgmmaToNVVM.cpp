//===- WgmmaToNVVM.cpp - lowering the sm_90a warpgroup MMA ops ------------===//
//
// fa4.wgmma, fa4.wgmma.quantize and fa4.wgmma.wait to NVVM: the shared-memory
// form through nvvm.wgmma.mma_async, the register-A form and the tied wait
// through inline PTX.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Warpgroup MMA (sm_90a)
//===----------------------------------------------------------------------===//

/// The wgmma type of shared-memory or register operands of `element` type.
NVVM::WGMMATypes wgmmaType(Type element) {
  if (element.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (element.isF16())
    return NVVM::WGMMATypes::f16;
  return NVVM::WGMMATypes::e4m3;
}

/// The LLVM struct of `count` f32 that wgmma accumulators travel in.
LLVM::LLVMStructType accumulatorStruct(MLIRContext *ctx, int64_t count) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(count, Float32Type::get(ctx)));
}

/// The 32-bit registers of a fragment of `type`: f32 elements as they are,
/// narrower ones packed (two 16-bit or four 8-bit elements to an i32).
VectorType registersOf(VectorType type) {
  if (type.getElementType().isF32())
    return type;
  int64_t perRegister = 32 / type.getElementType().getIntOrFloatBitWidth();
  return VectorType::get({type.getNumElements() / perRegister},
                         IntegerType::get(type.getContext(), 32));
}

/// The 32-bit registers of fragment `vector` (registersOf).
Value fragmentRegisters(OpBuilder &b, Location loc, Value vector) {
  auto type = cast<VectorType>(vector.getType());
  if (type.getElementType().isF32())
    return vector;
  return LLVM::BitcastOp::create(b, loc, registersOf(type), vector);
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
    VectorType registersType = registersOf(vectorType);
    int64_t count = registersType.getNumElements();
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
    int64_t bits = bType.getElementType().getIntOrFloatBitWidth();
    if (bStrides[1] != tcgen05::atomElements(bits) || bStrides[2] != 1)
      return rewriter.notifyMatchFailure(op, "b rows are not 128 bytes apart");
    bool bMnMajor = op.getBMajor() == OperandMajor::mn;
    NVVM::WGMMATypes type = wgmmaType(bType.getElementType());
    int64_t kStep = wgmma::stepElements(bits);
    int64_t n = op.getN(), steps = op.getK() / kStep;
    int64_t registers = n / 2;
    Type i64 = rewriter.getI64Type();
    const LLVMTypeConverter &converter = *getTypeConverter();
    Value bAddress =
        tileAddress(rewriter, loc, converter, bType, adaptor.getB());
    auto aTile = dyn_cast<MemRefType>(op.getA().getType());
    Value aAddress =
        aTile ? tileAddress(rewriter, loc, converter, aTile, adaptor.getA())
              : Value();
    // A register operand as 32-bit registers, four per K step.
    Value aRegisters;
    if (!aTile)
      aRegisters = fragmentRegisters(rewriter, loc, adaptor.getA());

    auto structType = accumulatorStruct(ctx, registers);
    Value acc = adaptor.getAcc()
                    ? packStruct(rewriter, loc, adaptor.getAcc())
                    : LLVM::UndefOp::create(rewriter, loc, structType);
    // The accumulator registers were last written by ordinary instructions.
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    auto shape = NVVM::MMAShapeAttr::get(ctx, WgmmaOp::kM, n, kStep);
    auto elementType = NVVM::WGMMATypesAttr::get(ctx, type);
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
      // 8-bit types have no transpose operand (their B is K-major).
      std::string typeName = NVVM::stringifyWGMMATypes(type).str();
      std::string transposeB = bits == 16 ? (bMnMajor ? ", 1" : ", 0") : "";
      std::string ptx =
          "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
          std::to_string(2 * registers + 5) +
          ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k" +
          std::to_string(kStep) + ".f32." + typeName + "." + typeName + " " +
          operandList(0, registers) + ", " + operandList(2 * registers, 4) +
          ", $" + std::to_string(2 * registers + 4) + ", p, 1, 1" + transposeB +
          ";\n}\n";
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

/// Per 32 columns and row of the thread: its four column pairs rounded to
/// e4m3 (each an i16, the lower column in the low byte); the pairs of the
/// first and third 8 columns (L) and of the second and fourth (H) as two
/// registers. The operand's registers of the row take columns 4q .. 4q + 3
/// from L or H of quad threads 2q and 2q + 1 (mod 4): threads q < 2 want
/// L, the others H; each source sends the half its first reader wants on
/// the first shuffle, where readers q < 2 read thread 2q first and the
/// others thread 2q + 1 - 4 (so that no source is asked for both halves on
/// one shuffle), and the other half on the second.
struct WgmmaQuantizeLowering : ConvertOpToLLVMPattern<WgmmaQuantizeOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WgmmaQuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    Type i16 = b.getI16Type(), i32 = b.getI32Type();
    auto c32 = [&](int64_t v) { return i32Constant(b, loc, v); };
    Value source = adaptor.getSource();
    int64_t count = op.getSource().getType().getNumElements();

    Value lane = NVVM::LaneIdOp::create(b, i32);
    Value quad = LLVM::AndOp::create(b, lane, c32(3));
    Value quadBase = LLVM::AndOp::create(b, lane, c32(~3));
    Value even =
        LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::eq,
                             LLVM::AndOp::create(b, quad, c32(1)), c32(0));
    Value low = LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::ult, quad, c32(2));
    // Sources in the quad: 2q then 2q + 1 for q < 2, 2q - 3 then 2q - 4
    // for the others.
    Value twice = LLVM::ShlOp::create(b, quad, c32(1));
    auto sourceLane = [&](int64_t lowOffset, int64_t highOffset) -> Value {
      Value offset =
          LLVM::SelectOp::create(b, low, c32(lowOffset), c32(highOffset));
      return LLVM::OrOp::create(b, quadBase,
                                LLVM::AddOp::create(b, twice, offset));
    };
    Value first = sourceLane(0, -3), second = sourceLane(1, -4);
    Value allLanes = c32(-1), clamp = c32(0x1f);
    auto shuffle = [&](Value value, Value from) -> Value {
      return NVVM::ShflOp::create(b, i32, allLanes, value, from, clamp,
                                  NVVM::ShflKind::idx,
                                  /*return_value_and_is_valid=*/nullptr);
    };
    auto element = [&](int64_t i) -> Value {
      return LLVM::ExtractElementOp::create(b, source, c32(i));
    };
    // Columns (i, i + 1) rounded, the first in the low byte, as an i32.
    auto pair = [&](int64_t i) -> Value {
      Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
          b, i16, element(i + 1), element(i), NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false,
          b.getType<Float8E4M3FNType>());
      return LLVM::ZExtOp::create(b, i32, packed);
    };
    auto join = [&](Value lowHalf, Value highHalf) -> Value {
      return LLVM::OrOp::create(b, lowHalf,
                                LLVM::ShlOp::create(b, highHalf, c32(16)));
    };
    Value mask16 = c32(0xffff),
          highMask = c32(static_cast<int32_t>(0xffff0000));
    SmallVector<Value> registers(count / 4);
    for (int64_t step = 0; step < count / 16; ++step)
      for (int64_t row = 0; row < 2; ++row) {
        // Accumulator elements 16 step + 4 j + 2 row (+ 1): column pair j.
        Value pairs[4];
        for (int64_t j = 0; j < 4; ++j)
          pairs[j] = pair(16 * step + 4 * j + 2 * row);
        Value lowPairs = join(pairs[0], pairs[2]);
        Value highPairs = join(pairs[1], pairs[3]);
        Value got1 = shuffle(
            LLVM::SelectOp::create(b, even, lowPairs, highPairs), first);
        Value got2 = shuffle(
            LLVM::SelectOp::create(b, even, highPairs, lowPairs), second);
        // The lower columns come from the thread read first where q < 2.
        Value a = LLVM::SelectOp::create(b, low, got1, got2);
        Value c = LLVM::SelectOp::create(b, low, got2, got1);
        registers[4 * step + row] =
            LLVM::OrOp::create(b, LLVM::AndOp::create(b, a, mask16),
                               LLVM::ShlOp::create(b, c, c32(16)));
        registers[4 * step + 2 + row] =
            LLVM::OrOp::create(b, LLVM::LShrOp::create(b, a, c32(16)),
                               LLVM::AndOp::create(b, c, highMask));
      }
    auto registersType = VectorType::get({count / 4}, i32);
    Value result = LLVM::UndefOp::create(b, registersType);
    for (auto [i, value] : llvm::enumerate(registers))
      result = LLVM::InsertElementOp::create(b, result, value,
                                             c32(static_cast<int64_t>(i)));
    rewriter.replaceOp(
        op, LLVM::BitcastOp::create(
                b, getTypeConverter()->convertType(op.getResult().getType()),
                result));
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
  patterns.add<WgmmaLowering, WgmmaQuantizeLowering, WgmmaWaitLowering>(
      converter);
}
