//===- BlackwellRoles.cpp - the FA4 prefill role set (sm_100a) ------------===//
//
// The role set's buffers, channels and Tensor Memory, and its softmax
// warpgroups (BlackwellRoles.h describes the CTA).
//
//===----------------------------------------------------------------------===//

#include "BlackwellRoles.h"
#include "ScoreStage.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

SmallVector<SharedBuffer> BlackwellPrefillRoles::sharedBuffers() const {
  // Tiles are in the 128-byte swizzle, whose pattern spans 1024 bytes.
  SmallVector<SharedBuffer> buffers = {
      {"q", shape.qSlots() * shape.qTileBytes(), 1024},
      {"kv", shape.plan.getKvStages() * shape.kvTileBytes(), 1024},
      {"o_staging", shape.oTileBytes(), 1024},
      {"statistics", shape.statsBytes(), 16}};
  // Shared keys: each softmax warpgroup's P for its PV MMA, and its row
  // exchange (two halves of an f32 per thread).
  if (int64_t softmaxWarpgroups = shape.plan.getSoftmaxWarpgroups();
      shape.plan.getKeyShares() > 1) {
    buffers.push_back({"p", softmaxWarpgroups * shape.pTileBytes(), 1024});
    buffers.push_back(
        {"exchange",
         softmaxWarpgroups * 2 * kWarpgroup * int64_t(sizeof(float)), 16});
  }
  return buffers;
}

Value BlackwellPrefillRoles::pTile(int64_t warpgroup) {
  return smemView(kernel.sharedBuffer("p"), idx(warpgroup * shape.pTileBytes()),
                  tileType(shape.qRows(), shape.plan.getBlockN() / kAtom));
}

Value BlackwellPrefillRoles::exchangeRow(int64_t warpgroup, Value partial,
                                         bool max, Value sequence, Value thread,
                                         Value row) {
  Value buffer =
      smemView(kernel.sharedBuffer("exchange"),
               idx(warpgroup * 2 * kWarpgroup * int64_t(sizeof(float))),
               sharedType({2, kWarpgroup}, b.getF32Type()));
  Value half = rem(sequence, 2);
  memref::StoreOp::create(b, partial, buffer, ValueRange{half, thread});
  // The warpgroup's own hardware barrier, past the statistics hand-offs'
  // (1 + softmax warpgroup).
  NamedBarrierSyncOp::create(b,
                             static_cast<uint32_t>(1 + warpgroups + warpgroup),
                             static_cast<uint32_t>(kWarpgroup));
  // The row's shares are threads row, row + rows, ...: a left fold in that
  // order, the same in each of them.
  Value result;
  for (int64_t share = 0; share < keyShares; ++share) {
    Value value = memref::LoadOp::create(
        b, buffer, ValueRange{half, add(row, share * shape.qRows())});
    result = !result ? value
             : max   ? arith::MaximumFOp::create(b, result, value).getResult()
                     : arith::AddFOp::create(b, result, value).getResult();
  }
  return result;
}

Value BlackwellPrefillRoles::statistics() {
  return smemView(
      kernel.sharedBuffer("statistics"), idx(0),
      sharedType({warpgroups, kStatsPerRow, kRows}, b.getF32Type()));
}

