//===- WorkSchedule.cpp - the linear, LPT, paired and varlen schedules ----===//

#include "WorkSchedule.h"
#include "ScoreStage.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

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
  tile.seqQ = kernel.seqQ;
  tile.seqKv = kernel.seqKv;
  tile.kvBlocks = kernel.kvBlocks;
  return tile;
}

SmallVector<Value> WorkSchedule::visit(Tile &tile,
                                       function_ref<void(const Tile &)> body,
                                       bool yield) {
  if (!shape.varlen && kernel.sequsedK) {
    // A dense KV cache: the tile's batch has its own keys.
    tile.seqKv = kernel.usedKeys(tile.batch, kernel.seqKv);
    int64_t blockN = shape.plan.getBlockN();
    tile.kvBlocks = div(add(tile.seqKv, blockN - 1), blockN);
  }
  KvBlocks blocks = kernel.getScoreStage().tileBlocks(tile);
  tile.firstBlock = blocks.first;
  tile.blocks = blocks.count;
  if (tile.split) {
    // Split s of n takes consecutive blocks, floor(blocks / n) of them and
    // one more for the first blocks mod n splits: shares differ by at most
    // one block (none only where the tile has fewer blocks than splits).
    int64_t splits = shape.splits();
    Value share = div(tile.blocks, splits);
    Value extra = rem(tile.blocks, splits);
    Value start = add(mul(tile.split, share),
                      arith::MinUIOp::create(b, tile.split, extra));
    Value longer =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tile.split, extra);
    tile.firstBlock = add(tile.firstBlock, start);
    tile.blocks = add(
        share, arith::SelectOp::create(b, longer, idx(1), idx(0)).getResult());
  }
  body(tile);
  SmallVector<Value> next = {add(tile.ordinal, 1),
                             add(tile.kvBase, tile.blocks)};
  if (yield)
    scf::YieldOp::create(b, next);
  return next;
}

namespace {
/// CTA c visits tiles c, c + grid, c + 2 grid, ...; the subclass says which
/// (batch, head block, position) the tile with an index is. Split-KV: the
/// units are (tile, split) with the splits of a tile consecutive, so that
/// concurrent CTAs take them together.
class StridedSchedule : public WorkSchedule {
public:
  using WorkSchedule::WorkSchedule;

