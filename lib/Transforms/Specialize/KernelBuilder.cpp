//===- KernelBuilder.cpp - signature, buffers and the shared roles --------===//

#include "KernelBuilder.h"
#include "RoleSet.h"
#include "ScoreStage.h"
#include "WorkSchedule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

//===----------------------------------------------------------------------===//
// KernelOps
//===----------------------------------------------------------------------===//

Value KernelOps::opaque(Value index) {
  Type i32 = b.getI32Type();
  Value word = arith::IndexCastOp::create(b, i32, index);
  Value copy =
      NVVM::InlinePtxOp::create(b, TypeRange{i32}, ValueRange{word},
                                ValueRange{}, "mov.b32 $0, $1;", Value())
          .getResult(0);
  return arith::IndexCastOp::create(b, b.getIndexType(), copy);
}

Value KernelOps::exp2(Value x) {
  auto scalarType = VectorType::get({1}, b.getF32Type());
  Value power = Exp2Op::create(
      b, vector::BroadcastOp::create(b, scalarType, x), /*emulated=*/0);
  return vector::ExtractOp::create(b, power, ArrayRef<int64_t>{0});
}

Value KernelOps::treeSum(Value vector) {
  int64_t n = cast<VectorType>(vector.getType()).getNumElements();
  // Halves of equal length down to one element; an odd length is summed
  // in order from there.
  for (; n > 1 && n % 2 == 0; n /= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < n / 2; ++i) {
      low.push_back(i);
      high.push_back(n / 2 + i);
    }
    vector = arith::AddFOp::create(
        b, vector::ShuffleOp::create(b, vector, vector, low),
        vector::ShuffleOp::create(b, vector, vector, high));
  }
  if (n > 1)
    return vector::ReductionOp::create(b, vector::CombiningKind::ADD, vector);
  return vector::ExtractOp::create(b, vector, ArrayRef<int64_t>{0});
}

Value KernelOps::roundingResidual(Value p, Value hi) {
  Value residual =
      arith::SubFOp::create(b, p, arith::ExtFOp::create(b, p.getType(), hi));
  return arith::TruncFOp::create(b, hi.getType(), residual);
}

