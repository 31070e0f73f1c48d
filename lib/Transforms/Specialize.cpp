//===- Specialize.cpp - build the warp-specialized kernel of an attention -===//
//
// Turns every planned fa4.attention into a kernel at the role level: a
// gpu.func whose CTA runs the FlashAttention-4 roles of the plan, connected
// by channels, and an fa4.launch in place of the op. Barriers are left to
// fa4-insert-barriers; this pass only says who hands what to whom.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4SPECIALIZE
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

constexpr int64_t kRows = 128;        // sm_100a: rows of a Q tile, TMEM lanes
constexpr int64_t kAtom = 64;         // 16-bit elements per swizzle atom row
constexpr int64_t kChunk = 32;        // columns per softmax TMEM access
constexpr int64_t kOChunk = 16;       // columns per correction TMEM access
constexpr int64_t kWarpgroup = 128;   // threads
constexpr int64_t kStatsPerRow = 2;   // acc_scale or row_sum; row max
constexpr int64_t kLptGroup = 8;      // (batch, head) pairs per LPT L2 group

/// Everything the kernel's shape depends on, read once from the tiled program
/// and its plan.
struct KernelShape {
  PlanAttr plan;
  Type element;
  int64_t headDim, queryHeads, groupSize, pack;
  bool causal, lse;
  Scheduler scheduler;
  double scaleLog2;
  int64_t rescaleThreshold, emulatedExp2;

  bool hopper() const { return plan.getArch() == Arch::sm_90a; }
  int64_t atoms() const { return headDim / kAtom; }
  int64_t qRows() const { return plan.getBlockM(); }
  int64_t kvRows() const { return plan.getBlockN(); }
  /// Query positions of one Q tile (pack heads share each position).
  int64_t positionsPerTile() const { return qRows() / pack; }
  int64_t qTileBytes() const { return qRows() * headDim * 2; }
  /// Q slots: sm_90a double-buffers each consumer's Q where it fits, so
  /// that the next tile's loads before the consumer is done with this one.
  int64_t qSlots() const { return plan.getQSlots(); }
  int64_t kvTileBytes() const { return kvRows() * headDim * 2; }
  /// Bytes of one 64-column atom of a `rows`-row tile.
  static int64_t atomBytes(int64_t rows) { return rows * kAtom * 2; }
  int64_t statsBytes() const {
    return plan.getQStages() * kStatsPerRow * kRows * 4;
  }
};

/// Builds the role-level kernel of one attention op.
class KernelBuilder {
public:
  KernelBuilder(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), shape(shape), ctx(b.getContext()) {}

  gpu::GPUFuncOp build(gpu::GPUModuleOp module, StringRef name);
  /// Named barriers the kernel's channels use (fa4-insert-barriers counts
  /// the mbarriers).
  int64_t getNamedBarrierCount() const { return namedBarriers; }

private:
  // Arithmetic on index values.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value mul(Value x, int64_t y) { return mul(x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, x, idx(y)); }
  Value f32(float v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }

  // Types.
  Attribute workgroup() {
    return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  }
  MemRefType sharedType(ArrayRef<int64_t> shapeDims, Type element) {
    return MemRefType::get(shapeDims, element, MemRefLayoutAttrInterface(),
                           workgroup());
  }
  MemRefType tileType(int64_t rows) {
    return sharedType({shape.atoms(), rows, kAtom}, shape.element);
  }
  /// The TMA box of a tile: [1, positions, heads, 64] for Q and O (packed
  /// query heads), [1, blockN, 1, 64] for K and V.
  MemRefType boxType(bool packed) {
    if (packed)
      return sharedType({1, shape.positionsPerTile(), shape.pack, kAtom},
                        shape.element);
    return sharedType({1, shape.kvRows(), 1, kAtom}, shape.element);
  }
  nvgpu::TensorMapDescriptorType descriptorType(bool packed) {
    return nvgpu::TensorMapDescriptorType::get(
        ctx, boxType(packed), nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  }
  TmemType tmemType(int64_t elements, Type element) {
    return TmemType::get(ctx, kRows, elements, element);
  }
  /// `elements` of `element` type from `column` of TMEM `region`.
  Value tmemView(Value region, int64_t column, int64_t elements,
                 Type element) {
    return TmemViewOp::create(b, tmemType(elements, element), region, column);
  }
  /// A `type` view at byte `offset` of shared-memory `buffer`.
  Value smemView(Value buffer, Value offset, Type type) {
    return memref::ViewOp::create(b, type, buffer, offset, ValueRange{});
  }

  // Channels.
  Value channel(StringRef name, int64_t stages, EndpointAttr producer,
                EndpointAttr consumer,
                std::optional<uint32_t> namedBarrier = std::nullopt) {
    namedBarriers += namedBarrier ? 1 : 0;
    return ChannelOp::create(
        b, ChannelType::get(ctx, stages), name, producer, consumer,
        namedBarrier ? b.getI32IntegerAttr(*namedBarrier) : IntegerAttr());
  }
  EndpointAttr tma() { return EndpointAttr::get(ctx, EndpointKind::tma, 0); }
  EndpointAttr mma() { return EndpointAttr::get(ctx, EndpointKind::mma, 0); }
  EndpointAttr threads(int64_t n) {
    return EndpointAttr::get(ctx, EndpointKind::threads, n);
  }

  /// One work tile of the persistent loop, as every role sees it.
  struct Tile {
    Value ordinal;          // tiles this CTA processed before
    Value batch, headBlock; // which (batch, block of packed query heads)
    Value position;         // first query position of Q stage 0
    Value blocks;           // KV blocks the tile visits
    Value kvBase;           // KV blocks this CTA visited before
    Value statsBase;        // statistics hand-offs before (blocks + 1 each)
  };
  /// A persistent loop over this CTA's work tiles. Hand-off numbers of the
  /// KV loop continue across tiles, so the loop carries the number of KV
  /// blocks visited so far (tiles visit different numbers when causal).
  void forEachTile(function_ref<void(const Tile &)> body);
  /// forEachTile for the paired scheduler: units of two tiles, query block
  /// j from the end and then query block j, so that with causal masking
  /// every unit visits the same number of KV blocks and a static
  /// assignment of units to CTAs is balanced. The middle block of an odd
  /// count is a unit alone.
  void forEachPairedTile(function_ref<void(const Tile &)> body);
  /// A loop over [0, count) with the body built in place.
  void forRange(Value count, function_ref<void(Value)> body);
  /// Runs `body` in one elected thread of the warp.
  void elected(function_ref<void()> body);
  /// (batch, head block, first query position) of work tile `index`.
  std::tuple<Value, Value, Value> tileCoordinates(Value index);
  /// KV blocks a tile starting at query `position` visits: all of them, or
  /// when causal only those up to the diagonal of its last row.
  Value tileBlocks(Value position);
  /// The last key (exclusive) query `position` may see.
  Value keyLimit(Value position);

  /// Writes the natural-log LSE of this thread's row: (max + log2(sum)) *
  /// ln 2 in the base-2, scale-folded units of the softmax; -inf for a row
  /// that saw no key. Rows past Sq write nothing.
  void storeLse(const Tile &tile, int64_t stage, Value row, Value rowSum,
                Value rowMax);
  void buildSoftmax(int64_t stage);
  void buildCorrection();
  void buildMma();
  void buildLoad();
  void buildStore();
  /// sm_90a: the consumer warpgroup of Q stage `stage`, computing S, the
  /// online softmax and O in registers with wgmma.
  void buildConsumer(int64_t stage);
  /// sm_100a: the FA4 roles over TMEM; sm_90a: load, store and consumers.
  void buildBlackwellRoles(Block &roles);
  void buildHopperRoles(Block &roles);
  /// A role on warps [firstWarp, endWarp) whose body `body` builds.
  void role(StringRef name, int64_t firstWarp, int64_t endWarp,
            int64_t registers, function_ref<void()> body);

  ImplicitLocOpBuilder &b;
  const KernelShape &shape;
  MLIRContext *ctx;
  int64_t namedBarriers = 0;

  // Kernel-wide values.
  Value qDesc, kDesc, vDesc, oDesc, batch, seqQ, seqKv, scaleLog2, lseOut;
  Value tiles, kvBlocks, tilesPerHead;
  // Buffers: shared memory (bytes) and Tensor Memory per Q stage.
  Value qSmem, kvSmem, oSmem, statsSmem;
  SmallVector<Value> sTmem, pTmem, oTmem;
  Value q, kv, epi;
  SmallVector<Value> s, pFirst, pSecond, stats, oReady;
  SmallVector<Value> turns; // sm_90a ping-pong, one per consumer
};

void KernelBuilder::forRange(Value count, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, idx(0), count, idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void KernelBuilder::forEachTile(function_ref<void(const Tile &)> body) {
  if (shape.scheduler == Scheduler::paired)
    return forEachPairedTile(body);
  Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  auto loop =
      scf::ForOp::create(b, first, tiles, grid, ValueRange{idx(0), idx(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Tile tile;
  tile.ordinal = loop.getRegionIterArg(0);
  tile.kvBase = loop.getRegionIterArg(1);
  tile.statsBase = add(tile.kvBase, tile.ordinal);
  std::tie(tile.batch, tile.headBlock, tile.position) =
      tileCoordinates(loop.getInductionVar());
  tile.blocks = tileBlocks(tile.position);
  body(tile);
  scf::YieldOp::create(
      b, ValueRange{add(tile.ordinal, 1), add(tile.kvBase, tile.blocks)});
}

void KernelBuilder::forEachPairedTile(function_ref<void(const Tile &)> body) {
  int64_t headBlocks = shape.queryHeads / shape.pack;
  Value first = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value halves = div(add(tilesPerHead, 1), 2);
  Value pairs = mul(batch, headBlocks);
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

  auto inner = scf::ForOp::create(b, idx(0), idx(2), idx(1),
                                  outer.getRegionIterArgs());
  b.setInsertionPointToStart(inner.getBody());
  Value second =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, inner.getInductionVar(),
                            idx(1));
  Value queryBlock = arith::SelectOp::create(b, second, j, longBlock);
  Value alone =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, j, longBlock);
  Value skip = arith::AndIOp::create(b, second, alone);
  Value ordinal = inner.getRegionIterArg(0), kvBase = inner.getRegionIterArg(1);
  auto ifOp = scf::IfOp::create(b, TypeRange{b.getIndexType(), b.getIndexType()},
                                skip, /*addThenBlock=*/true,
                                /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, ValueRange{ordinal, kvBase});
    b.setInsertionPointToStart(ifOp.elseBlock());
    Tile tile;
    tile.ordinal = ordinal;
    tile.kvBase = kvBase;
    tile.statsBase = add(kvBase, ordinal);
    tile.batch = div(pair, headBlocks);
    tile.headBlock = rem(pair, headBlocks);
    tile.position =
        mul(queryBlock, shape.plan.getQStages() * shape.positionsPerTile());
    tile.blocks = tileBlocks(tile.position);
    body(tile);
    scf::YieldOp::create(b, ValueRange{add(ordinal, 1), add(kvBase, tile.blocks)});
  }
  scf::YieldOp::create(b, ifOp.getResults());
  b.setInsertionPointAfter(inner);
  scf::YieldOp::create(b, inner.getResults());
}

void KernelBuilder::elected(function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, ElectOp::create(b));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

std::tuple<Value, Value, Value> KernelBuilder::tileCoordinates(Value index) {
  int64_t headBlocks = shape.queryHeads / shape.pack;
  Value queryBlock, batchHead;
  if (shape.scheduler == Scheduler::lpt) {
    // Longest first, grouped for L2: (batch, head block) pairs form groups
    // of kLptGroup; a group's tiles run together, the last query blocks
    // (the most KV blocks when causal) first, so that concurrent CTAs share
    // the K/V of few heads.
    Value batchHeads = mul(batch, headBlocks);
    Value groupTiles = mul(tilesPerHead, kLptGroup);
    Value group = arith::DivUIOp::create(b, index, groupTiles);
    Value within = arith::RemUIOp::create(b, index, groupTiles);
    Value firstPair = mul(group, kLptGroup);
    Value groupSize = arith::MinUIOp::create(
        b, idx(kLptGroup), arith::SubIOp::create(b, batchHeads, firstPair));
    batchHead = add(firstPair, arith::RemUIOp::create(b, within, groupSize));
    Value fromLast = arith::DivUIOp::create(b, within, groupSize);
    queryBlock = arith::SubIOp::create(b, add(tilesPerHead, -1), fromLast);
  } else {
    // (batch, head block, query block), query block fastest.
    queryBlock = arith::RemUIOp::create(b, index, tilesPerHead);
    batchHead = arith::DivUIOp::create(b, index, tilesPerHead);
  }
  Value headBlock = rem(batchHead, headBlocks);
  Value batchIndex = div(batchHead, headBlocks);
  Value position =
      mul(queryBlock, shape.plan.getQStages() * shape.positionsPerTile());
  return {batchIndex, headBlock, position};
}

Value KernelBuilder::keyLimit(Value position) {
  if (!shape.causal)
    return seqKv;
  // Bottom-right aligned: query i sees keys j <= i + Skv - Sq.
  Value limit = arith::SubIOp::create(b, add(add(position, seqKv), 1), seqQ);
  return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, limit, idx(0)),
                                seqKv);
}