void BlackwellPrefillRoles::build(Block &roles) {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages();
  warpgroups = plan.getSoftmaxWarpgroups();
  interleaved = plan.getInterleave() > 1;
  keyShares = plan.getKeyShares();
  // The hand-offs of the FA4 protocol.
  // RoPE: the softmax warpgroup of each Q stage rotates its Q tile where
  // TMA put it and hands it to the MMA warp.
  q = channel("q", stages, tma(), shape.rope() ? threads(kWarpgroup) : mma());
  if (shape.rope())
    qRotated = channel("q_rotated", stages, threads(kWarpgroup), mma());
  kv = channel("kv", plan.getKvStages(), tma(), mma());
  for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
    std::string suffix = std::to_string(warpgroup);
    s.push_back(channel("s_ready" + suffix, 1, mma(), threads(kWarpgroup)));
    // Softmax wrote P[0, pvSplit) and correction finished O: 256 arrivals.
    pFirst.push_back(
        channel("p_o_rescale" + suffix, 1, threads(2 * kWarpgroup), mma()));
    // Shared keys: one PV MMA, released by p_o_rescale alone.
    if (keyShares == 1)
      pSecond.push_back(
          channel("p_ready_2_" + suffix, 1, threads(kWarpgroup), mma()));
    // The statistics hand-off pairs a softmax warpgroup with the
    // correction warpgroup on hardware barrier 1 + warpgroup (0 is the
    // CTA's).
    stats.push_back(channel("softmax_corr" + suffix, 1, threads(kWarpgroup),
                            threads(kWarpgroup),
                            static_cast<uint32_t>(1 + warpgroup)));
    oReady.push_back(
        channel("o_ready" + suffix, 1, mma(), threads(kWarpgroup)));
  }
  epi = channel("corr_epi", 1, threads(kWarpgroup), kernel.storeEndpoint());

  // Tensor Memory per softmax warpgroup: S (f32 scores), the O accumulator
  // and P (16-bit or, FP8, e4m3 probabilities, written once S is read).
  // fa4-allocate-tmem places them.
  Type f32Type = b.getF32Type();
  auto tmemBuffers = [&](StringRef prefix, int64_t elements, Type element,
                         SmallVectorImpl<Value> &buffers) {
    for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup)
      buffers.push_back(
          TmemBufferOp::create(b, tmemType(elements, element),
                               prefix.str() + std::to_string(warpgroup)));
  };
  // Shared keys fold S and O over the lanes: 1 / keyShares of the columns.
  tmemBuffers("s", plan.getBlockN() / keyShares, f32Type, sTmem);
  tmemBuffers("o", shape.headDimV / keyShares, f32Type, oTmem);
  // P as hi + lo lives in S's columns themselves (pParts); with shared keys
  // P is in shared memory (pTile).
  if (!plan.isHiLo() && keyShares == 1)
    tmemBuffers("p", plan.getBlockN(), shape.element, pTmem);

  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&roles);
  for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup)
    role("softmax" + std::to_string(warpgroup), 4 * warpgroup,
         4 * warpgroup + 4, plan.getSoftmaxRegs(),
         [&] { buildSoftmax(warpgroup); });
  int64_t correction = 4 * warpgroups, producer = correction + 4;
  role("correction", correction, correction + 4, plan.getCorrectionRegs(),
       [&] { buildCorrection(); });
  role("mma", producer, producer + 1, plan.getProducerRegs(), [&] {
    if (interleaved)
      buildInterleavedMma();
    else
      buildMma();
  });
  role("load", producer + 1, producer + 2, plan.getProducerRegs(),
       [&] { kernel.buildLoadRole(q, kv, /*firstKeyBeforeQuery=*/false); });
  role("store", producer + 2, producer + 3, plan.getProducerRegs(),
       [&] { kernel.buildStoreRole(epi, /*stagingPerStage=*/false); });
}

