//===- SplitKv.cpp - split-KV partial rows and their combine --------------===//
//
// With kvSplits = n, n CTAs share each work tile: split s visits the s-th
// share of the tile's KV blocks (WorkSchedule::visit). Its epilogue writes,
// per row, O over its own sum and its LSE to the workspace instead of O.
// Its store warp then counts the split done on the tile's counter; the
// split that completes last reads every split's row in split order (so the
// result does not depend on which split that is), combines them
//   M = max_s lse_s,  W = sum_s 2^(lse_s - M),  O = sum_s 2^(lse_s - M) O_s
// (O over W, with the sink joined as an unsplit kernel joins it), writes O
// into the staging tile and stores it by TMA, writes the LSE, and sets the
// counter back to 0 for the next launch. No CTA waits for another, so the
// split cannot deadlock however the CTAs are scheduled.
//
// Ordering: the epilogue's threads write the rows, then commit the staging
// hand-off (an mbarrier arrive: release at CTA scope); the store warp's
// lane 0 waits for it, makes what it observed visible at GPU scope (fence
// acq_rel) and increments the counter (acq_rel at GPU scope). The lane that
// reads n - 1 has acquired every other split's rows, and bar.warp.sync
// orders its warp's reads (plain 16-byte loads) after that.
//
// A cluster split (splitCombine = cluster) runs the same combine over
// distributed shared memory instead: buildClusterStoreRole below.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "WorkSchedule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
/// The NVPTX synchronization scope of the whole GPU (.gpu).
constexpr StringLiteral kGpuScope = "device";
} // namespace

Value KernelBuilder::workTileIndex(const Tile &tile) {
  Value batchHead = add(mul(tile.batch, shape.headBlocks()), tile.headBlock);
  return add(mul(batchHead, tilesPerHead),
             div(tile.position, shape.positionsPerWorkTile()));
}

Value KernelBuilder::splitRecord(const Tile &tile, int64_t stage, Value row) {
  // A cluster split: the row's first word in this CTA's exchange buffer.
  if (shape.plan.isClusterSplit())
    return add(mul(row, shape.exchangeRowWords()),
               stage * shape.exchangeStageBytes() / 4);
  // (work tile, Q stage, row) in 32 bits (fa4-plan bounds it); the word
  // offset in 64.
  Value number =
      add(mul(add(mul(workTileIndex(tile), shape.plan.getQStages()), stage),
              shape.qRows()),
          row);
  Type i64 = b.getI64Type();
  return arith::MulIOp::create(
      b, arith::IndexCastOp::create(b, i64, number),
      arith::ConstantOp::create(b,
                                b.getI64IntegerAttr(shape.splitRecordWords())));
}

Value KernelBuilder::exchangeWords() {
  int64_t words = shape.plan.getQStages() * shape.exchangeStageBytes() / 4;
  return smemView(sharedBuffer("split_exchange"), idx(0),
                  sharedType({words}, b.getF32Type()));
}

void KernelBuilder::storePartialRow(Value record, Value split, Value column,
                                    Value values) {
  if (shape.plan.isClusterSplit()) {
    vector::StoreOp::create(b, values, exchangeWords(),
                            ValueRange{add(record, column)});
    return;
  }
  Type i64 = b.getI64Type();
  Value offset = arith::AddIOp::create(
      b, record,
      arith::IndexCastOp::create(b, i64,
                                 add(mul(split, shape.headDimV), column)));
  Value address =
      LLVM::GEPOp::create(b, splitPartials.getType(), b.getF32Type(),
                          splitPartials, ValueRange{offset});
  int64_t bytes = cast<VectorType>(values.getType()).getNumElements() * 4;
  LLVM::StoreOp::create(b, values, address,
                        /*alignment=*/std::min<int64_t>(bytes, 16));
}

void KernelBuilder::storePartialLse(Value record, Value split, Value rowMax,
                                    Value rowSum) {
  Type f32Type = b.getF32Type(), i64 = b.getI64Type();
  Value lse = log2SumExp(rowMax, rowSum);
  if (shape.plan.isClusterSplit()) {
    memref::StoreOp::create(b, lse, exchangeWords(),
                            ValueRange{add(record, shape.headDimV)});
    return;
  }
  Value offset = arith::AddIOp::create(
      b, record,
      arith::IndexCastOp::create(b, i64,
                                 add(split, shape.splits() * shape.headDimV)));
  Value address = LLVM::GEPOp::create(b, splitPartials.getType(), f32Type,
                                      splitPartials, ValueRange{offset});
  LLVM::StoreOp::create(b, lse, address);
}