Value KernelBuilder::tileBlocks(Value position) {
  if (!shape.causal)
    return kvBlocks;
  // Blocks up to the diagonal of the tile's last row; the blocks after it
  // are fully masked and skipped.
  Value lastRow = add(position, shape.plan.getQStages() *
                                    shape.positionsPerTile() - 1);
  return div(add(keyLimit(lastRow), shape.plan.getBlockN() - 1),
             shape.plan.getBlockN());
}

void KernelBuilder::buildSoftmax(int64_t stage) {
  PlanAttr plan = shape.plan;
  int64_t blockN = plan.getBlockN(), chunks = blockN / kChunk;
  Type f32Type = b.getF32Type();
  auto chunkType = VectorType::get({kChunk}, f32Type);
  auto chunkIndexType = VectorType::get({kChunk}, b.getI32Type());

  Value sRegion = sTmem[stage], pRegion = pTmem[stage];
  Value statsBuffer = smemView(
      statsSmem, idx(0),
      sharedType({plan.getQStages(), kStatsPerRow, kRows}, f32Type));
  Value row = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value scale = vector::BroadcastOp::create(b, chunkType, scaleLog2);
  Value threshold = f32(static_cast<float>(shape.rescaleThreshold));
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value zero = f32(0.0f), one = f32(1.0f);
  Value stageIndex = idx(stage);

  forEachTile([&](const Tile &tile) {
    Value base = tile.kvBase, statsBase = tile.statsBase;
    // This thread's row is query position `position + row / pack` (pack
    // heads share a position); it sees keys below rowLimit.
    Value rowPosition = add(add(tile.position, stage * shape.positionsPerTile()),
                            div(row, shape.pack));
    Value rowLimit = keyLimit(rowPosition);
    auto loop = scf::ForOp::create(b, idx(0), tile.blocks, idx(1),
                                   ValueRange{negInf, zero});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value n = loop.getInductionVar();
      Value rowMax = loop.getRegionIterArg(0), rowSum = loop.getRegionIterArg(1);
      Value k = add(base, n);
      ChannelWaitOp::create(b, s[stage], k);
      SmallVector<Value> scores;
      for (int64_t c = 0; c < chunks; ++c)
        scores.push_back(
            TmemLoadOp::create(b, chunkType, sRegion, c * kChunk));
      Tcgen05WaitOp::create(b, Tcgen05WaitKind::load);

      // Scores in log2 units; keys at or past the row's limit (Skv, or the
      // causal diagonal) are masked to -inf.
      Value remaining = arith::IndexCastOp::create(
          b, b.getI32Type(), arith::SubIOp::create(b, rowLimit, mul(n, blockN)));
      Value limit = vector::BroadcastOp::create(b, chunkIndexType, remaining);
      Value negInfChunk = vector::BroadcastOp::create(b, chunkType, negInf);
      Value tileMax = negInf;
      for (int64_t c = 0; c < chunks; ++c) {
        SmallVector<int32_t> columns;
        for (int64_t i = 0; i < kChunk; ++i)
          columns.push_back(static_cast<int32_t>(c * kChunk + i));
        Value column = arith::ConstantOp::create(
            b, DenseIntElementsAttr::get(chunkIndexType, columns));
        Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                            column, limit);
        Value scaled = arith::MulFOp::create(b, scores[c], scale);
        scores[c] = arith::SelectOp::create(b, valid, scaled, negInfChunk);
        tileMax = vector::ReductionOp::create(
            b, vector::CombiningKind::MAXIMUMF, scores[c], tileMax);
      }

      // Conditional rescale: the exponent reference moves only when the row
      // max grew by more than the threshold (always from -inf).
      Value newMax = arith::MaximumFOp::create(b, rowMax, tileMax);
      Value growth = arith::SubFOp::create(b, newMax, rowMax);
      Value rescale = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                            growth, threshold);
      Value ref = arith::SelectOp::create(b, rescale, newMax, rowMax);
      // A row that has seen no key yet keeps -inf; exponentiate against 0.
      Value noKeys =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, ref, negInf);
      Value safeRef = arith::SelectOp::create(b, noKeys, zero, ref);
      auto scalarType = VectorType::get({1}, f32Type);
      Value factor = Exp2Op::create(
          b, vector::BroadcastOp::create(
                 b, scalarType, arith::SubFOp::create(b, rowMax, safeRef)),
          0);
      Value accScale = arith::SelectOp::create(
          b, rescale, vector::ExtractOp::create(b, factor, ArrayRef<int64_t>{0}),
          one);

      // The correction warpgroup rescales O by accScale.
      Value statsIndex = add(statsBase, n);
      ChannelAcquireOp::create(b, stats[stage], statsIndex);
      memref::StoreOp::create(b, accScale, statsBuffer,
                              ValueRange{stageIndex, idx(0), row});
      ChannelCommitOp::create(b, stats[stage], statsIndex);

      // P = 2^(S - ref), chunk by chunk, into TMEM: the first pvSplit columns
      // release the first PV MMA, the rest the second.
      Value refChunk = vector::BroadcastOp::create(b, chunkType, safeRef);
      Value sum = arith::MulFOp::create(b, rowSum, accScale);
      for (int64_t c = 0; c < chunks; ++c) {
        Value p = Exp2Op::create(
            b, arith::SubFOp::create(b, scores[c], refChunk),
            shape.emulatedExp2);
        sum = vector::ReductionOp::create(b, vector::CombiningKind::ADD, p, sum);
        Value packed = arith::TruncFOp::create(
            b, VectorType::get({kChunk}, shape.element), p);
        TmemStoreOp::create(b, packed, pRegion, c * kChunk);
        if ((c + 1) * kChunk == plan.getPvSplit()) {
          Tcgen05WaitOp::create(b, Tcgen05WaitKind::store);
          ChannelCommitOp::create(b, pFirst[stage], k);
        }
      }
      Tcgen05WaitOp::create(b, Tcgen05WaitKind::store);
      ChannelCommitOp::create(b, pSecond[stage], k);
      scf::YieldOp::create(b, ValueRange{ref, sum});
    }
    // The row sum and max for the epilogue.
    Value finalIndex = add(statsBase, tile.blocks);
    ChannelAcquireOp::create(b, stats[stage], finalIndex);
    memref::StoreOp::create(b, loop.getResult(1), statsBuffer,
                            ValueRange{stageIndex, idx(0), row});
    memref::StoreOp::create(b, loop.getResult(0), statsBuffer,
                            ValueRange{stageIndex, idx(1), row});
    ChannelCommitOp::create(b, stats[stage], finalIndex);
  });
}

