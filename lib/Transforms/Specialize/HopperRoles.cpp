//===- HopperRoles.cpp - the FA3 prefill role set (sm_90a) ----------------===//
//
// The FlashAttention-3 CTA: the shared TMA load and store warps and one
// consumer warpgroup per Q stage that computes S, the online softmax and O
// in registers with wgmma; with two consumers, ping-pong turns let one
// consumer's softmax overlap the other's matrix products.
//
//===----------------------------------------------------------------------===//

#include "RoleSet.h"
#include "ScoreStage.h"
#include "WorkSchedule.h"

#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
/// The per-thread fragment layout of a wgmma accumulator (WgmmaEncoding.h):
/// constant column offsets and row selectors for fragments of `count`
/// elements.
struct FragmentLayout {
  static SmallVector<int32_t> columns(int64_t count) {
    SmallVector<int32_t> result;
    for (int64_t i = 0; i < count; ++i)
      result.push_back(static_cast<int32_t>(wgmma::accumulatorColumn(0, i)));
    return result;
  }
  /// Whether element i holds the thread's second row (8 below the first).
  static SmallVector<bool> secondRow(int64_t count) {
    SmallVector<bool> result;
    for (int64_t i = 0; i < count; ++i)
      result.push_back(wgmma::accumulatorRow(0, i) == 8);
    return result;
  }
  /// Indices of the elements of row `which` (0 or 1).
  static SmallVector<int64_t> rowElements(int64_t count, int64_t which) {
    SmallVector<int64_t> result;
    for (int64_t i = 0; i < count; ++i)
      if (wgmma::accumulatorRow(0, i) == 8 * which)
        result.push_back(i);
    return result;
  }
};

class HopperPrefillRoles final : public RoleSet {
public:
  using RoleSet::RoleSet;

  SmallVector<SharedBuffer> sharedBuffers() const override;
  void build(Block &roles) override;

private:
  /// The consumer warpgroup of Q stage `stage`, computing S, the online
  /// softmax and O in registers with wgmma.
  void buildConsumer(int64_t stage);
  /// O's fragment `o` (rows `rows`, column pairs from `quadColumn` in
  /// every 8) with the rotary embedding's columns rotated back.
  Value rotateOutputBack(const Tile &tile, int64_t stage, Value o,
                         ArrayRef<Value> rows, Value quadColumn);

  Value q, kv, epi;
  SmallVector<Value> turns; // ping-pong, one per consumer
};
} // namespace

SmallVector<SharedBuffer> HopperPrefillRoles::sharedBuffers() const {
  // Tiles are in the 128-byte swizzle, whose pattern spans 1024 bytes. An O
  // staging tile per consumer warpgroup and no statistics exchange (a
  // warpgroup owns its rows' statistics in registers).
  return {{"q", shape.qSlots() * shape.qTileBytes(), 1024},
          {"kv", shape.plan.getKvStages() * shape.kvTileBytes(), 1024},
          {"o_staging", shape.plan.getQStages() * shape.oTileBytes(), 1024}};
}

void HopperPrefillRoles::build(Block &roles) {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages();
  // The hand-offs of the FA3 protocol: Q per consumer warpgroup, the K/V
  // ring read by both, a staging tile per consumer for the store warp.
  q = channel("q", shape.qSlots(), tma(), threads(kWarpgroup));
  kv = channel("kv", plan.getKvStages(), tma(), threads(stages * kWarpgroup));
  epi = channel("epilogue", stages, threads(kWarpgroup), kernel.storeEndpoint());
  // Ping-pong: consumer c issues its wgmmas when it holds turn c, on
  // hardware barrier 1 + c, then passes the turn to the next consumer
  // (round robin with three), so that one consumer's softmax overlaps the
  // others' matrix products.
  if (stages > 1)
    for (int64_t stage = 0; stage < stages; ++stage)
      turns.push_back(channel("turn" + std::to_string(stage), 1,
                              threads(kWarpgroup), threads(kWarpgroup),
                              static_cast<uint32_t>(1 + stage)));

  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&roles);
  role("load", 0, 1, plan.getProducerRegs(),
       [&] { kernel.buildLoadRole(q, kv, /*firstKeyBeforeQuery=*/true); });
  role("store", 1, 2, plan.getProducerRegs(),
       [&] { kernel.buildStoreRole(epi, /*stagingPerStage=*/true); });
  for (int64_t stage = 0; stage < stages; ++stage)
    role("consumer" + std::to_string(stage), 4 * stage + 4, 4 * stage + 8,
         plan.getSoftmaxRegs(), [&] { buildConsumer(stage); });
}

