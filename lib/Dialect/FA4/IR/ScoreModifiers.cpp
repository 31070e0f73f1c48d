//===- ScoreModifiers.cpp - the score and mask regions' contract ----------===//

#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fa4;

bool fa4::isReadableCapture(ShapedType type) {
  auto memref = dyn_cast<MemRefType>(type);
  return !memref ||
         (memref.getLayout().isIdentity() && !memref.getMemorySpace());
}

/// Scalars the kernels compute with: integers, index, and 16/32-bit floats
/// (what fa4-sim evaluates exactly as the GPU does).
static bool isModifierScalar(Type type) {
  return isa<IntegerType, IndexType>(type) || type.isF32() || type.isF16() ||
         type.isBF16();
}

bool fa4::isModifierMathOp(Operation *op) {
  return isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::FloorOp,
             math::RoundOp, math::ExpOp, math::Exp2Op, math::ExpM1Op,
             math::LogOp, math::Log2Op, math::Log10Op, math::Log1pOp,
             math::SqrtOp, math::RsqrtOp, math::TanhOp, math::SinOp,
             math::CosOp, math::ErfOp, math::CopySignOp, math::PowFOp,
             math::FmaOp>(op);
}

static LogicalResult verifyRegion(Operation *op, Region &region,
                                  StringRef what, Type yields,
                                  TypeRange captures) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op->emitOpError() << "the " << what << " region must have one block";
  Block &body = region.front();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return op->emitOpError() << "the " << what
                             << " region must end in fa4.yield";
  Builder b(op->getContext());
  SmallVector<Type> expected = {b.getF32Type(), b.getIndexType(),
                                b.getIndexType(), b.getIndexType(),
                                b.getIndexType()};
  expected.append(captures.begin(), captures.end());
  if (body.getArgumentTypes() != TypeRange(expected)) {
    std::string types;
    llvm::raw_string_ostream os(types);
    os << "(";
    llvm::interleaveComma(expected, os);
    os << "), got (";
    llvm::interleaveComma(body.getArgumentTypes(), os);
    return op->emitOpError()
           << "the " << what
           << " region must take (f32 score, index batch, index head, index "
              "query, index key) and one argument per capture, "
           << types << ")";
  }
  auto yield = cast<YieldOp>(body.back());
  if (yield.getValue().getType() != yields)
    return yield.emitOpError() << "of the " << what << " region must yield "
                               << yields << ", got "
                               << yield.getValue().getType();
  auto isCapture = [&](Value v) {
    auto argument = dyn_cast<BlockArgument>(v);
    return argument && argument.getOwner() == &body &&
           argument.getArgNumber() >= kModifierCoordinates;
  };
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumRegions() != 0)
      return inner.emitOpError()
             << "is not allowed in a " << what
             << " region: it has regions (use arith.select)";
    for (Type type : inner.getResultTypes())
      if (!isModifierScalar(type))
        return inner.emitOpError()
               << "in a " << what << " region must compute integers, index, "
               << "f16, bf16 or f32 scalars, got " << type;
    if (isa<arith::ArithDialect>(inner.getDialect()) || isModifierMathOp(&inner))
      continue;
    // Reads of the captures: memref.load / memref.dim, or at the tensor
    // level tensor.extract / tensor.dim (bufferization turns them into the
    // former).
    Value read;
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      read = load.getMemRef();
    else if (auto extract = dyn_cast<tensor::ExtractOp>(inner))
      read = extract.getTensor();
    if (read) {
      if (!isCapture(read))
        return inner.emitOpError()
               << "in a " << what << " region must read a captured operand";
      continue;
    }
    std::optional<int64_t> index;
    Value source;
    if (auto dim = dyn_cast<memref::DimOp>(inner)) {
      index = dim.getConstantIndex();
      source = dim.getSource();
    } else if (auto dim = dyn_cast<tensor::DimOp>(inner)) {
      index = dim.getConstantIndex();
      source = dim.getSource();
    }
    if (source) {
      if (!isCapture(source) || !index || *index < 0 ||
          *index >= cast<ShapedType>(source.getType()).getRank())
        return inner.emitOpError() << "in a " << what
                                   << " region must take a constant dimension "
                                      "of a captured operand, within its rank";
      continue;
    }
    return inner.emitOpError()
           << "is not allowed in a " << what
           << " region: only arith ops, the math ops the kernels lower "
              "(absf, absi, ceil, floor, round, exp, exp2, expm1, log, log2, "
              "log10, log1p, sqrt, rsqrt, tanh, sin, cos, erf, copysign, "
              "powf, fma), and memref.load and memref.dim (tensor.extract and "
              "tensor.dim on tensors) of the captured operands";
  }
  return success();
}

LogicalResult fa4::verifyScoreModifiers(Operation *op, Region &score,
                                        Region &mask, TypeRange captures) {
  for (auto [index, type] : llvm::enumerate(captures)) {
    if (!isReadableCapture(cast<ShapedType>(type)))
      return op->emitOpError()
             << "capture #" << index
             << " must be a row-major memref in global memory (identity "
                "layout, no memory space), got "
             << type;
  }
  if (!captures.empty() && score.empty() && mask.empty())
    return op->emitOpError() << "has captured operands but no score or mask "
                                "region to read them";
  Builder b(op->getContext());
  if (failed(verifyRegion(op, score, "score", b.getF32Type(), captures)) ||
      failed(verifyRegion(op, mask, "mask", b.getI1Type(), captures)))
    return failure();
  return success();
}
