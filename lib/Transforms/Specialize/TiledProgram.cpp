//===- TiledProgram.cpp - recognize the tiled program, read its shape -----===//
//
// fa4-specialize builds from the tiled program, not from the plan alone: the
// recognizer checks that the program is the FA4 forward program (each tile
// op once, its dataflow and indices), and readShape reads the choices the
// program makes (scheduler, packing, masking, scale, exp2 split, LSE),
// checked against the plan.
//
//===----------------------------------------------------------------------===//

#include "TiledProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
/// The value of a constant integer, if `v` is one.
std::optional<int64_t> constantIndex(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// The ops of type `Op` among `ops`.
template <typename Op> SmallVector<Op> opsOf(ArrayRef<Operation *> ops) {
  SmallVector<Op> result;
  for (Operation *op : ops)
    if (auto typed = dyn_cast<Op>(op))
      result.push_back(typed);
  return result;
}
} // namespace

FailureOr<TiledProgram> specialize::recognize(gpu::GPUFuncOp kernel) {
  auto fail = [&](Operation *at, const Twine &what) -> FailureOr<TiledProgram> {
    at->emitOpError() << "is not the FA4 forward program fa4-specialize "
                         "builds: "
                      << what;
    return failure();
  };
  SmallVector<Operation *> all;
  kernel.walk([&](Operation *op) {
    if (op->getDialect() && isa<FA4Dialect>(op->getDialect()))
      all.push_back(op);
  });
  auto coords = opsOf<TileCoordsOp>(all);
  auto loads = opsOf<TileLoadOp>(all);
  auto matmuls = opsOf<TileMatmulOp>(all);
  auto masks = opsOf<TileMaskOp>(all);
  auto softcaps = opsOf<TileSoftcapOp>(all);
  auto softmaxes = opsOf<TileSoftmaxOp>(all);
  auto rescales = opsOf<TileRescaleOp>(all);
  auto normalizes = opsOf<TileNormalizeOp>(all);
  auto stores = opsOf<TileStoreOp>(all);
  auto lses = opsOf<TileStoreLseOp>(all);
  auto sinks = opsOf<TileSinkOp>(all);
  auto modifies = opsOf<TileModifyOp>(all);
  auto sequences = opsOf<TileSequenceOp>(all);
  auto keyCounts = opsOf<TileKeysOp>(all);
  auto descales = opsOf<TileDescaleOp>(all);
  auto ropes = opsOf<TileRopeOp>(all);
  auto count = [&](size_t got, size_t want, StringRef name) {
    return got == want ? success()
                       : LogicalResult(fail(kernel, Twine(got) + " '" + name +
                                                        "' ops, expected " +
                                                        Twine(want)));
  };
  if (failed(count(coords.size(), 1, "fa4.tile.coords")) ||
      failed(count(loads.size(), 3, "fa4.tile.load")) ||
      failed(count(matmuls.size(), 2, "fa4.tile.matmul")) ||
      failed(count(masks.size(), 1, "fa4.tile.mask")) ||
      failed(count(softmaxes.size(), 1, "fa4.tile.softmax")) ||
      failed(count(rescales.size(), 1, "fa4.tile.rescale")) ||
      failed(count(normalizes.size(), 1, "fa4.tile.normalize")) ||
      failed(count(stores.size(), 1, "fa4.tile.store")) ||
      (lses.size() > 1 &&
       failed(count(lses.size(), 1, "fa4.tile.store_lse"))) ||
      (softcaps.size() > 1 &&
       failed(count(softcaps.size(), 1, "fa4.tile.softcap"))) ||
      (sinks.size() > 1 && failed(count(sinks.size(), 1, "fa4.tile.sink"))) ||
      (modifies.size() > 1 &&
       failed(count(modifies.size(), 1, "fa4.tile.modify"))) ||
      (sequences.size() > 1 &&
       failed(count(sequences.size(), 1, "fa4.tile.sequence"))) ||
      (keyCounts.size() > 1 &&
       failed(count(keyCounts.size(), 1, "fa4.tile.keys"))) ||
      (descales.size() > 1 &&
       failed(count(descales.size(), 1, "fa4.tile.descale"))) ||
      (ropes.size() > 2 && failed(count(ropes.size(), 2, "fa4.tile.rope"))))
    return failure();
  // The ops of the regions of fa4.tile.modify are its own (fa4.yield).
  size_t yields = 0;
  for (TileModifyOp modify : modifies)
    yields += modify.getScoreMod().empty() ? 0 : 1;
  for (TileModifyOp modify : modifies)
    yields += modify.getMaskMod().empty() ? 0 : 1;
  if (all.size() != 11 + lses.size() + softcaps.size() + sinks.size() +
                        modifies.size() + sequences.size() + keyCounts.size() +
                        descales.size() + ropes.size() + yields)
    return fail(kernel, "it holds fa4 ops other than the tile ops");

  TiledProgram p;
  p.coords = coords[0];
  p.mask = masks[0];
  p.softmax = softmaxes[0];
  p.rescale = rescales[0];
  p.normalize = normalizes[0];
  p.store = stores[0];
  p.lse = lses.empty() ? TileStoreLseOp() : lses[0];
  p.softcap = softcaps.empty() ? TileSoftcapOp() : softcaps[0];
  p.sink = sinks.empty() ? TileSinkOp() : sinks[0];
  p.modify = modifies.empty() ? TileModifyOp() : modifies[0];
  p.sequence = sequences.empty() ? TileSequenceOp() : sequences[0];
  p.keys = keyCounts.empty() ? TileKeysOp() : keyCounts[0];
  p.descale = descales.empty() ? TileDescaleOp() : descales[0];
  for (TileRopeOp rope : ropes) {
    TileRopeOp &slot = rope.getInverse() ? p.outputRope : p.queryRope;
    if (slot)
      return fail(rope, "it rotates Q once and O back at most once");
    slot = rope;
  }
  if (p.outputRope && !p.queryRope)
    return fail(p.outputRope, "O is rotated back only where Q is rotated");
  // Packed sequences count their keys with fa4.tile.sequence, but over a
  // paged cache with fa4.tile.keys from cu_seqlens_k.
  if (p.keys && p.sequence &&
      (!p.keys.getPageTable() ||
       p.keys.getCuSeqlensK() != p.sequence.getCuSeqlensK() ||
       p.sequence.getSequsedK()))
    return fail(p.keys, "packed sequences count their keys with "
                        "fa4.tile.sequence, or over a paged cache with "
                        "fa4.tile.keys from the same cu_seqlens_k (and "
                        "seqused_k)");
  if (p.keys && !p.sequence && p.keys.getCuSeqlensK())
    return fail(p.keys, "cu_seqlens_k counts the keys of packed sequences");
  p.scores = matmuls[0].getTransposeB() ? matmuls[0] : matmuls[1];
  p.product = matmuls[0].getTransposeB() ? matmuls[1] : matmuls[0];
  if (!p.scores.getTransposeB() || p.product.getTransposeB() ||
      p.scores.getAcc() || !p.product.getAcc())
    return fail(kernel, "expected Q K^T without an accumulator and P V "
                        "accumulating");
  // Q is the loaded tile, or its rotation.
  Value queryTile = p.scores.getA();
  if (p.queryRope) {
    if (queryTile != p.queryRope.getResult())
      return fail(p.queryRope, "Q K^T must multiply the rotated Q");
    queryTile = p.queryRope.getTile();
  }
  p.query = queryTile.getDefiningOp<TileLoadOp>();
  p.key = p.scores.getB().getDefiningOp<TileLoadOp>();
  p.value = p.product.getB().getDefiningOp<TileLoadOp>();
  if (!p.query || !p.key)
    return fail(p.scores, "Q K^T must multiply loaded tiles");
  if (!p.value)
    return fail(p.product, "P V must multiply by a loaded tile");

  Block &entry = kernel.getBody().front();
  auto isArgument = [&](Value v, unsigned index) {
    return index < kernel.getNumArguments() && v == entry.getArgument(index);
  };
  // Q, K, V, O and LSE: kernel arguments 0-4, or with variable lengths
  // fa4.tile.sequence's views of them.
  auto isTensor = [&](Value v, unsigned index) {
    if (!p.sequence)
      return isArgument(v, index);
    auto views = p.sequence.getViews();
    return index < views.size() && v == views[index] &&
           isArgument(p.sequence.getTensors()[index], index);
  };
  if (!isTensor(p.query.getSource(), 0))
    return fail(p.query, "Q must be the kernel's first argument");
  if (!isTensor(p.key.getSource(), 1))
    return fail(p.key, "K must be the kernel's second argument");
  if (!isTensor(p.value.getSource(), 2))
    return fail(p.value, "V must be the kernel's third argument");
  if (!isTensor(p.store.getDest(), 3))
    return fail(p.store, "O must be the kernel's fourth argument");
  if (p.lse && !isTensor(p.lse.getDest(), 4))
    return fail(p.lse, "LSE must be the kernel's fifth argument");
  if (p.sequence && p.sequence.getTensors().size() !=
                        4u + (p.lse ? 1 : 0) + (p.queryRope ? 1 : 0))
    return fail(p.sequence, "it must view Q, K, V, O, LSE where stored and "
                            "the positions where rotated");
  unsigned firstDescale = 4 + (p.lse ? 1 : 0) + (p.sink ? 1 : 0);
  unsigned firstTable = firstDescale + (p.descale ? 3 : 0);
  unsigned firstCapture = firstTable;
  if (p.descale && (!isArgument(p.descale.getQueryDescale(), firstDescale) ||
                    !isArgument(p.descale.getKeyDescale(), firstDescale + 1) ||
                    !isArgument(p.descale.getValueDescale(), firstDescale + 2)))
    return fail(p.descale, "q_descale, k_descale and v_descale must be the "
                           "kernel's arguments after O, LSE and the sinks");
  if (p.sequence) {
    firstCapture += 2 + (p.sequence.getSequsedK() ? 1 : 0);
    if (!isArgument(p.sequence.getCuSeqlensQ(), firstTable) ||
        !isArgument(p.sequence.getCuSeqlensK(), firstTable + 1) ||
        (p.sequence.getSequsedK() &&
         !isArgument(p.sequence.getSequsedK(), firstTable + 2)))
      return fail(p.sequence, "the sequence tables must be the kernel's "
                              "arguments after O, LSE and the sinks");
  }
  if (p.keys) {
    // A KV cache's tables: seqused_k, then the page table, where given
    // (after cu_seqlens_q and cu_seqlens_k for packed sequences).
    unsigned next = p.sequence ? firstTable + 2 : firstTable;
    if (p.keys.getSequsedK() && !isArgument(p.keys.getSequsedK(), next++))
      return fail(p.keys, "seqused_k must be the kernel's argument after O, "
                          "LSE and the sinks");
    if (p.keys.getPageTable() && !isArgument(p.keys.getPageTable(), next++))
      return fail(p.keys, "the page table must be the kernel's argument "
                          "after O, LSE, the sinks and seqused_k");
    firstCapture = next;
  }
  if (p.queryRope) {
    // The rotary table and the positions follow the tables; packed
    // sequences' positions are viewed like Q.
    Value positions = p.queryRope.getPositions();
    bool positionsOk =
        p.sequence
            ? positions == p.sequence.getViews().back() &&
                  isArgument(p.sequence.getTensors().back(), firstCapture + 1)
            : isArgument(positions, firstCapture + 1);
    if (!isArgument(p.queryRope.getCosSin(), firstCapture) || !positionsOk ||
        (p.outputRope &&
         (p.outputRope.getCosSin() != p.queryRope.getCosSin() ||
          p.outputRope.getPositions() != p.queryRope.getPositions() ||
          p.outputRope.getStart() != p.queryRope.getStart())))
      return fail(p.queryRope, "the rotary table and positions must be the "
                               "kernel's arguments after the tables, Q and "
                               "O rotated by the same ones");
    firstCapture += 2;
  }
  if (p.key.getPageTable() != (p.keys ? p.keys.getPageTable() : Value()) ||
      p.value.getPageTable() != p.key.getPageTable())
    return fail(p.key, "K and V must be read through the page table the "
                       "keys are counted with");
  if (p.sink && !isArgument(p.sink.getSinks(), firstDescale - 1))
    return fail(p.sink, "the sinks must be the kernel's argument after O "
                        "and LSE");
  if (p.modify)
    for (auto [index, capture] : llvm::enumerate(p.modify.getCaptures()))
      if (!isArgument(capture, firstCapture + index))
        return fail(p.modify, "the captures must be the kernel's last "
                              "arguments, in order");
  if (kernel.getNumArguments() !=
      firstCapture + (p.modify ? p.modify.getCaptures().size() : 0))
    return fail(kernel, "its arguments must be Q, K, V, O, then LSE, the "
                        "sinks, the descale factors, the sequence tables and "
                        "the captures where used");

  p.kvLoop = dyn_cast<scf::ForOp>(p.softmax->getParentOp());
  if (!p.kvLoop || p.kvLoop.getNumRegionIterArgs() != 3)
    return fail(p.softmax, "it must be in the KV loop carrying O, the row "
                           "maxima and the row sums");
  auto iter = [&](unsigned i) { return p.kvLoop.getRegionIterArg(i); };
  auto result = [&](unsigned i) { return p.kvLoop.getResult(i); };
  auto yield = cast<scf::YieldOp>(p.kvLoop.getBody()->getTerminator());
  if (p.key->getParentOp() != p.kvLoop || p.value->getParentOp() != p.kvLoop ||
      p.query->getParentOp() == p.kvLoop)
    return fail(p.kvLoop, "K and V are loaded in the KV loop, Q before it");
  Value capped = p.softcap ? p.softcap.getResult() : p.scores.getResult();
  Value modified = p.modify ? p.modify.getResult() : capped;
  if ((p.softcap && p.softcap.getScores() != p.scores.getResult()) ||
      (p.modify && p.modify.getScores() != capped) ||
      p.mask.getScores() != modified ||
      p.softmax.getScores() != p.mask.getResult())
    return fail(p.softmax, "the scores must be capped and modified "
                           "(optionally), masked, then exponentiated");
  if (p.softmax.getMax() != iter(1) || p.softmax.getSum() != iter(2) ||
      p.rescale.getTile() != iter(0) ||
      p.rescale.getFactors() != p.softmax.getCorrection() ||
      p.product.getA() != p.softmax.getProbabilities() ||
      p.product.getAcc() != p.rescale.getResult())
    return fail(p.softmax, "O must be rescaled by the correction before P V "
                           "accumulates into it");
  // FP8: Q K^T and P V scaled by the tile's descale factors, or neither.
  Value scoreScale = p.descale ? p.descale.getScores() : Value();
  Value valueScale = p.descale ? p.descale.getValues() : Value();
  if (p.scores.getScale() != scoreScale || p.product.getScale() != valueScale)
    return fail(p.scores, "Q K^T and P V must be scaled by the descale "
                          "factors of fa4.tile.descale, or both unscaled");
  if (yield.getOperands() != ValueRange{p.product.getResult(),
                                        p.softmax.getNewMax(),
                                        p.softmax.getNewSum()})
    return fail(yield, "the KV loop must carry O, the new maxima and sums");
  // The final O, maxima and sums: the KV loop's, or with the sinks joined.
  Value finalO = result(0), finalMax = result(1), finalSum = result(2);
  if (p.sink) {
    if (p.sink.getTile() != finalO || p.sink.getMax() != finalMax ||
        p.sink.getSum() != finalSum)
      return fail(p.sink, "the sinks join the KV loop's O, maxima and sums");
    finalO = p.sink.getResult();
    finalMax = p.sink.getNewMax();
    finalSum = p.sink.getNewSum();
  }
  if (p.outputRope) {
    if (p.outputRope.getTile() != finalO)
      return fail(p.outputRope, "O is rotated back after the KV loop (and "
                                "the sinks)");
    finalO = p.outputRope.getResult();
  }
  if (p.normalize.getTile() != finalO || p.normalize.getSums() != finalSum ||
      p.store.getTile() != p.normalize.getResult())
    return fail(p.normalize, "O must be normalized by the final sums and "
                             "stored");
  if (p.lse && (p.lse.getMax() != finalMax || p.lse.getSum() != finalSum))
    return fail(p.lse, "LSE comes from the final maxima and sums");

  // Which rows, keys and heads each op touches. The bounds of the work-tile
  // and KV loops are not checked: fa4-specialize computes its own.
  auto isDim = [&](Value v, unsigned argument, int64_t dim) {
    auto op = v.getDefiningOp<memref::DimOp>();
    return op && isTensor(op.getSource(), argument) &&
           constantIndex(op.getIndex()) == dim;
  };
  auto isProduct = [&](Value v, Value x, int64_t factor) {
    auto mul = v.getDefiningOp<arith::MulIOp>();
    return mul &&
           ((mul.getLhs() == x && constantIndex(mul.getRhs()) == factor) ||
            (mul.getRhs() == x && constantIndex(mul.getLhs()) == factor));
  };
  auto isCountingLoop = [&](scf::ForOp loop) {
    return loop && constantIndex(loop.getLowerBound()) == 0 &&
           constantIndex(loop.getStep()) == 1;
  };
  auto splat = [](Value v) -> std::optional<double> {
    DenseElementsAttr attr;
    if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
      return std::nullopt;
    return attr.getSplatValue<APFloat>().convertToDouble();
  };

  Value batch = p.coords.getBatchIndex(), head = p.coords.getFirstHead();
  auto tileIndex = dyn_cast<BlockArgument>(p.coords.getTile());
  auto tileLoop =
      tileIndex ? dyn_cast<scf::ForOp>(tileIndex.getOwner()->getParentOp())
                : scf::ForOp();
  if (!isCountingLoop(tileLoop) ||
      tileLoop.getInductionVar() != p.coords.getTile() ||
      !isDim(p.coords.getBatch(), 0, 0))
    return fail(p.coords, "it must number the work tiles 0, 1, ... of a "
                          "loop and take the batch size of Q");
  // The work-tile loop is in the kernel body, or with variable lengths in
  // the loop over the sequences (from 0, one at a time) that views them.
  Block *tileBlock = &entry;
  if (p.sequence) {
    auto sequenceLoop = dyn_cast<scf::ForOp>(p.sequence->getParentOp());
    if (!isCountingLoop(sequenceLoop) || sequenceLoop->getBlock() != &entry ||
        p.sequence.getSequence() != sequenceLoop.getInductionVar())
      return fail(p.sequence, "it must view sequence i in a loop over the "
                              "sequences 0, 1, ... in the kernel body");
    tileBlock = sequenceLoop.getBody();
  }
  if (tileLoop->getBlock() != tileBlock ||
      p.coords->getBlock() != tileLoop.getBody())
    return fail(p.coords, "the work-tile loop must be in the kernel body "
                          "(or the loop over the sequences) and compute the "
                          "tile's coordinates");
  // The Q tiles of a work tile: a loop over them, at the tile's position
  // plus the loop's offset; with one Q tile (the loop folded away), at the
  // tile's position.
  auto stageLoop = dyn_cast<scf::ForOp>(p.query->getParentOp());
  if (stageLoop == tileLoop) {
    stageLoop = scf::ForOp();
    if (p.query.getPosition() != p.coords.getPosition())
      return fail(p.query, "a single Q tile must be read at the work tile's "
                           "position");
  } else {
    auto position = p.query.getPosition().getDefiningOp<arith::AddIOp>();
    int64_t positionsPerQTile =
        p.query.getTile().getType().getDimSize(0) / p.query.getHeads();
    if (!isCountingLoop(stageLoop) || stageLoop->getParentOp() != tileLoop ||
        !position || position.getLhs() != p.coords.getPosition() ||
        !isProduct(position.getRhs(), stageLoop.getInductionVar(),
                   positionsPerQTile))
      return fail(p.query, "Q tiles must come from a loop over the work "
                           "tile's Q tiles at its position plus the tile "
                           "offset");
  }
  // Each Q tile: Q, the KV loop, normalization and the stores, in order of
  // dataflow in one block; the KV loop's body holds the per-block ops.
  Block *qTile = p.query->getBlock();
  for (Operation *op : {p.kvLoop.getOperation(), p.normalize.getOperation(),
                        p.store.getOperation()})
    if (op->getBlock() != qTile)
      return fail(op, "it must run once per Q tile, next to the Q load");
  for (Operation *op :
       {p.lse.getOperation(), p.sink.getOperation(), p.queryRope.getOperation(),
        p.outputRope.getOperation()})
    if (op && op->getBlock() != qTile)
      return fail(op, "it must run once per Q tile, next to the Q load");
  for (Operation *op : {p.key.getOperation(), p.value.getOperation(),
                        p.scores.getOperation(), p.mask.getOperation(),
                        p.softcap ? p.softcap.getOperation()
                                  : p.mask.getOperation(),
                        p.modify ? p.modify.getOperation()
                                 : p.mask.getOperation(),
                        p.rescale.getOperation(), p.product.getOperation()})
    if (op->getBlock() != p.kvLoop.getBody())
      return fail(op, "it must run once per KV block, in the KV loop");
  Value row = p.query.getPosition();
  if (p.query.getBatch() != batch || p.query.getHead() != head)
    return fail(p.query, "Q must be read at the work tile's batch and heads");
  if (p.store.getBatch() != batch || p.store.getPosition() != row ||
      p.store.getHead() != head)
    return fail(p.store, "O must be written where Q was read");
  if (p.lse && (p.lse.getBatch() != batch || p.lse.getPosition() != row ||
                p.lse.getHead() != head))
    return fail(p.lse, "LSE must be written where Q was read");
  if (p.sink && p.sink.getHead() != head)
    return fail(p.sink, "the sinks must be read at the work tile's heads");
  for (TileRopeOp rope : {p.queryRope, p.outputRope})
    if (rope && (rope.getBatch() != batch || rope.getPosition() != row))
      return fail(rope, "it must rotate the rows of Q's batch and "
                        "positions");
  Value key = p.key.getPosition();
  // The K/V head is the first query head / group (or the head itself).
  auto kvHead = p.key.getHead().getDefiningOp<arith::DivUIOp>();
  std::optional<int64_t> divisor =
      p.key.getHead() == head             ? std::optional<int64_t>(1)
      : kvHead && kvHead.getLhs() == head ? constantIndex(kvHead.getRhs())
                                          : std::nullopt;
  if (!isCountingLoop(p.kvLoop) || !divisor ||
      !isProduct(key, p.kvLoop.getInductionVar(),
                 p.key.getTile().getType().getDimSize(0)))
    return fail(p.key, "K must be read block by block at the KV head of the "
                       "work tile's query heads");
  p.kvHeadDivisor = *divisor;
  if (p.key.getBatch() != batch || p.value.getBatch() != batch ||
      p.value.getPosition() != key || p.value.getHead() != p.key.getHead())
    return fail(p.value, "K and V must be read at the same batch, key and "
                         "head");
  if (p.modify &&
      (p.modify.getBatch() != batch || p.modify.getHead() != head ||
       p.modify.getPosition() != row || p.modify.getKey() != key))
    return fail(p.modify, "the regions must see Q's batch, heads and rows "
                          "and the K tile's keys");
  // A KV cache counts each batch's keys once per work tile.
  if (p.keys && (p.keys->getBlock() != tileLoop.getBody() ||
                 p.keys.getBatch() != batch || !isTensor(p.keys.getKey(), 1)))
    return fail(p.keys, "the keys must be counted in K at the work tile's "
                        "batch");
  Value keyCount = p.keys ? p.keys.getKeys() : Value();
  if (p.descale &&
      (p.descale->getBlock() != tileLoop.getBody() ||
       p.descale.getBatch() != batch || p.descale.getHead() != p.key.getHead()))
    return fail(p.descale, "the descale factors must be read once per work "
                           "tile at its batch and the K/V head");
  if (p.mask.getPosition() != row || p.mask.getKey() != key ||
      !isDim(p.mask.getSeqQ(), 0, 1) ||
      (keyCount ? p.mask.getSeqKv() != keyCount
                : !isDim(p.mask.getSeqKv(), 1, 1)))
    return fail(p.mask, "the mask must cover Q's rows and the K tile's keys "
                        "with the lengths of Q and K");
  if (splat(p.kvLoop.getInitArgs()[0]) != 0.0 ||
      splat(p.kvLoop.getInitArgs()[1]) !=
          -std::numeric_limits<double>::infinity() ||
      splat(p.kvLoop.getInitArgs()[2]) != 0.0)
    return fail(p.kvLoop, "O and the row sums must start at 0 and the row "
                          "maxima at -inf");
  p.stageLoop = stageLoop;
  return p;
}

