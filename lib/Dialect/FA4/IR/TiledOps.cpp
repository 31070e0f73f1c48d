//===- TiledOps.cpp - verifiers of the tiled program ops ------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mlir::fa4;

//===----------------------------------------------------------------------===//
// Tiled program
//===----------------------------------------------------------------------===//

/// A tile's rows hold `heads` heads of each position: the count must divide
/// the rows and the operand's heads.
static LogicalResult verifyRowPacking(Operation *op, int64_t heads,
                                      int64_t rows, int64_t operandHeads) {
  if (heads <= 0 || rows % heads != 0)
    return op->emitOpError() << "packs " << heads << " heads per position, "
                             << "which must divide the tile's " << rows
                             << " rows";
  if (!ShapedType::isDynamic(operandHeads) && operandHeads % heads != 0)
    return op->emitOpError() << "packs " << heads
                             << " heads per position, which must divide the "
                             << operandHeads << " heads of the tensor";
  return success();
}

/// A [B, S, H, D] operand and a [rows, D] tile of the same element type.
static LogicalResult verifyRowTile(Operation *op, MemRefType memref,
                                   RankedTensorType tile, int64_t heads) {
  if (tile.getRank() != 2 || !tile.hasStaticShape())
    return op->emitOpError() << "needs a static 2-D tile, got " << tile;
  if (tile.getElementType() != memref.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType()
                             << " differs from the tensor's "
                             << memref.getElementType();
  if (tile.getDimSize(1) != memref.getDimSize(3))
    return op->emitOpError() << "tile has " << tile.getDimSize(1)
                             << " columns, the tensor's head dim is "
                             << memref.getDimSize(3);
  return verifyRowPacking(op, heads, tile.getDimSize(0), memref.getDimSize(2));
}

/// Per-row values of a tile with `rows` rows: a 1-D tensor<rows x f32>.
static LogicalResult verifyRowVector(Operation *op, StringRef what, Type type,
                                     int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() != 1 || tensor.getDimSize(0) != rows)
    return op->emitOpError() << what << " must be one value per row ("
                             << "tensor<" << rows << "xf32>), got " << type;
  return success();
}

/// A 2-D static tile.
static FailureOr<RankedTensorType> tile2D(Operation *op, StringRef what,
                                          Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() != 2 || !tensor.hasStaticShape())
    return op->emitOpError() << what << " must be a static 2-D tile, got "
                             << type;
  return tensor;
}

LogicalResult TileCoordsOp::verify() {
  if (static_cast<int64_t>(getHeadBlocks()) <= 0 ||
      static_cast<int64_t>(getHeads()) <= 0 ||
      static_cast<int64_t>(getPositions()) <= 0)
    return emitOpError() << "head_blocks, heads and positions must be "
                            "positive";
  return success();
}

