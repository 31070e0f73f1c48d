//===- BlackwellRoles.cpp - the FA4 prefill role set (sm_100a) ------------===//
//
// The FlashAttention-4 CTA: a softmax warpgroup per Q stage reading S from
// and writing P to Tensor Memory, a correction warpgroup rescaling O and
// writing the epilogue, one MMA warp issuing tcgen05 MMAs, and the shared
// TMA load and store warps. With kvInterleave = 2 the two softmax
// warpgroups share one Q stage and take its KV blocks in turn (even and odd
// blocks of the CTA's sequence of blocks), each with its own S, P and O;
// the correction warpgroup combines their rows before the store.
//
//===----------------------------------------------------------------------===//

#include "RoleSet.h"
#include "ScoreStage.h"
#include "WorkSchedule.h"

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

class BlackwellPrefillRoles final : public RoleSet {
public:
  using RoleSet::RoleSet;

  SmallVector<SharedBuffer> sharedBuffers() const override;
  void build(Block &roles) override;

private:
  void buildSoftmax(int64_t warpgroup);
  void buildCorrection();
  /// The correction's epilogue of an interleaved tile: both warpgroups'
  /// partial rows combined, normalized and staged for the store.
  void buildCombinedEpilogue(const Tile &tile, Value row);
  void buildMma();
  void buildInterleavedMma();
  /// The MMA warp's operands of the two PV MMAs: the key ranges [0,
  /// pvSplit) and [pvSplit, blockN) of the V tile of K/V hand-off
  /// `handoff`, and of a warpgroup's P (`region`).
  std::pair<Value, Value> valueParts(Value handoff);
  std::pair<Value, Value> pHalves(Value region);
  /// The V tile of K/V hand-off `handoff`, and its keys [first, first +
  /// keys).
  Value valueTile(Value handoff);
  Value valueKeys(Value vTile, int64_t first, int64_t keys);
  /// P as hi + lo: the two parts of chunk `c` of P, each a 16-bit view of
  /// half of the chunk's columns of S (`region`).
  std::pair<Value, Value> pParts(Value region, int64_t c);
  /// The PV MMAs into `warpgroup`'s O of the block whose hand-off is `k`
  /// with the V tile of hand-off `vHandoff`, each once the softmax handed
  /// over its part of P: P's two halves (`pTop`, `pBottom`); with hi + lo,
  /// per 32-key chunk of P its hi and then its lo.
  void issuePv(int64_t warpgroup, Value k, Value pTop, Value pBottom,
               Value vHandoff, Value accumulate);
  /// Stages a chunk (whole 16-byte pieces) of a normalized O row (f32)
  /// for the TMA store, in the output type and the 128-byte swizzle.
  void stageChunk(Value normalized, int64_t firstColumn, Value staging,
                  Value row);

  /// Interleaved: which softmax warpgroup takes the tile's block `n`.
  Value warpgroupOf(const Tile &tile, Value n) {
    return rem(add(tile.kvBase, n), 2);
  }
  /// The hand-off number of block `n` on its softmax warpgroup's S, P and
  /// statistics channels: the CTA's blocks so far, or with interleaving
  /// the warpgroup's (its blocks are every other one of the CTA's).
  Value blockHandoff(const Tile &tile, Value n) {
    Value k = add(tile.kvBase, n);
    return interleaved ? div(k, 2) : k;
  }
  Value statsHandoff(const Tile &tile, Value n) {
    return interleaved ? add(blockHandoff(tile, n), tile.ordinal)
                       : add(tile.statsBase, n);
  }
  /// The tile's last statistics hand-off of `warpgroup` (its row totals):
  /// after its blocks of this and earlier tiles, and one per earlier tile.
  Value finalStatsHandoff(const Tile &tile, int64_t warpgroup) {
    if (!interleaved)
      return add(tile.statsBase, tile.blocks);
    return add(blocksBefore(add(tile.kvBase, tile.blocks), warpgroup),
               tile.ordinal);
  }
  /// Interleaved: the CTA's first `k` blocks that `warpgroup` took.
  Value blocksBefore(Value k, int64_t warpgroup) {
    return div(add(k, 1 - warpgroup), 2);
  }

