//===- BlackwellDecode.cpp - the swap-AB decode role set (sm_100a) --------===//
//
// The decode family's CTA (the seeds' swap-AB decode kernel): a decode
// tile's few query rows (new tokens times packed heads) are the N of every
// tcgen05 MMA and a KV block's 128 keys its M, so no M row is padding.
//
//   S^T [128 keys, N]  = K Q^T    (A: K, K-major; B: Q, K-major)
//   O^T [Dv, N]       += V^T P^T  (A: V read MN-major, 128 of Dv per MMA;
//                                  B: P^T, K-major, from shared memory)
//
// Lane t of S^T is key t of the block, so the softmax warpgroup's thread t
// holds one key's scores of every row: a row's maximum is a reduction over
// the 128 threads (warp butterflies, then the four warps' partials through
// a double-buffered shared-memory exchange on one named barrier, folded in
// warp order: the same bits in every thread, so their rescale decisions
// agree). Each thread keeps its own share of every row's sum, reduced once
// per tile. The same warpgroup rescales O^T (lane t: column t of O) once
// the previous PV MMA is done, which the single P^T buffer's hand-off
// proves, and at the end of a tile transposes O^T through shared memory so
// that the epilogue runs row-wise: 128 / N threads per row, each a slice of
// its columns, into the O staging tile (or split-KV's partial rows).
//
// Warps: the softmax warpgroup (0-3), then MMA, TMA load and TMA store.
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

/// Named barrier of the softmax warpgroup's exchanges (0 is the CTA's).
constexpr uint32_t kExchangeBarrier = 1;
constexpr int64_t kWarps = kWarpgroup / 32;
/// Widest TMEM access of a thread's row of S^T or O^T (columns).
constexpr int64_t kAccessColumns = 32;
/// Columns of O per epilogue access of the transposed tile.
constexpr int64_t kEpilogueChunk = 16;

class BlackwellDecodeRoles final : public RoleSet {
public:
  using RoleSet::RoleSet;

  SmallVector<SharedBuffer> sharedBuffers() const override;
  void build(Block &roles) override;

private:
  void buildSoftmax();
  void buildMma();
  /// RoPE: the softmax warpgroup (this thread `thread`) rotates `tile`'s Q
  /// where TMA put it and hands it to the MMA warp; the slot's previous Q
  /// goes back to the load warp first.
  void rotateQuery(const Tile &tile, Value thread);

  int64_t rows() const { return shape.qRows(); }
  /// The TMEM columns [first, first + rows()) of `region` (f32), in
  /// power-of-two accesses of at most kAccessColumns, waited for.
  Value loadColumns(Value region, int64_t first);
  void storeColumns(Value values, Value region, int64_t first);
  /// The reduction over the warpgroup of each row's `values` (one per
  /// thread, a vector of rows()): a butterfly over the warp, then the four
  /// warps' results through half `sequence` mod 2 of the exchange, folded
  /// in warp order. `fold` false only publishes the warps' results (the
  /// epilogue reads its rows' own); returns null then.
  Value reduceRows(Value values, bool max, Value sequence, Value warp,
                   Value lane, bool fold = true);
  /// The exchange buffer: [parity, warp, row] f32.
  Value exchange() {
    return smemView(kernel.sharedBuffer("exchange"), idx(0),
                    sharedType({2, kWarps, rows()}, b.getF32Type()));
  }
  /// O^T transposed: [row, Dv + 4] f32.
  Value transposed() {
    return smemView(kernel.sharedBuffer("transpose"), idx(0),
                    sharedType({rows(), shape.headDimV + 4}, b.getF32Type()));
  }
  /// P^T's tile, or with P as hi + lo its `part` (0: hi, 1: lo).
  Value pTile(int64_t part = 0) {
    return smemView(kernel.sharedBuffer("p"), idx(part * shape.pTileBytes()),
                    tileType(rows(), shape.plan.getBlockN() / kAtom));
  }
  /// P^T's parts: 2 with P as hi + lo, else 1.
  int64_t pParts() const { return shape.plan.isHiLo() ? 2 : 1; }
  /// Builds `body` on the S^T buffer of block hand-off `k` (two,
  /// alternating), in a branch on its parity.
  void sRegion(Value k, function_ref<void(Value)> body);

