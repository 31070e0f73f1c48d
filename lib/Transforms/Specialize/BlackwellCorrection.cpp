//===- BlackwellCorrection.cpp - the sm_100a correction warpgroup ---------===//
//
// The correction warpgroup of the FA4 role set: O rescaled in Tensor Memory
// when a softmax warpgroup's row maximum moved, the epilogue (O normalized
// and staged for the TMA store, the LSE), and with interleaved softmax
// warpgroups the combination of their partial rows.
//
//===----------------------------------------------------------------------===//

#include "BlackwellRoles.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
constexpr int64_t kOChunk = 16; // columns per correction TMEM access
// Columns per TMEM access of the combined epilogue, which holds two
// warpgroups' O at a time in the correction warpgroup's registers.
constexpr int64_t kCombinedChunk = 8;
} // namespace

void BlackwellPrefillRoles::buildCorrection() {
  PlanAttr plan = shape.plan;
  Type f32Type = b.getF32Type();
  // The correction warpgroup works in narrow fragments: its register budget
  // is small.
  auto chunkType = VectorType::get({kOChunk}, f32Type);
  Value statsBuffer = statistics();
  Value staging = smemView(kernel.sharedBuffer("o_staging"), idx(0),
                           outputTileType(shape.qRows()));
  // The thread's lane (its statistics), its row of O and with shared keys
  // its share of O's columns, from firstColumn.
  Value thread = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value row = keyShares > 1 ? rem(thread, shape.qRows()) : thread;
  int64_t columns = shape.headDimV / keyShares;
  Value firstColumn =
      keyShares > 1 ? mul(div(thread, shape.qRows()), columns) : Value();
  // Shared keys: the first share's thread writes the row's LSE.
  Value writesLse = keyShares > 1
                        ? arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                                thread, idx(shape.qRows()))
                        : Value();
  Value one = f32(1.0f), zero = f32(0.0f);
  int64_t oChunks = columns / kOChunk;
  bool split = shape.splits() > 1;
  // Runs `body` where this thread writes its row's LSE.
  auto lseWriter = [&](function_ref<void()> body) {
    if (!writesLse)
      return body();
    auto ifOp = scf::IfOp::create(b, writesLse);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };

  kernel.forEachTile([&](const Tile &tile) {
    // The rescale of `warpgroup`'s O for block n: `started` once O holds a
    // product of an earlier block of the tile.
    auto rescale = [&](Value n, int64_t warpgroup, Value started) {
      Value statsIndex = statsHandoff(tile, n);
      ChannelWaitOp::create(b, stats[warpgroup], statsIndex);
      Value accScale = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(warpgroup), idx(0), thread});
      ChannelReleaseOp::create(b, stats[warpgroup], statsIndex);
      // A warp touches O only if one of its 32 rows needs the rescale, and
      // only once O holds a previous block's product.
      Value needs =
          arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, accScale, one);
      Value anyRow = warpAny(needs);
      auto ifOp =
          scf::IfOp::create(b, arith::AndIOp::create(b, anyRow, started));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value oRegion = oTmem[warpgroup];
        Value factor = vector::BroadcastOp::create(b, chunkType, accScale);
        for (int64_t c = 0; c < oChunks; ++c) {
          Value o = TmemLoadOp::create(b, chunkType, oRegion, c * kOChunk);
          tmemWait(/*load=*/true);
          TmemStoreOp::create(b, arith::MulFOp::create(b, o, factor), oRegion,
                              c * kOChunk);
        }
        tmemWait(/*load=*/false);
      }
      ChannelCommitOp::create(b, pFirst[warpgroup], blockHandoff(tile, n));
    };
    forRange(tile.blocks, [&](Value n) {
      if (!interleaved) {
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        for (int64_t stage = 0; stage < plan.getQStages(); ++stage)
          rescale(n, stage, started);
        return;
      }
      // Interleaved: block n is its warpgroup's; the warpgroup's previous
      // block of the tile, if any, is n - 2.
      Value started =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(1));
      Value second = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                           warpgroupOf(tile, n), idx(1));
      auto ifOp = scf::IfOp::create(b, second, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      rescale(n, 1, started);
      b.setInsertionPointToStart(ifOp.elseBlock());
      rescale(n, 0, started);
    });

    if (interleaved)
      return buildCombinedEpilogue(tile, row);

    // The row's sink logit (the same head in every Q stage), loaded while
    // the last PV MMAs run (not through the loop: a register the 64 of
    // this warpgroup lacked with packed sequences and LSE).
    Value sink = split ? Value() : kernel.sinkLogit(tile, row);
    // Epilogue: O / row_sum in the output type, into the staging tile the
    // TMA store reads.
    Value finalIndex = finalStatsHandoff(tile, 0);
    // FP8: V's descale factor, loaded after the loop (the correction
    // warpgroup's 64 registers hold nothing more through it).
    Value valueDescale = kernel.descaleFactors(tile).second;
    for (int64_t stage = 0; stage < plan.getQStages(); ++stage) {
      ChannelWaitOp::create(b, oReady[stage], tile.ordinal);
      ChannelWaitOp::create(b, stats[stage], finalIndex);
      Value rowSum = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(stage), idx(0), thread});
      Value rowMax = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(stage), idx(1), thread});
      ChannelReleaseOp::create(b, stats[stage], finalIndex);
      // Split-KV: the split's own totals (the sink joins in the combine).
      RowTotals totals =
          kernel.finishRow(split ? Value() : sink, rowMax, rowSum);
      if (shape.lse && !split)
        lseWriter(
            [&] { kernel.storeLse(tile, stage, row, totals.sum, totals.max); });
      // A row that saw no key (causal, Sq > Skv) outputs 0, whatever O holds.
      // FP8: v_descale joins the factor (after the LSE, which it does not
      // change).
      Value rowFactor =
          valueDescale ? arith::MulFOp::create(b, totals.factor, valueDescale)
                       : totals.factor;
      Value factor = vector::BroadcastOp::create(b, chunkType, rowFactor);
      Value zeros = vector::BroadcastOp::create(b, chunkType, zero);
      Value handoff = add(mul(tile.ordinal, plan.getQStages()), stage);
      ChannelAcquireOp::create(b, epi, handoff);
      Value oRegion = oTmem[stage];
      // Split-KV: the row's partial O and LSE go to the workspace (rows
      // past Sq write nothing); the store warp combines the splits.
      Value record, inside;
      if (split) {
        record = kernel.splitRecord(tile, stage, row);
        inside = kernel.rowInside(tile, stage, row);
        auto ifOp = scf::IfOp::create(b, inside);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        lseWriter([&] {
          kernel.storePartialLse(record, tile.split, rowMax, rowSum);
        });
      }
      // RoPE: where the row's rotated columns of O start in the table.
      Value tableRow =
          shape.ropeOutput ? kernel.ropeTableRow(tile, stage, row) : Value();
      for (int64_t c = 0; c < oChunks; ++c) {
        Value o = TmemLoadOp::create(b, chunkType, oRegion, c * kOChunk);
        tmemWait(/*load=*/true);
        Value normalized = arith::SelectOp::create(
            b, totals.sawKey, arith::MulFOp::create(b, o, factor), zeros);
        if (tableRow)
          normalized = kernel.rotateRowBack(normalized, c * kOChunk, tableRow);
        if (split) {
          auto ifOp = scf::IfOp::create(b, inside);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          kernel.storePartialRow(record, tile.split,
                                 firstColumn ? add(firstColumn, c * kOChunk)
                                             : idx(c * kOChunk),
                                 normalized);
          continue;
        }
        if (firstColumn) {
          storeSwizzled(
              arith::TruncFOp::create(
                  b, VectorType::get({kOChunk}, shape.outElement), normalized),
              add(firstColumn, c * kOChunk), staging, row);
          continue;
        }
        stageChunk(normalized, c * kOChunk, staging, row);
      }
      // O is read: the MMA warp may complete the next tile's O.
      ChannelReleaseOp::create(b, oReady[stage], tile.ordinal);
      if (!split)
        fenceProxyAsync();
      ChannelCommitOp::create(b, epi, handoff);
    }
  });
}