void KernelBuilder::combineRow(const Tile &tile, int64_t stage, Value row,
                               Value lane, const CombineAccess &access) {
  int64_t splits = shape.splits();
  Type f32Type = b.getF32Type();
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  // A butterfly over the warp: every lane gets the same bits.
  auto butterfly = [&](Value value, function_ref<Value(Value, Value)> op) {
    for (int32_t offset : {1, 2, 4, 8, 16})
      value = op(value, gpu::ShuffleOp::create(b, value, offset, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult());
    return value;
  };

  // The splits' LSEs, split s in lane s mod 32 (slot s / 32), -inf past n;
  // their max and the sum of the weights 2^(lse - max) over the warp.
  SmallVector<Value, 2> held;
  for (int64_t slot = 0; slot * 32 < splits; ++slot) {
    Value split = add(lane, slot * 32);
    Value valid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, split, idx(splits));
    Value lse = access.lse(arith::MinUIOp::create(b, split, idx(splits - 1)));
    held.push_back(arith::SelectOp::create(b, valid, lse, negInf));
  }
  auto maximum = [&](Value x, Value y) -> Value {
    return arith::MaximumFOp::create(b, x, y);
  };
  auto plus = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, x, y);
  };
  Value rowMax = negInf;
  for (Value lse : held)
    rowMax = maximum(rowMax, lse);
  rowMax = butterfly(rowMax, maximum);
  Value noKey =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, rowMax, negInf);
  Value ref = arith::SelectOp::create(b, noKey, f32(0.0f), rowMax);
  Value rowSum = f32(0.0f);
  for (Value lse : held)
    rowSum = plus(rowSum, exp2(arith::SubFOp::create(b, lse, ref)));
  rowSum = butterfly(rowSum, plus);
  RowTotals totals = finishRow(sinkLogit(tile, row), rowMax, rowSum);

  // O: each lane's pieces of 4 columns, the splits' rows weighted and
  // summed in split order, `unroll` splits' loads issued together.
  constexpr int64_t kPiece = 4;
  auto pieceType = VectorType::get({kPiece}, f32Type);
  int64_t pieces = shape.headDimV / kPiece;
  int64_t unroll = splits % 2 == 0 ? 2 : 1;
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(pieceType, b.getF32FloatAttr(0.0f)));
  for (int64_t first = 0; first < pieces; first += 32) {
    // A lane past the row's pieces reads the last and stores nothing (the
    // warp stays converged).
    Value piece = add(lane, first);
    bool partial = first + 32 > pieces;
    Value inside = partial ? arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                   piece, idx(pieces))
                           : Value();
    if (partial)
      piece = arith::MinUIOp::create(b, piece, idx(pieces - 1));
    auto sum = scf::ForOp::create(b, idx(0), idx(splits), idx(unroll),
                                  ValueRange{zeros});
    // Unrolled whole (by LLVM or ptxas, which sees the count), the loop
    // would hoist every split's loads into registers the warp lacks.
    sum->setAttr(LLVM::LoopAnnotationAttr::getMnemonic(),
                 LLVM::LoopAnnotationAttr::get(
                     ctx, /*disableNonforced=*/{}, /*vectorize=*/{},
                     /*interleave=*/{},
                     LLVM::LoopUnrollAttr::get(ctx, b.getBoolAttr(true), {}, {},
                                               {}, {}, {}, {}),
                     {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(sum.getBody());
      SmallVector<Value> partials, splitWeights;
      for (int64_t u = 0; u < unroll; ++u) {
        Value split = add(sum.getInductionVar(), u);
        partials.push_back(access.partial(split, mul(piece, kPiece)));
        // The weight from the split's LSE again (a load every lane shares):
        // fewer live values than shuffling it from the lane holding it.
        splitWeights.push_back(
            exp2(arith::SubFOp::create(b, access.lse(split), ref)));
      }
      Value acc = sum.getRegionIterArg(0);
      for (int64_t u = 0; u < unroll; ++u)
        acc = arith::AddFOp::create(
            b, acc,
            arith::MulFOp::create(
                b, vector::BroadcastOp::create(b, pieceType, splitWeights[u]),
                partials[u]));
      scf::YieldOp::create(b, ValueRange{acc});
    }
    Value out = arith::SelectOp::create(
        b, totals.sawKey,
        arith::MulFOp::create(
            b, sum.getResult(0),
            vector::BroadcastOp::create(b, pieceType, totals.factor)),
        zeros);
    Value packed = arith::TruncFOp::create(
        b, VectorType::get({kPiece}, shape.outElement), out);
    OpBuilder::InsertionGuard guard(b);
    if (partial)
      b.setInsertionPointToStart(scf::IfOp::create(b, inside).thenBlock());
    // 16-byte chunk j of row r sits at chunk j xor (r mod 8) of its atom.
    Value column = mul(piece, kPiece);
    Value atom = div(column, kAtom);
    Value swizzled =
        arith::XOrIOp::create(b, div(rem(column, kAtom), 8), rem(row, 8));
    access.store(packed,
                 ValueRange{atom, row, add(mul(swizzled, 8), rem(column, 8))});
  }
  if (shape.lse) {
    auto leader = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, idx(0)));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(leader.thenBlock());
    storeLse(tile, stage, row, totals.sum, totals.max);
  }
}