void KernelBuilder::storeLse(const Tile &tile, int64_t stage, Value row,
                             Value rowSum, Value rowMax) {
  Type f32Type = b.getF32Type();
  Value position = add(add(tile.position, stage * shape.positionsPerTile()),
                       div(row, shape.pack));
  Value inside =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, position, seqQ);
  auto ifOp = scf::IfOp::create(b, inside);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  // lg2.approx, not math.log2: GPU-to-NVVM would call libdevice for it.
  Value log2Sum = LLVM::CallIntrinsicOp::create(
                      b, f32Type, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                      ValueRange{rowSum})
                      .getResult(0);
  Value lse = arith::MulFOp::create(
      b, arith::AddFOp::create(b, rowMax, log2Sum), f32(M_LN2));
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, rowSum, f32(0.0f));
  lse = arith::SelectOp::create(
      b, positive, lse, f32(-std::numeric_limits<float>::infinity()));
  // Element (batch, head, position) of a contiguous [B, Hq, Sq] tensor.
  Value head = add(mul(tile.headBlock, shape.pack), rem(row, shape.pack));
  Value flat = add(mul(add(mul(tile.batch, shape.queryHeads), head), seqQ),
                   position);
  Value offset = arith::IndexCastOp::create(b, b.getI64Type(), flat);
  Value address = LLVM::GEPOp::create(b, lseOut.getType(), f32Type, lseOut,
                                      ValueRange{offset});
  LLVM::StoreOp::create(b, lse, address);
}

void KernelBuilder::buildCorrection() {
  PlanAttr plan = shape.plan;
  Type f32Type = b.getF32Type();
  // The correction warpgroup works in narrow fragments: its register budget
  // is small.
  auto chunkType = VectorType::get({kOChunk}, f32Type);
  Value statsBuffer = smemView(
      statsSmem, idx(0),
      sharedType({plan.getQStages(), kStatsPerRow, kRows}, f32Type));
  Value staging = smemView(oSmem, idx(0), tileType(kRows));
  Value row = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), kRows);
  Value one = f32(1.0f), zero = f32(0.0f);
  int64_t oChunks = shape.headDim / kOChunk;

  forEachTile([&](const Tile &tile) {
    Value base = tile.kvBase, statsBase = tile.statsBase;
    forRange(tile.blocks, [&](Value n) {
      Value k = add(base, n);
      Value statsIndex = add(statsBase, n);
      for (int64_t stage = 0; stage < plan.getQStages(); ++stage) {
        ChannelWaitOp::create(b, stats[stage], statsIndex);
        Value accScale = memref::LoadOp::create(
            b, statsBuffer, ValueRange{idx(stage), idx(0), row});
        ChannelReleaseOp::create(b, stats[stage], statsIndex);
        // A warp touches O only if one of its 32 rows needs the rescale,
        // and only once O holds a previous block's product.
        Value needs = arith::CmpFOp::create(b, arith::CmpFPredicate::UNE,
                                            accScale, one);
        Value anyRow = WarpAnyOp::create(b, needs);
        Value started =
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
        auto ifOp = scf::IfOp::create(b, arith::AndIOp::create(b, anyRow, started));
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value oRegion = oTmem[stage];
          Value factor = vector::BroadcastOp::create(b, chunkType, accScale);
          for (int64_t c = 0; c < oChunks; ++c) {
            Value o = TmemLoadOp::create(b, chunkType, oRegion, c * kOChunk);
            Tcgen05WaitOp::create(b, Tcgen05WaitKind::load);
            TmemStoreOp::create(b, arith::MulFOp::create(b, o, factor), oRegion,
                                c * kOChunk);
          }
          Tcgen05WaitOp::create(b, Tcgen05WaitKind::store);
        }
        ChannelCommitOp::create(b, pFirst[stage], k);
      }
    });

    // Epilogue: O / row_sum in the output type, into the staging tile in the
    // 128-byte swizzle the TMA store reads (16-byte chunk c of row r sits at
    // chunk c xor (r mod 8)).
    Value finalIndex = add(statsBase, tile.blocks);
    Value swizzle = rem(row, 8);
    for (int64_t stage = 0; stage < plan.getQStages(); ++stage) {
      ChannelWaitOp::create(b, oReady[stage], tile.ordinal);
      ChannelWaitOp::create(b, stats[stage], finalIndex);
      Value rowSum = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(stage), idx(0), row});
      Value rowMax = memref::LoadOp::create(
          b, statsBuffer, ValueRange{idx(stage), idx(1), row});
      ChannelReleaseOp::create(b, stats[stage], finalIndex);
      if (shape.lse)
        storeLse(tile, stage, row, rowSum, rowMax);
      // A row that saw no key (causal, Sq > Skv) outputs 0, whatever O holds.
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, rowSum, zero);
      Value factor = vector::BroadcastOp::create(
          b, chunkType, arith::DivFOp::create(b, one, rowSum));
      Value zeros = vector::BroadcastOp::create(b, chunkType, zero);
      Value handoff = add(mul(tile.ordinal, plan.getQStages()), stage);
      ChannelAcquireOp::create(b, epi, handoff);
      Value oRegion = oTmem[stage];
      for (int64_t c = 0; c < oChunks; ++c) {
        Value o = TmemLoadOp::create(b, chunkType, oRegion, c * kOChunk);
        Tcgen05WaitOp::create(b, Tcgen05WaitKind::load);
        Value normalized = arith::SelectOp::create(
            b, positive, arith::MulFOp::create(b, o, factor), zeros);
        Value packed = arith::TruncFOp::create(
            b, VectorType::get({kOChunk}, shape.element), normalized);
        int64_t firstColumn = c * kOChunk;
        Value atom = idx(firstColumn / kAtom);
        for (int64_t piece = 0; piece < kOChunk / 8; ++piece) {
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
      // O is read: the MMA warp may complete the next tile's O.
      ChannelReleaseOp::create(b, oReady[stage], tile.ordinal);
      FenceProxyAsyncOp::create(b);
      ChannelCommitOp::create(b, epi, handoff);
    }
  });
}

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