MemRefType TileSequenceOp::getViewType(MemRefType tensor, bool lse) {
  // A paged K or V [pages, P, H, D] is read through the page table: its
  // view is the cache itself.
  if (tensor.getRank() == 4)
    return tensor;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(tensor.getStridesAndOffset(strides, offset)))
    return {};
  // A batch of one in front; the sequence dimension (0 of [T, H, D], 1 of
  // [H, T]) becomes the sequence's length, the offset its start.
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, tensor.getShape());
  shape[lse ? 2 : 1] = ShapedType::kDynamic;
  strides.insert(strides.begin(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(tensor.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, tensor.getElementType(), layout,
                         tensor.getMemorySpace());
}

bool TileSequenceOp::isLse(TypeRange tensors, unsigned index) {
  return index == 4 && cast<MemRefType>(tensors[index]).getElementType().isF32();
}

void TileSequenceOp::build(OpBuilder &builder, OperationState &state,
                           Value sequence, Value cuSeqlensQ, Value cuSeqlensK,
                           Value sequsedK, ValueRange tensors) {
  SmallVector<Type> views;
  for (auto [index, tensor] : llvm::enumerate(tensors))
    views.push_back(getViewType(cast<MemRefType>(tensor.getType()),
                                isLse(tensors.getTypes(), index)));
  build(builder, state, views, sequence, cuSeqlensQ, cuSeqlensK, sequsedK,
        tensors);
}

LogicalResult TileSequenceOp::verify() {
  if (getTensors().size() < 4 || getTensors().size() > 6)
    return emitOpError() << "views Q, K, V, O and optionally LSE and the "
                            "positions, got "
                         << getTensors().size() << " tensors";
  if (getViews().size() != getTensors().size())
    return emitOpError() << "has one view per tensor, got "
                         << getViews().size() << " for "
                         << getTensors().size();
  Type queryElement =
      cast<MemRefType>(getTensors()[0].getType()).getElementType();
  bool fp8 = isa<Float8E4M3FNType>(queryElement);
  for (auto [index, tensor, view] :
       llvm::enumerate(getTensors(), getViews())) {
    bool lse = isLse(getTensors().getTypes(), index);
    // The positions come last, after LSE where there is one.
    bool positions = index >= 4 && !lse;
    if (index == 5 && !isLse(getTensors().getTypes(), 4))
      return emitOpError() << "views at most one tensor after LSE (the "
                              "positions)";
    // FP8: O is written in 16 bits.
    bool fp8Output = fp8 && index == 3;
    auto type = cast<MemRefType>(tensor.getType());
    Type element = type.getElementType();
    bool elementOk = lse         ? element.isF32()
                     : positions ? element.isInteger(32)
                     : fp8Output ? element.isF16() || element.isBF16()
                                 : element == queryElement;
    // K and V may be a paged cache, which the sequences share.
    bool pagedOk = (index == 1 || index == 2) && type.getRank() == 4;
    int64_t rank = lse ? 2 : positions ? 1 : 3;
    if ((type.getRank() != rank && !pagedOk) || !elementOk)
      return emitOpError() << "tensor #" << index << " must be "
                           << (lse         ? "[H, Tq] in f32"
                               : positions ? "the positions [Tq] in i32"
                               : fp8Output ? "[T, H, D] in f16 or bf16 (O of "
                                             "FP8 operands)"
                               : index == 1 || index == 2
                                   ? "[T, H, D] or a paged [pages, P, H, D] "
                                     "in Q's element type"
                                   : "[T, H, D] in Q's element type")
                           << ", got " << type;
    MemRefType expected = getViewType(type, lse);
    if (!expected)
      return emitOpError() << "tensor #" << index
                           << " must have a strided layout, got " << type;
    if (view.getType() != expected)
      return emitOpError() << "view #" << index << " must be " << expected
                           << ", got " << view.getType();
  }
  return success();
}

/// A paged KV cache `[pages, P, H, D]`: a static power-of-two page size of
/// at least 8 keys (a TMA box of whole 8-row swizzle patterns) that tiles
/// of `rows` keys fill whole or span whole (0: any).
static LogicalResult verifyPagedSource(Operation *op, MemRefType source,
                                       int64_t rows) {
  int64_t pageSize = source.getDimSize(1);
  if (ShapedType::isDynamic(pageSize) || pageSize < 8 ||
      !llvm::isPowerOf2_64(pageSize))
    return op->emitOpError() << "reads a paged KV cache [pages, P, heads, "
                                "head_dim] whose page size P must be a "
                                "static power of two of at least 8, got "
                             << source;
  if (rows && pageSize % rows != 0 && rows % pageSize != 0)
    return op->emitOpError()
           << "reads tiles of " << rows << " keys, which must fill pages of "
           << pageSize << " keys whole or span whole ones";
  return success();
}

LogicalResult TileLoadOp::verify() {
  if (failed(verifyRowTile(*this, getSource().getType(), getTile().getType(),
                           getHeads())))
    return failure();
  if (getPageTable()) {
    if (getHeads() != 1)
      return emitOpError() << "reads pages of K or V, one head per row; got "
                           << getHeads() << " heads";
    return verifyPagedSource(*this, getSource().getType(),
                             getTile().getType().getDimSize(0));
  }
  return success();
}

LogicalResult TileKeysOp::verify() {
  if (getCuSeqlensK() && !getPageTable())
    return emitOpError() << "counts a packed sequence's keys from "
                            "cu_seqlens_k only in a paged cache (packed K "
                            "and V are counted by fa4.tile.sequence)";
  if (getPageTable())
    return verifyPagedSource(*this, getKey().getType(), 0);
  return success();
}

LogicalResult TileStoreOp::verify() {
  return verifyRowTile(*this, getDest().getType(), getTile().getType(),
                       getHeads());
}

LogicalResult TileMatmulOp::verify() {
  FailureOr<RankedTensorType> a = tile2D(*this, "a", getA().getType());
  FailureOr<RankedTensorType> b = tile2D(*this, "b", getB().getType());
  FailureOr<RankedTensorType> result =
      tile2D(*this, "the result", getResult().getType());
  if (failed(a) || failed(b) || failed(result))
    return failure();
  if (a->getElementType() != b->getElementType())
    return emitOpError() << "operands have different element types, "
                         << a->getElementType() << " and "
                         << b->getElementType();
  int64_t k = a->getDimSize(1);
  int64_t bk = getTransposeB() ? b->getDimSize(1) : b->getDimSize(0);
  int64_t n = getTransposeB() ? b->getDimSize(0) : b->getDimSize(1);
  if (bk != k)
    return emitOpError() << "reduces over " << k << " columns of a but "
                         << bk << (getTransposeB() ? " columns" : " rows")
                         << " of b";
  if (result->getDimSize(0) != a->getDimSize(0) || result->getDimSize(1) != n)
    return emitOpError() << "result must be " << a->getDimSize(0) << "x" << n
                         << ", got " << *result;
  return success();
}

std::pair<int64_t, int64_t> TileMaskOp::getEffectiveWindow() {
  int64_t left = -1, right = -1;
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    left = (*window)[0];
    right = (*window)[1];
  }
  if (getCausal())
    right = 0;
  return {left, right};
}