  /// Softmax warpgroups, each with its own S, P, O and channels; the Q
  /// stage a warpgroup's rows belong to.
  int64_t warpgroups = 0;
  bool interleaved = false;
  int64_t qStageOf(int64_t warpgroup) const {
    return interleaved ? 0 : warpgroup;
  }
  /// RoPE: the softmax warpgroup of Q stage `stage` (this thread `thread`
  /// of it) rotates the stage's Q tile of `tile` and hands it to the MMA
  /// warp; the slot's previous Q goes back to the load warp first.
  void rotateQuery(const Tile &tile, int64_t stage, Value thread);
  /// The statistics exchange of the softmax and correction warpgroups:
  /// [softmax warpgroup, acc_scale or row_sum / row max, row].
  Value statistics();

  // Channels: shared with the load and store roles, then per softmax
  // warpgroup.
  Value q, kv, epi;
  // With a rotary embedding, Q as its softmax warpgroup rotated it for the
  // MMA warp (q then ends at the softmax warpgroup).
  Value qRotated;
  SmallVector<Value> s, pFirst, pSecond, stats, oReady;
  // Tensor Memory per softmax warpgroup.
  // P only without hi + lo (pPrecision), which writes into S.
  SmallVector<Value> sTmem, pTmem, oTmem;
};
} // namespace

SmallVector<SharedBuffer> BlackwellPrefillRoles::sharedBuffers() const {
  // Tiles are in the 128-byte swizzle, whose pattern spans 1024 bytes.
  return {{"q", shape.qSlots() * shape.qTileBytes(), 1024},
          {"kv", shape.plan.getKvStages() * shape.kvTileBytes(), 1024},
          {"o_staging", shape.oTileBytes(), 1024},
          {"statistics", shape.statsBytes(), 16}};
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
  tmemBuffers("s", plan.getBlockN(), f32Type, sTmem);
  tmemBuffers("o", shape.headDimV, f32Type, oTmem);
  // P as hi + lo lives in S's columns themselves (pParts).
  if (!plan.isHiLo())
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
  int64_t blockN = plan.getBlockN(), chunks = blockN / kChunk;
  Type f32Type = b.getF32Type();
  auto chunkType = VectorType::get({kChunk}, f32Type);
  auto chunkIndexType = VectorType::get({kChunk}, b.getI32Type());

  Value sRegion = sTmem[warpgroup];
  Value pRegion = pTmem.empty() ? Value() : pTmem[warpgroup];
  Value statsBuffer = statistics();
  Value row = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
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
  for (int64_t i = 0; i < kChunk; ++i)
    chunkColumns.push_back(static_cast<int32_t>(i));
  auto contract =
      arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);

  kernel.forEachTile([&](const Tile &tile) {
    // Interleaved, the first warpgroup rotates the shared Q tile.
    if (shape.rope() && (!interleaved || warpgroup == 0))
      rotateQuery(tile, stage, row);
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
              TmemLoadOp::create(b, chunkType, sRegion, c * kChunk));
        tmemWait(/*load=*/true);
      }

      // Scores in log2 units; in a masked block, keys the score stage masks
      // are -inf.
      VisibleKeys visible;
      Value negInfChunk;
      if (masked) {
        visible = scoreStage.visibleKeys(
            rowKeys, mul(add(tile.firstBlock, n), blockN));
        for (Value *bound : {&visible.low, &visible.high})
          if (*bound)
            *bound = vector::BroadcastOp::create(b, chunkIndexType, *bound);
        negInfChunk = vector::BroadcastOp::create(b, chunkType, negInf);
      }
      // Chunk c of the loaded S as the score stage transforms and masks it.
      auto transformChunk = [&](Value loaded, int64_t c) {
        // The thread's row is one position and head; chunk c holds keys
        // firstKey + c kChunk + [0, kChunk).
        Value chunk = scoreStage.transform(
            loaded,
            [&] {
              return FragmentCoords{
                  tile.batch,
                  {add(first, div(row, shape.pack))},
                  {add(mul(tile.headBlock, shape.pack), rem(row, shape.pack))},
                  {},
                  add(mul(add(tile.firstBlock, n), blockN), c * kChunk),
                  chunkColumns,
                  !masked,
                  tile.seqQ,
                  tile.seqKv};
            },
            scoreDescale);
        if (!masked)
          return chunk;
        SmallVector<int32_t> columns;
        for (int64_t i = 0; i < kChunk; ++i)
          columns.push_back(static_cast<int32_t>(c * kChunk + i));
        Value column = arith::ConstantOp::create(
            b, DenseIntElementsAttr::get(chunkIndexType, columns));
        return scoreStage.maskScores(chunk, column, visible, negInfChunk);
      };
      auto loadChunk = [&](int64_t c) {
        Value loaded = TmemLoadOp::create(b, chunkType, sRegion, c * kChunk);
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
                              ValueRange{statsRow, idx(0), row});
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
        auto pChunkType = VectorType::get({kChunk}, shape.element);
        Value packed = arith::TruncFOp::create(b, pChunkType, p);
        if (hiLo) {
          // hi and the residual lo = P - hi over the chunk's S columns.
          auto [hi, lo] = pParts(sRegion, c);
          TmemStoreOp::create(b, packed, hi, 0);
          Value residual = arith::SubFOp::create(
              b, p, arith::ExtFOp::create(b, chunkType, packed));
          TmemStoreOp::create(
              b, arith::TruncFOp::create(b, pChunkType, residual), lo, 0);
        } else {
          TmemStoreOp::create(b, packed, pRegion, c * kChunk);
        }
        if ((c + 1) * kChunk == plan.getPvSplit()) {
          tmemWait(/*load=*/false);
          ChannelCommitOp::create(b, pFirst[warpgroup], k);
        }
      }
      tmemWait(/*load=*/false);
      ChannelCommitOp::create(b, pSecond[warpgroup], k);
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
      return blockLoop(unmaskedEnd, tile.blocks, interior.getResults(), true,
                       underCeiling)
          .getResults();
    };
    SmallVector<Value> rowTotals =
        ceiling.onEachSide(b, TypeRange{f32Type, f32Type}, blockLoops);
    // The row sum and max for the epilogue.
    Value finalIndex = finalStatsHandoff(tile, warpgroup);
    ChannelAcquireOp::create(b, stats[warpgroup], finalIndex);
    memref::StoreOp::create(b, rowTotals[1], statsBuffer,
                            ValueRange{statsRow, idx(0), row});
    memref::StoreOp::create(b, rowTotals[0], statsBuffer,
                            ValueRange{statsRow, idx(1), row});
    ChannelCommitOp::create(b, stats[warpgroup], finalIndex);
  });
}