void KernelBuilder::buildConsumer(int64_t stage) {
  PlanAttr plan = shape.plan;
  int64_t blockN = plan.getBlockN(), stages = plan.getQStages();
  int64_t kvStages = plan.getKvStages();
  int64_t sCount = blockN / 2, oCount = shape.headDim / 2;
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
    auto type = VectorType::get({static_cast<int64_t>(values.size())},
                                b.getI1Type());
    return arith::ConstantOp::create(b, DenseElementsAttr::get(type, values));
  };
  Value sSecondRow = i1Constant(FragmentLayout::secondRow(sCount));
  Value oSecondRow = i1Constant(FragmentLayout::secondRow(oCount));
  auto sColumnsType = VectorType::get({sCount}, i32Type);
  Value sColumns = arith::ConstantOp::create(
      b, DenseIntElementsAttr::get(sColumnsType, FragmentLayout::columns(sCount)));
  // A fragment holding `first` in row 0's elements and `second` in row 1's.
  auto perRow = [&](Value secondRow, VectorType type, Value first,
                    Value second) -> Value {
    return arith::SelectOp::create(
        b, secondRow, vector::BroadcastOp::create(b, type, second),
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
      smemView(oSmem, idx(stage * shape.qTileBytes()), tileType(shape.qRows()));
  Value scale = vector::BroadcastOp::create(b, sType, scaleLog2);
  Value threshold = f32(static_cast<float>(shape.rescaleThreshold));
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  Value zero = f32(0.0f), one = f32(1.0f);
  Value negInfS = vector::BroadcastOp::create(b, sType, negInf);
  Value zeroO = vector::BroadcastOp::create(b, oType, zero);

  auto pType = VectorType::get({sCount}, shape.element);
  auto kvTile = [&](Value handoff) {
    return smemView(kvSmem, mul(rem(handoff, kvStages), shape.kvTileBytes()),
                    tileType(shape.kvRows()));
  };

  // Consumer 0 takes the first turn; it takes consumer 1's last hand-off
  // after its own last turn, so that no barrier arrival is left pending.
  if (!turns.empty() && stage == 1)
    ChannelCommitOp::create(b, turns[0], idx(0));
  forEachTile([&](const Tile &tile) {
    Value qHandoff = add(mul(tile.ordinal, stages), stage);
    ChannelWaitOp::create(b, q, qHandoff);
    Value qTile = smemView(qSmem,
                           mul(rem(qHandoff, shape.qSlots()), shape.qTileBytes()),
                           tileType(shape.qRows()));
    // Row r is query position first + r / pack; it sees keys below
    // limits[r]. Keys below the tile's first row's limit need no mask.
    Value first = add(tile.position, stage * shape.positionsPerTile());
    Value limits[2] = {keyLimit(add(first, div(rows[0], shape.pack))),
                       keyLimit(add(first, div(rows[1], shape.pack)))};
    Value unmasked = keyLimit(first);

    // Issues the wgmmas `issue` builds in this consumer's turn; hand-off
    // numbers count the turns (at most blocks + 1 per tile).
    auto inTurn = [&](Value section, function_ref<void()> issue) {
      if (turns.empty())
        return issue();
      Value handoff = add(tile.statsBase, section);
      ChannelWaitOp::create(b, turns[stage], handoff);
      issue();
      ChannelCommitOp::create(b, turns[1 - stage],
                              stage == 0 ? handoff : add(handoff, 1));
    };
    // S = Q K^T of KV block n, issued and committed as one wgmma group.
    auto issueScores = [&](Value n) {
      Value handoff = mul(add(tile.kvBase, n), 2);
      ChannelWaitOp::create(b, kv, handoff);
      Value scores = WgmmaOp::create(b, sType, qTile, kvTile(handoff), Value(),
                                     OperandMajor::k);
      WgmmaCommitOp::create(b);
      return scores;
    };
    // O += P V of KV block n, likewise.
    auto issueProduct = [&](Value n, Value p, Value o) {
      Value handoff = add(mul(add(tile.kvBase, n), 2), 1);
      ChannelWaitOp::create(b, kv, handoff);
      Value product =
          WgmmaOp::create(b, oType, p, kvTile(handoff), o, OperandMajor::mn);
      WgmmaCommitOp::create(b);
      return product;
    };
    auto releaseKv = [&](Value n, int64_t which) {
      ChannelReleaseOp::create(b, kv, add(mul(add(tile.kvBase, n), 2), which));
    };

    // The online softmax of block n's scores against the running maxima and
    // sums: the new maxima and sums, O's rescale factors and P.
    struct Softmax {
      Value max[2], sum[2], accScale[2], p;
    };
    auto softmax = [&](Value n, Value scores, ArrayRef<Value> rowMax,
                       ArrayRef<Value> rowSum) {
      // Scores in log2 units; only a block reaching past the smallest row
      // limit compares keys with each row's limit.
      Value scaled = arith::MulFOp::create(b, scores, scale);
      Value blockEnd = mul(add(n, 1), blockN);
      Value needsMask = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                              blockEnd, unmasked);
      auto maskIf = scf::IfOp::create(b, TypeRange{sType}, needsMask,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(maskIf.thenBlock());
        Value keys = add(mul(n, blockN), quadColumn);
        auto remaining = [&](Value limit) {
          return arith::IndexCastOp::create(
              b, i32Type, arith::SubIOp::create(b, limit, keys));
        };
        Value limit = perRow(sSecondRow, sColumnsType, remaining(limits[0]),
                             remaining(limits[1]));
        Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                            sColumns, limit);
        scf::YieldOp::create(
            b, ValueRange{arith::SelectOp::create(b, valid, scaled, negInfS)});
        b.setInsertionPointToStart(maskIf.elseBlock());
        scf::YieldOp::create(b, ValueRange{scaled});
      }
      scaled = maskIf.getResult(0);

      // Per row, the same conditional rescale as sm_100a's softmax.
      Softmax result;
      Value safeRef[2];
      for (int64_t r = 0; r < 2; ++r) {
        Value tileMax = rowReduce(scaled, r, vector::CombiningKind::MAXIMUMF);
        Value newMax = arith::MaximumFOp::create(b, rowMax[r], tileMax);
        Value growth = arith::SubFOp::create(b, newMax, rowMax[r]);
        Value rescale = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                              growth, threshold);
        result.max[r] = arith::SelectOp::create(b, rescale, newMax, rowMax[r]);
        Value noKeys = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                             result.max[r], negInf);
        safeRef[r] = arith::SelectOp::create(b, noKeys, zero, result.max[r]);
        auto scalarType = VectorType::get({1}, f32Type);
        Value factor = Exp2Op::create(
            b,
            vector::BroadcastOp::create(
                b, scalarType, arith::SubFOp::create(b, rowMax[r], safeRef[r])),
            0);
        result.accScale[r] = arith::SelectOp::create(
            b, rescale,
            vector::ExtractOp::create(b, factor, ArrayRef<int64_t>{0}), one);
      }
      Value p = Exp2Op::create(
          b,
          arith::SubFOp::create(
              b, scaled, perRow(sSecondRow, sType, safeRef[0], safeRef[1])),
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
      result.p = arith::TruncFOp::create(b, pType, p);
      return result;
    };

    // Software-pipelined over KV blocks: while block n's softmax runs, the
    // Tensor Cores compute S of block n and O += P V of block n - 1.
    Value anyBlock =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, tile.blocks, idx(0));
    auto blocksIf = scf::IfOp::create(
        b, TypeRange{f32Type, f32Type, f32Type, f32Type, oType}, anyBlock,
        /*addThenBlock=*/true, /*addElseBlock=*/true);
    {
      OpBuilder::InsertionGuard outer(b);
      b.setInsertionPointToStart(blocksIf.thenBlock());
      // Block 0: S, then its softmax; O starts at 0.
      Value sAsync;
      inTurn(idx(0), [&] { sAsync = issueScores(idx(0)); });
      Value scores = WgmmaWaitOp::create(b, 0, ValueRange{sAsync}).getResult(0);
      releaseKv(idx(0), 0);
      Softmax head = softmax(idx(0), scores, {negInf, negInf}, {zero, zero});

      auto loop = scf::ForOp::create(
          b, idx(1), tile.blocks, idx(1),
          ValueRange{head.max[0], head.max[1], head.sum[0], head.sum[1], zeroO,
                     head.p});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        Value n = loop.getInductionVar();
        ValueRange carried = loop.getRegionIterArgs();
        Value previous = arith::SubIOp::create(b, n, idx(1));
        Value sAsync, oAsync;
        inTurn(n, [&] {
          sAsync = issueScores(n);
          oAsync = issueProduct(previous, carried[5], carried[4]);
        });
        // The older group (S) is complete when at most one is pending.
        Value s = WgmmaWaitOp::create(b, 1, ValueRange{sAsync}).getResult(0);
        releaseKv(n, 0);
        Softmax next = softmax(n, s, {carried[0], carried[1]},
                               {carried[2], carried[3]});
        // P of block n - 1 stays in its registers until the product read it.
        auto waited = WgmmaWaitOp::create(b, 0, ValueRange{oAsync, carried[5]});
        releaseKv(previous, 1);
        Value o = arith::MulFOp::create(
            b, waited.getResult(0),
            perRow(oSecondRow, oType, next.accScale[0], next.accScale[1]));
        scf::YieldOp::create(b, ValueRange{next.max[0], next.max[1],
                                           next.sum[0], next.sum[1], o, next.p});
      }
      // The last block's product.
      Value last = arith::SubIOp::create(b, tile.blocks, idx(1));
      Value p = loop.getResult(5), oAsync;
      inTurn(tile.blocks,
             [&] { oAsync = issueProduct(last, p, loop.getResult(4)); });
      auto waited = WgmmaWaitOp::create(b, 0, ValueRange{oAsync, p});
      releaseKv(last, 1);
      scf::YieldOp::create(b, ValueRange{loop.getResult(0), loop.getResult(1),
                                         loop.getResult(2), loop.getResult(3),
                                         waited.getResult(0)});
      // A tile without keys: O = 0, sums 0, maxima -inf.
      b.setInsertionPointToStart(blocksIf.elseBlock());
      scf::YieldOp::create(b, ValueRange{negInf, negInf, zero, zero, zeroO});
    }
    // Every QK^T that read Q has completed.
    ChannelReleaseOp::create(b, q, qHandoff);

    // Epilogue: the quad's sums, LSE, O / sum into the staging tile.
    Value o = blocksIf.getResult(4);
    Value total[2], factor[2];
    for (int64_t r = 0; r < 2; ++r) {
      Value partial = blocksIf.getResult(2 + r);
      total[r] = partial;
      for (int32_t offset : {1, 2})
        total[r] = arith::AddFOp::create(
            b, total[r],
            gpu::ShuffleOp::create(b, total[r], offset, 32,
                                   gpu::ShuffleMode::XOR)
                .getShuffleResult());
      // A row that saw no key outputs 0, whatever O holds.
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, total[r], zero);
      factor[r] = arith::SelectOp::create(
          b, positive, arith::DivFOp::create(b, one, total[r]), zero);
    }
    if (shape.lse) {
      // One thread of the quad writes the row's LSE.
      Value quadLeader =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rem(lane, 4), idx(0));
      auto ifOp = scf::IfOp::create(b, quadLeader);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (int64_t r = 0; r < 2; ++r)
        storeLse(tile, stage, rows[r], total[r], blocksIf.getResult(r));
    }
    o = arith::MulFOp::create(b, o, perRow(oSecondRow, oType, factor[0], factor[1]));
    Value packed =
        arith::TruncFOp::create(b, VectorType::get({oCount}, shape.element), o);

    // Element pairs (columns c, c + 1) into the 128-byte swizzle of the TMA
    // store: 16-byte chunk j of row r sits at chunk j xor (r mod 8).
    Value handoff = add(mul(tile.ordinal, stages), stage);
    ChannelAcquireOp::create(b, epi, handoff);
    for (int64_t i = 0; i < oCount; i += 2) {
      int64_t r = wgmma::accumulatorRow(0, i) / 8;
      int64_t column = wgmma::accumulatorColumn(0, i);
      Value pair = vector::ShuffleOp::create(b, packed, packed,
                                             ArrayRef<int64_t>{i, i + 1});
      Value chunk = arith::XOrIOp::create(b, idx((column % kAtom) / 8),
                                          rem(rows[r], 8));
      vector::StoreOp::create(
          b, pair, staging,
          ValueRange{idx(column / kAtom), rows[r], add(mul(chunk, 8), quadColumn)});
    }
    FenceProxyAsyncOp::create(b);
    ChannelCommitOp::create(b, epi, handoff);
  });
  if (!turns.empty() && stage == 0)
    ChannelWaitOp::create(b, turns[0], idx(0));
}