MemRefType KernelOps::sharedType(ArrayRef<int64_t> shapeDims, Type element) {
  return MemRefType::get(
      shapeDims, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

MemRefType KernelOps::boxType(TmaOperand operand) {
  int64_t columns = shape.atomColumns();
  switch (operand) {
  case TmaOperand::query:
    return sharedType({1, shape.positionsPerTile(), shape.pack, columns},
                      shape.element);
  case TmaOperand::output:
    return sharedType({1, shape.positionsPerTile(), shape.pack, kAtom},
                      shape.outElement);
  case TmaOperand::value:
    if (shape.valueKeyMajor)
      return sharedType({1, shape.headDimV, 1, columns}, shape.element);
    [[fallthrough]];
  case TmaOperand::key:
    return sharedType({1, shape.kvBoxRows(), 1, columns}, shape.element);
  }
  llvm_unreachable("unknown TMA operand");
}

nvgpu::TensorMapDescriptorType KernelOps::descriptorType(TmaOperand operand) {
  return nvgpu::TensorMapDescriptorType::get(
      ctx, boxType(operand), nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

Value KernelOps::channel(StringRef name, int64_t stages, EndpointAttr producer,
                         EndpointAttr consumer,
                         std::optional<uint32_t> namedBarrier) {
  return ChannelOp::create(
      b, ChannelType::get(ctx, stages), name, producer, consumer,
      namedBarrier ? b.getI32IntegerAttr(*namedBarrier) : IntegerAttr());
}

void KernelOps::storeSwizzled(Value packed, Value firstColumn, Value tile,
                              Value row) {
  // 16-byte piece c of row r at piece c xor (r mod 8): the 128-byte
  // swizzle TMA and the MMAs read.
  Value swizzle = rem(row, 8);
  int64_t columns = cast<VectorType>(packed.getType()).getNumElements();
  Value atom = div(firstColumn, kAtom);
  Value firstPiece = div(rem(firstColumn, kAtom), 8);
  for (int64_t piece = 0; piece < columns / 8; ++piece) {
    Value position = arith::XOrIOp::create(b, add(firstPiece, piece), swizzle);
    SmallVector<int64_t> lanes;
    for (int64_t e = 0; e < 8; ++e)
      lanes.push_back(piece * 8 + e);
    Value eight = vector::ShuffleOp::create(b, packed, packed, lanes);
    vector::StoreOp::create(b, eight, tile,
                            ValueRange{atom, row, mul(position, 8)});
  }
}

void KernelOps::forRange(Value count, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, idx(0), count, idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void KernelOps::elected(function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(
      b, NVVM::ElectSyncOp::create(b, b.getI1Type(), /*membermask=*/Value()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

void KernelOps::role(StringRef name, int64_t firstWarp, int64_t endWarp,
                     int64_t registers, function_ref<void()> body) {
  auto op = RoleOp::create(b, name, firstWarp, endWarp, registers);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getBody().emplaceBlock());
  body();
}

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

KernelBuilder::KernelBuilder(ImplicitLocOpBuilder &b, const KernelShape &shape)
    : KernelOps(b, shape) {
  scoreStage = createScoreStage(*this);
  schedule = createWorkSchedule(*this);
  roleSet = createRoleSet(*this);
}

KernelBuilder::~KernelBuilder() = default;

void KernelBuilder::forEachTile(function_ref<void(const Tile &)> body) {
  schedule->forEachTile(body);
}

gpu::GPUFuncOp KernelBuilder::build(gpu::GPUModuleOp module, StringRef name) {
  PlanAttr plan = shape.plan;
  Type index = b.getIndexType();
  SmallVector<Type> arguments = {descriptorType(TmaOperand::query),
                                 descriptorType(TmaOperand::key),
                                 descriptorType(TmaOperand::value),
                                 descriptorType(TmaOperand::output),
                                 index,
                                 index,
                                 index,
                                 b.getF32Type()};
  // The softcap over the scale (raw-score units).
  if (shape.softcap)
    arguments.push_back(b.getF32Type());
  // LSE [B, Hq, Sq] in f32, as a pointer to global memory.
  if (shape.lse)
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // The sink logits [Hq] in f32, likewise.
  if (shape.sink)
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // FP8: q_descale, k_descale and v_descale [B, Hkv] in f32, likewise.
  if (shape.descale)
    arguments.append(3, LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // Packed sequences: the tables cu_seqlens_q, cu_seqlens_k [B + 1] and
  // seqused_k [B] in i32, likewise.
  if (shape.varlen)
    arguments.append(shape.seqused ? 3 : 2,
                     LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // Packed sequences: O [Tq, Hq, D] (contiguous), likewise, for the rows of
  // a sequence's last Q stage, which are stored one by one.
  if (shape.varlen)
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // A dense KV cache: seqused_k [B] in i32, likewise; paged, the page table
  // [B, max_pages] in i32 and its row length.
  if (!shape.varlen && shape.seqused)
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  if (shape.pageSize) {
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
    arguments.push_back(index);
  }
  // Split-KV: the workspace's partial rows (f32) and split counters (i32);
  // none where the splits are a cluster.
  if (shape.workspaceSplit())
    arguments.append(2, LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  // Rotary embedding: the [P, R] cos | sin table (f32), its rows P and the
  // positions [B, Sq] (i32; packed sequences: [Tq]).
  if (shape.rope()) {
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
    arguments.push_back(index);
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
  }
  // Each capture: a pointer to global memory, then its dynamic sizes.
  for (MemRefType capture : shape.captures) {
    arguments.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
    arguments.append(capture.getNumDynamicDims(), index);
  }
  // Shared-memory buffers, in bytes, placed later by fa4-allocate-smem.
  SmallVector<SharedBuffer> smemBuffers = roleSet->sharedBuffers();
  // A cluster split: each Q stage's partial rows, which the cluster's CTAs
  // read.
  if (shape.plan.isClusterSplit())
    smemBuffers.push_back({"split_exchange",
                           shape.plan.getQStages() * shape.exchangeStageBytes(),
                           16});
  SmallVector<Type> smemTypes;
  for (const SharedBuffer &buffer : smemBuffers)
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
    sharedBuffers[buffer.name] = kernel.getWorkgroupAttributions()[index];
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
  unsigned next = 8;
  if (shape.softcap)
    softcap = entry.getArgument(next++);
  if (shape.lse)
    lseOut = entry.getArgument(next++);
  if (shape.sink)
    sinks = entry.getArgument(next++);
  if (shape.descale) {
    qDescale = entry.getArgument(next++);
    kDescale = entry.getArgument(next++);
    vDescale = entry.getArgument(next++);
  }
  if (shape.varlen) {
    cuSeqlensQ = entry.getArgument(next++);
    cuSeqlensK = entry.getArgument(next++);
    if (shape.seqused)
      sequsedK = entry.getArgument(next++);
    outputRows = entry.getArgument(next++);
  }
  if (!shape.varlen && shape.seqused)
    sequsedK = entry.getArgument(next++);
  if (shape.pageSize) {
    pageTable = entry.getArgument(next++);
    maxPages = entry.getArgument(next++);
  }
  if (shape.workspaceSplit()) {
    splitPartials = entry.getArgument(next++);
    splitCounters = entry.getArgument(next++);
  }
  if (shape.rope()) {
    ropeTable = entry.getArgument(next++);
    ropeTableRows = entry.getArgument(next++);
    ropePositions = entry.getArgument(next++);
  }
  for (MemRefType type : shape.captures) {
    Capture capture{type, entry.getArgument(next++), {}};
    for (int64_t size : type.getShape())
      capture.sizes.push_back(ShapedType::isDynamic(size)
                                  ? Value(entry.getArgument(next++))
                                  : idx(size));
    captures.push_back(std::move(capture));
  }

  // Paged: the Skv argument is the page size; a batch (or sequence) holds
  // up to max_pages of them.
  if (shape.pageSize)
    seqKv = mul(maxPages, shape.pageSize);
  if (shape.varlen) {
    // Packed: the batch argument is the table's B + 1 entries, Sq and Skv
    // the packed totals (paged: Skv as above); a tile's own lengths come
    // from the tables.
    batch = arith::SubIOp::create(b, batch, idx(1));
  } else {
    int64_t positionsPerCta = shape.positionsPerWorkTile();
    tilesPerHead = div(add(seqQ, positionsPerCta - 1), positionsPerCta);
    tiles = mul(mul(batch, shape.headBlocks()), tilesPerHead);
    kvBlocks = div(add(seqKv, plan.getBlockN() - 1), plan.getBlockN());
  }

  // Programmatic dependent launch: launched as a dependent of the previous
  // kernel on the stream (a decode step after the layer before it), the
  // kernel starts while that one finishes and waits here, before any role
  // reads global memory, until its writes are visible; it lets its own
  // dependents launch at once (they wait likewise). Launched otherwise,
  // both are no-ops.
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::wait);
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);

  // Channels and buffers go before the roles that use them.
  auto specialize = WarpSpecializeOp::create(b, 4 * plan.getNumWarpgroups());
  Block &roles = specialize.getBody().emplaceBlock();
  b.setInsertionPoint(specialize);
  // A cluster split: the store roles of the cluster's CTAs publish their Q
  // stage's partial rows to each other and release them once read.
  if (shape.plan.isClusterSplit()) {
    EndpointAttr ctas =
        EndpointAttr::get(ctx, EndpointKind::cluster, shape.splits());
    splitExchange =
        channel("split_exchange", shape.plan.getQStages(), ctas, ctas);
  }
  roleSet->build(roles);
  b.setInsertionPointAfter(specialize);
  gpu::ReturnOp::create(b);
  return kernel;
}

Value KernelBuilder::loadCapture(unsigned index, ValueRange indices) {
  const Capture &capture = captures[index];
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) {
    return arith::IndexCastOp::create(b, i64, v).getResult();
  };
  // Row-major: ((i0 * n1 + i1) * n2 + i2) ...
  Value offset = arith::ConstantOp::create(b, b.getI64IntegerAttr(0));
  for (auto [i, position] : llvm::enumerate(indices)) {
    if (i > 0)
      offset = arith::MulIOp::create(b, offset, wide(capture.sizes[i]));
    offset = arith::AddIOp::create(b, offset, wide(position));
  }
  Type element = capture.type.getElementType();
  Value address = LLVM::GEPOp::create(b, capture.data.getType(), element,
                                      capture.data, ValueRange{offset});
  return LLVM::LoadOp::create(b, element, address);
}

Value KernelBuilder::loadTableEntry(Value table, Value offset) {
  Type i32 = b.getI32Type();
  Value address = LLVM::GEPOp::create(
      b, table.getType(), i32, table,
      ValueRange{arith::IndexCastOp::create(b, b.getI64Type(), offset)});
  return arith::IndexCastOp::create(b, b.getIndexType(),
                                    LLVM::LoadOp::create(b, i32, address));
}

Value KernelBuilder::usedKeys(Value index, Value held) {
  Value used = loadTableEntry(sequsedK, index);
  return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, used, idx(0)),
                                held);
}

Value KernelBuilder::valueStart(const Tile &tile) {
  constexpr int64_t kAlign = kPackedValueAlignment; // packedValueStart
  Value aligned = mul(div(add(tile.keyStart, kAlign - 1), kAlign), kAlign);
  return add(aligned, mul(tile.batch, kAlign));
}

std::pair<Value, Value> KernelBuilder::tmaRows(const Tile &tile,
                                               TmaOperand operand, Value row) {
  bool query = operand == TmaOperand::query || operand == TmaOperand::output;
  if (shape.pageSize && !query) {
    // The page of `row`: its outer coordinate in the paged [pages, P, H, D]
    // map. A box of a block that spans pages may start past the batch's
    // keys: it reads no table entry (the index is clamped into the batch's
    // row and the entry replaced) but page -1, outside the map, which reads
    // zeros; so does an entry outside the cache.
    Value pageIndex = div(row, shape.pageSize);
    Value lastIndex = arith::MaxSIOp::create(b, add(maxPages, -1), idx(0));
    Value entry = loadTableEntry(
        pageTable, add(mul(tile.batch, maxPages),
                       arith::MinUIOp::create(b, pageIndex, lastIndex)));
    Value page = entry;
    if (shape.pageSize < shape.kvRows()) {
      Value inside =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, tile.seqKv);
      page = arith::SelectOp::create(b, inside, entry, idx(-1));
    }
    return {rem(row, shape.pageSize), page};
  }
  if (!shape.varlen)
    return {row, tile.batch};
  // The packed tensor's map is [1, T, H, D] from its first row (the
  // manifest's "varlen" maps): row j of the sequence is packed row start +
  // j. Rows past the sequence belong to the next one (past T they read
  // zeros): keys there are masked, queries there computed and not stored
  // (partialStage). A map whose base lies before the tensor, so that such
  // rows fall out of bounds, faults on the hardware when the base is not
  // mapped memory. A key-major V's sequences start 16 keys apart at least
  // (valueStart).
  Value start = query ? tile.queryStart
                : operand == TmaOperand::value && shape.valueKeyMajor
                    ? valueStart(tile)
                    : tile.keyStart;
  return {add(start, row), idx(0)};
}

Value KernelBuilder::partialStage(const Tile &tile, int64_t stage) {
  if (!shape.varlen)
    return arith::ConstantOp::create(b, b.getBoolAttr(false));
  Value end = add(tile.position, (stage + 1) * shape.positionsPerTile());
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, end, tile.seqQ);
}

Tile KernelBuilder::epilogueTile(const Tile &tile) {
  Tile again = tile;
  if (tile.recompute)
    tile.recompute(again);
  return again;
}

Value KernelBuilder::sinkLogit(const Tile &tile, Value row) {
  if (!shape.sink)
    return {};
  Type f32Type = b.getF32Type();
  Value head = add(mul(tile.headBlock, shape.pack), rem(row, shape.pack));
  Value address = LLVM::GEPOp::create(
      b, sinks.getType(), f32Type, sinks,
      ValueRange{arith::IndexCastOp::create(b, b.getI64Type(), head)});
  return arith::MulFOp::create(b, LLVM::LoadOp::create(b, f32Type, address),
                               f32(M_LOG2E));
}

std::pair<Value, Value> KernelBuilder::descaleFactors(const Tile &tile) {
  if (!shape.descale)
    return {};
  // Entry [batch, kvHead] of the [B, Hkv] tensors, in 64 bits.
  int64_t kvHeads = shape.queryHeads / shape.groupSize;
  Value kvHead = div(mul(tile.headBlock, shape.pack), shape.groupSize);
  Value entry = arith::IndexCastOp::create(
      b, b.getI64Type(), add(mul(tile.batch, kvHeads), kvHead));
  Type f32Type = b.getF32Type();
  auto load = [&](Value tensor) -> Value {
    Value address = LLVM::GEPOp::create(b, tensor.getType(), f32Type, tensor,
                                        ValueRange{entry});
    return LLVM::LoadOp::create(b, f32Type, address);
  };
  return {arith::MulFOp::create(b, load(qDescale), load(kDescale)),
          load(vDescale)};
}

RowTotals KernelBuilder::finishRow(Value sink, Value rowMax, Value rowSum) {
  Value zero = f32(0.0f);
  RowTotals totals{rowMax, rowSum, Value(), Value()};
  totals.sawKey =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, rowSum, zero);
  Value scale = f32(1.0f);
  if (sink) {
    // The sink as one more exponential: against the larger of it and the
    // row's reference, so that neither term overflows.
    Value newMax = arith::MaximumFOp::create(b, rowMax, sink);
    Value noTerm = arith::CmpFOp::create(
        b, arith::CmpFPredicate::OEQ, newMax,
        f32(-std::numeric_limits<float>::infinity()));
    Value ref = arith::SelectOp::create(b, noTerm, zero, newMax);
    scale = exp2(arith::SubFOp::create(b, rowMax, ref));
    totals.max = newMax;
    totals.sum = arith::AddFOp::create(
        b, arith::MulFOp::create(b, rowSum, scale),
        exp2(arith::SubFOp::create(b, sink, ref)));
  }
  totals.factor = arith::SelectOp::create(
      b, totals.sawKey, arith::DivFOp::create(b, scale, totals.sum), zero);
  return totals;
}

Value KernelBuilder::rowInside(const Tile &tile, int64_t stage, Value row) {
  Value position = add(add(tile.position, stage * shape.positionsPerTile()),
                       div(row, shape.pack));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, position,
                               tile.seqQ);
}

Value KernelBuilder::log2SumExp(Value rowMax, Value rowSum) {
  // lg2.approx, not math.log2: GPU-to-NVVM would call libdevice for it.
  Value log2Sum =
      LLVM::CallIntrinsicOp::create(b, b.getF32Type(),
                                    b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                                    ValueRange{rowSum})
          .getResult(0);
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, rowSum, f32(0.0f));
  return arith::SelectOp::create(b, positive,
                                 arith::AddFOp::create(b, rowMax, log2Sum),
                                 f32(-std::numeric_limits<float>::infinity()));
}