void BlackwellPrefillRoles::buildCombinedEpilogue(const Tile &tile, Value row) {
  Type f32Type = b.getF32Type();
  auto chunkType = VectorType::get({kCombinedChunk}, f32Type);
  Value statsBuffer = statistics();
  Value staging =
      smemView(kernel.sharedBuffer("o_staging"), idx(0), outputTileType(kRows));
  Value zero = f32(0.0f);
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value sink = kernel.sinkLogit(tile, row);
  Value valueDescale = kernel.descaleFactors(tile).second;
  // Each warpgroup's row totals: the sum against its own reference (the
  // row max it last rescaled to, or the softcap ceiling). A warpgroup that
  // took none of the tile's blocks left its O as an earlier tile's (or
  // never written): its part is 0, not 0 times O.
  SmallVector<Value> refs, sums, took;
  Value end = add(tile.kvBase, tile.blocks);
  for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
    ChannelWaitOp::create(b, oReady[warpgroup], tile.ordinal);
    Value finalIndex = finalStatsHandoff(tile, warpgroup);
    ChannelWaitOp::create(b, stats[warpgroup], finalIndex);
    sums.push_back(memref::LoadOp::create(
        b, statsBuffer, ValueRange{idx(warpgroup), idx(0), row}));
    refs.push_back(memref::LoadOp::create(
        b, statsBuffer, ValueRange{idx(warpgroup), idx(1), row}));
    ChannelReleaseOp::create(b, stats[warpgroup], finalIndex);
    took.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                         blocksBefore(end, warpgroup),
                                         blocksBefore(tile.kvBase, warpgroup)));
  }
  // The combined row against the larger reference (0 where neither saw a
  // key: both are then -inf and their sums 0).
  Value ref = arith::MaximumFOp::create(b, refs[0], refs[1]);
  Value noKeys =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, ref, negInf);
  Value safeRef = arith::SelectOp::create(b, noKeys, zero, ref);
  SmallVector<Value> weights;
  Value rowSum = zero;
  for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
    Value weight = arith::SelectOp::create(
        b, took[warpgroup],
        exp2(arith::SubFOp::create(b, refs[warpgroup], safeRef)), zero);
    weights.push_back(weight);
    rowSum = arith::AddFOp::create(
        b, rowSum, arith::MulFOp::create(b, sums[warpgroup], weight));
  }
  RowTotals totals = kernel.finishRow(sink, ref, rowSum);
  if (shape.lse)
    kernel.storeLse(tile, 0, row, totals.sum, totals.max);
  Value rowFactor = valueDescale
                        ? arith::MulFOp::create(b, totals.factor, valueDescale)
                        : totals.factor;
  SmallVector<Value> factors;
  for (Value weight : weights)
    factors.push_back(vector::BroadcastOp::create(
        b, chunkType, arith::MulFOp::create(b, weight, rowFactor)));
  Value zeros = vector::BroadcastOp::create(b, chunkType, zero);
  ChannelAcquireOp::create(b, epi, tile.ordinal);
  Value tableRow =
      shape.ropeOutput ? kernel.ropeTableRow(tile, 0, row) : Value();
  for (int64_t c = 0; c < shape.headDimV / kCombinedChunk; ++c) {
    int64_t firstColumn = c * kCombinedChunk;
    Value normalized = zeros;
    for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
      Value o = TmemLoadOp::create(b, chunkType, oTmem[warpgroup], firstColumn);
      tmemWait(/*load=*/true);
      Value part = arith::SelectOp::create(
          b, took[warpgroup], arith::MulFOp::create(b, o, factors[warpgroup]),
          zeros);
      normalized = arith::AddFOp::create(b, normalized, part);
    }
    // A row that saw no key outputs 0.
    normalized = arith::SelectOp::create(b, totals.sawKey, normalized, zeros);
    if (tableRow)
      normalized = kernel.rotateRowBack(normalized, firstColumn, tableRow);
    stageChunk(normalized, firstColumn, staging, row);
  }
  // Both Os are read: the MMA warp may complete the next tile's.
  for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup)
    ChannelReleaseOp::create(b, oReady[warpgroup], tile.ordinal);
  fenceProxyAsync();
  ChannelCommitOp::create(b, epi, tile.ordinal);
}

void BlackwellPrefillRoles::stageChunk(Value normalized, int64_t firstColumn,
                                       Value staging, Value row) {
  // 16-byte chunk c of row r sits at chunk c xor (r mod 8): the 128-byte
  // swizzle the TMA store reads.
  Value swizzle = rem(row, 8);
  int64_t columns = cast<VectorType>(normalized.getType()).getNumElements();
  Value packed = arith::TruncFOp::create(
      b, VectorType::get({columns}, shape.outElement), normalized);
  Value atom = idx(firstColumn / kAtom);
  for (int64_t piece = 0; piece < columns / 8; ++piece) {
    int64_t chunk16 = (firstColumn % kAtom) / 8 + piece;
    Value position = arith::XOrIOp::create(b, idx(chunk16), swizzle);
    SmallVector<int64_t> lanes;
    for (int64_t e = 0; e < 8; ++e)
      lanes.push_back(piece * 8 + e);
    Value eight = vector::ShuffleOp::create(b, packed, packed, lanes);
    vector::StoreOp::create(b, eight, staging,
                            ValueRange{atom, row, mul(position, 8)});
  }
}
