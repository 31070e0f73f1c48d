//===- ScoreRegions.cpp - the score and mask regions in the score stage ---===//
//
// The stage that follows another with the tiled program's fa4.tile.modify:
// per score element, its coordinates (batch, head, query, key) and the
// scaled score are the regions' block arguments, the regions' ops are
// cloned in place, and loads of the captured tensors become global loads.
// The regions are scalar; NVPTX has scalar registers only, so nothing is
// lost by cloning them once per element.
//
//===----------------------------------------------------------------------===//

#include "ScoreStage.h"

#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
class ModifierStage final : public ScoreStage {
public:
  ModifierStage(KernelBuilder &kernel, std::unique_ptr<ScoreStage> base)
      : ScoreStage(kernel), base(std::move(base)),
        modifier(kernel.getShape().modifier) {}

  KvBlocks tileBlocks(const Tile &tile) override {
    return base->tileBlocks(tile);
  }
  RowKeys rowKeys(const Tile &tile, Value position) override {
    return base->rowKeys(tile, position);
  }
  VisibleKeys visibleKeys(const RowKeys &row, Value firstKey) override {
    return base->visibleKeys(row, firstKey);
  }
  Value maskScores(Value scores, Value columns, const VisibleKeys &visible,
                   Value masked) override {
    return base->maskScores(scores, columns, visible, masked);
  }
  Value blockNeedsMask(const RowKeys &first, const RowKeys &last,
                       Value block) override {
    return base->blockNeedsMask(first, last, block);
  }
  std::pair<Value, Value> unmaskedBlocks(const RowKeys &first,
                                         const RowKeys &last,
                                         const KvBlocks &blocks) override {
    return base->unmaskedBlocks(first, last, blocks);
  }
  bool masksLeadingBlocks() const override {
    return base->masksLeadingBlocks();
  }

  /// A score region yields scores in the attention's units: the factor is
  /// log2(e). A mask alone keeps the base stage's units.
  Value outerScale(Value descale) override {
    return hasScore() ? f32(static_cast<float>(M_LOG2E))
                      : base->outerScale(descale);
  }

  /// A mask only sets scores to -inf; a score region may yield any score.
  Ceiling ceiling() override {
    return hasScore() ? Ceiling() : base->ceiling();
  }

  Value transform(Value scores, FragmentCoordsFn coordsFn,
                  Value descale) override;

private:
  bool hasScore() { return !modifier.getScoreMod().empty(); }
  bool hasMask() { return !modifier.getMaskMod().empty(); }

  /// Loads already cloned for this fragment, by capture and indices: the
  /// elements of a row read the same slope, say, and a global load is not
  /// shared by CSE.
  using LoadKey = std::pair<unsigned, std::vector<void *>>;
  using Loads = std::map<LoadKey, Value>;

  /// Clones the body of `region` with its coordinate arguments bound to
  /// `arguments`; returns the value it yields.
  Value inlineRegion(Region &region, ArrayRef<Value> arguments, Loads &loads);

  std::unique_ptr<ScoreStage> base;
  TileModifyOp modifier;
};
} // namespace

Value ModifierStage::inlineRegion(Region &region, ArrayRef<Value> arguments,
                                  Loads &loads) {
  Block &body = region.front();
  IRMapping mapping;
  for (unsigned i = 0; i < kModifierCoordinates; ++i)
    mapping.map(body.getArgument(i), arguments[i]);
  auto captureOf = [&](Value memref) {
    return cast<BlockArgument>(memref).getArgNumber() - kModifierCoordinates;
  };
  for (Operation &op : body.without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      unsigned capture = captureOf(load.getMemRef());
      SmallVector<Value> indices;
      LoadKey key{capture, {}};
      for (Value index : load.getIndices()) {
        indices.push_back(mapping.lookup(index));
        key.second.push_back(indices.back().getAsOpaquePointer());
      }
      Value &loaded = loads[key];
      if (!loaded)
        loaded = kernel.loadCapture(capture, indices);
      mapping.map(load.getResult(), loaded);
      continue;
    }
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      mapping.map(dim.getResult(),
                  kernel.captureSize(captureOf(dim.getSource()),
                                     *dim.getConstantIndex()));
      continue;
    }
    b.clone(op, mapping);
  }
  return mapping.lookup(cast<YieldOp>(body.getTerminator()).getValue());
}

Value ModifierStage::transform(Value scores, FragmentCoordsFn coordsFn,
                               Value descale) {
  Value capped = base->transform(scores, coordsFn, descale);
  FragmentCoords at = coordsFn();
  Region &score = modifier.getScoreMod(), &mask = modifier.getMaskMod();
  // The regions take scores in the attention's units: the base stage's
  // log2 units times ln 2.
  bool scaled = hasScore() ||
                (hasMask() &&
                 !mask.front().getArgument(kModifierScore).use_empty());
  Value unit;
  if (scaled)
    unit = arith::MulFOp::create(b, base->outerScale(descale),
                                 f32(static_cast<float>(M_LN2)));
  // The regions see only coordinates inside the tensors: rows past Sq and
  // keys past Skv (whose results are dropped or masked) are clamped to the
  // last one.
  //
  // The coordinates (rows, heads, batch, the first key) are opaque copies
  // made here, in the KV loop: a region computing key - query (ALiBi) or
  // head * stride + key would otherwise be reassociated into a
  // loop-invariant part per element (query or head with the element's
  // constant column) and hoisted out of the loop: one register per element
  // for the whole loop.
  SmallVector<Value, 2> positions, heads;
  Value lastRow = arith::SubIOp::create(b, at.seqQ, idx(1));
  for (Value position : at.positions)
    positions.push_back(
        opaque(arith::MinSIOp::create(b, position, lastRow)));
  for (Value head : at.heads)
    heads.push_back(opaque(head));
  Value batch = opaque(at.batch);
  Value firstKey = opaque(at.firstKey);
  // Likewise the last key: min(key + c, last) becomes min(key, last - c)
  // + c, an invariant per element.
  Value lastKey;
  if (!at.keysInRange)
    lastKey = opaque(arith::SubIOp::create(b, at.seqKv, idx(1)));
  Value negInf = f32(-std::numeric_limits<float>::infinity());

  Loads loads;
  Value result = capped;
  int64_t count = cast<VectorType>(capped.getType()).getNumElements();
  for (int64_t e = 0; e < count; ++e) {
    Value element = vector::ExtractOp::create(b, capped, ArrayRef<int64_t>{e});
    int64_t row = at.rowOf.empty() ? 0 : at.rowOf[e];
    Value key = add(firstKey, at.columns[e]);
    if (lastKey)
      key = arith::MinSIOp::create(b, key, lastKey);
    Value argument = scaled ? arith::MulFOp::create(b, element, unit) : element;
    SmallVector<Value> arguments = {argument, batch, heads[row],
                                    positions[row], key};
    Value value = hasScore() ? inlineRegion(score, arguments, loads) : element;
    if (hasMask())
      value = arith::SelectOp::create(b, inlineRegion(mask, arguments, loads),
                                      value, negInf);
    result = vector::InsertOp::create(b, value, result, ArrayRef<int64_t>{e});
  }
  return result;
}

std::unique_ptr<ScoreStage>
specialize::createModifierStage(KernelBuilder &kernel,
                                std::unique_ptr<ScoreStage> base) {
  return std::make_unique<ModifierStage>(kernel, std::move(base));
}