  Value q, kv, s, p, o, epi;
  // With a rotary embedding, Q as the softmax warpgroup rotated it.
  Value qRotated;
  SmallVector<Value, 2> sTmem;
  Value oTmem;
};

} // namespace

SmallVector<SharedBuffer> BlackwellDecodeRoles::sharedBuffers() const {
  int64_t f32 = int64_t(sizeof(float));
  return {{"q", shape.qTileBytes(), 1024},
          {"kv", shape.plan.getKvStages() * shape.kvTileBytes(), 1024},
          {"o_staging", shape.oTileBytes(), 1024},
          {"p", pParts() * shape.pTileBytes(), 1024},
          {"exchange", 2 * kWarps * rows() * f32, 16},
          {"row_max", rows() * f32, 16},
          {"transpose", rows() * (shape.headDimV + 4) * f32, 16}};
}

Value BlackwellDecodeRoles::loadColumns(Value region, int64_t first) {
  SmallVector<std::pair<Value, int64_t>, 2> pieces;
  for (int64_t done = 0; done < rows();) {
    int64_t width = std::min<int64_t>(
        kAccessColumns, int64_t(1) << llvm::Log2_64(rows() - done));
    pieces.push_back(
        {TmemLoadOp::create(b, VectorType::get({width}, b.getF32Type()),
                            region, first + done),
         done});
    done += width;
  }
  // (A load's registers are defined only after the wait.)
  tmemWait(/*load=*/true);
  // Concatenated in order.
  Value result = pieces.front().first;
  for (auto [piece, offset] : llvm::drop_begin(pieces)) {
    int64_t width = cast<VectorType>(piece.getType()).getNumElements();
    result = vector::ShuffleOp::create(
        b, result, piece, llvm::to_vector(llvm::seq<int64_t>(offset + width)));
  }
  return result;
}

void BlackwellDecodeRoles::storeColumns(Value values, Value region,
                                        int64_t first) {
  for (int64_t done = 0; done < rows();) {
    int64_t width = std::min<int64_t>(
        kAccessColumns, int64_t(1) << llvm::Log2_64(rows() - done));
    Value piece =
        width == rows()
            ? values
            : vector::ShuffleOp::create(
                  b, values, values,
                  llvm::to_vector(llvm::seq<int64_t>(done, done + width)));
    TmemStoreOp::create(b, piece, region, first + done);
    done += width;
  }
}

Value BlackwellDecodeRoles::reduceRows(Value values, bool max, Value sequence,
                                       Value warp, Value lane, bool fold) {
  auto combine = [&](Value x, Value y) -> Value {
    return max ? arith::MaximumFOp::create(b, x, y).getResult()
               : arith::AddFOp::create(b, x, y).getResult();
  };
  // Each row over the warp's 32 keys: a butterfly (every lane gets the same
  // bits: the combination is commutative).
  SmallVector<Value> elements;
  for (int64_t r = 0; r < rows(); ++r) {
    Value element = vector::ExtractOp::create(b, values, ArrayRef<int64_t>{r});
    for (int32_t offset : {16, 8, 4, 2, 1})
      element = combine(element, gpu::ShuffleOp::create(b, element, offset, 32,
                                                        gpu::ShuffleMode::XOR)
                                     .getShuffleResult());
    elements.push_back(element);
  }
  Value warpValues = vector::FromElementsOp::create(
      b, VectorType::get({rows()}, b.getF32Type()), elements);
  Value buffer = exchange();
  Value half = rem(sequence, 2);
  auto first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, idx(0));
  {
    auto ifOp = scf::IfOp::create(b, first);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    vector::StoreOp::create(b, warpValues, buffer,
                            ValueRange{half, warp, idx(0)});
  }
  // A thread writes half h again only two exchanges later, after every
  // thread passed the barrier between, and so read h.
  NamedBarrierSyncOp::create(b, kExchangeBarrier,
                             static_cast<uint32_t>(kWarpgroup));
  if (!fold)
    return Value();
  Value result;
  for (int64_t w = 0; w < kWarps; ++w) {
    Value partial = vector::LoadOp::create(
        b, VectorType::get({rows()}, b.getF32Type()), buffer,
        ValueRange{half, idx(w), idx(0)});
    result = result ? combine(result, partial) : partial;
  }
  return result;
}

