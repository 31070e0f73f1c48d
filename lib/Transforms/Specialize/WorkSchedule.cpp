//===- WorkSchedule.cpp - the linear, LPT and paired schedules ------------===//

#include "WorkSchedule.h"
#include "ScoreStage.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
constexpr int64_t kLptGroup = 8; // (batch, head) pairs per LPT L2 group
} // namespace

WorkSchedule::~WorkSchedule() = default;

Tile WorkSchedule::nextTile(Value ordinal, Value kvBase) {
  Tile tile;
  tile.ordinal = ordinal;
  tile.kvBase = kvBase;
  tile.statsBase = add(kvBase, ordinal);
  return tile;
}

void WorkSchedule::visit(Tile &tile, function_ref<void(const Tile &)> body) {
  KvBlocks blocks = kernel.getScoreStage().tileBlocks(tile.position);
  tile.firstBlock = blocks.first;
  tile.blocks = blocks.count;
  body(tile);
  scf::YieldOp::create(
      b, ValueRange{add(tile.ordinal, 1), add(tile.kvBase, tile.blocks)});
}

namespace {
/// CTA c visits tiles c, c + grid, c + 2 grid, ...; the subclass says which
/// (batch, head block, position) the tile with an index is.
class StridedSchedule : public WorkSchedule {
public:
  using WorkSchedule::WorkSchedule;

  void forEachTile(function_ref<void(const Tile &)> body) override {
    Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
    auto loop = scf::ForOp::create(b, first, kernel.tiles, grid,
                                   ValueRange{idx(0), idx(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Tile tile = nextTile(loop.getRegionIterArg(0), loop.getRegionIterArg(1));
    Value queryBlock, batchHead;
    std::tie(queryBlock, batchHead) = order(loop.getInductionVar());
    int64_t headBlocks = shape.headBlocks();
    tile.headBlock = rem(batchHead, headBlocks);
    tile.batch = div(batchHead, headBlocks);
    tile.position = mul(queryBlock, shape.positionsPerWorkTile());
    visit(tile, body);
  }

protected:
  /// (query block, batch x head blocks + head block) of tile `index`.
  virtual std::pair<Value, Value> order(Value index) = 0;
};

/// (batch, head block, query block), query block fastest.
class LinearSchedule final : public StridedSchedule {
public:
  using StridedSchedule::StridedSchedule;

protected:
  std::pair<Value, Value> order(Value index) override {
    Value queryBlock = arith::RemUIOp::create(b, index, kernel.tilesPerHead);
    Value batchHead = arith::DivUIOp::create(b, index, kernel.tilesPerHead);
    return {queryBlock, batchHead};
  }
};

/// Longest first, grouped for L2: (batch, head block) pairs form groups of
/// kLptGroup; a group's tiles run together, the last query blocks (the most
/// KV blocks when causal) first, so that concurrent CTAs share the K/V of
/// few heads.
class LptSchedule final : public StridedSchedule {
public:
  using StridedSchedule::StridedSchedule;

protected:
  std::pair<Value, Value> order(Value index) override {
    Value tilesPerHead = kernel.tilesPerHead;
    Value batchHeads = mul(kernel.batch, shape.headBlocks());
    Value groupTiles = mul(tilesPerHead, kLptGroup);
    Value group = arith::DivUIOp::create(b, index, groupTiles);
    Value within = arith::RemUIOp::create(b, index, groupTiles);
    Value firstPair = mul(group, kLptGroup);
    Value groupSize = arith::MinUIOp::create(
        b, idx(kLptGroup), arith::SubIOp::create(b, batchHeads, firstPair));
    Value batchHead =
        add(firstPair, arith::RemUIOp::create(b, within, groupSize));
    Value fromLast = arith::DivUIOp::create(b, within, groupSize);
    Value queryBlock =
        arith::SubIOp::create(b, add(tilesPerHead, -1), fromLast);
    return {queryBlock, batchHead};
  }
};

/// Units of two tiles, query block j from the end and then query block j,
/// so that with causal masking every unit visits the same number of KV
/// blocks and a static assignment of units to CTAs is balanced. The middle
/// block of an odd count is a unit alone. (batch, head block) pairs form
/// the L2 groups of the LPT schedule.
class PairedSchedule final : public WorkSchedule {
public:
  using WorkSchedule::WorkSchedule;

  void forEachTile(function_ref<void(const Tile &)> body) override;
};
} // namespace

void PairedSchedule::forEachTile(function_ref<void(const Tile &)> body) {
  int64_t headBlocks = shape.headBlocks();
  Value tilesPerHead = kernel.tilesPerHead;
  Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value halves = div(add(tilesPerHead, 1), 2);
  Value pairs = mul(kernel.batch, headBlocks);
  Value units = arith::MulIOp::create(b, pairs, halves);
  auto outer =
      scf::ForOp::create(b, first, units, grid, ValueRange{idx(0), idx(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(outer.getBody());
  // (batch, head block) pairs in L2 groups of kLptGroup as with lpt; unit j
  // of a pair holds query blocks (tilesPerHead - 1 - j, j).
  Value unit = outer.getInductionVar();
  Value groupUnits = mul(halves, kLptGroup);
  Value firstPair = mul(arith::DivUIOp::create(b, unit, groupUnits), kLptGroup);
  Value within = arith::RemUIOp::create(b, unit, groupUnits);
  Value groupSize = arith::MinUIOp::create(
      b, idx(kLptGroup), arith::SubIOp::create(b, pairs, firstPair));
  Value pair = add(firstPair, arith::RemUIOp::create(b, within, groupSize));
  Value j = arith::DivUIOp::create(b, within, groupSize);
  Value longBlock = arith::SubIOp::create(b, add(tilesPerHead, -1), j);

  auto inner =
      scf::ForOp::create(b, idx(0), idx(2), idx(1), outer.getRegionIterArgs());
  b.setInsertionPointToStart(inner.getBody());
  Value second = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                       inner.getInductionVar(), idx(1));
  Value queryBlock = arith::SelectOp::create(b, second, j, longBlock);
  Value alone =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, j, longBlock);
  Value skip = arith::AndIOp::create(b, second, alone);
  Value ordinal = inner.getRegionIterArg(0), kvBase = inner.getRegionIterArg(1);
  auto ifOp =
      scf::IfOp::create(b, TypeRange{b.getIndexType(), b.getIndexType()}, skip,
                        /*addThenBlock=*/true,
                        /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, ValueRange{ordinal, kvBase});
    b.setInsertionPointToStart(ifOp.elseBlock());
    Tile tile = nextTile(ordinal, kvBase);
    tile.batch = div(pair, headBlocks);
    tile.headBlock = rem(pair, headBlocks);
    tile.position = mul(queryBlock, shape.positionsPerWorkTile());
    visit(tile, body);
  }
  scf::YieldOp::create(b, ifOp.getResults());
  b.setInsertionPointAfter(inner);
  scf::YieldOp::create(b, inner.getResults());
}

std::unique_ptr<WorkSchedule>
specialize::createWorkSchedule(KernelBuilder &kernel) {
  switch (kernel.getShape().scheduler) {
  case Scheduler::linear:
    return std::make_unique<LinearSchedule>(kernel);
  case Scheduler::lpt:
    return std::make_unique<LptSchedule>(kernel);
  case Scheduler::paired:
    return std::make_unique<PairedSchedule>(kernel);
  }
  llvm_unreachable("unknown scheduler");
}
