//===- Modifiers.cpp - the score and mask regions on the host -------------===//

#include "Modifiers.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

std::optional<Val>
sim::evaluateModifier(Region &region, float score, const ElementCoords &at,
                      ArrayRef<const GlobalTensor *> captures,
                      std::string &error) {
  Block &body = region.front();
  llvm::DenseMap<Value, Val> values;
  auto integer = [](int64_t v) {
    Val out;
    out.ints = {v};
    return out;
  };
  values[body.getArgument(kModifierScore)].floats = {score};
  values[body.getArgument(kModifierBatch)] = integer(at.batch);
  values[body.getArgument(kModifierHead)] = integer(at.head);
  values[body.getArgument(kModifierQuery)] = integer(at.query);
  values[body.getArgument(kModifierKey)] = integer(at.key);
  auto captureOf = [&](Value memref) -> const GlobalTensor & {
    return *captures[cast<BlockArgument>(memref).getArgNumber() -
                     kModifierCoordinates];
  };
  for (Operation &op : body.without_terminator()) {
    Val out;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      const GlobalTensor &tensor = captureOf(load.getMemRef());
      int64_t offset = 0;
      for (auto [dim, index] : llvm::enumerate(load.getIndices())) {
        int64_t i = values[index].ints[0];
        if (i < 0 || i >= tensor.shape[dim]) {
          error = llvm::formatv("the reference's region reads '{0}' at index "
                                "{1} of dimension {2} (size {3})",
                                tensor.name, i, dim, tensor.shape[dim]);
          return std::nullopt;
        }
        offset = offset * tensor.shape[dim] + i;
      }
      float element = tensor.data[offset];
      if (isa<FloatType>(tensor.element))
        out.floats = {element};
      else
        out.ints = {static_cast<int64_t>(element)};
    } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      out = integer(captureOf(dim.getSource()).shape[*dim.getConstantIndex()]);
    } else {
      SmallVector<const Val *, 3> in;
      for (Value operand : op.getOperands())
        in.push_back(&values[operand]);
      if (!evaluate(&op, in, out, error)) {
        std::string name = op.getName().getStringRef().str();
        error = "the reference cannot evaluate '" + name + "': " + error;
        return std::nullopt;
      }
    }
    values[op.getResult(0)] = std::move(out);
  }
  return values[cast<YieldOp>(body.getTerminator()).getValue()];
}