Value KernelBuilder::stagePositions(const Tile &tile, int64_t stage) {
  Value first = add(tile.position, stage * shape.positionsPerTile());
  return arith::MinSIOp::create(
      b,
      arith::MaxSIOp::create(b, arith::SubIOp::create(b, tile.seqQ, first),
                             idx(0)),
      idx(shape.positionsPerTile()));
}

void KernelBuilder::storeCombined(const Tile &tile, int64_t stage,
                                  bool stagingPerStage) {
  // The tile's coordinates built again, not kept through the combine.
  elected([&] {
    Tile done = epilogueTile(tile);
    storeStaged(done, stage,
                add(done.position, stage * shape.positionsPerTile()),
                stagingPerStage);
  });
}

void KernelBuilder::buildSplitStoreRole(Value epi, bool stagingPerStage) {
  int64_t stages = shape.plan.getQStages(), splits = shape.splits();
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32Type = b.getF32Type();
  Value oSmem = sharedBuffer("o_staging");
  Value lane = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), 32);
  Value laneZero =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, idx(0));
  auto wide = [&](Value index) {
    return arith::IndexCastOp::create(b, i64, index).getResult();
  };

  forEachTile([&](const Tile &tile) {
    for (int64_t stage = 0; stage < stages; ++stage) {
      Value handoff = add(mul(tile.ordinal, stages), stage);
      ChannelWaitOp::create(b, epi, handoff);
      Value counter = LLVM::GEPOp::create(
          b, splitCounters.getType(), i32, splitCounters,
          ValueRange{wide(add(mul(workTileIndex(tile), stages), stage))});
      // Lane 0 counts this split done; the split that reads n - 1 is last.
      auto count = scf::IfOp::create(b, TypeRange{i32}, laneZero,
                                     /*addThenBlock=*/true,
                                     /*addElseBlock=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(count.thenBlock());
        LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, kGpuScope);
        Value before = LLVM::AtomicRMWOp::create(
            b, LLVM::AtomicBinOp::add, counter,
            arith::ConstantOp::create(b, b.getI32IntegerAttr(1)),
            LLVM::AtomicOrdering::acq_rel, kGpuScope);
        scf::YieldOp::create(b, ValueRange{before});
        b.setInsertionPointToStart(count.elseBlock());
        scf::YieldOp::create(b, ValueRange{arith::ConstantOp::create(
                                    b, b.getI32IntegerAttr(0))});
      }
      Value lastHere = arith::AndIOp::create(
          b, laneZero,
          arith::CmpIOp::create(
              b, arith::CmpIPredicate::eq, count.getResult(0),
              arith::ConstantOp::create(b, b.getI32IntegerAttr(splits - 1))));
      Value allLanes = arith::ConstantOp::create(b, b.getI32IntegerAttr(-1));
      NVVM::SyncWarpOp::create(b, allLanes);
      auto last = scf::IfOp::create(b, warpAny(lastHere));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(last.thenBlock());
        // The counter is 0 again for the next launch.
        auto rearm = scf::IfOp::create(b, laneZero);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(rearm.thenBlock());
          LLVM::AtomicRMWOp::create(
              b, LLVM::AtomicBinOp::xchg, counter,
              arith::ConstantOp::create(b, b.getI32IntegerAttr(0)),
              LLVM::AtomicOrdering::monotonic, kGpuScope);
        }
        Value positions = stagePositions(tile, stage);
        Value staging = smemView(
            oSmem, idx(stagingPerStage ? stage * shape.oTileBytes() : 0),
            outputTileType(shape.qRows()));
        forRange(mul(positions, shape.pack), [&](Value row) {
          // The row's record as a pointer, its words addressed in 32 bits
          // (a record is far below 2^31 words): one 64-bit value stays
          // live. Plain loads: the acquire (lane 0's counter update, then
          // the warp's bar.warp.sync) orders them after every split's
          // writes.
          Value record = LLVM::GEPOp::create(
              b, splitPartials.getType(), f32Type, splitPartials,
              ValueRange{splitRecord(tile, stage, row)});
          auto load = [&](Type type, Value word) {
            Value address = LLVM::GEPOp::create(
                b, record.getType(), f32Type, record,
                ValueRange{arith::IndexCastOp::create(b, i32, word)});
            return LLVM::LoadOp::create(
                       b, type, address,
                       /*alignment=*/isa<VectorType>(type) ? 16 : 4)
                .getResult();
          };
          auto partial = [&](Value split, Value column) {
            return load(VectorType::get({4}, f32Type),
                        add(mul(split, shape.headDimV), column));
          };
          auto lse = [&](Value split) {
            return load(f32Type, add(split, splits * shape.headDimV));
          };
          auto store = [&](Value value, ValueRange indices) {
            vector::StoreOp::create(b, value, staging, indices);
          };
          combineRow(tile, stage, row, lane, {partial, lse, store});
        });
        // The warp's writes, then one thread's TMA store reads them.
        fenceProxyAsync();
        NVVM::SyncWarpOp::create(b, allLanes);
        storeCombined(tile, stage, stagingPerStage);
      }
      ChannelReleaseOp::create(b, epi, handoff);
    }
  });
  elected(
      [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, /*read=*/nullptr); });
}

