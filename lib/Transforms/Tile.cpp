//===- Tile.cpp - the tiled program of an attention -----------------------===//
//
// Turns every planned fa4.attention into a kernel whose body is one
// sequential program over whole tiles (level 3): for each work tile in the
// scheduler's order and each of its Q tiles, the loop over KV blocks with
// loads, the two matmuls, masking, the online softmax and the rescale, then
// normalization and the stores. An fa4.launch of the kernel replaces the op.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"
#include "fa4/Transforms/Planning.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4TILE
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Builds the tiled program of one attention op into `kernel`'s body.
class TiledProgramBuilder {
public:
  TiledProgramBuilder(ImplicitLocOpBuilder &b, AttentionOp op, PlanAttr plan)
      : b(b), op(op), plan(plan) {}

  void build(gpu::GPUFuncOp kernel);

private:
  /// The program over the work tiles of a batch of Q, K, V, O (and LSE),
  /// at the insertion point; a KV cache's keys per batch (`used`) and page
  /// table (`pages`) where given, and for packed sequences over a paged
  /// cache the table that counts their keys (`cuSeqlensK`).
  void buildTiles(Value query, Value key, Value value, Value output, Value lse,
                  Value sinks, ValueRange descales, ValueRange rope,
                  ValueRange captures, Value used = Value(),
                  Value pages = Value(), Value cuSeqlensK = Value());

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, idx(y)); }
  Value ceilDiv(Value x, int64_t y) {
    return arith::DivUIOp::create(b, add(x, y - 1), idx(y));
  }
  /// Keys query `position` may see: Skv, or when causal (bottom-right) the
  /// keys up to position + Skv - Sq.
  Value keyLimit(Value position, Value seqQ, Value seqKv);
  /// The op's window as fa4.tile.mask takes it: bounds no 32-bit sequence
  /// reaches are unbounded (-1); null when it masks nothing beyond causal.
  DenseI64ArrayAttr maskWindow();
  RankedTensorType tile(int64_t rows, int64_t columns, Type element) {
    return RankedTensorType::get({rows, columns}, element);
  }
  Value splat(RankedTensorType type, float value) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
  }

  ImplicitLocOpBuilder &b;
  AttentionOp op;
  PlanAttr plan;
};

Value TiledProgramBuilder::keyLimit(Value position, Value seqQ, Value seqKv) {
  if (!op.getCausal())
    return seqKv;
  Value limit = arith::SubIOp::create(b, add(add(position, seqKv), 1), seqQ);
  return arith::MinSIOp::create(
      b, arith::MaxSIOp::create(b, limit, idx(0)), seqKv);
}

DenseI64ArrayAttr TiledProgramBuilder::maskWindow() {
  auto [left, right] = op.getEffectiveWindow();
  auto bounded = [](int64_t bound) {
    return bound > TileMaskOp::kMaxWindowBound ? AttentionOp::kUnboundedWindow
                                               : bound;
  };
  left = bounded(left);
  right = bounded(right);
  if (left == AttentionOp::kUnboundedWindow &&
      (right == AttentionOp::kUnboundedWindow || op.getCausal()))
    return {};
  return b.getDenseI64ArrayAttr({left, right});
}