void KernelBuilder::buildMma() {
  PlanAttr plan = shape.plan;
  int64_t blockN = plan.getBlockN(), split = plan.getPvSplit();
  int64_t stages = plan.getQStages(), kvStages = plan.getKvStages();
  Value falseValue = arith::ConstantIntOp::create(b, 0, 1);
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);

  elected([&] {
    forEachTile([&](const Tile &tile) {
      Value base = tile.kvBase, ordinal = tile.ordinal;
      SmallVector<Value> qHandoff, qTile, sRegion, pTop, pBottom, oRegion;
      for (int64_t stage = 0; stage < stages; ++stage) {
        qHandoff.push_back(add(mul(ordinal, stages), stage));
        ChannelWaitOp::create(b, q, qHandoff.back());
        qTile.push_back(smemView(qSmem, idx(stage * shape.qTileBytes()),
                                 tileType(shape.qRows())));
        sRegion.push_back(sTmem[stage]);
        // P[0, split) and P[split, blockN): 16-bit, two per column.
        pTop.push_back(tmemView(pTmem[stage], 0, split, shape.element));
        pBottom.push_back(tmemView(pTmem[stage], split / 2, blockN - split,
                                   shape.element));
        oRegion.push_back(oTmem[stage]);
      }
      // The two row ranges of a V tile the two PV MMAs read.
      auto vParts = [&](Value handoff) {
        Value offset = mul(rem(handoff, kvStages), shape.kvTileBytes());
        Value v = smemView(kvSmem, offset, tileType(shape.kvRows()));
        int64_t atoms = shape.atoms();
        Value top = memref::SubViewOp::create(
            b, v, ArrayRef<int64_t>{0, 0, 0},
            ArrayRef<int64_t>{atoms, split, kAtom}, ArrayRef<int64_t>{1, 1, 1});
        Value bottom = memref::SubViewOp::create(
            b, v, ArrayRef<int64_t>{0, split, 0},
            ArrayRef<int64_t>{atoms, blockN - split, kAtom},
            ArrayRef<int64_t>{1, 1, 1});
        return std::pair<Value, Value>{top, bottom};
      };
      // PV for `stage` of the block whose hand-off number is `k`.
      auto pv = [&](int64_t stage, Value k, std::pair<Value, Value> v,
                    Value accumulate) {
        ChannelWaitOp::create(b, pFirst[stage], k);
        MmaOp::create(b, pTop[stage], v.first, oRegion[stage], accumulate,
                      OperandMajor::mn);
        ChannelWaitOp::create(b, pSecond[stage], k);
        MmaOp::create(b, pBottom[stage], v.second, oRegion[stage], trueValue,
                      OperandMajor::mn);
      };

      // Per KV block: the previous block's PVs, then this block's QK^T, for
      // every Q stage. tcgen05 MMAs of one thread run in order, so S is
      // overwritten only after the PV that read P from it.
      forRange(tile.blocks, [&](Value n) {
        Value k = add(base, n);
        Value kHandoff = mul(k, 2);
        Value kOffset = mul(rem(kHandoff, kvStages), shape.kvTileBytes());
        Value kTile = smemView(kvSmem, kOffset, tileType(shape.kvRows()));
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
            pv(stage, previous, vParts(arith::SubIOp::create(b, kHandoff, idx(1))),
               accumulate);
          }
          MmaOp::create(b, qTile[stage], kTile, sRegion[stage], falseValue,
                        OperandMajor::k);
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
      Value anyBlock =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, tile.blocks, idx(0));
      auto lastIf = scf::IfOp::create(b, anyBlock);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(lastIf.thenBlock());
        Value last = arith::SubIOp::create(b, add(base, tile.blocks), idx(1));
        Value lastV = add(mul(last, 2), 1);
        Value accumulate = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                 tile.blocks, idx(1));
        for (int64_t stage = 0; stage < stages; ++stage)
          pv(stage, last, vParts(lastV), accumulate);
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
        ChannelReleaseOp::create(b, q, handoff);
    });
  });
}

void KernelBuilder::buildLoad() {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages(), kvStages = plan.getKvStages();
  elected([&] {
    forEachTile([&](const Tile &tile) {
      Value batchIndex = tile.batch, position = tile.position;
      Value ordinal = tile.ordinal;
      Value firstHead = mul(tile.headBlock, shape.pack);
      Value kvHead = div(firstHead, shape.groupSize);
      // One box per 64-column atom of a tile at byte `offset` of `buffer`.
      auto loadTile = [&](Value desc, Value channelValue, Value handoff,
                          Value buffer, Value offset, bool packed, Value head,
                          Value rowIndex) {
        ChannelAcquireOp::create(b, channelValue, handoff);
        int64_t atomBytes =
            KernelShape::atomBytes(packed ? shape.qRows() : shape.kvRows());
        for (int64_t a = 0; a < shape.atoms(); ++a) {
          Value box = smemView(buffer, add(offset, a * atomBytes),
                               boxType(packed));
          TmaLoadOp::create(b, desc,
                            ValueRange{idx(a * kAtom), head, rowIndex, batchIndex},
                            box, channelValue, handoff);
        }
        ChannelCommitOp::create(b, channelValue, handoff);
      };
      // K (which = 0) or V (1) of KV block n.
      auto loadKv = [&](Value n, int64_t which) {
        Value handoff = add(mul(add(tile.kvBase, n), 2), which);
        Value offset = mul(rem(handoff, kvStages), shape.kvTileBytes());
        loadTile(which ? vDesc : kDesc, kv, handoff, kvSmem, offset, false,
                 kvHead, mul(n, plan.getBlockN()));
      };
      // sm_90a: the tile's first K before its Q. Ring slots free up while
      // the consumers finish the previous tile, Q slots only once they have.
      if (shape.hopper()) {
        Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                               tile.blocks, idx(0));
        auto ifOp = scf::IfOp::create(b, anyBlock);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        loadKv(idx(0), 0);
      }
      for (int64_t stage = 0; stage < stages; ++stage) {
        Value handoff = add(mul(ordinal, stages), stage);
        loadTile(qDesc, q, handoff, qSmem,
                 mul(rem(handoff, shape.qSlots()), shape.qTileBytes()), true,
                 firstHead, add(position, stage * shape.positionsPerTile()));
      }
      forRange(tile.blocks, [&](Value n) {
        if (shape.hopper()) {
          Value later =
              arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, idx(0));
          auto ifOp = scf::IfOp::create(b, later);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          loadKv(n, 0);
        } else {
          loadKv(n, 0);
        }
        loadKv(n, 1);
      });
    });
  });
}

void KernelBuilder::buildStore() {
  int64_t stages = shape.plan.getQStages();
  elected([&] {
    forEachTile([&](const Tile &tile) {
      Value firstHead = mul(tile.headBlock, shape.pack);
      Value batchIndex = tile.batch, position = tile.position;
      for (int64_t stage = 0; stage < stages; ++stage) {
        Value handoff = add(mul(tile.ordinal, stages), stage);
        ChannelWaitOp::create(b, epi, handoff);
        Value row = add(position, stage * shape.positionsPerTile());
        // sm_90a: a staging tile per consumer warpgroup; sm_100a: one.
        int64_t staging = shape.hopper() ? stage * shape.qTileBytes() : 0;
        for (int64_t a = 0; a < shape.atoms(); ++a) {
          Value box = smemView(
              oSmem, idx(staging + a * KernelShape::atomBytes(shape.qRows())),
              boxType(true));
          nvgpu::TmaAsyncStoreOp::create(
              b, box, oDesc,
              ValueRange{idx(a * kAtom), firstHead, row, batchIndex},
              /*predicate=*/Value());
        }
        TmaStoreCommitOp::create(b);
        // The staging tile is free once the stores have read it.
        TmaStoreWaitOp::create(b, 0, /*read=*/true);
        ChannelReleaseOp::create(b, epi, handoff);
      }
    });
    TmaStoreWaitOp::create(b, 0, /*read=*/false);
  });
}