void BlackwellPrefillRoles::buildCorrection() {
  PlanAttr plan = shape.plan;
  Type f32Type = b.getF32Type();
  // The correction warpgroup works in narrow fragments: its register budget
  // is small.
  auto chunkType = VectorType::get({kOChunk}, f32Type);
  Value statsBuffer = statistics();
  Value staging =
      smemView(kernel.sharedBuffer("o_staging"), idx(0), outputTileType(kRows));
  Value row = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value one = f32(1.0f), zero = f32(0.0f);
  int64_t oChunks = shape.headDimV / kOChunk;
  bool split = shape.splits() > 1;

  kernel.forEachTile([&](const Tile &tile) {
    // The rescale of `warpgroup`'s O for block n: `started` once O holds a
    // product of an earlier block of the tile.
    auto rescale = [&](Value n, int64_t warpgroup, Value started) {
      Value statsIndex = statsHandoff(tile, n);
      ChannelWaitOp::create(b, stats[warpgroup], statsIndex);
      Value accScale = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(warpgroup), idx(0), row});
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
          b, statsBuffer, ValueRange{idx(stage), idx(0), row});
      Value rowMax = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(stage), idx(1), row});
      ChannelReleaseOp::create(b, stats[stage], finalIndex);
      // Split-KV: the split's own totals (the sink joins in the combine).
      RowTotals totals =
          kernel.finishRow(split ? Value() : sink, rowMax, rowSum);
      if (shape.lse && !split)
        kernel.storeLse(tile, stage, row, totals.sum, totals.max);
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
        kernel.storePartialLse(record, tile.split, rowMax, rowSum);
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
          kernel.storePartialRow(record, tile.split, idx(c * kOChunk),
                                 normalized);
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