void TiledProgramBuilder::build(gpu::GPUFuncOp kernel) {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value query = entry.getArgument(0), key = entry.getArgument(1);
  Value value = entry.getArgument(2), output = entry.getArgument(3);
  unsigned next = 4;
  Value lse = op.getLse() ? entry.getArgument(next++) : Value();
  Value sinks = op.getSink() ? entry.getArgument(next++) : Value();
  // FP8 descale factors: q_descale, k_descale, v_descale.
  ValueRange descales =
      entry.getArguments().slice(next, op.getQDescale() ? 3 : 0);
  next += descales.size();
  if (!op.isVarlen()) {
    Value used = op.getSequsedK() ? entry.getArgument(next++) : Value();
    Value pages = op.getPageTable() ? entry.getArgument(next++) : Value();
    // The rotary table and the positions.
    ValueRange rope = entry.getArguments().slice(next, op.hasRope() ? 2 : 0);
    next += rope.size();
    buildTiles(query, key, value, output, lse, sinks, descales, rope,
               entry.getArguments().drop_front(next), used, pages);
  } else {
    // Packed sequences: each one, viewed as a batch of one, is the dense
    // program's batch.
    Value cuQ = entry.getArgument(next++), cuK = entry.getArgument(next++);
    Value used = op.getSequsedK() ? entry.getArgument(next++) : Value();
    Value pages = op.getPageTable() ? entry.getArgument(next++) : Value();
    // The rotary table, shared by the sequences, and the positions [Tq],
    // viewed per sequence like Q.
    ValueRange rope = entry.getArguments().slice(next, op.hasRope() ? 2 : 0);
    next += rope.size();
    ValueRange captures = entry.getArguments().drop_front(next);
    Value sequences =
        add(memref::DimOp::create(b, cuQ, 0).getResult(), -1);
    auto loop = scf::ForOp::create(b, idx(0), sequences, idx(1));
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> tensors = {query, key, value, output};
    if (lse)
      tensors.push_back(lse);
    if (!rope.empty())
      tensors.push_back(rope[1]);
    // Over a paged cache the sequences' keys are counted (and seqused_k
    // applied) by fa4.tile.keys; the views of K and V are the cache.
    auto views = TileSequenceOp::create(b, loop.getInductionVar(), cuQ, cuK,
                                        pages ? Value() : used, tensors);
    SmallVector<Value, 2> ropeViews;
    if (!rope.empty())
      ropeViews = {rope[0], views.getViews().back()};
    buildTiles(views.getViews()[0], views.getViews()[1], views.getViews()[2],
               views.getViews()[3], lse ? views.getViews()[4] : Value(), sinks,
               descales, ropeViews, captures, pages ? used : Value(), pages,
               pages ? cuK : Value());
  }
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b);
}