void BlackwellDecodeRoles::sRegion(Value k, function_ref<void(Value)> body) {
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rem(k, 2),
                                    idx(1));
  auto ifOp = scf::IfOp::create(b, odd, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body(sTmem[1]);
  b.setInsertionPointToStart(ifOp.elseBlock());
  body(sTmem[0]);
}

void BlackwellDecodeRoles::build(Block &roles) {
  PlanAttr plan = shape.plan;
  // The hand-offs: Q per tile and the K/V ring (TMA to MMA); S^T per block
  // (two buffers); P^T per block (one buffer: the softmax taking it back
  // proves the previous PV MMA done, so that O^T is stable to rescale); O^T
  // per tile; the staged O per tile.
  q = channel("q", 1, tma(), shape.rope() ? threads(kWarpgroup) : mma());
  if (shape.rope())
    qRotated = channel("q_rotated", 1, threads(kWarpgroup), mma());
  kv = channel("kv", plan.getKvStages(), tma(), mma());
  s = channel("s_ready", 2, mma(), threads(kWarpgroup));
  p = channel("p_ready", 1, threads(kWarpgroup), mma());
  o = channel("o_ready", 1, mma(), threads(kWarpgroup));
  epi = channel("corr_epi", 1, threads(kWarpgroup), kernel.storeEndpoint());

  // S^T: rows() f32 columns per buffer; O^T: rows() per 128 of Dv.
  for (int64_t i = 0; i < 2; ++i)
    sTmem.push_back(TmemBufferOp::create(b, tmemType(rows(), b.getF32Type()),
                                         "s" + std::to_string(i)));
  oTmem = TmemBufferOp::create(
      b, tmemType(shape.headDimV / kRows * rows(), b.getF32Type()), "o");

  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&roles);
  role("softmax", 0, 4, plan.getSoftmaxRegs(), [&] { buildSoftmax(); });
  role("mma", 4, 5, plan.getProducerRegs(), [&] { buildMma(); });
  role("load", 5, 6, plan.getProducerRegs(),
       [&] { kernel.buildLoadRole(q, kv, /*firstKeyBeforeQuery=*/false); });
  role("store", 6, 7, plan.getProducerRegs(),
       [&] { kernel.buildStoreRole(epi, /*stagingPerStage=*/false); });
}

void BlackwellDecodeRoles::buildMma() {
  int64_t kvStages = shape.plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);
  Value qSmem = kernel.sharedBuffer("q"), kvSmem = kernel.sharedBuffer("kv");
  auto slotTile = [&](Value handoff, int64_t atoms) {
    return smemView(kvSmem, mul(rem(handoff, kvStages), shape.kvTileBytes()),
                    tileType(shape.kvRows(), atoms));
  };
  Value qIn = shape.rope() ? qRotated : q;
  elected([&] {
    kernel.forEachTile([&](const Tile &tile) {
      ChannelWaitOp::create(b, qIn, tile.ordinal);
      Value qTile = smemView(qSmem, idx(0), tileType(rows(), shape.qkAtoms()));
      // O^T += V^T P^T of the tile's block m (hand-off `k`): one MMA per
      // 128 of Dv, V's atoms of those columns read MN-major as A.
      auto pv = [&](Value k, Value m) {
        Value vHandoff = add(mul(k, 2), 1);
        ChannelWaitOp::create(b, kv, vHandoff);
        ChannelWaitOp::create(b, p, k);
        Value vTile = slotTile(vHandoff, shape.vAtoms());
        Value accumulate =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, m, idx(0));
        int64_t atomsPerTile = kRows / kAtom;
        for (int64_t mb = 0; mb < shape.headDimV / kRows; ++mb) {
          Value a = shape.vAtoms() == atomsPerTile
                        ? vTile
                        : memref::SubViewOp::create(
                              b, vTile,
                              ArrayRef<int64_t>{mb * atomsPerTile, 0, 0},
                              ArrayRef<int64_t>{atomsPerTile, shape.kvRows(),
                                                kAtom},
                              ArrayRef<int64_t>{1, 1, 1});
          // P as hi + lo: O^T += V^T hi^T + V^T lo^T.
          for (int64_t part = 0; part < pParts(); ++part)
            MmaOp::create(
                b, a, pTile(part),
                tmemView(oTmem, mb * rows(), rows(), b.getF32Type()),
                part ? arith::ConstantIntOp::create(b, 1, 1).getResult()
                     : accumulate,
                OperandMajor::k, /*depth=*/IntegerAttr(), /*ws=*/IntegerAttr(),
                OperandMajorAttr::get(ctx, OperandMajor::mn));
        }
        ChannelReleaseOp::create(b, p, k);
        ChannelReleaseOp::create(b, kv, vHandoff);
      };
      // Block n's S^T, then block n - 1's PV: the softmax of block n starts
      // while the previous PV runs.
      forRange(tile.blocks, [&](Value n) {
        Value k = add(tile.kvBase, n);
        Value kHandoff = mul(k, 2);
        ChannelWaitOp::create(b, kv, kHandoff);
        ChannelAcquireOp::create(b, s, k);
        Value kTile = slotTile(kHandoff, shape.qkAtoms());
        sRegion(k, [&](Value region) {
          MmaOp::create(b, kTile, qTile, region, falseValue, OperandMajor::k,
                        shape.depthAttr(b), /*ws=*/IntegerAttr(),
                  /*aMajor=*/OperandMajorAttr());
        });
        ChannelCommitOp::create(b, s, k);
        ChannelReleaseOp::create(b, kv, kHandoff);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        auto ifOp = scf::IfOp::create(b, started);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value previous = arith::SubIOp::create(b, n, idx(1));
        pv(add(tile.kvBase, previous), previous);
      });
      Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                             tile.blocks, idx(0));
      {
        auto ifOp = scf::IfOp::create(b, anyBlock);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value last = arith::SubIOp::create(b, tile.blocks, idx(1));
        pv(add(tile.kvBase, last), last);
      }
      // O^T is complete once every MMA before this commit is (a tile
      // without blocks hands over an O^T its epilogue ignores).
      ChannelAcquireOp::create(b, o, tile.ordinal);
      ChannelCommitOp::create(b, o, tile.ordinal);
      ChannelReleaseOp::create(b, qIn, tile.ordinal);
    });
  });
}