void KernelBuilder::role(StringRef name, int64_t firstWarp, int64_t endWarp,
                         int64_t registers, function_ref<void()> body) {
  auto op = RoleOp::create(b, name, firstWarp, endWarp, registers);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getBody().emplaceBlock());
  body();
}

void KernelBuilder::buildBlackwellRoles(Block &roles) {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages();
  // The hand-offs of the FA4 protocol.
  q = channel("q", stages, tma(), mma());
  kv = channel("kv", plan.getKvStages(), tma(), mma());
  for (int64_t stage = 0; stage < stages; ++stage) {
    std::string suffix = std::to_string(stage);
    s.push_back(channel("s_ready" + suffix, 1, mma(), threads(kWarpgroup)));
    // Softmax wrote P[0, pvSplit) and correction finished O: 256 arrivals.
    pFirst.push_back(channel("p_o_rescale" + suffix, 1,
                             threads(2 * kWarpgroup), mma()));
    pSecond.push_back(
        channel("p_ready_2_" + suffix, 1, threads(kWarpgroup), mma()));
    // The statistics hand-off pairs a softmax warpgroup with the
    // correction warpgroup on hardware barrier 1 + stage (0 is the CTA's).
    stats.push_back(channel("softmax_corr" + suffix, 1, threads(kWarpgroup),
                            threads(kWarpgroup),
                            static_cast<uint32_t>(1 + stage)));
    oReady.push_back(channel("o_ready" + suffix, 1, mma(), threads(kWarpgroup)));
  }
  epi = channel("corr_epi", 1, threads(kWarpgroup), threads(1));

  // Tensor Memory per Q stage: S (f32 scores), the O accumulator and P
  // (16-bit probabilities, written once S is read). fa4-allocate-tmem
  // places them.
  Type f32Type = b.getF32Type();
  auto tmemBuffers = [&](StringRef prefix, int64_t elements, Type element,
                         SmallVectorImpl<Value> &buffers) {
    for (int64_t stage = 0; stage < stages; ++stage)
      buffers.push_back(TmemBufferOp::create(
          b, tmemType(elements, element), prefix.str() + std::to_string(stage)));
  };
  tmemBuffers("s", plan.getBlockN(), f32Type, sTmem);
  tmemBuffers("o", shape.headDim, f32Type, oTmem);
  tmemBuffers("p", plan.getBlockN(), shape.element, pTmem);

  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&roles);
  for (int64_t stage = 0; stage < stages; ++stage)
    role("softmax" + std::to_string(stage), 4 * stage, 4 * stage + 4,
         plan.getSoftmaxRegs(), [&] { buildSoftmax(stage); });
  int64_t correction = 4 * stages, producer = correction + 4;
  role("correction", correction, correction + 4, plan.getCorrectionRegs(),
       [&] { buildCorrection(); });
  role("mma", producer, producer + 1, plan.getProducerRegs(),
       [&] { buildMma(); });
  role("load", producer + 1, producer + 2, plan.getProducerRegs(),
       [&] { buildLoad(); });
  role("store", producer + 2, producer + 3, plan.getProducerRegs(),
       [&] { buildStore(); });
}

void KernelBuilder::buildHopperRoles(Block &roles) {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages();
  // The hand-offs of the FA3 protocol: Q per consumer warpgroup, the K/V
  // ring read by both, a staging tile per consumer for the store warp.
  q = channel("q", shape.qSlots(), tma(), threads(kWarpgroup));
  kv = channel("kv", plan.getKvStages(), tma(), threads(stages * kWarpgroup));
  epi = channel("epilogue", stages, threads(kWarpgroup), threads(1));
  // Ping-pong: consumer c issues its wgmmas when it holds turn c, on
  // hardware barrier 1 + c, then passes the turn on, so that one consumer's
  // softmax overlaps the other's matrix products.
  if (stages == 2)
    for (int64_t stage = 0; stage < stages; ++stage)
      turns.push_back(channel("turn" + std::to_string(stage), 1,
                              threads(kWarpgroup), threads(kWarpgroup),
                              static_cast<uint32_t>(1 + stage)));

  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&roles);
  role("load", 0, 1, plan.getProducerRegs(), [&] { buildLoad(); });
  role("store", 1, 2, plan.getProducerRegs(), [&] { buildStore(); });
  for (int64_t stage = 0; stage < stages; ++stage)
    role("consumer" + std::to_string(stage), 4 * stage + 4, 4 * stage + 8,
         plan.getSoftmaxRegs(), [&] { buildConsumer(stage); });
}