void TiledProgramBuilder::buildTiles(Value query, Value key, Value value,
                                     Value output, Value lse, Value sinks,
                                     ValueRange descales, ValueRange rope,
                                     ValueRange captures, Value used,
                                     Value pages, Value cuSeqlensK) {
  Type element = op.getQuery().getType().getElementType();
  Type outElement = op.getOutput().getType().getElementType();
  Type f32 = b.getF32Type();
  int64_t rows = plan.getBlockM(), blockN = plan.getBlockN();
  int64_t headDim = op.getHeadDimQK(), headDimV = op.getHeadDimV();
  int64_t pack = plan.getGqaPack();
  int64_t positions = rows / pack, stages = plan.getQStages();
  int64_t headBlocks = op.getNumQueryHeads() / pack;

  Value batch = memref::DimOp::create(b, query, 0);
  Value seqQ = memref::DimOp::create(b, query, 1);
  Value seqKv = memref::DimOp::create(b, key, 1);
  // A work tile: `stages` Q tiles of `positions` query positions each.
  Value tilesPerHead = ceilDiv(seqQ, stages * positions);
  Value tiles = arith::MulIOp::create(b, mul(batch, headBlocks), tilesPerHead);

  auto tileLoop = scf::ForOp::create(b, idx(0), tiles, idx(1));
  b.setInsertionPointToStart(tileLoop.getBody());
  auto coords = TileCoordsOp::create(
      b, tileLoop.getInductionVar(), tilesPerHead, batch,
      plan.getScheduler(), headBlocks,
      pack, stages * positions);
  Value batchIndex = coords.getBatchIndex(), head = coords.getFirstHead();
  Value kvHead = arith::DivUIOp::create(b, head, idx(op.getGroupSize()));
  // FP8: the factors of Q K^T and P V for the tile's batch and KV head.
  Value scoreScale, valueScale;
  if (!descales.empty()) {
    auto factors = TileDescaleOp::create(b, descales[0], descales[1],
                                         descales[2], batchIndex, kvHead);
    scoreScale = factors.getScores();
    valueScale = factors.getValues();
  }
  // A KV cache: the batch's own keys.
  if (used || pages)
    seqKv = TileKeysOp::create(b, key, batchIndex, used, pages, cuSeqlensK);

  auto stageLoop = scf::ForOp::create(b, idx(0), idx(stages), idx(1));
  b.setInsertionPointToStart(stageLoop.getBody());
  Value position = add(coords.getPosition(),
                       arith::MulIOp::create(b, stageLoop.getInductionVar(),
                                             idx(positions)));
  Value q = TileLoadOp::create(b, tile(rows, headDim, element), query,
                               batchIndex, position, head, pack);
  int64_t ropeStart = op.getRopeDims().first;
  if (!rope.empty())
    q = TileRopeOp::create(b, q, rope[0], rope[1], batchIndex, position, pack,
                           ropeStart, /*inverse=*/false);
  // KV blocks up to the last row's limit: the rest are fully masked.
  Value blocks =
      ceilDiv(keyLimit(add(position, positions - 1), seqQ, seqKv), blockN);

  auto rowType = RankedTensorType::get({rows}, f32);
  auto accType = tile(rows, headDimV, f32);
  auto kvLoop = scf::ForOp::create(
      b, idx(0), blocks, idx(1),
      ValueRange{splat(accType, 0.0f),
                 splat(rowType, -std::numeric_limits<float>::infinity()),
                 splat(rowType, 0.0f)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kvLoop.getBody());
    Value acc = kvLoop.getRegionIterArg(0);
    Value rowMax = kvLoop.getRegionIterArg(1);
    Value rowSum = kvLoop.getRegionIterArg(2);
    Value firstKey = mul(kvLoop.getInductionVar(), blockN);
    Value k = TileLoadOp::create(b, tile(blockN, headDim, element), key,
                                 batchIndex, firstKey, kvHead, 1, pages);
    Value v = TileLoadOp::create(b, tile(blockN, headDimV, element), value,
                                 batchIndex, firstKey, kvHead, 1, pages);
    Value scores = TileMatmulOp::create(b, tile(rows, blockN, f32), q, k,
                                        Value(), scoreScale,
                                        /*transpose_b=*/true);
    if (std::optional<APFloat> softcap = op.getSoftcap())
      scores =
          TileSoftcapOp::create(b, scores,
                                b.getF64FloatAttr(softcap->convertToDouble() /
                                                  op.getEffectiveScale()),
                                b.getI64IntegerAttr(plan.getTanhOnFma()),
                                b.getI64IntegerAttr(plan.getCeiling()));
    // The regions see scaled scores: after them the softmax scales by
    // log2(e) only.
    double scaleLog2 = op.getEffectiveScale() * M_LOG2E;
    if (!op.getScoreMod().empty() || !op.getMaskMod().empty()) {
      auto modify = TileModifyOp::create(
          b, scores.getType(), scores, batchIndex, head, position, firstKey,
          b.getI64IntegerAttr(pack), b.getF64FloatAttr(op.getEffectiveScale()),
          captures);
      IRMapping none;
      op.getScoreMod().cloneInto(&modify.getScoreMod(), none);
      op.getMaskMod().cloneInto(&modify.getMaskMod(), none);
      scores = modify.getResult();
      scaleLog2 = M_LOG2E;
    }
    Value masked = TileMaskOp::create(b, scores, position, firstKey, seqQ,
                                      seqKv, pack, op.getCausal(),
                                      maskWindow());
    auto softmax = TileSoftmaxOp::create(
        b, tile(rows, blockN, element), rowType, rowType, rowType, masked,
        rowMax, rowSum, b.getF64FloatAttr(scaleLog2),
        b.getI64IntegerAttr(plan.getRescaleThreshold()),
        b.getI64IntegerAttr(plan.getEmulatedExp2()));
    Value rescaled =
        TileRescaleOp::create(b, acc, softmax.getCorrection());
    Value product = TileMatmulOp::create(b, accType, softmax.getProbabilities(),
                                         v, rescaled, valueScale,
                                         /*transpose_b=*/false);
    scf::YieldOp::create(b, ValueRange{product, softmax.getNewMax(),
                                       softmax.getNewSum()});
  }
  Value finalO = kvLoop.getResult(0), finalMax = kvLoop.getResult(1);
  Value finalSum = kvLoop.getResult(2);
  if (sinks) {
    auto sink = TileSinkOp::create(b, sinks, head, finalO, finalMax, finalSum,
                                   pack);
    finalO = sink.getResult();
    finalMax = sink.getNewMax();
    finalSum = sink.getNewSum();
  }
  // O's rotated columns back (linear: before the normalization).
  if (!rope.empty() && op.getRopeOutput())
    finalO = TileRopeOp::create(b, finalO, rope[0], rope[1], batchIndex,
                                position, pack, ropeStart, /*inverse=*/true);
  Value normalized = TileNormalizeOp::create(
      b, tile(rows, headDimV, outElement), finalO, finalSum);
  TileStoreOp::create(b, normalized, output, batchIndex, position, head,
                      pack);
  if (lse)
    TileStoreLseOp::create(b, finalMax, finalSum, lse, batchIndex, head,
                           position, pack);
}