void HopperPrefillRoles::buildConsumer(int64_t stage) {
  PlanAttr plan = shape.plan;
  int64_t blockN = plan.getBlockN(), stages = plan.getQStages();
  int64_t kvStages = plan.getKvStages();
  int64_t sCount = blockN / 2, oCount = shape.headDimV / 2;
  Type f32Type = b.getF32Type(), i32Type = b.getI32Type();
  auto sType = VectorType::get({sCount}, f32Type);
  auto oType = VectorType::get({oCount}, f32Type);

  // This thread's rows of the 64-row tile (row0 and row0 + 8) and the first
  // of its two columns in every 8.
  Value thread = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kWarpgroup);
  Value lane = rem(thread, 32);
  Value rows[2];
  rows[0] = add(mul(div(thread, 32), 16), div(lane, 4));
  rows[1] = add(rows[0], 8);
  Value quadColumn = mul(rem(lane, 4), 2);

  auto i1Constant = [&](ArrayRef<bool> values) -> Value {
    auto type =
        VectorType::get({static_cast<int64_t>(values.size())}, b.getI1Type());
    return arith::ConstantOp::create(b, DenseElementsAttr::get(type, values));
  };
  Value sSecondRow = i1Constant(FragmentLayout::secondRow(sCount));
  // Element i of S: row rowOf[i] of the thread's two, column
  // sColumnsList[i] from its first.
  SmallVector<int64_t> rowOf;
  for (bool second : FragmentLayout::secondRow(sCount))
    rowOf.push_back(second ? 1 : 0);
  SmallVector<int32_t> sColumnsList = FragmentLayout::columns(sCount);
  Value oSecondRow = i1Constant(FragmentLayout::secondRow(oCount));
  auto sColumnsType = VectorType::get({sCount}, i32Type);
  Value sColumns = arith::ConstantOp::create(
      b,
      DenseIntElementsAttr::get(sColumnsType, FragmentLayout::columns(sCount)));
  // A fragment holding `first` in row 0's elements and `second` in row 1's.
  auto perRow = [&](Value secondRow, VectorType type, Value first,
                    Value second) -> Value {
    return arith::SelectOp::create(b, secondRow,
                                   vector::BroadcastOp::create(b, type, second),
                                   vector::BroadcastOp::create(b, type, first));
  };
  // The reduction of row `which` of `fragment` over the thread's elements,
  // then over the 4 threads of its quad.
  auto rowReduce = [&](Value fragment, int64_t which,
                       vector::CombiningKind kind) -> Value {
    int64_t count = cast<VectorType>(fragment.getType()).getNumElements();
    Value half = vector::ShuffleOp::create(
        b, fragment, fragment, FragmentLayout::rowElements(count, which));
    Value value = vector::ReductionOp::create(b, kind, half);
    for (int32_t offset : {1, 2}) {
      Value other =
          gpu::ShuffleOp::create(b, value, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      value = kind == vector::CombiningKind::ADD
                  ? Value(arith::AddFOp::create(b, value, other))
                  : Value(arith::MaximumFOp::create(b, value, other));
    }
    return value;
  };

  Value staging =
      smemView(kernel.sharedBuffer("o_staging"),
               idx(stage * shape.oTileBytes()), outputTileType(shape.qRows()));
  // Maxima on the score stage's transformed scores; the factor to log2
  // units fused into the exponent's FMA: the kernel's, or with FP8
  // descale factors each tile's.
  ScoreStage &scoreStage = kernel.getScoreStage();
  Value kernelOuter =
      shape.descale ? Value() : scoreStage.outerScale(/*descale=*/Value());
  auto contract =
      arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);
  Value threshold = f32(static_cast<float>(shape.rescaleThreshold));
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value zero = f32(0.0f), one = f32(1.0f);
  Value negInfS = vector::BroadcastOp::create(b, sType, negInf);
  // Under a usable score ceiling (a small softcap) the rows' reference is
  // the ceiling throughout: no row maxima, no rescale. The KV loop is built
  // once for each side of that run-time test, so that neither has a branch
  // in its softmax.
  ScoreStage::Ceiling ceiling = scoreStage.ceiling();
  Value zeroO = vector::BroadcastOp::create(b, oType, zero);

  auto pType = VectorType::get({sCount}, shape.element);
  // K (blockN rows of Dqk) or V (blockN rows of Dv; key-major Dv rows of
  // blockN) in the ring slot of `handoff`.
  auto kvTile = [&](Value handoff, int64_t rows, int64_t atoms) {
    return smemView(kernel.sharedBuffer("kv"),
                    mul(rem(handoff, kvStages), shape.kvTileBytes()),
                    tileType(rows, atoms));
  };

  // Consumer 0 takes the first turn; it takes the last consumer's last
  // hand-off after its own last turn, so that no barrier arrival is left
  // pending.
  bool lastConsumer = stage == stages - 1;
  if (!turns.empty() && lastConsumer)
    ChannelCommitOp::create(b, turns[0], idx(0));
  kernel.forEachTile([&](const Tile &tile) {
    auto [scoreDescale, valueDescale] = kernel.descaleFactors(tile);
    Value outer =
        kernelOuter ? kernelOuter : scoreStage.outerScale(scoreDescale);
    Value scale = vector::BroadcastOp::create(b, sType, outer);
    Value qHandoff = add(mul(tile.ordinal, stages), stage);
    KernelBuilder::QueryAngles angles;
    if (shape.rope())
      angles = kernel.loadQueryAngles(tile, stage, thread, kWarpgroup);
    ChannelWaitOp::create(b, q, qHandoff);
    Value qTile =
        smemView(kernel.sharedBuffer("q"),
                 mul(rem(qHandoff, shape.qSlots()), shape.qTileBytes()),
                 tileType(shape.qRows(), shape.qkAtoms()));
    // RoPE: the warpgroup rotates its Q tile where it landed, then waits
    // for all of it (hardware barrier 1 + max(stages, 2) + stage, past the
    // turns') before its first wgmma reads the tile.
    if (shape.rope()) {
      kernel.rotateQueryTile(tile, stage, qTile, thread, kWarpgroup, angles);
      NamedBarrierSyncOp::create(
          b, static_cast<uint32_t>(1 + std::max<int64_t>(stages, 2) + stage),
          static_cast<uint32_t>(kWarpgroup));
    }
    // Row r is query position first + r / pack; the rows of the Q tile see
    // keys between those of its first and last.
    Value first = add(tile.position, stage * shape.positionsPerTile());

    // Issues the wgmmas `issue` builds in this consumer's turn; hand-off
    // numbers count the turns (at most blocks + 1 per tile).
    auto inTurn = [&](Value section, function_ref<void()> issue) {
      if (turns.empty())
        return issue();
      Value handoff = add(tile.statsBase, section);
      ChannelWaitOp::create(b, turns[stage], handoff);
      issue();
      ChannelCommitOp::create(b, turns[(stage + 1) % stages],
                              lastConsumer ? add(handoff, 1) : handoff);
    };
    // S = Q K^T of KV block n, issued and committed as one wgmma group.
    auto issueScores = [&](Value n) {
      Value handoff = mul(add(tile.kvBase, n), 2);
      ChannelWaitOp::create(b, kv, handoff);
      Value scores = WgmmaOp::create(
          b, sType, qTile, kvTile(handoff, shape.kvRows(), shape.qkAtoms()),
          Value(), OperandMajor::k, shape.depthAttr(b));
      NVVM::WgmmaGroupSyncAlignedOp::create(b);
      return scores;
    };
    // O += P V of KV block n, likewise; with hi + lo, O += P_hi V + P_lo V
    // (`p` both parts), the second wgmma accumulating into the first's
    // registers within the group.
    auto issueProduct = [&](Value n, ValueRange p, Value o) {
      Value handoff = add(mul(add(tile.kvBase, n), 2), 1);
      ChannelWaitOp::create(b, kv, handoff);
      Value vTile = kvTile(handoff, shape.vRows(), shape.vAtoms());
      Value product = o;
      for (Value part : p)
        product = WgmmaOp::create(b, oType, part, vTile, product,
                                  shape.valueKeyMajor ? OperandMajor::k
                                                      : OperandMajor::mn,
                                  /*depth=*/IntegerAttr());
      NVVM::WgmmaGroupSyncAlignedOp::create(b);
      return product;
    };
    auto releaseKv = [&](Value n, int64_t which) {
      ChannelReleaseOp::create(b, kv, add(mul(add(tile.kvBase, n), 2), which));
    };

    // The online softmax of block n's scores against the running maxima and
    // sums: the new maxima and sums, O's rescale factors and P.
    struct Softmax {
      Value max[2], sum[2], accScale[2];
      SmallVector<Value, 2> p; // P, or with hi + lo its two parts
    };
    auto softmax = [&](Value n, Value scores, ArrayRef<Value> rowMax,
                       ArrayRef<Value> rowSum, bool underCeiling) {
      // The stage's transformed scores; only a block the stage masks for
      // some row of the Q tile compares keys per row.
      Value block = add(tile.firstBlock, n);
      Value transformed = scoreStage.transform(
          scores,
          [&] {
            FragmentCoords at{tile.batch,
                              {},
                              {},
                              rowOf,
                              add(mul(block, blockN), quadColumn),
                              sColumnsList,
                              /*keysInRange=*/false,
                              tile.seqQ,
                              tile.seqKv};
            for (Value r : rows) {
              at.positions.push_back(add(first, div(r, shape.pack)));
              at.heads.push_back(
                  add(mul(tile.headBlock, shape.pack), rem(r, shape.pack)));
            }
            return at;
          },
          scoreDescale);
      // The row bounds are recomputed per block from the tile's position:
      // a few integer ops, rather than values live through the KV loop next
      // to the 232-register budget.
      Value needsMask = scoreStage.blockNeedsMask(
          scoreStage.rowKeys(tile, first),
          scoreStage.rowKeys(tile, add(first, shape.positionsPerTile() - 1)),
          block);
      auto maskIf = scf::IfOp::create(b, TypeRange{sType}, needsMask,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(maskIf.thenBlock());
        Value keys = add(mul(block, blockN), quadColumn);
        auto rowVisible = [&](Value row) {
          return scoreStage.visibleKeys(
              scoreStage.rowKeys(tile, add(first, div(row, shape.pack))),
              keys);
        };
        VisibleKeys each[2] = {rowVisible(rows[0]), rowVisible(rows[1])};
        VisibleKeys visible;
        visible.high =
            perRow(sSecondRow, sColumnsType, each[0].high, each[1].high);
        if (each[0].low)
          visible.low =
              perRow(sSecondRow, sColumnsType, each[0].low, each[1].low);
        scf::YieldOp::create(
            b, ValueRange{scoreStage.maskScores(transformed, sColumns, visible,
                                                negInfS)});
        b.setInsertionPointToStart(maskIf.elseBlock());
        scf::YieldOp::create(b, ValueRange{transformed});
      }
      transformed = maskIf.getResult(0);

      // Per row, the same conditional rescale as sm_100a's softmax; under
      // the ceiling the reference stays and O keeps its scale.
      Softmax result;
      Value safeRef[2];
      for (int64_t r = 0; r < 2; ++r) {
        if (underCeiling) {
          result.max[r] = safeRef[r] = rowMax[r];
          result.accScale[r] = one;
          continue;
        }
        Value tileMax = arith::MulFOp::create(
            b, rowReduce(transformed, r, vector::CombiningKind::MAXIMUMF), outer);
        Value newMax = arith::MaximumFOp::create(b, rowMax[r], tileMax);
        Value growth = arith::SubFOp::create(b, newMax, rowMax[r]);
        Value rescale = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                              growth, threshold);
        result.max[r] = arith::SelectOp::create(b, rescale, newMax, rowMax[r]);
        Value noKeys = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                             result.max[r], negInf);
        safeRef[r] = arith::SelectOp::create(b, noKeys, zero, result.max[r]);
        result.accScale[r] = arith::SelectOp::create(
            b, rescale,
            exp2(arith::SubFOp::create(b, rowMax[r], safeRef[r])), one);
      }
      Value p = Exp2Op::create(
          b,
          arith::SubFOp::create(
              b, arith::MulFOp::create(b, transformed, scale, contract),
              perRow(sSecondRow, sType, safeRef[0], safeRef[1]), contract),
          shape.emulatedExp2);
      // Row sums stay per thread until the end: a quad's threads rescale by
      // the same factor.
      for (int64_t r = 0; r < 2; ++r) {
        Value half = vector::ShuffleOp::create(
            b, p, p, FragmentLayout::rowElements(sCount, r));
        result.sum[r] = vector::ReductionOp::create(
            b, vector::CombiningKind::ADD, half,
            arith::MulFOp::create(b, rowSum[r], result.accScale[r]));
      }
      // P as the A operand of P V: 16-bit, the truncated fragment; e4m3,
      // rounded and redistributed within each quad.
      // hi + lo: the rounding residual P - hi, rounded, as a second operand.
      Value hi = shape.element.getIntOrFloatBitWidth() == 8
                     ? Value(WgmmaQuantizeOp::create(b, pType, p))
                     : Value(arith::TruncFOp::create(b, pType, p));
      result.p.push_back(hi);
      if (shape.plan.isHiLo())
        result.p.push_back(roundingResidual(p, hi));
      return result;
    };

    // The tile's KV blocks: (row maxima, row sums, O).
    Type blockTypes[] = {f32Type, f32Type, f32Type, f32Type, oType};
    auto kvLoop = [&](Value reference) -> SmallVector<Value> {
      bool underCeiling = static_cast<bool>(reference);
      // Software-pipelined over KV blocks: while block n's softmax runs, the
      // Tensor Cores compute S of block n and O += P V of block n - 1.
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      auto blocksIf =
          scf::IfOp::create(b, blockTypes, anyBlock,
                            /*addThenBlock=*/true, /*addElseBlock=*/true);
      {
        OpBuilder::InsertionGuard outer(b);
        b.setInsertionPointToStart(blocksIf.thenBlock());
        // Block 0: S, then its softmax; O starts at 0.
        Value sAsync;
        inTurn(idx(0), [&] { sAsync = issueScores(idx(0)); });
        Value scores =
            WgmmaWaitOp::create(b, 0, ValueRange{sAsync}).getResult(0);
        releaseKv(idx(0), 0);
        Value initialMax = underCeiling ? reference : negInf;
        Softmax head = softmax(idx(0), scores, {initialMax, initialMax},
                               {zero, zero}, underCeiling);

        // Carried: the row maxima and sums, O, then P (both parts with
        // hi + lo).
        SmallVector<Value> init{head.max[0], head.max[1], head.sum[0],
                                head.sum[1], zeroO};
        llvm::append_range(init, head.p);
        auto loop = scf::ForOp::create(b, idx(1), tile.blocks, idx(1), init);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          Value n = loop.getInductionVar();
          ValueRange carried = loop.getRegionIterArgs();
          ValueRange carriedP = carried.drop_front(5);
          Value previous = arith::SubIOp::create(b, n, idx(1));
          Value sAsync, oAsync;
          inTurn(n, [&] {
            sAsync = issueScores(n);
            oAsync = issueProduct(previous, carriedP, carried[4]);
          });
          // The older group (S) is complete when at most one is pending.
          Value s = WgmmaWaitOp::create(b, 1, ValueRange{sAsync}).getResult(0);
          releaseKv(n, 0);
          Softmax next = softmax(n, s, {carried[0], carried[1]},
                                 {carried[2], carried[3]}, underCeiling);
          // P of block n - 1 stays in its registers until the product read it.
          SmallVector<Value> product{oAsync};
          llvm::append_range(product, carriedP);
          auto waited = WgmmaWaitOp::create(b, 0, product);
          releaseKv(previous, 1);
          // The conditional rescale of O, skipped by a warp none of whose
          // rows rescales (most blocks past the first few): Dv / 2 FMULs per
          // thread otherwise, a tenth of the consumer's issue slots at D 128.
          // Under the ceiling, never.
          Value o = waited.getResult(0);
          if (!underCeiling) {
            Value rescaled = warpAny(arith::OrIOp::create(
                b,
                arith::CmpFOp::create(b, arith::CmpFPredicate::UNE,
                                      next.accScale[0], one),
                arith::CmpFOp::create(b, arith::CmpFPredicate::UNE,
                                      next.accScale[1], one)));
            auto rescaleIf = scf::IfOp::create(b, TypeRange{oType}, rescaled,
                                               /*addThenBlock=*/true,
                                               /*addElseBlock=*/true);
            OpBuilder::InsertionGuard branch(b);
            b.setInsertionPointToStart(rescaleIf.thenBlock());
            scf::YieldOp::create(b,
                                 ValueRange{arith::MulFOp::create(
                                     b, o,
                                     perRow(oSecondRow, oType, next.accScale[0],
                                            next.accScale[1]))});
            b.setInsertionPointToStart(rescaleIf.elseBlock());
            scf::YieldOp::create(b, ValueRange{o});
            o = rescaleIf.getResult(0);
          }
          SmallVector<Value> yielded{next.max[0], next.max[1], next.sum[0],
                                     next.sum[1], o};
          llvm::append_range(yielded, next.p);
          scf::YieldOp::create(b, yielded);
        }
        // The last block's product.
        Value last = arith::SubIOp::create(b, tile.blocks, idx(1));
        ValueRange p = loop.getResults().drop_front(5);
        Value oAsync;
        inTurn(tile.blocks,
               [&] { oAsync = issueProduct(last, p, loop.getResult(4)); });
        SmallVector<Value> product{oAsync};
        llvm::append_range(product, p);
        auto waited = WgmmaWaitOp::create(b, 0, product);
        releaseKv(last, 1);
        scf::YieldOp::create(b, ValueRange{loop.getResult(0), loop.getResult(1),
                                           loop.getResult(2), loop.getResult(3),
                                           waited.getResult(0)});
        // A tile without keys: O = 0, sums 0, maxima -inf.
        b.setInsertionPointToStart(blocksIf.elseBlock());
        scf::YieldOp::create(b, ValueRange{negInf, negInf, zero, zero, zeroO});
      }
      return blocksIf.getResults();
    };
    SmallVector<Value> blocks = ceiling.onEachSide(b, blockTypes, kvLoop);
    // Every QK^T that read Q has completed.
    ChannelReleaseOp::create(b, q, qHandoff);

    // Epilogue: the quad's sums, LSE, O / sum into the staging tile, at
    // coordinates built again rather than kept through the KV loop.
    const Tile done = kernel.epilogueTile(tile);
    Value o = blocks[4];
    RowTotals totals[2];
    // The rows' sink logits: one head for both where 8 rows hold whole
    // groups of packed heads.
    // Split-KV: the split's own totals (the sink joins in the combine).
    bool split = shape.splits() > 1;
    Value sinks[2];
    if (!split) {
      sinks[0] = kernel.sinkLogit(done, rows[0]);
      sinks[1] =
          8 % shape.pack == 0 ? sinks[0] : kernel.sinkLogit(done, rows[1]);
    }
    for (int64_t r = 0; r < 2; ++r) {
      Value total = blocks[2 + r];
      for (int32_t offset : {1, 2})
        total = arith::AddFOp::create(
            b, total,
            gpu::ShuffleOp::create(b, total, offset, 32, gpu::ShuffleMode::XOR)
                .getShuffleResult());
      totals[r] = kernel.finishRow(sinks[r], blocks[r], total);
    }
    Value records[2], inside[2];
    Value handoff = add(mul(tile.ordinal, stages), stage);
    if (split) {
      for (int64_t r = 0; r < 2; ++r) {
        records[r] = kernel.splitRecord(done, stage, rows[r]);
        inside[r] = kernel.rowInside(done, stage, rows[r]);
      }
      // The split's rows, LSEs first, go where the store warp reads them:
      // a cluster split's exchange buffer is the previous tile's until the
      // store warp hands it back.
      ChannelAcquireOp::create(b, epi, handoff);
    }
    if (shape.lse || split) {
      // One thread of the quad writes the row's LSE (split-KV: the split's,
      // to the workspace).
      Value quadLeader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                               rem(lane, 4), idx(0));
      auto ifOp = scf::IfOp::create(b, quadLeader);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (int64_t r = 0; r < 2; ++r) {
        if (!split) {
          kernel.storeLse(done, stage, rows[r], totals[r].sum, totals[r].max);
          continue;
        }
        auto rowIf = scf::IfOp::create(b, inside[r]);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(rowIf.thenBlock());
        kernel.storePartialLse(records[r], done.split, blocks[r],
                               totals[r].sum);
      }
    }
    // FP8: v_descale joins the factors (after the LSE, which it does not
    // change).
    Value factors[2] = {totals[0].factor, totals[1].factor};
    if (valueDescale)
      for (Value &factor : factors)
        factor = arith::MulFOp::create(b, factor, valueDescale);
    o = arith::MulFOp::create(
        b, o, perRow(oSecondRow, oType, factors[0], factors[1]));
    if (shape.ropeOutput)
      o = rotateOutputBack(done, stage, o, rows, quadColumn);
    if (split) {
      // The rows' partial O to the workspace, a pair of columns at a time
      // (rows past Sq write nothing); the store warp combines the splits.
      for (int64_t r = 0; r < 2; ++r) {
        auto rowIf = scf::IfOp::create(b, inside[r]);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(rowIf.thenBlock());
        for (int64_t i = 0; i < oCount; i += 2) {
          if (wgmma::accumulatorRow(0, i) / 8 != r)
            continue;
          Value pair =
              vector::ShuffleOp::create(b, o, o, ArrayRef<int64_t>{i, i + 1});
          kernel.storePartialRow(
              records[r], done.split,
              add(quadColumn, wgmma::accumulatorColumn(0, i)), pair);
        }
      }
      ChannelCommitOp::create(b, epi, handoff);
      return;
    }
    Value packed = arith::TruncFOp::create(
        b, VectorType::get({oCount}, shape.outElement), o);

    // Element pairs (columns c, c + 1) into the 128-byte swizzle of the TMA
    // store: 16-byte chunk j of row r sits at chunk j xor (r mod 8). The
    // thread's rows and column are copied here: the addresses built from
    // the loop-invariant ones were hoisted out of the tile loop and kept
    // through the KV loop (12 bytes of spills at head dim 256 with a
    // causal window).
    ChannelAcquireOp::create(b, epi, handoff);
    Value stagingRows[2] = {opaque(rows[0]), opaque(rows[1])};
    Value stagingColumn = opaque(quadColumn);
    for (int64_t i = 0; i < oCount; i += 2) {
      int64_t r = wgmma::accumulatorRow(0, i) / 8;
      int64_t column = wgmma::accumulatorColumn(0, i);
      Value pair = vector::ShuffleOp::create(b, packed, packed,
                                             ArrayRef<int64_t>{i, i + 1});
      Value chunk = arith::XOrIOp::create(b, idx((column % kAtom) / 8),
                                          rem(stagingRows[r], 8));
      vector::StoreOp::create(b, pair, staging,
                              ValueRange{idx(column / kAtom), stagingRows[r],
                                         add(mul(chunk, 8), stagingColumn)});
    }
    fenceProxyAsync();
    ChannelCommitOp::create(b, epi, handoff);
  });
  if (!turns.empty() && stage == 0)
    ChannelWaitOp::create(b, turns[0], idx(0));
}