gpu::GPUFuncOp KernelBuilder::build(gpu::GPUModuleOp module, StringRef name) {
  PlanAttr plan = shape.plan;
  Type index = b.getIndexType();
  SmallVector<Type> arguments = {descriptorType(true), descriptorType(false),
                                 descriptorType(false), descriptorType(true),
                                 index, index, index, b.getF32Type()};
  // LSE [B, Hq, Sq] in f32, as a pointer to global memory.
  if (shape.lse)
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // Shared-memory buffers, in bytes, placed later by fa4-allocate-smem.
  // Tiles are in the 128-byte swizzle, whose pattern spans 1024 bytes.
  struct SmemBuffer {
    StringRef name;
    int64_t bytes, alignment;
  };
  // sm_90a: an O staging tile per consumer warpgroup and no statistics
  // exchange (a warpgroup owns its rows' statistics in registers).
  int64_t stagingTiles = shape.hopper() ? plan.getQStages() : 1;
  SmallVector<SmemBuffer> smemBuffers = {
      {"q", shape.qSlots() * shape.qTileBytes(), 1024},
      {"kv", plan.getKvStages() * shape.kvTileBytes(), 1024},
      {"o_staging", stagingTiles * shape.qTileBytes(), 1024}};
  if (!shape.hopper())
    smemBuffers.push_back({"statistics", shape.statsBytes(), 16});
  SmallVector<Type> smemTypes;
  for (const SmemBuffer &buffer : smemBuffers)
    smemTypes.push_back(sharedType({buffer.bytes}, b.getI8Type()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto kernel = gpu::GPUFuncOp::create(
      b, name, FunctionType::get(ctx, arguments, {}), smemTypes, TypeRange());
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel->setAttr("fa4.plan", plan);
  for (auto [index, buffer] : llvm::enumerate(smemBuffers)) {
    kernel.setWorkgroupAttributionAttr(index, "fa4.name",
                                       b.getStringAttr(buffer.name));
    kernel.setWorkgroupAttributionAttr(index, "fa4.alignment",
                                       b.getI64IntegerAttr(buffer.alignment));
  }
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  qDesc = entry.getArgument(0);
  kDesc = entry.getArgument(1);
  vDesc = entry.getArgument(2);
  oDesc = entry.getArgument(3);
  batch = entry.getArgument(4);
  seqQ = entry.getArgument(5);
  seqKv = entry.getArgument(6);
  scaleLog2 = entry.getArgument(7);
  if (shape.lse)
    lseOut = entry.getArgument(8);
  ArrayRef<BlockArgument> attributions = kernel.getWorkgroupAttributions();
  qSmem = attributions[0];
  kvSmem = attributions[1];
  oSmem = attributions[2];
  if (!shape.hopper())
    statsSmem = attributions[3];

  int64_t stages = plan.getQStages();
  int64_t positionsPerCta = stages * shape.positionsPerTile();
  tilesPerHead = div(add(seqQ, positionsPerCta - 1), positionsPerCta);
  tiles = mul(mul(batch, shape.queryHeads / shape.pack), tilesPerHead);
  kvBlocks = div(add(seqKv, plan.getBlockN() - 1), plan.getBlockN());

  // Channels and buffers go before the roles that use them.
  auto specialize = WarpSpecializeOp::create(b, 4 * plan.getNumWarpgroups());
  Block &roles = specialize.getBody().emplaceBlock();
  b.setInsertionPoint(specialize);
  if (shape.hopper())
    buildHopperRoles(roles);
  else
    buildBlackwellRoles(roles);
  b.setInsertionPointAfter(specialize);
  gpu::ReturnOp::create(b);
  return kernel;
}

/// The launch manifest of a kernel: everything a runtime needs to run it on
/// the operands of its fa4.launch, as plain data (written out as JSON).
DictionaryAttr buildManifest(MLIRContext *ctx, const KernelShape &shape,
                             StringRef kernel, int64_t namedBarriers) {
  Builder b(ctx);
  PlanAttr plan = shape.plan;
  auto named = [&](StringRef key, Attribute value) {
    return b.getNamedAttr(key, value);
  };
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto ints = [&](ArrayRef<int64_t> v) { return b.getI64ArrayAttr(v); };
  auto dict = [&](ArrayRef<NamedAttribute> entries) {
    return b.getDictionaryAttr(entries);
  };
  std::string element = shape.element.isBF16() ? "bf16" : "f16";

  int64_t stages = plan.getQStages();
  int64_t warps = 4 * plan.getNumWarpgroups();
  int64_t producer = 4 * stages + 4;
  SmallVector<Attribute> roles;
  auto role = [&](StringRef name, int64_t first, int64_t end, int64_t regs) {
    roles.push_back(dict({named("name", b.getStringAttr(name)),
                          named("warps", ints({first, end})),
                          named("registers", i64(regs))}));
  };
  if (shape.hopper()) {
    role("load", 0, 1, plan.getProducerRegs());
    role("store", 1, 2, plan.getProducerRegs());
    for (int64_t stage = 0; stage < stages; ++stage)
      role("consumer" + std::to_string(stage), 4 * stage + 4, 4 * stage + 8,
           plan.getSoftmaxRegs());
  } else {
    for (int64_t stage = 0; stage < stages; ++stage)
      role("softmax" + std::to_string(stage), 4 * stage, 4 * stage + 4,
           plan.getSoftmaxRegs());
    role("correction", 4 * stages, 4 * stages + 4, plan.getCorrectionRegs());
    role("mma", producer, producer + 1, plan.getProducerRegs());
    role("load", producer + 1, producer + 2, plan.getProducerRegs());
    role("store", producer + 2, producer + 3, plan.getProducerRegs());
  }

  // TMA boxes, innermost dimension first as cuTensorMapEncodeTiled takes
  // them: (64 columns, heads, rows, 1) over the operand's [B, S, H, D].
  auto tensorMap = [&](StringRef operand, int64_t index, bool packed) {
    int64_t heads = packed ? shape.pack : 1;
    int64_t rows = packed ? shape.positionsPerTile() : shape.kvRows();
    return dict({named("operand", b.getStringAttr(operand)),
                 named("operand_index", i64(index)),
                 named("element", b.getStringAttr(element)),
                 named("box", ints({kAtom, heads, rows, 1})),
                 named("swizzle", b.getStringAttr("128B")),
                 named("oob_fill", b.getStringAttr("zero"))});
  };
  auto param = [&](StringRef name, StringRef kind, StringRef source) {
    return dict({named("name", b.getStringAttr(name)),
                 named("kind", b.getStringAttr(kind)),
                 named("source", b.getStringAttr(source))});
  };
  double scaleLog2 = shape.scaleLog2;
  SmallVector<Attribute> params = {
      param("query_map", "tensor_map", "tensor_maps[0]"),
      param("key_map", "tensor_map", "tensor_maps[1]"),
      param("value_map", "tensor_map", "tensor_maps[2]"),
      param("output_map", "tensor_map", "tensor_maps[3]"),
      param("batch", "i32", "query.shape[0]"),
      param("seq_q", "i32", "query.shape[1]"),
      param("seq_kv", "i32", "key.shape[1]"),
      param("scale_log2", "f32", "scale_log2")};
  if (shape.lse)
    params.push_back(param("lse", "pointer", "lse.data"));

  return dict({
      named("kernel", b.getStringAttr(kernel)),
      named("arch", b.getStringAttr(stringifyArch(plan.getArch()))),
      named("block", ints({warps * 32, 1, 1})),
      named("cluster", ints({1, 1, 1})),
      named("named_barriers", i64(namedBarriers)),
      named("roles", b.getArrayAttr(roles)),
      // Persistent CTAs: min(tiles, SMs), tiles = batch * head_blocks *
      // ceil(seq_q / query_rows_per_cta).
      named("grid", dict({named("rule", b.getStringAttr("persistent")),
                          named("head_blocks",
                                i64(shape.queryHeads / shape.pack)),
                          named("query_rows_per_cta",
                                i64(stages * shape.positionsPerTile()))})),
      named("params", b.getArrayAttr(params)),
      named("tensor_maps",
            b.getArrayAttr({tensorMap("query", 0, true),
                            tensorMap("key", 1, false),
                            tensorMap("value", 2, false),
                            tensorMap("output", 3, true)})),
      named("causal", b.getBoolAttr(shape.causal)),
      named("scale", b.getF64FloatAttr(scaleLog2 / M_LOG2E)),
      named("scale_log2", b.getF64FloatAttr(scaleLog2)),
      named("plan", plan),
  });
}

/// What a launch's operands must be, for runtimes choosing a kernel: name,
/// element type and shape (-1 where dynamic) of each.
ArrayAttr operandsEntry(LaunchOp launch) {
  Builder b(launch.getContext());
  SmallVector<Attribute> operands;
  for (auto [index, operand] : llvm::enumerate(launch.getOperands())) {
    auto type = cast<MemRefType>(operand.getType());
    SmallVector<int64_t> shape;
    for (int64_t size : type.getShape())
      shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    std::string element;
    llvm::raw_string_ostream os(element);
    type.getElementType().print(os);
    operands.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name",
                        b.getStringAttr(LaunchOp::getOperandName(index))),
         b.getNamedAttr("element", b.getStringAttr(element)),
         b.getNamedAttr("shape", b.getI64ArrayAttr(shape))}));
  }
  return b.getArrayAttr(operands);
}