  void forEachTile(function_ref<void(const Tile &)> body) override {
    Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
    Value units =
        shape.splits() > 1 ? mul(kernel.tiles, shape.splits()) : kernel.tiles;
    auto loop =
        scf::ForOp::create(b, first, units, grid, ValueRange{idx(0), idx(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Tile tile = nextTile(loop.getRegionIterArg(0), loop.getRegionIterArg(1));
    Value index = loop.getInductionVar();
    place(tile, index);
    tile.recompute = [this, index](Tile &again) {
      place(again, opaque(index));
    };
    visit(tile, body);
  }

protected:
  /// The coordinates (and split) of the unit with index `index`.
  void place(Tile &tile, Value index) {
    if (shape.splits() > 1) {
      tile.split = rem(index, shape.splits());
      index = div(index, shape.splits());
    }
    auto [queryBlock, batchHead] = order(index);
    int64_t headBlocks = shape.headBlocks();
    tile.headBlock = rem(batchHead, headBlocks);
    tile.batch = div(batchHead, headBlocks);
    tile.position = mul(queryBlock, shape.positionsPerWorkTile());
  }

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

private:
  /// Tile slot `slot` of this CTA: its (batch, head block) pair, its query
  /// block, and whether it is the empty second slot of a unit alone.
  struct Slot {
    Value pair, queryBlock, empty;
  };
  Slot decode(Value slot);
  void place(Tile &tile, const Slot &slot);

  // The CTA's index, the grid, units per (batch, head block) pair and the
  // pairs.
  Value first, grid, halves, pairs;
};
} // namespace

PairedSchedule::Slot PairedSchedule::decode(Value slot) {
  // (batch, head block) pairs in L2 groups of kLptGroup as with lpt; unit j
  // of a pair holds query blocks (tilesPerHead - 1 - j, j).
  Value unit = add(first, mul(div(slot, 2), grid));
  Value second =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rem(slot, 2), idx(1));
  Value groupUnits = mul(halves, kLptGroup);
  Value firstPair = mul(arith::DivUIOp::create(b, unit, groupUnits), kLptGroup);
  Value within = arith::RemUIOp::create(b, unit, groupUnits);
  Value groupSize = arith::MinUIOp::create(
      b, idx(kLptGroup), arith::SubIOp::create(b, pairs, firstPair));
  Slot decoded;
  decoded.pair = add(firstPair, arith::RemUIOp::create(b, within, groupSize));
  Value j = arith::DivUIOp::create(b, within, groupSize);
  Value longBlock = arith::SubIOp::create(b, add(kernel.tilesPerHead, -1), j);
  decoded.queryBlock = arith::SelectOp::create(b, second, j, longBlock);
  // The middle block of an odd count is a unit alone: its second slot is
  // empty.
  Value alone =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, j, longBlock);
  decoded.empty = arith::AndIOp::create(b, second, alone);
  return decoded;
}

void PairedSchedule::place(Tile &tile, const Slot &slot) {
  int64_t headBlocks = shape.headBlocks();
  tile.batch = div(slot.pair, headBlocks);
  tile.headBlock = rem(slot.pair, headBlocks);
  tile.position = mul(slot.queryBlock, shape.positionsPerWorkTile());
}

void PairedSchedule::forEachTile(function_ref<void(const Tile &)> body) {
  first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  halves = div(add(kernel.tilesPerHead, 1), 2);
  pairs = mul(kernel.batch, shape.headBlocks());
  Value units = arith::MulIOp::create(b, pairs, halves);
  // CTA c takes units c, c + grid, ...: ceil((units - c) / grid) of them,
  // two tile slots each. One flat loop over the slots, the unit and its
  // coordinates recomputed per slot: a loop per unit would keep them live
  // through both tiles' bodies, next to the consumers' register budget.
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, units, first);
  Value mine = arith::SelectOp::create(
      b, any,
      arith::DivUIOp::create(
          b, add(arith::SubIOp::create(b, units, first), add(grid, -1)), grid),
      idx(0));
  auto loop = scf::ForOp::create(b, idx(0), mul(mine, 2), idx(1),
                                 ValueRange{idx(0), idx(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value slot = loop.getInductionVar();
  Slot decoded = decode(slot);
  Value ordinal = loop.getRegionIterArg(0), kvBase = loop.getRegionIterArg(1);
  auto ifOp = scf::IfOp::create(
      b, TypeRange{b.getIndexType(), b.getIndexType()}, decoded.empty,
      /*addThenBlock=*/true,
      /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, ValueRange{ordinal, kvBase});
    b.setInsertionPointToStart(ifOp.elseBlock());
    Tile tile = nextTile(ordinal, kvBase);
    place(tile, decoded);
    tile.recompute = [this, slot](Tile &again) {
      place(again, decode(opaque(slot)));
    };
    visit(tile, body);
  }
  scf::YieldOp::create(b, ifOp.getResults());
}

namespace {
/// Packed sequences of variable lengths: the tiles of sequence 0 (its head
/// blocks, each with its query blocks), then those of sequence 1, ...;
/// numbered globally, CTA c visits tiles c, c + grid, ... A CTA's tiles
/// come in order, so it walks the table once: a cursor (sequence, tiles
/// before it) moves past the sequences whose tiles lie behind the next
/// index. Sequences without queries have no tiles; none is visited for
/// padding. Within a sequence, consecutive tiles (concurrent CTAs) share a
/// head block's K/V; with causal or right-bounded windows the last query
/// blocks (the most KV blocks) come first.
class VarlenSchedule final : public WorkSchedule {
public:
  using WorkSchedule::WorkSchedule;

  void forEachTile(function_ref<void(const Tile &)> body) override;

private:
  /// A sequence's rows in a packed table [B + 1] of `total` rows: (start,
  /// length), clamped into [0, total] (null `total`: entries only kept from
  /// below 0, for a table that counts keys of a paged cache).
  std::pair<Value, Value> rows(Value table, Value sequence, Value total);
  /// Sequence `sequence`'s query rows (start, length) and its work tiles.
  struct Queries {
    Value start, length, blocks, tiles;
  };
  Queries queries(Value sequence);
  /// The query-side coordinates of tile `tileIndex`, in `sequence`, whose
  /// tiles start at global index `tilesBefore`.
  void place(Tile &tile, Value tileIndex, Value sequence, Value tilesBefore);
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, predicate, x, y);
  }
};
} // namespace

std::pair<Value, Value> VarlenSchedule::rows(Value table, Value sequence,
                                             Value total) {
  auto entry = [&](Value index) {
    Type i32 = b.getI32Type();
    Value address = LLVM::GEPOp::create(
        b, table.getType(), i32, table,
        ValueRange{arith::IndexCastOp::create(b, i32, index)});
    Value value = arith::IndexCastOp::create(
        b, b.getIndexType(), LLVM::LoadOp::create(b, i32, address));
    // Negative entries count as 0, entries past the tensor as its end.
    Value clamped = arith::MaxSIOp::create(b, value, idx(0));
    return total ? arith::MinSIOp::create(b, clamped, total) : clamped;
  };
  Value start = entry(sequence);
  Value end = arith::MaxSIOp::create(b, entry(add(sequence, 1)), start);
  return {start, arith::SubIOp::create(b, end, start)};
}

VarlenSchedule::Queries VarlenSchedule::queries(Value sequence) {
  Queries q;
  std::tie(q.start, q.length) = rows(kernel.cuSeqlensQ, sequence, kernel.seqQ);
  int64_t positions = shape.positionsPerWorkTile();
  q.blocks = div(add(q.length, positions - 1), positions);
  q.tiles = mul(q.blocks, shape.headBlocks());
  return q;
}