Value HopperPrefillRoles::rotateOutputBack(const Tile &tile, int64_t stage,
                                           Value o, ArrayRef<Value> rows,
                                           Value quadColumn) {
  auto oType = cast<VectorType>(o.getType());
  auto rotate =
      scf::IfOp::create(b, TypeRange{oType}, kernel.ropeTableHasRows(),
                        /*addThenBlock=*/true, /*addElseBlock=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rotate.thenBlock());
  Value tableRows[2] = {kernel.ropeTableRow(tile, stage, rows[0]),
                        kernel.ropeTableRow(tile, stage, rows[1])};
  // Element pair (i, i + 1) is columns (c, c + 1), c = quadColumn + an
  // 8-aligned column: inside the rotated columns exactly where that is
  // (they start and end at multiples of 8).
  Value firstPair = div(quadColumn, 2);
  Value rotated = o;
  for (int64_t i = 0, e = oType.getNumElements(); i < e; i += 2) {
    int64_t column = wgmma::accumulatorColumn(0, i);
    if (column < shape.ropeStart ||
        column >= shape.ropeStart + shape.ropeColumns)
      continue;
    int64_t r = wgmma::accumulatorRow(0, i) / 8;
    rotated =
        kernel.rotateLanesBack(rotated, {i, i + 1}, tableRows[r],
                               add(firstPair, (column - shape.ropeStart) / 2));
  }
  scf::YieldOp::create(b, ValueRange{rotated});
  b.setInsertionPointToStart(rotate.elseBlock());
  scf::YieldOp::create(b, ValueRange{o});
  return rotate.getResult(0);
}

std::unique_ptr<RoleSet>
specialize::createHopperPrefillRoles(KernelBuilder &kernel) {
  return std::make_unique<HopperPrefillRoles>(kernel);
}