/// The value of a constant integer, if `v` is one.
std::optional<int64_t> constantIndex(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// The FA4 forward program as fa4-tile writes it.
struct TiledProgram {
  TileCoordsOp coords;
  TileLoadOp query, key, value;
  TileMatmulOp scores, product;
  TileMaskOp mask;
  TileSoftmaxOp softmax;
  TileRescaleOp rescale;
  TileNormalizeOp normalize;
  TileStoreOp store;
  TileStoreLseOp lse; // null without LSE
  scf::ForOp stageLoop, kvLoop;
  int64_t kvHeadDivisor = 0; // query heads per KV head, as the program says
};

/// The ops of type `Op` among `ops`.
template <typename Op>
SmallVector<Op> opsOf(ArrayRef<Operation *> ops) {
  SmallVector<Op> result;
  for (Operation *op : ops)
    if (auto typed = dyn_cast<Op>(op))
      result.push_back(typed);
  return result;
}

/// Finds the FA4 forward program in `kernel`, or reports at the first op
/// that differs.
FailureOr<TiledProgram> recognize(gpu::GPUFuncOp kernel) {
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
  auto softmaxes = opsOf<TileSoftmaxOp>(all);
  auto rescales = opsOf<TileRescaleOp>(all);
  auto normalizes = opsOf<TileNormalizeOp>(all);
  auto stores = opsOf<TileStoreOp>(all);
  auto lses = opsOf<TileStoreLseOp>(all);
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
      (lses.size() > 1 && failed(count(lses.size(), 1, "fa4.tile.store_lse"))))
    return failure();
  if (all.size() != 11 + lses.size())
    return fail(kernel, "it holds fa4 ops other than the tile ops");

  TiledProgram p;
  p.coords = coords[0];
  p.mask = masks[0];
  p.softmax = softmaxes[0];
  p.rescale = rescales[0];
  p.normalize = normalizes[0];
  p.store = stores[0];
  p.lse = lses.empty() ? TileStoreLseOp() : lses[0];
  p.scores = matmuls[0].getTransposeB() ? matmuls[0] : matmuls[1];
  p.product = matmuls[0].getTransposeB() ? matmuls[1] : matmuls[0];
  if (!p.scores.getTransposeB() || p.product.getTransposeB() ||
      p.scores.getAcc() || !p.product.getAcc())
    return fail(kernel, "expected Q K^T without an accumulator and P V "
                        "accumulating");
  p.query = p.scores.getA().getDefiningOp<TileLoadOp>();
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
  if (!isArgument(p.query.getSource(), 0))
    return fail(p.query, "Q must be the kernel's first argument");
  if (!isArgument(p.key.getSource(), 1))
    return fail(p.key, "K must be the kernel's second argument");
  if (!isArgument(p.value.getSource(), 2))
    return fail(p.value, "V must be the kernel's third argument");
  if (!isArgument(p.store.getDest(), 3))
    return fail(p.store, "O must be the kernel's fourth argument");
  if (p.lse && !isArgument(p.lse.getDest(), 4))
    return fail(p.lse, "LSE must be the kernel's fifth argument");

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
  if (p.mask.getScores() != p.scores.getResult() ||
      p.softmax.getScores() != p.mask.getResult())
    return fail(p.softmax, "the scores must be masked, then exponentiated");
  if (p.softmax.getMax() != iter(1) || p.softmax.getSum() != iter(2) ||
      p.rescale.getTile() != iter(0) ||
      p.rescale.getFactors() != p.softmax.getCorrection() ||
      p.product.getA() != p.softmax.getProbabilities() ||
      p.product.getAcc() != p.rescale.getResult())
    return fail(p.softmax, "O must be rescaled by the correction before P V "
                           "accumulates into it");
  if (yield.getOperands() !=
      ValueRange{p.product.getResult(), p.softmax.getNewMax(),
                 p.softmax.getNewSum()})
    return fail(yield, "the KV loop must carry O, the new maxima and sums");
  if (p.normalize.getTile() != result(0) || p.normalize.getSums() != result(2) ||
      p.store.getTile() != p.normalize.getResult())
    return fail(p.normalize, "O must be normalized by the final sums and "
                             "stored");
  if (p.lse && (p.lse.getMax() != result(1) || p.lse.getSum() != result(2)))
    return fail(p.lse, "LSE comes from the final maxima and sums");

  // Which rows, keys and heads each op touches. The bounds of the work-tile
  // and KV loops are not checked: fa4-specialize computes its own.
  auto isDim = [&](Value v, unsigned argument, int64_t dim) {
    auto op = v.getDefiningOp<memref::DimOp>();
    return op && isArgument(op.getSource(), argument) &&
           constantIndex(op.getIndex()) == dim;
  };
  auto isProduct = [&](Value v, Value x, int64_t factor) {
    auto mul = v.getDefiningOp<arith::MulIOp>();
    return mul && ((mul.getLhs() == x && constantIndex(mul.getRhs()) == factor) ||
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
  auto tileLoop = tileIndex
                      ? dyn_cast<scf::ForOp>(tileIndex.getOwner()->getParentOp())
                      : scf::ForOp();
  if (!isCountingLoop(tileLoop) ||
      tileLoop.getInductionVar() != p.coords.getTile() ||
      !isDim(p.coords.getBatch(), 0, 0))
    return fail(p.coords, "it must number the work tiles 0, 1, ... of a "
                          "loop and take the batch size of Q");
  if (tileLoop->getBlock() != &entry ||
      p.coords->getBlock() != tileLoop.getBody())
    return fail(p.coords, "the work-tile loop must be in the kernel body "
                          "and compute the tile's coordinates");
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
  if (p.lse && p.lse->getBlock() != qTile)
    return fail(p.lse, "it must run once per Q tile, next to the Q load");
  for (Operation *op :
       {p.key.getOperation(), p.value.getOperation(), p.scores.getOperation(),
        p.mask.getOperation(), p.rescale.getOperation(),
        p.product.getOperation()})
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
  Value key = p.key.getPosition();
  // The K/V head is the first query head / group (or the head itself).
  auto kvHead = p.key.getHead().getDefiningOp<arith::DivUIOp>();
  std::optional<int64_t> divisor =
      p.key.getHead() == head ? std::optional<int64_t>(1)
      : kvHead && kvHead.getLhs() == head ? constantIndex(kvHead.getRhs())
                                          : std::nullopt;
  if (!isCountingLoop(p.kvLoop) || !divisor ||
      !isProduct(key, p.kvLoop.getInductionVar(),
                 p.key.getTile().getType().getDimSize(0)))
    return fail(p.key, "K must be read block by block at the KV head of the "
                       "work tile's query heads");
  p.kvHeadDivisor = *divisor;
  if (p.key.getBatch() != batch ||
      p.value.getBatch() != batch || p.value.getPosition() != key ||
      p.value.getHead() != p.key.getHead())
    return fail(p.value, "K and V must be read at the same batch, key and "
                         "head");
  if (p.mask.getPosition() != row || p.mask.getKey() != key ||
      !isDim(p.mask.getSeqQ(), 0, 1) || !isDim(p.mask.getSeqKv(), 1, 1))
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

/// Reads the kernel's shape from its program, checking it against the plan
/// and what fa4-specialize can build.
FailureOr<KernelShape> readShape(gpu::GPUFuncOp kernel, PlanAttr plan,
                                 TiledProgram p) {
  bool hopper = plan.getArch() == Arch::sm_90a;
  if (plan.getBlockN() != 128 && !(hopper && plan.getBlockN() == 64))
    return kernel.emitOpError()
           << "fa4-specialize needs blockN = 128 (or 64 on sm_90a), the plan "
              "has "
           << plan.getBlockN();
  if (plan.getArch() == Arch::sm_100a && plan.getPvSplit() % kChunk != 0)
    return kernel.emitOpError()
           << "fa4-specialize needs a pvSplit that is a multiple of " << kChunk
           << ", the plan has " << plan.getPvSplit();
  if (p.lse) {
    MemRefType lse = p.lse.getDest().getType();
    if (!lse.getLayout().isIdentity())
      return kernel.emitOpError() << "fa4-specialize writes LSE to a "
                                     "contiguous [B, Hq, Sq] tensor, got "
                                  << lse;
  }

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
      (p.lse && p.lse.getDest().getType().getDimSize(1) != queryHeads))
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
  if (p.stageLoop ? constantIndex(p.stageLoop.getUpperBound()) !=
                        plan.getQStages()
                  : plan.getQStages() != 1)
    return disagree(p.stageLoop ? p.stageLoop.getOperation() : p.query,
                    "a work tile must have qStages Q tiles");

  // One element type for every tile and tensor.
  Type element = queryTensor.getElementType();
  for (Type type : {keyTensor.getElementType(), valueTensor.getElementType(),
                    outputTensor.getElementType(),
                    p.softmax.getProbabilities().getType().getElementType()})
    if (type != element)
      return kernel.emitOpError() << "needs one element type for Q, K, V, P "
                                     "and O, got "
                                  << element << " and " << type;
  for (MemRefType tensor : {keyTensor, valueTensor, outputTensor})
    if (tensor.getDimSize(3) != queryTensor.getDimSize(3))
      return kernel.emitOpError() << "needs one head dim for Q, K, V and O";
  if (query.getDimSize(0) != plan.getBlockM() ||
      key.getDimSize(0) != plan.getBlockN() ||
      p.value.getTile().getType().getDimSize(0) != plan.getBlockN())
    return disagree(p.query, "Q tiles must have blockM rows, K and V tiles "
                             "blockN");
  if (query.getDimSize(1) != plan.getHeadDim() ||
      key.getDimSize(1) != plan.getHeadDim() ||
      p.value.getTile().getType().getDimSize(1) != plan.getHeadDim())
    return disagree(p.query, "tiles must have headDim columns");
  auto heads = [](auto op) { return static_cast<int64_t>(op.getHeads()); };
  if (pack != plan.getGqaPack() || heads(p.query) != pack ||
      heads(p.mask) != pack || heads(p.store) != pack ||
      (p.lse && heads(p.lse) != pack) || heads(p.key) != 1 ||
      heads(p.value) != 1)
    return disagree(p.coords, "Q, O, LSE and the mask must pack gqaPack "
                              "heads per position, K and V one");
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
      plan.getHeadDim(), plan.getQStages(), plan.getKvStages(), pack,
      p.coords.getScheduler(), plan.getSoftmaxRegs(),
      plan.getCorrectionRegs(), plan.getProducerRegs(),
      static_cast<int64_t>(p.softmax.getEmulated()), plan.getPvSplit(),
      static_cast<int64_t>(p.softmax.getThreshold()));
  if (!shape.plan)
    return failure();
  shape.element = query.getElementType();
  shape.headDim = query.getDimSize(1);
  shape.queryHeads = queryHeads;
  shape.groupSize = group;
  shape.pack = pack;
  shape.causal = p.mask.getCausal();
  shape.lse = static_cast<bool>(p.lse);
  shape.scheduler = p.coords.getScheduler();
  shape.scaleLog2 = p.softmax.getScaleLog2().convertToDouble();
  shape.rescaleThreshold = p.softmax.getThreshold();
  shape.emulatedExp2 = p.softmax.getEmulated();
  return shape;
}

struct FA4SpecializePass
    : public fa4::impl::FA4SpecializeBase<FA4SpecializePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    // Kernels that hold a tiled program; role-level kernels are left alone.
    module.walk([&](gpu::GPUFuncOp kernel) {
      WalkResult tiled = kernel.walk([](Operation *op) {
        return op->getName().getStringRef().starts_with("fa4.tile.")
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (tiled.wasInterrupted())
        kernels.push_back(kernel);
    });

    MLIRContext *ctx = &getContext();
    for (gpu::GPUFuncOp kernel : kernels) {
      auto plan = kernel->getAttrOfType<PlanAttr>("fa4.plan");
      if (!plan) {
        kernel.emitOpError() << "holds a tiled program but no fa4.plan";
        return signalPassFailure();
      }
      FailureOr<TiledProgram> program = recognize(kernel);
      if (failed(program))
        return signalPassFailure();
      FailureOr<KernelShape> shape = readShape(kernel, plan, *program);
      if (failed(shape))
        return signalPassFailure();

      // The role-level kernel takes the tiled one's place and name.
      auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
      std::string name = kernel.getName().str();
      Location loc = kernel.getLoc();
      kernel.erase();
      ImplicitLocOpBuilder builder(loc, ctx);
      KernelBuilder kernelBuilder(builder, *shape);
      gpu::GPUFuncOp roles = kernelBuilder.build(gpuModule, name);

      DictionaryAttr manifest =
          buildManifest(ctx, *shape, name, kernelBuilder.getNamedBarrierCount());
      for (NamedAttribute entry : manifest)
        LaunchOp::setManifestEntry(module, roles, entry.getName(),
                                   entry.getValue());
      module->walk([&](LaunchOp launch) {
        if (launch.getKernel().getLeafReference() == roles.getName())
          LaunchOp::setManifestEntry(module, roles, "operands",
                                     operandsEntry(launch));
      });
    }
  }
};
} // namespace
