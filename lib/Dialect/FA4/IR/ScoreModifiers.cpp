//===- ScoreModifiers.cpp - the score and mask regions' contract ----------===//

#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fa4;

bool fa4::isReadableCapture(MemRefType type) {
  return type.getLayout().isIdentity() && !type.getMemorySpace();
}

/// Scalars the kernels compute with: integers, index, and 16/32-bit floats
/// (what fa4-sim evaluates exactly as the GPU does).
static bool isModifierScalar(Type type) {
  return isa<IntegerType, IndexType>(type) || type.isF32() || type.isF16() ||
         type.isBF16();
}

static LogicalResult verifyRegion(Operation *op, Region &region,
                                  StringRef what, Type yields,
                                  TypeRange captures) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op->emitOpError() << "the " << what << " region must have one block";
  Block &body = region.front();
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
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return op->emitOpError() << "the " << what
                             << " region must end in fa4.yield";
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
    if (isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      if (!isCapture(load.getMemRef()))
        return load.emitOpError()
               << "in a " << what << " region must read a captured operand";
      continue;
    }
    if (auto dim = dyn_cast<memref::DimOp>(inner)) {
      if (!isCapture(dim.getSource()) || !dim.getConstantIndex())
        return dim.emitOpError() << "in a " << what
                                 << " region must take a constant dimension "
                                    "of a captured operand";
      continue;
    }
    return inner.emitOpError()
           << "is not allowed in a " << what
           << " region: only arith and math ops, and memref.load and "
              "memref.dim of the captured operands";
  }
  return success();
}

LogicalResult fa4::verifyScoreModifiers(Operation *op, Region &score,
                                        Region &mask, TypeRange captures) {
  for (auto [index, type] : llvm::enumerate(captures)) {
    auto memref = cast<MemRefType>(type);
    if (!isReadableCapture(memref))
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