LogicalResult TileMaskOp::verify() {
  FailureOr<RankedTensorType> scores =
      tile2D(*this, "scores", getScores().getType());
  if (failed(scores))
    return failure();
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    if (window->size() != 2)
      return emitOpError() << "window must be [left, right], got "
                           << window->size() << " bounds";
    for (int side = 0; side < 2; ++side) {
      int64_t bound = (*window)[side];
      if (bound < -1 || bound > kMaxWindowBound)
        return emitOpError()
               << "window " << (side ? "right" : "left")
               << " bound must be -1 (unbounded) or in [0, "
               << kMaxWindowBound << "], got " << bound;
    }
    if (getCausal() && (*window)[1] != 0)
      return emitOpError() << "causal masking requires window right bound 0, "
                              "got "
                           << (*window)[1];
  }
  return verifyRowPacking(*this, getHeads(), scores->getDimSize(0),
                          ShapedType::kDynamic);
}

LogicalResult TileModifyOp::verify() {
  FailureOr<RankedTensorType> scores =
      tile2D(*this, "scores", getScores().getType());
  if (failed(scores))
    return failure();
  double scale = getScale().convertToDouble();
  if (!(std::isfinite(scale) && scale > 0 && scale <= FLT_MAX))
    return emitOpError() << "scale must be positive and finite in f32, got "
                         << scale;
  if (getScoreMod().empty() && getMaskMod().empty())
    return emitOpError() << "needs a score or a mask region";
  if (failed(verifyScoreModifiers(*this, getScoreMod(), getMaskMod(),
                                  getCaptures().getTypes())))
    return failure();
  return verifyRowPacking(*this, getHeads(), scores->getDimSize(0),
                          ShapedType::kDynamic);
}

LogicalResult TileSoftcapOp::verify() {
  if (failed(tile2D(*this, "scores", getScores().getType())))
    return failure();
  double cap = getCap().convertToDouble();
  // The kernel takes the cap as an f32.
  if (!(cap > 0.0) || !(cap <= FLT_MAX))
    return emitOpError() << "cap must be positive and finite as an f32, got "
                         << cap;
  int64_t polynomial = getPolynomial();
  if (polynomial < 0 || polynomial > 16)
    return emitOpError() << "polynomial must be in [0, 16] (scores of every "
                            "16), got "
                         << polynomial;
  int64_t ceiling = getCeiling();
  if (ceiling < 0 || ceiling > limits::kMaxSoftcapCeiling)
    return emitOpError() << "ceiling must be in [0, "
                         << limits::kMaxSoftcapCeiling
                         << "] (log2 units; 0: never), got " << ceiling;
  return success();
}