void VarlenSchedule::place(Tile &tile, Value tileIndex, Value sequence,
                           Value tilesBefore) {
  Queries q = queries(sequence);
  Value within = arith::SubIOp::create(b, tileIndex, tilesBefore);
  Value queryBlock = arith::RemUIOp::create(b, within, q.blocks);
  auto [left, right] = shape.window;
  if (right >= 0)
    queryBlock = arith::SubIOp::create(b, add(q.blocks, -1), queryBlock);
  tile.batch = sequence;
  tile.headBlock = arith::DivUIOp::create(b, within, q.blocks);
  tile.position = mul(queryBlock, shape.positionsPerWorkTile());
  tile.seqQ = q.length;
  tile.queryStart = q.start;
}

void VarlenSchedule::forEachTile(function_ref<void(const Tile &)> body) {
  Type index = b.getIndexType();
  Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  // (tile index, sequence, tiles before it, ordinal, KV blocks visited).
  SmallVector<Type> types(5, index);
  auto loop = scf::WhileOp::create(
      b, types, ValueRange{first, idx(0), idx(0), idx(0), idx(0)});
  OpBuilder::InsertionGuard guard(b);
  {
    // Before: move the cursor to the sequence holding the tile index; the
    // loop ends past the last sequence.
    Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                  SmallVector<Location>(5, b.getLoc()));
    Value tileIndex = before->getArgument(0);
    auto cursor = scf::WhileOp::create(
        b, TypeRange{index, index},
        ValueRange{before->getArgument(1), before->getArgument(2)});
    {
      OpBuilder::InsertionGuard inner(b);
      Block *test = b.createBlock(&cursor.getBefore(), {}, {index, index},
                                  {b.getLoc(), b.getLoc()});
      Value sequence = test->getArgument(0), tilesBefore = test->getArgument(1);
      Value inTable = cmp(arith::CmpIPredicate::slt, sequence, kernel.batch);
      // Past the sequence (only asked inside the table).
      auto behind = scf::IfOp::create(b, TypeRange{b.getI1Type()}, inTable,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      {
        OpBuilder::InsertionGuard branch(b);
        b.setInsertionPointToStart(behind.thenBlock());
        Value end = add(tilesBefore, queries(sequence).tiles);
        scf::YieldOp::create(
            b, ValueRange{cmp(arith::CmpIPredicate::uge, tileIndex, end)});
        b.setInsertionPointToStart(behind.elseBlock());
        scf::YieldOp::create(
            b, ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(false))});
      }
      scf::ConditionOp::create(b, behind.getResult(0),
                               ValueRange{sequence, tilesBefore});
      Block *step = b.createBlock(&cursor.getAfter(), {}, {index, index},
                                  {b.getLoc(), b.getLoc()});
      scf::YieldOp::create(
          b, ValueRange{add(step->getArgument(0), 1),
                        add(step->getArgument(1),
                            queries(step->getArgument(0)).tiles)});
    }
    Value sequence = cursor.getResult(0);
    scf::ConditionOp::create(
        b, cmp(arith::CmpIPredicate::slt, sequence, kernel.batch),
        ValueRange{tileIndex, sequence, cursor.getResult(1),
                   before->getArgument(3), before->getArgument(4)});
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, types,
                               SmallVector<Location>(5, b.getLoc()));
  Value tileIndex = after->getArgument(0), sequence = after->getArgument(1);
  Value tilesBefore = after->getArgument(2);
  Tile tile = nextTile(after->getArgument(3), after->getArgument(4));
  place(tile, tileIndex, sequence, tilesBefore);
  tile.recompute = [this, tileIndex, sequence, tilesBefore](Tile &again) {
    place(again, opaque(tileIndex), opaque(sequence), opaque(tilesBefore));
  };
  if (shape.pageSize) {
    // Over a paged cache cu_seqlens_k only counts the sequence's keys (its
    // entries are no rows of K): the count, at most the pages it has.
    tile.keyStart = idx(0);
    tile.seqKv = arith::MinSIOp::create(
        b, rows(kernel.cuSeqlensK, sequence, /*total=*/Value()).second,
        kernel.seqKv);
  } else {
    std::tie(tile.keyStart, tile.seqKv) =
        rows(kernel.cuSeqlensK, sequence, kernel.seqKv);
  }
  // At most the keys the sequence holds.
  if (kernel.sequsedK)
    tile.seqKv = kernel.usedKeys(sequence, tile.seqKv);
  int64_t blockN = shape.plan.getBlockN();
  tile.kvBlocks = div(add(tile.seqKv, blockN - 1), blockN);
  SmallVector<Value> counts = visit(tile, body, /*yield=*/false);
  scf::YieldOp::create(b, ValueRange{add(tileIndex, grid), sequence,
                                     tilesBefore, counts[0], counts[1]});
}

std::unique_ptr<WorkSchedule>
specialize::createWorkSchedule(KernelBuilder &kernel) {
  if (kernel.getShape().varlen)
    return std::make_unique<VarlenSchedule>(kernel);
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