void KernelBuilder::storeLse(const Tile &tile, int64_t stage, Value row,
                             Value rowSum, Value rowMax) {
  Type f32Type = b.getF32Type();
  Value position = add(add(tile.position, stage * shape.positionsPerTile()),
                       div(row, shape.pack));
  auto ifOp = scf::IfOp::create(b, rowInside(tile, stage, row));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value lse = arith::MulFOp::create(b, log2SumExp(rowMax, rowSum), f32(M_LN2));
  // Element (batch, head, position) of a contiguous [B, Hq, Sq] tensor;
  // packed, (head, start + position) of [Hq, Tq].
  Value head = add(mul(tile.headBlock, shape.pack), rem(row, shape.pack));
  Value flat =
      tile.queryStart
          ? add(mul(head, seqQ), add(tile.queryStart, position))
          : add(mul(add(mul(tile.batch, shape.queryHeads), head), seqQ),
                position);
  Value offset = arith::IndexCastOp::create(b, b.getI64Type(), flat);
  Value address = LLVM::GEPOp::create(b, lseOut.getType(), f32Type, lseOut,
                                      ValueRange{offset});
  LLVM::StoreOp::create(b, lse, address);
}

void KernelBuilder::buildLoadRole(Value q, Value kv, bool firstKeyBeforeQuery) {
  PlanAttr plan = shape.plan;
  int64_t stages = plan.getQStages(), kvStages = plan.getKvStages();
  Value qSmem = sharedBuffer("q"), kvSmem = sharedBuffer("kv");
  elected([&] {
    forEachTile([&](const Tile &tile) {
      Value position = tile.position, ordinal = tile.ordinal;
      Value firstHead = mul(tile.headBlock, shape.pack);
      Value kvHead = div(firstHead, shape.groupSize);
      // One box per atom of `operand`'s tile at byte `offset` of `buffer`;
      // a K or V block over several pages, one box per page and atom. A
      // key-major V's atoms run along its keys, one row per head-dim
      // column.
      auto loadTile = [&](TmaOperand operand, Value channelValue, Value handoff,
                          Value buffer, Value offset, Value head,
                          Value rowIndex) {
        bool packed = operand == TmaOperand::query;
        bool keyMajor = operand == TmaOperand::value && shape.valueKeyMajor;
        Value desc = packed                       ? qDesc
                     : operand == TmaOperand::key ? kDesc
                                                  : vDesc;
        int64_t atoms =
            operand == TmaOperand::value ? shape.vAtoms() : shape.qkAtoms();
        int64_t rows = packed     ? shape.qRows()
                       : keyMajor ? shape.vRows()
                                  : shape.kvRows();
        int64_t boxRows = packed || keyMajor ? rows : shape.kvBoxRows();
        int64_t boxes = rows / boxRows;
        int64_t atomBytes = KernelShape::atomBytes(rows);
        int64_t columns = shape.atomColumns();
        // Paged, the page indices are read in groups of kPageGroup (loads
        // in flight together, few of the load warp's 40 or 48 registers
        // held); the first group before the slot is acquired, so that its
        // loads overlap the wait.
        constexpr int64_t kPageGroup = 4;
        for (int64_t group = 0; group < boxes; group += kPageGroup) {
          SmallVector<std::pair<Value, Value>> coords;
          for (int64_t box = group; box < std::min(boxes, group + kPageGroup);
               ++box)
            coords.push_back(tmaRows(
                tile, operand, box ? add(rowIndex, box * boxRows) : rowIndex));
          if (group == 0)
            ChannelAcquireOp::create(b, channelValue, handoff);
          for (int64_t a = 0; a < atoms; ++a) {
            for (auto [i, rowAndBatch] : llvm::enumerate(coords)) {
              // Rows of a 128-byte-swizzled atom are 128 bytes apart; a box
              // of whole 8-row swizzle patterns lands where the whole
              // tile's rows would.
              int64_t box = group + static_cast<int64_t>(i);
              Value view = smemView(
                  buffer,
                  add(offset, a * atomBytes + box * boxRows * kAtomRowBytes),
                  boxType(operand));
              auto [row, batchCoord] = rowAndBatch;
              SmallVector<Value, 4> at =
                  keyMajor ? SmallVector<Value, 4>{add(row, a * columns), head,
                                                   idx(0), batchCoord}
                           : SmallVector<Value, 4>{idx(a * columns), head, row,
                                                   batchCoord};
              TmaLoadOp::create(b, desc, at, view, channelValue, handoff);
            }
          }
        }
        ChannelCommitOp::create(b, channelValue, handoff);
      };
      // K (which = 0) or V (1) of the tile's KV block n.
      auto loadKv = [&](Value n, int64_t which) {
        Value handoff = add(mul(add(tile.kvBase, n), 2), which);
        Value offset = mul(rem(handoff, kvStages), shape.kvTileBytes());
        loadTile(which ? TmaOperand::value : TmaOperand::key, kv, handoff,
                 kvSmem, offset, kvHead,
                 mul(add(tile.firstBlock, n), plan.getBlockN()));
      };
      if (firstKeyBeforeQuery) {
        Value anyBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                               tile.blocks, idx(0));
        auto ifOp = scf::IfOp::create(b, anyBlock);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        loadKv(idx(0), 0);
      }
      for (int64_t stage = 0; stage < stages; ++stage) {
        Value handoff = add(mul(ordinal, stages), stage);
        loadTile(TmaOperand::query, q, handoff, qSmem,
                 mul(rem(handoff, shape.qSlots()), shape.qTileBytes()),
                 firstHead, add(position, stage * shape.positionsPerTile()));
      }
      forRange(tile.blocks, [&](Value n) {
        if (firstKeyBeforeQuery) {
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

void KernelBuilder::storeStaged(const Tile &tile, int64_t stage, Value row,
                                bool stagingPerStage) {
  Value oSmem = sharedBuffer("o_staging");
  Value firstHead = mul(tile.headBlock, shape.pack);
  int64_t staging = stagingPerStage ? stage * shape.oTileBytes() : 0;
  for (int64_t a = 0; a < shape.oAtoms(); ++a) {
    Value box = smemView(
        oSmem, idx(staging + a * KernelShape::atomBytes(shape.qRows())),
        boxType(TmaOperand::output));
    auto [rowCoord, batchCoord] = tmaRows(tile, TmaOperand::output, row);
    nvgpu::TmaAsyncStoreOp::create(
        b, box, oDesc,
        ValueRange{idx(a * kAtom), firstHead, rowCoord, batchCoord},
        /*predicate=*/Value());
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
  // The staging tile is free once the stores have read it.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
}

void KernelBuilder::buildStoreRole(Value epi, bool stagingPerStage) {
  int64_t stages = shape.plan.getQStages();
  if (shape.plan.isClusterSplit())
    return buildClusterStoreRole(epi, stagingPerStage);
  if (shape.splits() > 1)
    return buildSplitStoreRole(epi, stagingPerStage);
  Value oSmem = sharedBuffer("o_staging");
  if (!shape.varlen) {
    elected([&] {
      forEachTile([&](const Tile &tile) {
        for (int64_t stage = 0; stage < stages; ++stage) {
          Value handoff = add(mul(tile.ordinal, stages), stage);
          ChannelWaitOp::create(b, epi, handoff);
          storeStaged(tile, stage,
                      add(tile.position, stage * shape.positionsPerTile()),
                      stagingPerStage);
          ChannelReleaseOp::create(b, epi, handoff);
        }
      });
      NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, /*read=*/nullptr);
    });
    return;
  }

  // Packed sequences: the whole warp waits for each staged stage. One
  // thread stores a stage inside its sequence by TMA; a stage that reaches
  // past it (whose TMA store would write the next sequence's rows) is
  // copied by the warp, 16 bytes a thread at a time, row by row inside the
  // sequence. Every thread then releases the tile (storeEndpoint): its
  // reads are done, and the elected thread's stores have read it.
  Value lane = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x), 32);
  int64_t rows = shape.qRows();
  // 16-byte chunks of a row's headDim columns (a partly filled last atom
  // is copied as far as the row goes).
  int64_t rowChunks = shape.headDimV / 8;
  auto chunkType = VectorType::get({8}, shape.outElement);
  forEachTile([&](const Tile &tile) {
    for (int64_t stage = 0; stage < stages; ++stage) {
      Value handoff = add(mul(tile.ordinal, stages), stage);
      ChannelWaitOp::create(b, epi, handoff);
      Value first = add(tile.position, stage * shape.positionsPerTile());
      auto partial = scf::IfOp::create(b, partialStage(tile, stage),
                                       /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard branch(b);
        b.setInsertionPointToStart(partial.elseBlock());
        elected([&] { storeStaged(tile, stage, first, stagingPerStage); });

        b.setInsertionPointToStart(partial.thenBlock());
        Value staging = smemView(
            oSmem, idx(stagingPerStage ? stage * shape.oTileBytes() : 0),
            outputTileType(rows));
        // Tile rows inside the sequence (positions times packed heads; none
        // for a stage wholly past it), each rowChunks chunks of 16 bytes,
        // 8 per 64-column atom.
        Value inside =
            mul(arith::MaxSIOp::create(
                    b, arith::SubIOp::create(b, tile.seqQ, first), idx(0)),
                shape.pack);
        Value chunks = mul(inside, rowChunks);
        auto loop = scf::ForOp::create(b, lane, chunks, idx(32));
        b.setInsertionPointToStart(loop.getBody());
        Value c = loop.getInductionVar();
        Value row = div(c, rowChunks);
        Value column = rem(c, rowChunks); // in chunks
        Value atom = div(column, 8);
        Value chunk = rem(column, 8);
        // Chunk j of row r sits at chunk j xor (r mod 8) of the 128-byte
        // swizzle the epilogues wrote.
        Value swizzled = arith::XOrIOp::create(b, chunk, rem(row, 8));
        Value value = vector::LoadOp::create(
            b, chunkType, staging, ValueRange{atom, row, mul(swizzled, 8)});
        // Element (start + position, head, column) of O [Tq, Hq, D].
        Value position = add(add(tile.queryStart, first), div(row, shape.pack));
        Value head = add(mul(tile.headBlock, shape.pack), rem(row, shape.pack));
        Value flat = add(mul(add(mul(position, shape.queryHeads), head),
                             shape.headDimV),
                         add(mul(atom, kAtom), mul(chunk, 8)));
        Value address = LLVM::GEPOp::create(
            b, outputRows.getType(), shape.outElement, outputRows,
            ValueRange{arith::IndexCastOp::create(b, b.getI64Type(), flat)});
        LLVM::StoreOp::create(b, value, address, /*alignment=*/16);
      }
      ChannelReleaseOp::create(b, epi, handoff);
    }
  });
  elected([&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, /*read=*/nullptr); });
}