void BlackwellDecodeRoles::rotateQuery(const Tile &tile, Value thread) {
  Value handoff = tile.ordinal;
  // The angles of this thread's first round of Q's pieces load before Q
  // lands (one round: held across the wait); the rest load as it rotates.
  KernelBuilder::QueryAngles angles =
      kernel.loadQueryAngles(tile, 0, thread, kWarpgroup, /*rounds=*/1);
  // The MMA warp is done with the slot's previous Q once it released the
  // rotated one: only then may TMA load this tile's Q into it.
  ChannelAcquireOp::create(b, qRotated, handoff);
  auto later =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, tile.ordinal, idx(0));
  {
    auto ifOp = scf::IfOp::create(b, later);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    ChannelReleaseOp::create(b, q, arith::SubIOp::create(b, handoff, idx(1)));
  }
  ChannelWaitOp::create(b, q, handoff);
  Value qTile = smemView(kernel.sharedBuffer("q"), idx(0),
                         tileType(rows(), shape.qkAtoms()));
  kernel.rotateQueryTile(tile, 0, qTile, thread, kWarpgroup, angles);
  ChannelCommitOp::create(b, qRotated, handoff);
}

void BlackwellDecodeRoles::buildSoftmax() {
  PlanAttr plan = shape.plan;
  int64_t blockN = plan.getBlockN();
  Type f32Type = b.getF32Type(), i32Type = b.getI32Type();
  auto rowsType = VectorType::get({rows()}, f32Type);
  ScoreStage &scoreStage = kernel.getScoreStage();
  Value outer = scoreStage.outerScale(/*descale=*/Value());
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value threshold = f32(static_cast<float>(shape.rescaleThreshold));
  auto splat = [&](Value scalar) {
    return vector::BroadcastOp::create(b, rowsType, scalar);
  };
  Value negInfRows = splat(negInf), zeroRows = splat(f32(0.0f)),
        oneRows = splat(f32(1.0f)), thresholdRows = splat(threshold),
        outerRows = splat(outer);
  auto contract =
      arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);

  // Thread t: key t of each block (lane t of S^T), column t of O (lane t
  // of O^T); in the epilogue row t mod N, the (t / N)-th slice of it.
  Value thread = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value warp = div(thread, 32), lane = rem(thread, 32);
  int64_t slices = kRows / rows();
  int64_t sliceColumns = shape.headDimV / slices;
  Value row = rem(thread, rows());
  Value firstColumn = mul(div(thread, rows()), sliceColumns);
  Value firstSlice = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                           thread, idx(rows()));
  Value staging = smemView(kernel.sharedBuffer("o_staging"), idx(0),
                           outputTileType(rows()));
  Value rowMaxima = smemView(kernel.sharedBuffer("row_max"), idx(0),
                             sharedType({rows()}, f32Type));
  bool split = shape.splits() > 1;
  // P^T: element (row r, key t) at [t / 64, r, swizzled t mod 64].
  Value pAtom = div(thread, kAtom);
  Value pPiece = div(rem(thread, kAtom), 8), pInPiece = rem(thread, 8);

  kernel.forEachTile([&](const Tile &tile) {
    if (shape.rope())
      rotateQuery(tile, thread);
    Value first = tile.position;
    RowKeys firstRow = scoreStage.rowKeys(tile, first);
    RowKeys lastRow =
        scoreStage.rowKeys(tile, add(first, shape.positionsPerTile() - 1));
    // One KV block: S^T from TMEM, the rows' maxima over the warpgroup, the
    // conditional rescale of O^T, P^T into shared memory; (max, sum) in
    // and out, a vector over the tile's rows (the sums this thread's).
    auto softmaxBlock = [&](Value n, Value rowMax, Value rowSum,
                            bool masked) -> SmallVector<Value> {
      Value k = add(tile.kvBase, n);
      ChannelWaitOp::create(b, s, k);
      Value scores;
      {
        auto ifOp = scf::IfOp::create(
            b, rowsType,
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rem(k, 2),
                                  idx(1)),
            /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        for (int64_t i = 0; i < 2; ++i) {
          b.setInsertionPointToStart(i ? ifOp.thenBlock() : ifOp.elseBlock());
          Value loaded = loadColumns(sTmem[i], 0);
          scf::YieldOp::create(b, loaded);
        }
        scores = ifOp.getResult(0);
      }
      ChannelReleaseOp::create(b, s, k);
      Value x = scoreStage.transform(
          scores,
          [&]() -> FragmentCoords {
            llvm_unreachable("the decode family applies no score regions");
          },
          /*descale=*/Value());
      if (masked) {
        // Row r (position first + r / pack) sees the keys its RowKeys say,
        // computed once per position and applied to its pack of rows one
        // element at a time (no vectors of bounds held beside the scores).
        Value blockStart = mul(add(tile.firstBlock, n), blockN);
        auto one = [&](Type element) { return VectorType::get({1}, element); };
        Value key = vector::BroadcastOp::create(
            b, one(i32Type), arith::IndexCastOp::create(b, i32Type, thread));
        Value negInfOne = vector::BroadcastOp::create(b, one(f32Type), negInf);
        // (The first position through an opaque copy: hoisted out of the
        // block loop, 32 positions' bounds spilled 100 bytes.)
        Value blockFirst = opaque(first);
        SmallVector<Value> maskedRows;
        for (int64_t position = 0; position < shape.positionsPerTile();
             ++position) {
          VisibleKeys visible = scoreStage.visibleKeys(
              scoreStage.rowKeys(tile, add(blockFirst, position)), blockStart);
          for (Value *bound : {&visible.low, &visible.high})
            if (*bound)
              *bound = vector::BroadcastOp::create(b, one(i32Type), *bound);
          for (int64_t h = 0; h < shape.pack; ++h) {
            int64_t r = position * shape.pack + h;
            Value element = vector::ShuffleOp::create(
                b, x, x, ArrayRef<int64_t>{r});
            maskedRows.push_back(vector::ExtractOp::create(
                b, scoreStage.maskScores(element, key, visible, negInfOne),
                ArrayRef<int64_t>{0}));
          }
        }
        x = vector::FromElementsOp::create(b, rowsType, maskedRows);
      }
      // The rows' maxima over the block's keys (on transformed scores; the
      // factor to log2 units is positive), the same bits in every thread.
      Value blockMax = reduceRows(x, /*max=*/true, add(tile.statsBase, n), warp,
                                  lane);
      blockMax = arith::MulFOp::create(b, blockMax, outerRows);
      Value newMax = arith::MaximumFOp::create(b, rowMax, blockMax);
      Value growth = arith::SubFOp::create(b, newMax, rowMax);
      Value rescale = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                            growth, thresholdRows);
      Value ref = arith::SelectOp::create(b, rescale, newMax, rowMax);
      Value noKeys =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, ref, negInfRows);
      Value safeRef = arith::SelectOp::create(b, noKeys, zeroRows, ref);
      Value accScale = arith::SelectOp::create(
          b, rescale,
          Exp2Op::create(b, arith::SubFOp::create(b, rowMax, safeRef), 0),
          oneRows);
      Value exponent = arith::SubFOp::create(
          b, arith::MulFOp::create(b, x, outerRows, contract), safeRef,
          contract);
      Value probabilities = Exp2Op::create(b, exponent, shape.emulatedExp2);
      Value sum = arith::AddFOp::create(
          b, arith::MulFOp::create(b, rowSum, accScale, contract),
          probabilities, contract);

      // P^T's buffer back from the previous PV MMA, which is then done: O^T
      // holds the previous blocks and may be rescaled (all threads agree
      // whether any row needs it).
      ChannelAcquireOp::create(b, p, k);
      // (A factor is 2^-growth <= 1, or 1 where the row keeps its
      // reference.)
      Value anyRescale = arith::CmpFOp::create(
          b, arith::CmpFPredicate::OLT,
          vector::ReductionOp::create(b, vector::CombiningKind::MINIMUMF,
                                      accScale),
          f32(1.0f));
      Value started =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
      {
        auto ifOp =
            scf::IfOp::create(b, arith::AndIOp::create(b, anyRescale, started));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        for (int64_t mb = 0; mb < shape.headDimV / kRows; ++mb) {
          Value columns = loadColumns(oTmem, mb * rows());
          storeColumns(arith::MulFOp::create(b, columns, accScale), oTmem,
                       mb * rows());
        }
        tmemWait(/*load=*/false);
      }
      // P^T: this thread's key of every row, in the operand type (P as
      // hi + lo: the rounded P and its rounded residual, two tiles).
      Value packed = arith::TruncFOp::create(
          b, VectorType::get({rows()}, shape.element), probabilities);
      SmallVector<Value, 2> parts = {packed};
      if (pParts() == 2)
        parts.push_back(roundingResidual(probabilities, packed));
      for (auto [part, values] : llvm::enumerate(parts)) {
        Value pBuffer = pTile(part);
        for (int64_t r = 0; r < rows(); ++r) {
          Value column = add(
              mul(arith::XOrIOp::create(b, pPiece, idx(r % 8)), 8), pInPiece);
          memref::StoreOp::create(
              b, vector::ExtractOp::create(b, values, ArrayRef<int64_t>{r}),
              pBuffer, ValueRange{pAtom, idx(r), column});
        }
      }
      // The generic-proxy writes, ordered before the MMA's reads.
      fenceProxyAsync();
      ChannelCommitOp::create(b, p, k);
      return {ref, sum};
    };
    auto blockLoop = [&](Value lower, Value upper, ValueRange init,
                         bool masked) {
      auto loop = scf::ForOp::create(b, lower, upper, idx(1), init);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(b, softmaxBlock(loop.getInductionVar(),
                                           loop.getRegionIterArg(0),
                                           loop.getRegionIterArg(1), masked));
      return loop;
    };
    auto [begin, end] = scoreStage.unmaskedBlocks(
        firstRow, lastRow, KvBlocks{tile.firstBlock, tile.blocks});
    Value unmaskedBegin = arith::SubIOp::create(b, begin, tile.firstBlock);
    Value unmaskedEnd = arith::SubIOp::create(b, end, tile.firstBlock);
    SmallVector<Value> totals = {negInfRows, zeroRows};
    if (scoreStage.masksLeadingBlocks())
      totals = blockLoop(idx(0), unmaskedBegin, totals, true).getResults();
    totals = blockLoop(unmaskedBegin, unmaskedEnd, totals, false).getResults();
    totals = blockLoop(unmaskedEnd, tile.blocks, totals, true).getResults();

    // The four warps' sums of each row, then the rows' maxima for the
    // epilogue's rows (one thread writes the vector all threads hold; past
    // the exchange's barrier, which every thread reaches only after the
    // previous tile's epilogue read its maxima).
    Value sumSequence = add(tile.statsBase, tile.blocks);
    reduceRows(totals[1], /*max=*/false, sumSequence, warp, lane,
               /*fold=*/false);
    {
      auto ifOp = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread,
                                   idx(0)));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      vector::StoreOp::create(b, totals[0], rowMaxima, ValueRange{idx(0)});
    }

    // O^T to rows: thread t writes column t (of each 128) of every row.
    ChannelWaitOp::create(b, o, tile.ordinal);
    Value rowsOut = transposed();
    for (int64_t mb = 0; mb < shape.headDimV / kRows; ++mb) {
      Value columns = loadColumns(oTmem, mb * rows());
      Value column = add(thread, mb * kRows);
      for (int64_t r = 0; r < rows(); ++r)
        memref::StoreOp::create(
            b, vector::ExtractOp::create(b, columns, ArrayRef<int64_t>{r}),
            rowsOut, ValueRange{idx(r), column});
    }
    ChannelReleaseOp::create(b, o, tile.ordinal);
    NamedBarrierSyncOp::create(b, kExchangeBarrier,
                               static_cast<uint32_t>(kWarpgroup));

    // The epilogue, row-wise: the row's totals, its LSE (first slice) and
    // its slice of O normalized into the staging tile (split-KV: the
    // split's partial row).
    Tile epilogue = kernel.epilogueTile(tile);
    Value rowMax = memref::LoadOp::create(b, rowMaxima, ValueRange{row});
    Value buffer = exchange();
    Value half = rem(sumSequence, 2);
    Value rowSum;
    for (int64_t w = 0; w < kWarps; ++w) {
      Value partial = memref::LoadOp::create(
          b, buffer, ValueRange{half, idx(w), row});
      rowSum = rowSum ? arith::AddFOp::create(b, rowSum, partial).getResult()
                      : partial;
    }
    Value sink = split ? Value() : kernel.sinkLogit(epilogue, row);
    RowTotals rowTotals = kernel.finishRow(sink, rowMax, rowSum);
    auto onFirstSlice = [&](Value condition, function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(
          b, condition ? arith::AndIOp::create(b, condition, firstSlice)
                       : firstSlice);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body();
    };
    if (shape.lse && !split)
      onFirstSlice(Value(), [&] {
        kernel.storeLse(epilogue, 0, row, rowTotals.sum, rowTotals.max);
      });
    ChannelAcquireOp::create(b, epi, tile.ordinal);
    Value record, inside;
    if (split) {
      record = kernel.splitRecord(epilogue, 0, row);
      inside = kernel.rowInside(epilogue, 0, row);
      onFirstSlice(inside, [&] {
        kernel.storePartialLse(record, epilogue.split, rowMax, rowSum);
      });
    }
    // RoPE: where the row's rotated columns of O start in the table.
    Value tableRow =
        shape.ropeOutput ? kernel.ropeTableRow(epilogue, 0, row) : Value();
    auto chunkType = VectorType::get({kEpilogueChunk}, f32Type);
    Value factor = vector::BroadcastOp::create(b, chunkType, rowTotals.factor);
    Value zeros = arith::ConstantOp::create(b, b.getZeroAttr(chunkType));
    for (int64_t c = 0; c < sliceColumns / kEpilogueChunk; ++c) {
      Value column = add(firstColumn, c * kEpilogueChunk);
      Value values =
          vector::LoadOp::create(b, chunkType, rowsOut, ValueRange{row, column});
      Value normalized = arith::SelectOp::create(
          b, rowTotals.sawKey, arith::MulFOp::create(b, values, factor),
          zeros);
      if (tableRow)
        normalized = kernel.rotateRowBackAt(normalized, column, tableRow);
      if (split) {
        auto ifOp = scf::IfOp::create(b, inside);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        kernel.storePartialRow(record, epilogue.split, column, normalized);
        continue;
      }
      storeSwizzled(
          arith::TruncFOp::create(
              b, VectorType::get({kEpilogueChunk}, shape.outElement),
              normalized),
          column, staging, row);
    }
    if (!split)
      fenceProxyAsync();
    ChannelCommitOp::create(b, epi, tile.ordinal);
  });
}

std::unique_ptr<RoleSet>
specialize::createBlackwellDecodeRoles(KernelBuilder &kernel) {
  return std::make_unique<BlackwellDecodeRoles>(kernel);
}
