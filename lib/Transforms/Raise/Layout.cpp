//===- Layout.cpp - operands to fa4's [B, S, H, D] and back ---------------===//

#include "Layout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::fa4::raise;

namespace {
/// The dimensions of an operand in fa4's order: batch, sequence, heads,
/// inner; and how many are batch and how many heads.
struct Fa4Order {
  SmallVector<int64_t> order;
  size_t batch = 0, heads = 0;

  bool isIdentity() const {
    return llvm::equal(order, llvm::seq<int64_t>(0, order.size()));
  }
};

Fa4Order fa4Order(ArrayRef<Role> roles, ArrayRef<unsigned> batchKeys,
                  Role sequence, Role inner) {
  SmallVector<int64_t> batch, heads;
  std::optional<int64_t> seq, dim;
  for (auto [d, role] : llvm::enumerate(roles)) {
    if (role == Role::Batch)
      batch.push_back(d);
    else if (role == Role::Head)
      heads.insert(heads.begin(), d);
    else if (role == Role::Group)
      heads.push_back(d);
    else if (role == sequence)
      seq = d;
    else if (role == inner)
      dim = d;
  }
  // Batch dimensions collapse in the scores' order, in every operand.
  llvm::sort(batch, [&](int64_t x, int64_t y) {
    return batchKeys[x] < batchKeys[y];
  });
  Fa4Order result;
  result.batch = batch.size();
  result.heads = heads.size();
  result.order.append(batch);
  result.order.push_back(*seq);
  result.order.append(heads);
  result.order.push_back(*dim);
  return result;
}

/// Consecutive reassociation groups of `counts` dimensions each.
SmallVector<ReassociationIndices> consecutiveGroups(ArrayRef<size_t> counts) {
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (size_t count : counts) {
    ReassociationIndices &indices = groups.emplace_back();
    for (size_t i = 0; i < count; ++i)
      indices.push_back(next++);
  }
  return groups;
}

/// `value` with result dimension i its dimension `permutation[i]`.
Value transpose(RewriterBase &rewriter, Location loc, Value value,
                ArrayRef<int64_t> permutation) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : permutation)
    sizes.push_back(tensor::getMixedSize(rewriter, loc, value, d));
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes, element);
  return linalg::TransposeOp::create(rewriter, loc, value, init, permutation)
      ->getResult(0);
}
} // namespace

Value mlir::fa4::raise::toFa4Layout(RewriterBase &rewriter, Location loc,
                                    Value source, ArrayRef<Role> roles,
                                    ArrayRef<unsigned> batchKeys,
                                    Role sequence, Role inner) {
  Fa4Order order = fa4Order(roles, batchKeys, sequence, inner);
  Value value = order.isIdentity()
                    ? source
                    : transpose(rewriter, loc, source, order.order);
  // Collapse the batch and head groups; an empty one becomes a unit
  // dimension next to the sequence.
  bool unitBatch = order.batch == 0, unitHeads = order.heads == 0;
  if (unitBatch || unitHeads) {
    // Expand the sequence dimension into [1?, S, 1?].
    auto valueType = cast<RankedTensorType>(value.getType());
    SmallVector<ReassociationIndices> expand;
    SmallVector<int64_t> shape;
    SmallVector<OpFoldResult> outputShape;
    int64_t result = 0;
    auto unit = [&](ReassociationIndices &indices) {
      indices.push_back(result++);
      shape.push_back(1);
      outputShape.push_back(rewriter.getIndexAttr(1));
    };
    for (unsigned d = 0; d < valueType.getRank(); ++d) {
      ReassociationIndices &indices = expand.emplace_back();
      bool isSeq = d == order.batch;
      if (isSeq && unitBatch)
        unit(indices);
      indices.push_back(result++);
      shape.push_back(valueType.getDimSize(d));
      outputShape.push_back(tensor::getMixedSize(rewriter, loc, value, d));
      if (isSeq && unitHeads)
        unit(indices);
    }
    value = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(shape, valueType.getElementType()), value,
        expand, outputShape);
  }
  if (cast<RankedTensorType>(value.getType()).getRank() != 4)
    value = tensor::CollapseShapeOp::create(
        rewriter, loc, value,
        consecutiveGroups({unitBatch ? 1 : order.batch, 1,
                           unitHeads ? 1 : order.heads, 1}));
  return value;
}

Value mlir::fa4::raise::fromFa4Layout(RewriterBase &rewriter, Location loc,
                                      Value result, ArrayRef<Role> roles,
                                      ArrayRef<unsigned> batchKeys,
                                      ArrayRef<OpFoldResult> sizes,
                                      RankedTensorType outputType) {
  Fa4Order order = fa4Order(roles, batchKeys, Role::Query, Role::ValueDim);
  // The output's sizes (`sizes`, per output dimension), in fa4's order.
  SmallVector<OpFoldResult> outputShape;
  SmallVector<int64_t> shape;
  for (int64_t d : order.order) {
    outputShape.push_back(sizes[d]);
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    shape.push_back(size ? *size : ShapedType::kDynamic);
  }
  Type element = outputType.getElementType();
  Value value = result;
  // Drop the unit dimensions toFa4Layout added, then split the groups.
  if (order.batch == 0 || order.heads == 0) {
    // [1, S, 1, D] -> [S, D]; [1, S, H, D] -> [S, H, D]; [B, S, 1, D] ->
    // [B, S, D].
    SmallVector<size_t> counts = {3, 1};
    if (order.batch != 0 || order.heads != 0)
      counts = {order.batch == 0 ? 2u : 1u, order.heads == 0 ? 2u : 1u, 1};
    value = tensor::CollapseShapeOp::create(rewriter, loc, value,
                                            consecutiveGroups(counts));
  }
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType.getRank() != static_cast<int64_t>(order.order.size())) {
    SmallVector<size_t> counts;
    if (order.batch)
      counts.push_back(order.batch);
    counts.push_back(1);
    if (order.heads)
      counts.push_back(order.heads);
    counts.push_back(1);
    SmallVector<ReassociationIndices> split = consecutiveGroups(counts);
    // A collapsed dimension whose parts are all static is static: say so
    // first (a tensor.cast), as tensor.expand_shape requires.
    SmallVector<int64_t> collapsed(valueType.getShape());
    for (auto [i, indices] : llvm::enumerate(split)) {
      int64_t product = 1;
      for (int64_t index : indices)
        product = ShapedType::isDynamic(shape[index]) || product < 0
                      ? ShapedType::kDynamic
                      : product * shape[index];
      if (!ShapedType::isDynamic(product))
        collapsed[i] = product;
    }
    auto collapsedType = RankedTensorType::get(collapsed, element);
    if (collapsedType != valueType)
      value = tensor::CastOp::create(rewriter, loc, collapsedType, value);
    value = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, element), value, split,
        outputShape);
  }
  if (!order.isIdentity()) {
    SmallVector<int64_t> inverse(order.order.size());
    for (auto [position, d] : llvm::enumerate(order.order))
      inverse[d] = position;
    value = transpose(rewriter, loc, value, inverse);
  }
  // The original's type may know more or fewer sizes statically.
  if (value.getType() != outputType)
    value = tensor::CastOp::create(rewriter, loc, outputType, value);
  return value;
}