// A cluster split. The splits of a tile are the CTAs of one cluster (rank
// = split: the grid is whole clusters and units of one tile consecutive).
// Per Q stage, the store warp of each CTA, once its consumers wrote the
// partial rows into its exchange buffer:
//   1. publishes them (one arrival on the stage's full barrier of every
//      CTA, release at cluster scope) and waits until all CTAs did;
//   2. combines rows rank, rank + n, ... reading every CTA's row over
//      distributed shared memory in split order, and writes them into the
//      staging tile of CTA 0 (then a proxy fence: TMA reads them);
//   3. releases the stage (an arrival on every CTA's empty barrier) and
//      waits until every CTA released it: then no CTA reads this CTA's
//      rows any more and CTA 0 holds the whole tile, which it stores;
//   4. hands the staging tile back to its consumers, who may then write
//      the next tile's rows.
void KernelBuilder::buildClusterStoreRole(Value epi, bool stagingPerStage) {
  int64_t stages = shape.plan.getQStages(), splits = shape.splits();
  Type f32Type = b.getF32Type();
  auto pieceType = VectorType::get({4}, f32Type);
  Value oSmem = sharedBuffer("o_staging");
  Value words = exchangeWords();
  Value lane = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), 32);
  Value allLanes = arith::ConstantOp::create(b, b.getI32IntegerAttr(-1));

  forEachTile([&](const Tile &tile) {
    Value rank = tile.split;
    for (int64_t stage = 0; stage < stages; ++stage) {
      Value handoff = add(mul(tile.ordinal, stages), stage);
      ChannelWaitOp::create(b, epi, handoff);
      elected([&] { ChannelCommitOp::create(b, splitExchange, handoff); });
      ChannelWaitOp::create(b, splitExchange, handoff);

      // The stage's rows inside the sequence, every n-th from the rank.
      Value beyondRank = arith::MaxSIOp::create(
          b,
          arith::SubIOp::create(b, mul(stagePositions(tile, stage), shape.pack),
                                rank),
          idx(0));
      Value staging =
          smemView(oSmem, idx(stagingPerStage ? stage * shape.oTileBytes() : 0),
                   outputTileType(shape.qRows()));
      forRange(div(add(beyondRank, splits - 1), splits), [&](Value i) {
        Value row = add(rank, mul(i, splits));
        Value record = splitRecord(tile, stage, row);
        auto partial = [&](Value split, Value column) -> Value {
          return DsmemLoadOp::create(b, pieceType, words,
                                     ValueRange{add(record, column)}, split);
        };
        auto lse = [&](Value split) -> Value {
          Value word = DsmemLoadOp::create(
              b, VectorType::get({1}, f32Type), words,
              ValueRange{add(record, shape.headDimV)}, split);
          return vector::ExtractOp::create(b, word, ArrayRef<int64_t>{0});
        };
        auto store = [&](Value value, ValueRange indices) {
          DsmemStoreOp::create(b, value, staging, indices, idx(0));
        };
        combineRow(tile, stage, row, lane, {partial, lse, store});
      });
      // The rows written into CTA 0's staging tile are for its TMA store
      // (the async proxy); the warp's accesses precede the release.
      NVVM::FenceProxyOp::create(
          b, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cluster));
      NVVM::SyncWarpOp::create(b, allLanes);
      elected([&] { ChannelReleaseOp::create(b, splitExchange, handoff); });
      ChannelAcquireOp::create(b, splitExchange, add(handoff, stages));

      auto leader = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank, idx(0)));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(leader.thenBlock());
        storeCombined(tile, stage, stagingPerStage);
      }
      ChannelReleaseOp::create(b, epi, handoff);
    }
  });
  elected(
      [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, /*read=*/nullptr); });
}