LogicalResult TileSoftmaxOp::verify() {
  FailureOr<RankedTensorType> scores =
      tile2D(*this, "scores", getScores().getType());
  if (failed(scores))
    return failure();
  if (getProbabilities().getType().getShape() != scores->getShape())
    return emitOpError() << "probabilities must have the shape of the "
                            "scores, got "
                         << getProbabilities().getType();
  if (failed(verifyRowVector(*this, "max", getMax().getType(),
                             scores->getDimSize(0))))
    return failure();
  if (!(getScaleLog2().convertToDouble() > 0.0) ||
      !std::isfinite(getScaleLog2().convertToDouble()))
    return emitOpError() << "scale_log2 must be positive and finite";
  // The kernel takes it as an f32.
  if (getScaleLog2().convertToDouble() > FLT_MAX)
    return emitOpError() << "scale_log2 " << getScaleLog2().convertToDouble()
                         << " exceeds the largest f32 (" << FLT_MAX << ")";
  // I64Attr reads back unsigned; negative values must stay negative here.
  int64_t threshold = static_cast<int64_t>(getThreshold());
  int64_t emulated = static_cast<int64_t>(getEmulated());
  if (threshold < 0)
    return emitOpError() << "threshold must be non-negative, got "
                         << threshold;
  if (emulated < 0 || emulated > 16)
    return emitOpError() << "emulates " << emulated
                         << " of 16 exponentials; expected 0 to 16";
  // Probabilities reach 2^threshold and are rounded to their type: 2^15 is
  // the largest power of two an f16 holds.
  if (getProbabilities().getType().getElementType().isF16() && threshold > 15)
    return emitOpError() << "threshold " << threshold
                         << " lets f16 probabilities reach 2^" << threshold
                         << ", past the largest f16 (65504); at most 15";
  if (isa<Float8E4M3FNType>(getProbabilities().getType().getElementType()) &&
      threshold > limits::kMaxFp8RescaleThreshold)
    return emitOpError() << "threshold " << threshold
                         << " lets e4m3 probabilities reach 2^" << threshold
                         << ", past the largest e4m3 (448); at most "
                         << limits::kMaxFp8RescaleThreshold;
  return success();
}

LogicalResult TileRescaleOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  return verifyRowVector(*this, "factors", getFactors().getType(),
                         tile->getDimSize(0));
}

LogicalResult TileSinkOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  int64_t rows = tile->getDimSize(0);
  if (failed(verifyRowVector(*this, "max", getMax().getType(), rows)))
    return failure();
  return verifyRowPacking(*this, getHeads(), rows,
                          getSinks().getType().getDimSize(0));
}

LogicalResult TileRopeOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  // Q tiles are 16-bit, O's accumulator f32; FP8 queries are not rotated.
  unsigned bits = tile->getElementTypeBitWidth();
  if (getInverse() ? bits != 32 : bits != 16)
    return emitOpError() << (getInverse() ? "rotates O's f32 accumulator"
                                          : "rotates a 16-bit Q tile")
                         << ", got " << getTile().getType();
  int64_t rotated = getRotatedColumns(), start = getStart();
  if (ShapedType::isDynamic(rotated) || rotated <= 0 || rotated % 8 != 0 ||
      start < 0 || start % 8 != 0 || start + rotated > tile->getDimSize(1))
    return emitOpError() << "rotates columns [start, start + R) of the tile "
                            "(R the table's dimension 1): R and start must "
                            "be multiples of 8 with R > 0 and start + R <= "
                         << tile->getDimSize(1) << ", got start = " << start
                         << ", R = " << rotated;
  return verifyRowPacking(*this, getHeads(), tile->getDimSize(0),
                          ShapedType::kDynamic);
}

LogicalResult TileNormalizeOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  if (getResult().getType().getShape() != tile->getShape())
    return emitOpError() << "result must have the shape of the tile, got "
                         << getResult().getType();
  if (getResult().getType().getElementTypeBitWidth() != 16)
    return emitOpError() << "writes O in 16 bits (f16 or bf16), got "
                         << getResult().getType();
  return verifyRowVector(*this, "sums", getSums().getType(),
                         tile->getDimSize(0));
}

LogicalResult TileStoreLseOp::verify() {
  auto max = getMax().getType();
  if (max.getRank() != 1 || !max.hasStaticShape())
    return emitOpError() << "max must be one value per row, got " << max;
  return verifyRowPacking(*this, getHeads(), max.getDimSize(0),
                          getDest().getType().getDimSize(1));
}