void BlackwellPrefillRoles::rotateQuery(const Tile &tile, int64_t stage,
                                        Value thread) {
  Value handoff = add(mul(tile.ordinal, shape.plan.getQStages()), stage);
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
  kernel.rotateQueryTile(tile, stage, qTile, thread, kWarpgroup);
  ChannelCommitOp::create(b, qRotated, handoff);
}

Value BlackwellPrefillRoles::valueTile(Value handoff) {
  Value offset =
      mul(rem(handoff, shape.plan.getKvStages()), shape.kvTileBytes());
  return smemView(kernel.sharedBuffer("kv"), offset,
                  tileType(shape.vRows(), shape.vAtoms()));
}

Value BlackwellPrefillRoles::valueKeys(Value vTile, int64_t first,
                                       int64_t keys) {
  // Row ranges of an MN-major V (keys x Dv), column ranges of a key-major
  // one (Dv x keys, FP8: one atom of 128 keys).
  SmallVector<int64_t> offsets{0, 0, 0},
      sizes{shape.vAtoms(), shape.vRows(), shape.atomColumns()};
  int64_t dim = shape.valueKeyMajor ? 2 : 1;
  offsets[dim] = first;
  sizes[dim] = keys;
  return memref::SubViewOp::create(b, vTile, offsets, sizes,
                                   ArrayRef<int64_t>{1, 1, 1});
}

std::pair<Value, Value> BlackwellPrefillRoles::valueParts(Value handoff) {
  int64_t blockN = shape.plan.getBlockN(), split = shape.plan.getPvSplit();
  Value v = valueTile(handoff);
  Value top = valueKeys(v, 0, split);
  return {top, valueKeys(v, split, blockN - split)};
}

std::pair<Value, Value> BlackwellPrefillRoles::pHalves(Value region) {
  // 16-bit P two per column, e4m3 four.
  int64_t blockN = shape.plan.getBlockN(), split = shape.plan.getPvSplit();
  int64_t bits = shape.element.getIntOrFloatBitWidth();
  return {tmemView(region, 0, split, shape.element),
          tmemView(region, split * bits / 32, blockN - split, shape.element)};
}

std::pair<Value, Value> BlackwellPrefillRoles::pParts(Value region, int64_t c) {
  // kChunk f32 columns of S hold the chunk's kChunk 16-bit hi and lo.
  return {tmemView(region, c * kChunk, kChunk, shape.element),
          tmemView(region, c * kChunk + kChunk / 2, kChunk, shape.element)};
}

void BlackwellPrefillRoles::issuePv(int64_t warpgroup, Value k, Value pTop,
                                    Value pBottom, Value vHandoff,
                                    Value accumulate) {
  // An FP8 V is read key-major (8-bit MMA operands are K-major).
  OperandMajor vMajor =
      shape.valueKeyMajor ? OperandMajor::k : OperandMajor::mn;
  if (shape.plan.isHiLo()) {
    // Per chunk: O += hi V_c + lo V_c, the chunks before pvSplit once the
    // softmax handed over the first part.
    Value always = arith::ConstantIntOp::create(b, 1, 1);
    int64_t chunks = shape.plan.getBlockN() / kChunk;
    int64_t firstPart = shape.plan.getPvSplit() / kChunk;
    Value vTile = valueTile(vHandoff);
    for (int64_t c = 0; c < chunks; ++c) {
      if (c == 0 || c == firstPart)
        ChannelWaitOp::create(
            b, c == 0 ? pFirst[warpgroup] : pSecond[warpgroup], k);
      auto [hi, lo] = pParts(sTmem[warpgroup], c);
      Value v = valueKeys(vTile, c * kChunk, kChunk);
      MmaOp::create(b, hi, v, oTmem[warpgroup], c == 0 ? accumulate : always,
                    vMajor, /*depth=*/IntegerAttr());
      MmaOp::create(b, lo, v, oTmem[warpgroup], always, vMajor,
                    /*depth=*/IntegerAttr());
    }
    return;
  }
  auto [vTop, vBottom] = valueParts(vHandoff);
  ChannelWaitOp::create(b, pFirst[warpgroup], k);
  MmaOp::create(b, pTop, vTop, oTmem[warpgroup], accumulate, vMajor,
                /*depth=*/IntegerAttr());
  ChannelWaitOp::create(b, pSecond[warpgroup], k);
  MmaOp::create(b, pBottom, vBottom, oTmem[warpgroup],
                arith::ConstantIntOp::create(b, 1, 1), vMajor,
                /*depth=*/IntegerAttr());
}