void BlackwellPrefillRoles::buildSoftmax(int64_t warpgroup) {
  PlanAttr plan = shape.plan;
  int64_t stage = qStageOf(warpgroup);
  // A thread's keys of a block: all of them, or with shared keys its
  // share, in chunks of at most kChunk columns.
  int64_t blockN = plan.getBlockN(), keys = blockN / keyShares;
  int64_t width = std::min(kChunk, keys), chunks = keys / width;
  Type f32Type = b.getF32Type();
  auto chunkType = VectorType::get({width}, f32Type);
  auto chunkIndexType = VectorType::get({width}, b.getI32Type());

  Value sRegion = sTmem[warpgroup];
  Value pRegion = pTmem.empty() ? Value() : pTmem[warpgroup];
  Value statsBuffer = statistics();
  // The thread's lane, its row of the Q stage and (shared keys) the first
  // of its share's keys; statistics go by lane.
  Value thread = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value row = keyShares > 1 ? rem(thread, shape.qRows()) : thread;
  Value firstKey =
      keyShares > 1 ? mul(div(thread, shape.qRows()), keys) : Value();
  ScoreStage &scoreStage = kernel.getScoreStage();
  // Maxima on the stage's transformed scores, the factor to log2 units
  // fused into the exponent's FMA: the kernel's, or with FP8 descale
  // factors each tile's.
  Value kernelOuter =
      shape.descale ? Value() : scoreStage.outerScale(/*descale=*/Value());
  Value threshold = f32(static_cast<float>(shape.rescaleThreshold));
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value zero = f32(0.0f), one = f32(1.0f);
  Value statsRow = idx(warpgroup);
  // Under a usable score ceiling (a small softcap) the row's reference is
  // the ceiling throughout: no row maximum, no rescale. The block loops are
  // built once for each side of that run-time test, so that neither has a
  // branch in its softmax.
  ScoreStage::Ceiling ceiling = scoreStage.ceiling();
  SmallVector<int32_t> chunkColumns;
  for (int64_t i = 0; i < width; ++i)
    chunkColumns.push_back(static_cast<int32_t>(i));
  auto contract =
      arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);

  kernel.forEachTile([&](const Tile &tile) {
    // Interleaved, the first warpgroup rotates the shared Q tile.
    if (shape.rope() && (!interleaved || warpgroup == 0))
      rotateQuery(tile, stage, thread);
    Value scoreDescale = kernel.descaleFactors(tile).first;
    Value outer =
        kernelOuter ? kernelOuter : scoreStage.outerScale(scoreDescale);
    Value scale = vector::BroadcastOp::create(b, chunkType, outer);
    // This thread's row is query position `first + row / pack` (pack
    // heads share a position).
    Value first = add(tile.position, stage * shape.positionsPerTile());
    RowKeys rowKeys =
        scoreStage.rowKeys(tile, add(first, div(row, shape.pack)));
    // The warpgroup's rows see keys between those of its first and last.
    RowKeys firstRow = scoreStage.rowKeys(tile, first);
    RowKeys lastRow =
        scoreStage.rowKeys(tile, add(first, shape.positionsPerTile() - 1));
    // One KV block of the online softmax: S from TMEM, the conditional
    // rescale, P into TMEM; (max, sum) in, (max, sum) out. Only blocks the
    // score stage may mask compare keys per element.
    auto softmaxBlock = [&](Value n, Value rowMax, Value rowSum, bool masked,
                            bool underCeiling) -> SmallVector<Value> {
      Value k = blockHandoff(tile, n);
      ChannelWaitOp::create(b, s[warpgroup], k);
      // One rounded P: the whole row of S in registers, loaded at once. P
      // as hi + lo: a chunk at a time, once for the row maximum and again
      // for P (the row of S, P and its residual would not fit the softmax's
      // registers); both parts of a chunk's P then take its own S columns.
      bool hiLo = plan.isHiLo();
      SmallVector<Value> scores;
      if (!hiLo) {
        for (int64_t c = 0; c < chunks; ++c)
          scores.push_back(
              TmemLoadOp::create(b, chunkType, sRegion, c * width));
        tmemWait(/*load=*/true);
      }

      // Scores in log2 units; in a masked block, keys the score stage masks
      // are -inf.
      VisibleKeys visible;
      Value negInfChunk, shareColumns;
      if (masked) {
        visible = scoreStage.visibleKeys(
            rowKeys, mul(add(tile.firstBlock, n), blockN));
        // Shared keys: the block's columns of the thread's share start at
        // firstKey.
        if (firstKey)
          shareColumns = vector::BroadcastOp::create(
              b, chunkIndexType,
              arith::IndexCastOp::create(b, b.getI32Type(), firstKey));
        for (Value *bound : {&visible.low, &visible.high})
          if (*bound)
            *bound = vector::BroadcastOp::create(b, chunkIndexType, *bound);
        negInfChunk = vector::BroadcastOp::create(b, chunkType, negInf);
      }
      // Chunk c of the loaded S as the score stage transforms and masks it.
      auto transformChunk = [&](Value loaded, int64_t c) {
        // The thread's row is one position and head; chunk c holds keys
        // blockStart (+ firstKey) + c width + [0, width).
        Value chunk = scoreStage.transform(
            loaded,
            [&] {
              Value chunkKey =
                  add(mul(add(tile.firstBlock, n), blockN), c * width);
              return FragmentCoords{
                  tile.batch,
                  {add(first, div(row, shape.pack))},
                  {add(mul(tile.headBlock, shape.pack), rem(row, shape.pack))},
                  {},
                  firstKey ? add(chunkKey, firstKey) : chunkKey,
                  chunkColumns,
                  !masked,
                  tile.seqQ,
                  tile.seqKv};
            },
            scoreDescale);
        if (!masked)
          return chunk;
        SmallVector<int32_t> columns;
        for (int64_t i = 0; i < width; ++i)
          columns.push_back(static_cast<int32_t>(c * width + i));
        Value column = arith::ConstantOp::create(
            b, DenseIntElementsAttr::get(chunkIndexType, columns));
        if (shareColumns)
          column = arith::AddIOp::create(b, column, shareColumns);
        return scoreStage.maskScores(chunk, column, visible, negInfChunk);
      };
      auto loadChunk = [&](int64_t c) {
        Value loaded = TmemLoadOp::create(b, chunkType, sRegion, c * width);
        tmemWait(/*load=*/true);
        return transformChunk(loaded, c);
      };
      for (auto [c, chunk] : llvm::enumerate(scores))
        chunk = transformChunk(chunk, c);
      // Conditional rescale: the exponent reference moves only when the row
      // max grew by more than the threshold (always from -inf). Under the
      // ceiling it stays.
      Value ref = rowMax, safeRef = rowMax, accScale = one;
      if (!underCeiling) {
        Value tileMax = negInf;
        for (int64_t c = 0; c < chunks; ++c)
          tileMax = vector::ReductionOp::create(
              b, vector::CombiningKind::MAXIMUMF,
              hiLo ? loadChunk(c) : scores[c], tileMax);
        tileMax = arith::MulFOp::create(b, tileMax, outer);
        // Shared keys: the row's maximum over every share, the same bits
        // in each (the rescale decisions below then agree).
        if (keyShares > 1)
          tileMax = exchangeRow(warpgroup, tileMax, /*max=*/true,
                                statsHandoff(tile, n), thread, row);
        Value newMax = arith::MaximumFOp::create(b, rowMax, tileMax);
        Value growth = arith::SubFOp::create(b, newMax, rowMax);
        Value rescale = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                              growth, threshold);
        ref = arith::SelectOp::create(b, rescale, newMax, rowMax);
        // A row that has seen no key yet keeps -inf; exponentiate against 0.
        Value noKeys =
            arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, ref, negInf);
        safeRef = arith::SelectOp::create(b, noKeys, zero, ref);
        accScale = arith::SelectOp::create(
            b, rescale, exp2(arith::SubFOp::create(b, rowMax, safeRef)), one);
      }

      // The correction warpgroup rescales O by accScale.
      Value statsIndex = statsHandoff(tile, n);
      ChannelAcquireOp::create(b, stats[warpgroup], statsIndex);
      memref::StoreOp::create(b, accScale, statsBuffer,
                              ValueRange{statsRow, idx(0), thread});
      ChannelCommitOp::create(b, stats[warpgroup], statsIndex);

      // P = 2^(S - ref), chunk by chunk, into TMEM (rounded to the operand
      // type: 16-bit, or FP8 e4m3): the first pvSplit columns release the
      // first PV MMA, the rest the second. With a linear scale,
      // S scale - ref is one FMA per element.
      Value refChunk = vector::BroadcastOp::create(b, chunkType, safeRef);
      // This block's part of the row sum: each chunk of P summed as a tree
      // (independent packed adds, not one chain through every key) while
      // its registers are live anyway.
      Value blockSum;
      for (int64_t c = 0; c < chunks; ++c) {
        Value exponent = arith::SubFOp::create(
            b,
            arith::MulFOp::create(b, hiLo ? loadChunk(c) : scores[c], scale,
                                  contract),
            refChunk, contract);
        Value p = Exp2Op::create(b, exponent, shape.emulatedExp2);
        Value chunkSum = treeSum(p);
        blockSum =
            blockSum ? arith::AddFOp::create(b, blockSum, chunkSum) : chunkSum;
        auto pChunkType = VectorType::get({width}, shape.element);
        Value packed = arith::TruncFOp::create(b, pChunkType, p);
        if (keyShares > 1) {
          // Shared keys: into the P tile the PV MMA reads.
          storeSwizzled(packed, add(firstKey, c * width), pTile(warpgroup),
                        row);
        } else if (hiLo) {
          // hi and the residual lo = P - hi over the chunk's S columns.
          auto [hi, lo] = pParts(sRegion, c);
          TmemStoreOp::create(b, packed, hi, 0);
          TmemStoreOp::create(b, roundingResidual(p, packed), lo, 0);
        } else {
          TmemStoreOp::create(b, packed, pRegion, c * width);
        }
        if ((c + 1) * width == plan.getPvSplit()) {
          tmemWait(/*load=*/false);
          ChannelCommitOp::create(b, pFirst[warpgroup], k);
        }
      }
      if (keyShares > 1) {
        // P's generic-proxy writes, ordered before the MMA's reads.
        fenceProxyAsync();
        ChannelCommitOp::create(b, pFirst[warpgroup], k);
      } else {
        tmemWait(/*load=*/false);
        ChannelCommitOp::create(b, pSecond[warpgroup], k);
      }
      // The row sum: the previous one rescaled plus this block's.
      Value sum = arith::AddFOp::create(
          b, arith::MulFOp::create(b, rowSum, accScale, contract), blockSum,
          contract);
      return {ref, sum};
    };
    // The blocks the stage may mask before the window's unmasked ones (its
    // left bound), those, and the ones after (the causal diagonal, the
    // window's right bound, the key tail), counted from the tile's first.
    // Interleaved, the warpgroup's blocks of a range: from the first whose
    // place in the CTA's sequence of blocks has the warpgroup's parity,
    // every other one.
    auto blockLoop = [&](Value lower, Value upper, ValueRange init, bool masked,
                         bool underCeiling) {
      Value step = idx(1);
      if (interleaved) {
        lower = add(lower, rem(add(add(tile.kvBase, lower), warpgroup), 2));
        step = idx(2);
      }
      auto loop = scf::ForOp::create(b, lower, upper, step, init);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(
          b, softmaxBlock(loop.getInductionVar(), loop.getRegionIterArg(0),
                          loop.getRegionIterArg(1), masked, underCeiling));
      return loop;
    };
    auto [begin, end] = scoreStage.unmaskedBlocks(
        firstRow, lastRow, KvBlocks{tile.firstBlock, tile.blocks});
    Value unmaskedBegin = arith::SubIOp::create(b, begin, tile.firstBlock);
    Value unmaskedEnd = arith::SubIOp::create(b, end, tile.firstBlock);
    // The tile's blocks: the row's (max, sum).
    auto blockLoops = [&](Value reference) -> SmallVector<Value> {
      bool underCeiling = static_cast<bool>(reference);
      SmallVector<Value> init = {underCeiling ? reference : negInf, zero};
      if (scoreStage.masksLeadingBlocks())
        init = blockLoop(idx(0), unmaskedBegin, init, true, underCeiling)
                   .getResults();
      scf::ForOp interior =
          blockLoop(unmaskedBegin, unmaskedEnd, init, false, underCeiling);
      SmallVector<Value> totals =
          blockLoop(unmaskedEnd, tile.blocks, interior.getResults(), true,
                    underCeiling)
              .getResults();
      // Shared keys: the row sum over the shares (each against the same
      // reference). It continues the exchanges' sequence: after each block's
      // maximum, or under the ceiling (no maxima) one per tile.
      if (keyShares > 1)
        totals[1] = exchangeRow(
            warpgroup, totals[1], /*max=*/false,
            underCeiling ? tile.ordinal : finalStatsHandoff(tile, warpgroup),
            thread, row);
      return totals;
    };
    SmallVector<Value> rowTotals =
        ceiling.onEachSide(b, TypeRange{f32Type, f32Type}, blockLoops);
    // The row sum and max for the epilogue.
    Value finalIndex = finalStatsHandoff(tile, warpgroup);
    ChannelAcquireOp::create(b, stats[warpgroup], finalIndex);
    memref::StoreOp::create(b, rowTotals[1], statsBuffer,
                            ValueRange{statsRow, idx(0), thread});
    memref::StoreOp::create(b, rowTotals[0], statsBuffer,
                            ValueRange{statsRow, idx(1), thread});
    ChannelCommitOp::create(b, stats[warpgroup], finalIndex);
  });
}