FailureOr<KernelShape> specialize::readShape(gpu::GPUFuncOp kernel,
                                             PlanAttr plan, TiledProgram p) {
  bool hopper = plan.getArch() == Arch::sm_90a;
  if (plan.getBlockN() != 128 && plan.getBlockN() != 64 && !hopper)
    return kernel.emitOpError()
           << "fa4-specialize needs blockN = 64 or 128 on sm_100a, the plan "
              "has "
           << plan.getBlockN();
  if (plan.getArch() == Arch::sm_100a && plan.getPvSplit() % kChunk != 0)
    return kernel.emitOpError()
           << "fa4-specialize needs a pvSplit that is a multiple of " << kChunk
           << ", the plan has " << plan.getPvSplit();
  if (p.sink) {
    MemRefType sinks = p.sink.getSinks().getType();
    if (!sinks.getLayout().isIdentity())
      return kernel.emitOpError() << "fa4-specialize reads the sinks from a "
                                     "contiguous [Hq] tensor, got "
                                  << sinks;
  }
  // With variable lengths the tensors are the packed ones the sequences
  // view; LSE is [Hq, Tq] then.
  auto packed = [&](Value view, unsigned index) {
    return p.sequence ? cast<MemRefType>(p.sequence.getTensors()[index].getType())
                      : cast<MemRefType>(view.getType());
  };
  if (p.lse) {
    MemRefType lse = packed(p.lse.getDest(), 4);
    if (!lse.getLayout().isIdentity())
      return kernel.emitOpError()
             << "fa4-specialize writes LSE to a contiguous "
             << (p.sequence ? "[Hq, Tq]" : "[B, Hq, Sq]") << " tensor, got "
             << lse;
  }
  SmallVector<Value> tables;
  if (p.sequence)
    tables = {p.sequence.getCuSeqlensQ(), p.sequence.getCuSeqlensK(),
              p.sequence.getSequsedK()};
  if (p.keys)
    tables = {p.keys.getSequsedK(), p.keys.getPageTable()};
  for (Value table : tables)
    if (table && !cast<MemRefType>(table.getType()).getLayout().isIdentity())
      return kernel.emitOpError() << "fa4-specialize reads the sequence, "
                                     "key-count and page tables from "
                                     "contiguous tensors, got "
                                  << table.getType();

  RankedTensorType query = p.query.getTile().getType();
  RankedTensorType key = p.key.getTile().getType();
  MemRefType queryTensor = p.query.getSource().getType();
  MemRefType keyTensor = p.key.getSource().getType();
  auto pack = static_cast<int64_t>(p.coords.getHeads());
  auto disagree = [&](Operation *at, const Twine &what) {
    return at->emitOpError() << "disagrees with the kernel's plan: " << what;
  };

  // Heads: static, K and V one per group of query heads, a group a whole
  // number of packed tiles (the program's K/V head must be head / group).
  int64_t queryHeads = queryTensor.getDimSize(2);
  int64_t kvHeads = keyTensor.getDimSize(2);
  MemRefType valueTensor = p.value.getSource().getType();
  MemRefType outputTensor = p.store.getDest().getType();
  if (ShapedType::isDynamic(queryHeads) || ShapedType::isDynamic(kvHeads) ||
      kvHeads <= 0 || queryHeads % kvHeads != 0 ||
      valueTensor.getDimSize(2) != kvHeads ||
      outputTensor.getDimSize(2) != queryHeads ||
      (p.lse && p.lse.getDest().getType().getDimSize(1) != queryHeads) ||
      (p.sink && !ShapedType::isDynamic(
                     p.sink.getSinks().getType().getDimSize(0)) &&
       p.sink.getSinks().getType().getDimSize(0) != queryHeads))
    return kernel.emitOpError()
           << "needs static head counts with Q, O and LSE heads a multiple "
              "of the K and V heads, got Q "
           << queryTensor << ", K " << keyTensor;
  int64_t group = queryHeads / kvHeads;
  if (group % pack != 0 || p.kvHeadDivisor != group)
    return disagree(p.key, "the packed query heads of a tile must share one "
                           "K/V head, head / " +
                               Twine(group));
  if (static_cast<int64_t>(p.coords.getHeadBlocks()) != queryHeads / pack)
    return disagree(p.coords, "head_blocks must be the query heads over the "
                              "packing");
  if (p.stageLoop
          ? constantIndex(p.stageLoop.getUpperBound()) != plan.getQStages()
          : plan.getQStages() != 1)
    return disagree(p.stageLoop ? p.stageLoop.getOperation() : p.query,
                    "a work tile must have qStages Q tiles");

  // One element type for every tile and tensor (FP8: O in 16 bits).
  Type element = queryTensor.getElementType();
  bool fp8 = isa<Float8E4M3FNType>(element);
  for (Type type : {keyTensor.getElementType(), valueTensor.getElementType(),
                    p.softmax.getProbabilities().getType().getElementType()})
    if (type != element)
      return kernel.emitOpError() << "needs one element type for Q, K, V and "
                                     "P, got "
                                  << element << " and " << type;
  Type outElement = outputTensor.getElementType();
  if (fp8 ? !(outElement.isBF16() || outElement.isF16())
          : outElement != element)
    return kernel.emitOpError()
           << "needs O in " << (fp8 ? "f16 or bf16" : "Q's element type")
           << ", got " << outElement;
  if (fp8 != plan.isFp8())
    return disagree(p.query, "operandBytes must be 1 exactly for FP8 "
                             "operands");
  if (!fp8 && p.descale)
    return kernel.emitOpError()
           << "has descale factors for " << element << " operands";
  // FP8: the PV MMA (a wgmma or tcgen05 kind::f8f6f4) reads V K-major
  // (keys contiguous).
  if (fp8) {
    auto [strides, offset] = valueTensor.getStridesAndOffset();
    if (strides[1] != 1)
      return kernel.emitOpError()
             << "fa4-specialize reads an FP8 V key-major (unit stride along "
                "its keys, dimension 1), got "
             << valueTensor;
  }
  if (keyTensor.getDimSize(3) != queryTensor.getDimSize(3) ||
      outputTensor.getDimSize(3) != valueTensor.getDimSize(3))
    return kernel.emitOpError()
           << "needs one head dim for Q and K and one for V and O";
  if (query.getDimSize(0) != plan.getBlockM() ||
      key.getDimSize(0) != plan.getBlockN() ||
      p.value.getTile().getType().getDimSize(0) != plan.getBlockN())
    return disagree(p.query, "Q tiles must have blockM rows, K and V tiles "
                             "blockN");
  if (query.getDimSize(1) != plan.getHeadDim() ||
      key.getDimSize(1) != plan.getHeadDim() ||
      p.value.getTile().getType().getDimSize(1) != plan.getValueHeadDim())
    return disagree(p.query, "Q and K tiles must have headDim columns, V "
                             "tiles Dv");
  auto heads = [](auto op) { return static_cast<int64_t>(op.getHeads()); };
  if (pack != plan.getGqaPack() || heads(p.query) != pack ||
      heads(p.mask) != pack || heads(p.store) != pack ||
      (p.modify && heads(p.modify) != pack) ||
      (p.lse && heads(p.lse) != pack) || (p.sink && heads(p.sink) != pack) ||
      (p.queryRope && heads(p.queryRope) != pack) ||
      (p.outputRope && heads(p.outputRope) != pack) || heads(p.key) != 1 ||
      heads(p.value) != 1)
    return disagree(p.coords, "Q, O, LSE, the sinks and the mask must pack "
                              "gqaPack heads per position, K and V one");
  if (static_cast<int64_t>(p.coords.getPositions()) !=
      plan.getQStages() * (plan.getBlockM() / pack))
    return disagree(p.coords, "a work tile must span qStages Q tiles");

  // The plan as built: the program's choices where it makes them.
  KernelShape shape;
  shape.plan = PlanAttr::getChecked(
      [&] {
        return kernel.emitOpError()
               << "has program choices the plan cannot hold: ";
      },
      plan.getContext(), plan.getArch(), plan.getBlockM(), plan.getBlockN(),
      plan.getHeadDim(), plan.getHeadDimV(), plan.getQStages(),
      plan.getKvStages(), pack, p.coords.getScheduler(), plan.getSoftmaxRegs(),
      plan.getCorrectionRegs(), plan.getProducerRegs(),
      static_cast<int64_t>(p.softmax.getEmulated()), plan.getPvSplit(),
      static_cast<int64_t>(p.softmax.getThreshold()), plan.getKvSplits(),
      plan.getSplitCombine(), plan.getOperandBytes(),
      p.softcap && p.softcap.getPolynomial() > 0
          ? std::optional<int64_t>(p.softcap.getPolynomial())
          : std::nullopt,
      p.softcap && p.softcap.getCeiling() > 0
          ? std::optional<int64_t>(p.softcap.getCeiling())
          : std::nullopt,
      plan.getKvInterleave(), plan.getPPrecision(), plan.getSharedKey(),
      plan.getFamily());
  if (!shape.plan)
    return failure();
  shape.element = query.getElementType();
  shape.outElement = outElement;
  shape.descale = static_cast<bool>(p.descale);
  shape.valueKeyMajor = fp8;
  shape.headDim = query.getDimSize(1);
  shape.headDimV = plan.getValueHeadDim();
  shape.queryHeads = queryHeads;
  shape.groupSize = group;
  shape.pack = pack;
  shape.causal = p.mask.getCausal();
  shape.window = p.mask.getEffectiveWindow();
  if (p.softcap) {
    shape.softcap = p.softcap.getCap().convertToDouble();
    shape.tanhOnFma = p.softcap.getPolynomial();
    shape.softcapCeiling = p.softcap.getCeiling();
  }
  shape.lse = static_cast<bool>(p.lse);
  shape.varlen = static_cast<bool>(p.sequence);
  shape.seqused = (p.sequence && p.sequence.getSequsedK()) ||
                  (p.keys && p.keys.getSequsedK());
  if (p.keys && p.keys.getPageTable()) {
    shape.pageSize = keyTensor.getDimSize(1);
    if (shape.pageSize % plan.getBlockN() != 0 &&
        plan.getBlockN() % shape.pageSize != 0)
      return disagree(p.keys, "pages of " + Twine(shape.pageSize) +
                                  " keys must hold whole blocks of blockN or "
                                  "blocks whole pages");
  }
  shape.sink = static_cast<bool>(p.sink);
  shape.scheduler = p.coords.getScheduler();
  shape.scaleLog2 = p.softmax.getScaleLog2().convertToDouble();
  if (p.modify) {
    // The regions take scaled scores; the softmax after them, log2(e).
    double log2e = shape.scaleLog2;
    if (std::abs(log2e / M_LOG2E - 1.0) > 1e-12)
      return p.softmax.emitOpError()
             << "after fa4.tile.modify must scale by log2(e) (the regions "
                "yield scaled scores), got "
             << log2e;
    shape.scaleLog2 = p.modify.getScale().convertToDouble() * M_LOG2E;
    shape.modifier = p.modify;
    for (Value capture : p.modify.getCaptures())
      shape.captures.push_back(cast<MemRefType>(capture.getType()));
  }
  shape.rescaleThreshold = p.softmax.getThreshold();
  shape.emulatedExp2 = p.softmax.getEmulated();
  if (p.queryRope) {
    // Rotated where TMA put Q, from contiguous tables: packed sequences'
    // positions are the packed [Tq] tensor the sequence views.
    MemRefType table = p.queryRope.getCosSin().getType();
    MemRefType positions =
        p.sequence ? cast<MemRefType>(p.sequence.getTensors().back().getType())
                   : p.queryRope.getPositions().getType();
    if (fp8)
      return kernel.emitOpError() << "fa4-specialize rotates 16-bit Q only";
    if (!table.getLayout().isIdentity() || !positions.getLayout().isIdentity())
      return kernel.emitOpError() << "fa4-specialize reads the rotary table "
                                     "and positions from contiguous tensors";
    shape.ropeStart = p.queryRope.getStart();
    shape.ropeColumns = p.queryRope.getRotatedColumns();
    shape.ropeOutput = static_cast<bool>(p.outputRope);
    // O's rotated pairs would span the threads that share a row.
    if (shape.ropeOutput && plan.getKeyShares() > 1)
      return disagree(p.outputRope,
                      "sharedKey = " + Twine(plan.getKeyShares()) +
                          " does not rotate O back");
  }
  // The decode family's softmax thread holds a key of every row: the
  // regions' per-element coordinates are not built for it.
  if (shape.modifier && plan.isDecode())
    return disagree(p.modify, "the decode family does not apply score or "
                              "mask regions");
  // Split-KV distributes a dense batch's tiles in a strided order.
  if (plan.getSplits() > 1 &&
      (shape.varlen || shape.scheduler == Scheduler::paired))
    return disagree(p.coords, "kvSplits = " + Twine(plan.getSplits()) +
                                  " takes a dense batch in the linear or "
                                  "lpt order");
  return shape;
}