struct FA4TilePass : public fa4::impl::FA4TileBase<FA4TilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
      return;

    MLIRContext *ctx = &getContext();
    SymbolTable symbols(module);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    for (AttentionOp op : ops) {
      if (op.isTensorForm()) {
        op.emitOpError() << "is on tensors; fa4-tile builds kernels from "
                            "memrefs: bufferize first (one-shot-bufferize)";
        return signalPassFailure();
      }
      PlanAttr plan = op.getPlanAttr();
      if (!plan) {
        op.emitOpError() << "has no plan; run fa4-plan first";
        return signalPassFailure();
      }
      // A plan written by hand skips fa4-plan's refusals: what the tile ops
      // cannot express is refused here.
      if (failed(checkKernelLimits(op, plan)))
        return signalPassFailure();
      // One gpu.module per kernel, both named after the function, so that
      // each binary holds exactly one kernel.
      auto parent = op->getParentOfType<FunctionOpInterface>();
      std::string name =
          (parent ? parent.getName().str() : std::string("kernel")) +
          "_attention";
      StringRef chip = plan.getArch() == Arch::sm_100a ? "sm_100a" : "sm_90a";
      OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
      auto kernels = gpu::GPUModuleOp::create(
          moduleBuilder, op.getLoc(), name,
          moduleBuilder.getArrayAttr({NVVM::NVVMTargetAttr::get(
              ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda", chip, "+ptx86")}));
      symbols.insert(kernels); // renames on collision

      ImplicitLocOpBuilder b(op.getLoc(), ctx);
      b.setInsertionPointToEnd(kernels.getBody());
      auto kernel = gpu::GPUFuncOp::create(
          b, kernels.getName(),
          FunctionType::get(ctx, op->getOperandTypes(), {}));
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      b.getUnitAttr());
      kernel->setAttr("fa4.plan", plan);
      TiledProgramBuilder(b, op, plan).build(kernel);

      // The launch keeps the regions: the kernel's semantics for fa4-sim's
      // reference.
      OpBuilder replacement(op);
      auto launch =
          LaunchOp::create(replacement, op.getLoc(),
                           SymbolRefAttr::get(ctx, kernels.getName(),
                                              {FlatSymbolRefAttr::get(kernel)}),
                           op->getOperands().drop_back(op.getCaptures().size()),
                           op.getCaptures(), op.hasRope(), DictionaryAttr());
      launch.getScoreMod().takeBody(op.getScoreMod());
      launch.getMaskMod().takeBody(op.getMaskMod());
      op.erase();
    }
  }
};

} // namespace