void BlackwellPrefillRoles::rotateQuery(const Tile &tile, int64_t stage,
                                        Value thread) {
  Value handoff = add(mul(tile.ordinal, shape.plan.getQStages()), stage);
  // One round's angles (a decode tile's 8 rows at 128-dim rotations):
  // held across the wait, two rounds spilled 4 bytes of the softmax of
  // packed sequences with O rotated back, and any the interleaved
  // softmax's 24-36.
  KernelBuilder::QueryAngles angles = kernel.loadQueryAngles(
      tile, stage, thread, kWarpgroup, interleaved ? 0 : 1);
  // The MMA warp is done with the slot's previous Q once it released the
  // rotated one: only then may TMA load this tile's Q into it.
  ChannelAcquireOp::create(b, qRotated, handoff);
  auto later =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, tile.ordinal, idx(0));
  {
    auto ifOp = scf::IfOp::create(b, later);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    ChannelReleaseOp::create(
        b, q, arith::SubIOp::create(b, handoff, idx(shape.plan.getQStages())));
  }
  ChannelWaitOp::create(b, q, handoff);
  Value qTile =
      smemView(kernel.sharedBuffer("q"), idx(stage * shape.qTileBytes()),
               tileType(shape.qRows(), shape.qkAtoms()));
  // Each thread fences its own writes; the 128 arrivals order them all
  // before the MMA warp's wait.
  kernel.rotateQueryTile(tile, stage, qTile, thread, kWarpgroup, angles);
  ChannelCommitOp::create(b, qRotated, handoff);
}

std::unique_ptr<RoleSet>
specialize::createBlackwellPrefillRoles(KernelBuilder &kernel) {
  return std::make_unique<BlackwellPrefillRoles>(kernel);
}