void BlackwellPrefillRoles::buildMma() {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages(), kvStages = plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);

  Value qSmem = kernel.sharedBuffer("q"), kvSmem = kernel.sharedBuffer("kv");
  elected([&] {
    kernel.forEachTile([&](const Tile &tile) {
      Value base = tile.kvBase, ordinal = tile.ordinal;
      SmallVector<Value> qHandoff, qTile, sRegion, pTop, pBottom;
      Value qIn = shape.rope() ? qRotated : q;
      for (int64_t stage = 0; stage < stages; ++stage) {
        qHandoff.push_back(add(mul(ordinal, stages), stage));
        ChannelWaitOp::create(b, qIn, qHandoff.back());
        qTile.push_back(smemView(qSmem, idx(stage * shape.qTileBytes()),
                                 tileType(shape.qRows(), shape.qkAtoms())));
        sRegion.push_back(sTmem[stage]);
        auto [top, bottom] =
            pTmem.empty() ? std::pair<Value, Value>() : pHalves(pTmem[stage]);
        pTop.push_back(top);
        pBottom.push_back(bottom);
      }
      // PV for `stage` of the block whose hand-off number is `k`, with the V
      // tile of hand-off `vHandoff`.
      auto pv = [&](int64_t stage, Value k, Value vHandoff, Value accumulate) {
        issuePv(stage, k, pTop[stage], pBottom[stage], vHandoff, accumulate);
      };

      // Per KV block: the previous block's PVs, then this block's QK^T, for
      // every Q stage. tcgen05 MMAs of one thread run in order, so S is
      // overwritten only after the PV that read P from it.
      forRange(tile.blocks, [&](Value n) {
        Value k = add(base, n);
        Value kHandoff = mul(k, 2);
        Value kOffset = mul(rem(kHandoff, kvStages), shape.kvTileBytes());
        Value kTile = smemView(kvSmem, kOffset,
                               tileType(shape.kvRows(), shape.qkAtoms()));
        ChannelWaitOp::create(b, kv, kHandoff);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        Value accumulate =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(1));
        for (int64_t stage = 0; stage < stages; ++stage) {
          auto ifOp = scf::IfOp::create(b, started);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            Value previous = arith::SubIOp::create(b, k, idx(1));
            pv(stage, previous, arith::SubIOp::create(b, kHandoff, idx(1)),
               accumulate);
          }
          MmaOp::create(b, qTile[stage], kTile, sRegion[stage], falseValue,
                        OperandMajor::k, shape.depthAttr(b));
          ChannelCommitOp::create(b, s[stage], k);
        }
        ChannelReleaseOp::create(b, kv, kHandoff);
        auto ifOp = scf::IfOp::create(b, started);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          ChannelReleaseOp::create(b, kv,
                                   arith::SubIOp::create(b, kHandoff, idx(1)));
        }
        ChannelWaitOp::create(b, kv, add(kHandoff, 1));
      });

      // The last block's PVs complete O (a tile with no block has none: its
      // rows saw no key).
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      auto lastIf = scf::IfOp::create(b, anyBlock);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(lastIf.thenBlock());
        Value last = arith::SubIOp::create(b, add(base, tile.blocks), idx(1));
        Value lastV = add(mul(last, 2), 1);
        Value accumulate = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                 tile.blocks, idx(1));
        for (int64_t stage = 0; stage < stages; ++stage)
          pv(stage, last, lastV, accumulate);
        ChannelReleaseOp::create(b, kv, lastV);
      }
      // A tile with blocks only gets here after the correction warps took
      // the previous O (its PVs waited for them), but one without blocks
      // would hand over O again before the previous hand-off was taken.
      for (int64_t stage = 0; stage < stages; ++stage) {
        ChannelAcquireOp::create(b, oReady[stage], ordinal);
        ChannelCommitOp::create(b, oReady[stage], ordinal);
      }
      for (Value handoff : qHandoff)
        ChannelReleaseOp::create(b, qIn, handoff);
    });
  });
}

void BlackwellPrefillRoles::buildInterleavedMma() {
  int64_t kvStages = shape.plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);
  Value qSmem = kernel.sharedBuffer("q"), kvSmem = kernel.sharedBuffer("kv");
  Value qIn = shape.rope() ? qRotated : q;

  elected([&] {
    kernel.forEachTile([&](const Tile &tile) {
      // One Q tile for both warpgroups.
      Value qHandoff = tile.ordinal;
      ChannelWaitOp::create(b, qIn, qHandoff);
      Value qTile =
          smemView(qSmem, idx(0), tileType(shape.qRows(), shape.qkAtoms()));
      // Block n's QK^T into its warpgroup's S.
      auto scores = [&](int64_t warpgroup, Value n, Value kTile) {
        MmaOp::create(b, qTile, kTile, sTmem[warpgroup], falseValue,
                      OperandMajor::k, shape.depthAttr(b));
        ChannelCommitOp::create(b, s[warpgroup], blockHandoff(tile, n));
      };
      // Block n's PV into its warpgroup's O (`accumulate`: O holds an
      // earlier block of the tile).
      auto pv = [&](int64_t warpgroup, Value n, Value accumulate) {
        auto [pTop, pBottom] = pTmem.empty() ? std::pair<Value, Value>()
                                             : pHalves(pTmem[warpgroup]);
        issuePv(warpgroup, blockHandoff(tile, n), pTop, pBottom,
                add(mul(add(tile.kvBase, n), 2), 1), accumulate);
      };
      // `build(w)` for the warpgroup of block n (a run-time choice).
      auto onWarpgroupOf = [&](Value n, function_ref<void(int64_t)> build) {
        Value second = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             warpgroupOf(tile, n), idx(1));
        auto ifOp = scf::IfOp::create(b, second, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        build(1);
        b.setInsertionPointToStart(ifOp.elseBlock());
        build(0);
      };

      // Per KV block: its QK^T into its warpgroup's S, then the previous
      // block's PV into the other warpgroup's O, which overlaps with this
      // block's softmax. A warpgroup's S is overwritten only after the PV
      // that read its P (issued a block earlier; tcgen05 MMAs of one thread
      // run in order).
      forRange(tile.blocks, [&](Value n) {
        Value kHandoff = mul(add(tile.kvBase, n), 2);
        Value kOffset = mul(rem(kHandoff, kvStages), shape.kvTileBytes());
        Value kTile = smemView(kvSmem, kOffset,
                               tileType(shape.kvRows(), shape.qkAtoms()));
        ChannelWaitOp::create(b, kv, kHandoff);
        onWarpgroupOf(n, [&](int64_t w) { scores(w, n, kTile); });
        ChannelReleaseOp::create(b, kv, kHandoff);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        auto ifOp = scf::IfOp::create(b, started);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value previous = arith::SubIOp::create(b, n, idx(1));
          // The previous block is its warpgroup's first of the tile unless
          // n - 1 >= 2.
          Value accumulate =
              arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(2));
          onWarpgroupOf(previous,
                        [&](int64_t w) { pv(w, previous, accumulate); });
          ChannelReleaseOp::create(b, kv,
                                   arith::SubIOp::create(b, kHandoff, idx(1)));
        }
        ChannelWaitOp::create(b, kv, add(kHandoff, 1));
      });

      // The last block's PV (a tile with no block has none).
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      auto lastIf = scf::IfOp::create(b, anyBlock);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(lastIf.thenBlock());
        Value last = arith::SubIOp::create(b, tile.blocks, idx(1));
        Value accumulate = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                 tile.blocks, idx(2));
        onWarpgroupOf(last, [&](int64_t w) { pv(w, last, accumulate); });
        ChannelReleaseOp::create(b, kv, add(mul(add(tile.kvBase, last), 2), 1));
      }
      // Both Os, complete (or, for a warpgroup without blocks in the tile,
      // untouched: the epilogue leaves that one out) once the MMAs before
      // this commit are.
      for (int64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
        ChannelAcquireOp::create(b, oReady[warpgroup], tile.ordinal);
        ChannelCommitOp::create(b, oReady[warpgroup], tile.ordinal);
      }
      ChannelReleaseOp::create(b, qIn, qHandoff);
    });
  });
}

std::unique_ptr<RoleSet>
specialize::createBlackwellPrefillRoles(KernelBuilder &kernel) {
  return std::make_unique<BlackwellPrefillRoles>(kernel);
}
