//===- FA4Ops.cpp - fa4 operations ----------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mlir::fa4;

#define GET_OP_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Ops.cpp.inc"

std::optional<int64_t> mlir::fa4::getStaticSizeInBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t size : type.getShape())
    if (llvm::MulOverflow(bytes, size, bytes))
      return std::nullopt;
  return bytes;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(getHeadDimQK()));
}

std::pair<int64_t, int64_t> AttentionOp::getEffectiveWindow() {
  int64_t left = kUnboundedWindow, right = kUnboundedWindow;
  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    left = (*window)[0];
    right = (*window)[1];
  }
  if (getCausal())
    right = 0;
  return {left, right};
}

namespace {
/// One operand of the attention op with the names of its dimensions, so that
/// every diagnostic says which dimension of which operand is wrong.
struct NamedOperand {
  StringRef name;
  MemRefType type;
  std::array<StringRef, 4> dimNames;

  int64_t dim(unsigned i) const { return type.getDimSize(i); }
};

/// Verifies the properties of one operand on its own: positive static sizes,
/// static head counts and head dims, and a unit-stride innermost dimension.
LogicalResult verifyOperandShape(AttentionOp op, const NamedOperand &operand,
                                 ArrayRef<unsigned> mustBeStatic) {
  for (unsigned i = 0, e = operand.type.getRank(); i < e; ++i) {
    if (!ShapedType::isDynamic(operand.dim(i)) && operand.dim(i) <= 0)
      return op.emitOpError()
             << operand.name << " dimension " << i << " ("
             << operand.dimNames[i] << ") must be positive, got "
             << operand.dim(i);
  }
  for (unsigned i : mustBeStatic) {
    if (ShapedType::isDynamic(operand.dim(i)))
      return op.emitOpError()
             << operand.name << " dimension " << i << " ("
             << operand.dimNames[i] << ") must be static";
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(operand.type.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return op.emitOpError()
           << operand.name << " must have unit stride in its innermost ("
           << operand.dimNames[operand.type.getRank() - 1]
           << ") dimension, got " << operand.type;
  return success();
}

/// Verifies that dimension `aDim` of `a` and `bDim` of `b` agree where both
/// are static.
LogicalResult verifySameDim(AttentionOp op, StringRef what,
                            const NamedOperand &a, unsigned aDim,
                            const NamedOperand &b, unsigned bDim) {
  int64_t x = a.dim(aDim), y = b.dim(bDim);
  if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y)
    return success();
  return op.emitOpError() << what << " mismatch: " << a.name << " dimension "
                          << aDim << " is " << x << " but " << b.name
                          << " dimension " << bDim << " is " << y;
}

LogicalResult verifyPositiveFinite(AttentionOp op, StringRef name,
                                   std::optional<APFloat> value) {
  if (!value)
    return success();
  double v = value->convertToDouble();
  if (std::isfinite(v) && v > 0.0)
    return success();
  return op.emitOpError() << name << " must be positive and finite, got " << v;
}
} // namespace

LogicalResult AttentionOp::verify() {
  NamedOperand q{"query", getQuery().getType(),
                 {"batch", "seq_q", "heads_q", "head_dim_qk"}};
  NamedOperand k{"key", getKey().getType(),
                 {"batch", "seq_kv", "heads_kv", "head_dim_qk"}};
  NamedOperand v{"value", getValue().getType(),
                 {"batch", "seq_kv", "heads_kv", "head_dim_v"}};
  NamedOperand o{"output", getOutput().getType(),
                 {"batch", "seq_q", "heads_q", "head_dim_v"}};

  // Head counts and head dims shape the kernel; only batch and sequence
  // lengths may be chosen at run time.
  for (const NamedOperand *operand : {&q, &k, &v, &o})
    if (failed(verifyOperandShape(*this, *operand, {2, 3})))
      return failure();

  Type elementType = q.type.getElementType();
  for (const NamedOperand *operand : {&k, &v, &o})
    if (operand->type.getElementType() != elementType)
      return emitOpError() << operand->name << " element type "
                           << operand->type.getElementType()
                           << " must match query element type " << elementType;

  if (failed(verifySameDim(*this, "batch", q, 0, k, 0)) ||
      failed(verifySameDim(*this, "batch", q, 0, v, 0)) ||
      failed(verifySameDim(*this, "batch", q, 0, o, 0)) ||
      failed(verifySameDim(*this, "seq_q", q, 1, o, 1)) ||
      failed(verifySameDim(*this, "seq_kv", k, 1, v, 1)) ||
      failed(verifySameDim(*this, "heads_q", q, 2, o, 2)) ||
      failed(verifySameDim(*this, "heads_kv", k, 2, v, 2)) ||
      failed(verifySameDim(*this, "head_dim_qk", q, 3, k, 3)) ||
      failed(verifySameDim(*this, "head_dim_v", v, 3, o, 3)))
    return failure();

  if (getNumQueryHeads() % getNumKeyValueHeads() != 0)
    return emitOpError() << "query heads (" << getNumQueryHeads()
                         << ") must be a multiple of key/value heads ("
                         << getNumKeyValueHeads() << ")";

  if (TypedValue<MemRefType> lse = getLse()) {
    NamedOperand l{"lse", lse.getType(), {"batch", "heads_q", "seq_q", ""}};
    if (failed(verifyOperandShape(*this, l, {1})) ||
        failed(verifySameDim(*this, "batch", q, 0, l, 0)) ||
        failed(verifySameDim(*this, "heads_q", q, 2, l, 1)) ||
        failed(verifySameDim(*this, "seq_q", q, 1, l, 2)))
      return failure();
  }

  if (std::optional<ArrayRef<int64_t>> window = getWindow()) {
    int64_t left = (*window)[0], right = (*window)[1];
    for (auto [side, bound] : {std::pair<StringRef, int64_t>{"left", left},
                               std::pair<StringRef, int64_t>{"right", right}})
      if (bound < kUnboundedWindow)
        return emitOpError() << "window " << side
                             << " bound must be >= 0, or -1 for unbounded, got "
                             << bound;
    if (left == kUnboundedWindow && right == kUnboundedWindow)
      return emitOpError() << "window [-1, -1] masks nothing; omit the "
                              "attribute instead";
    if (getCausal() && right != 0)
      return emitOpError() << "causal attention requires window right bound "
                              "0, got "
                           << right;
  }

  if (failed(verifyPositiveFinite(*this, "scale", getScale())) ||
      failed(verifyPositiveFinite(*this, "softcap", getSoftcap())))
    return failure();

  if (PlanAttr plan = getPlanAttr()) {
    if (plan.getHeadDim() != getHeadDimQK() ||
        plan.getHeadDim() != getHeadDimV())
      return emitOpError() << "plan headDim " << plan.getHeadDim()
                           << " does not match head dims (qk " << getHeadDimQK()
                           << ", v " << getHeadDimV() << ")";
    if (getNumQueryHeads() % (plan.getGqaPack() * getNumKeyValueHeads()) != 0)
      return emitOpError() << "plan gqaPack " << plan.getGqaPack()
                           << " must divide the query heads per key/value "
                              "head ("
                           << getGroupSize() << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor Memory ops
//===----------------------------------------------------------------------===//

/// "[begin, begin + size)", with the end written out where it fits int64.
static std::string rangeText(int64_t begin, int64_t size) {
  int64_t end;
  if (llvm::AddOverflow(begin, size, end))
    return "[" + std::to_string(begin) + ", " + std::to_string(begin) +
           " + " + std::to_string(size) + ")";
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

static bool isWorkgroupMemRef(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

static LogicalResult verifyTmemSlot(Operation *op, MemRefType slot) {
  if (!isWorkgroupMemRef(slot))
    return op->emitOpError()
           << "TMEM address slot must be in shared memory "
              "(#gpu.address_space<workgroup>), got "
           << slot;
  return success();
}

static bool isAllocatableColumns(int64_t columns) {
  return columns >= 32 && columns <= limits::kTmemColumns &&
         llvm::isPowerOf2_64(columns);
}

/// Whether `type` describes a whole TMEM allocation: all lanes and an
/// allocatable number of columns.
static bool isWholeAllocation(TmemType type) {
  return type.getLanes() == limits::kTmemLanes &&
         isAllocatableColumns(type.getNumColumns());
}

LogicalResult TmemAllocOp::verify() {
  if (!isAllocatableColumns(getColumns()))
    return emitOpError() << "allocates a power of two of columns in [32, "
                         << limits::kTmemColumns << "], got " << getColumns();
  return verifyTmemSlot(*this, getSlot().getType());
}

/// What identifies a TMEM address slot across the views fa4-allocate-smem
/// materializes at each use: the slot value, or for a memref.view of the
/// dynamic shared memory its constant byte offset.
static std::pair<Value, int64_t> slotKey(Value slot) {
  Operation *view = slot.getDefiningOp();
  APInt offset;
  if (view && view->getName().getStringRef() == "memref.view" &&
      view->getNumOperands() >= 2 &&
      view->getOperand(0).getDefiningOp<gpu::DynamicSharedMemoryOp>() &&
      matchPattern(view->getOperand(1), m_ConstantInt(&offset)))
    return {Value(), offset.getSExtValue()};
  return {slot, 0};
}

LogicalResult TmemBaseOp::verify() {
  TmemType type = getTmem().getType();
  if (!isWholeAllocation(type))
    return emitOpError() << "result must describe a whole allocation ("
                         << limits::kTmemLanes
                         << " lanes, a power of two of columns in [32, "
                         << limits::kTmemColumns << "]), got " << type;
  if (failed(verifyTmemSlot(*this, getSlot().getType())))
    return failure();
  // The allocation read is the one written to the slot: views of it stay
  // inside the columns actually allocated.
  Operation *scope =
      (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!scope)
    return success();
  std::pair<Value, int64_t> key = slotKey(getSlot());
  TmemAllocOp allocation;
  scope->walk([&](TmemAllocOp alloc) {
    if (slotKey(alloc.getSlot()) != key ||
        static_cast<int64_t>(alloc.getColumns()) == type.getNumColumns())
      return WalkResult::advance();
    allocation = alloc;
    return WalkResult::interrupt();
  });
  if (allocation) {
    InFlightDiagnostic diag =
        emitOpError() << "reads an allocation of " << type.getNumColumns()
                      << " columns from a slot that fa4.tmem.alloc fills "
                         "with "
                      << allocation.getColumns() << " columns";
    diag.attachNote(allocation.getLoc()) << "the allocation";
    return diag;
  }
  return success();
}

LogicalResult TmemDeallocOp::verify() {
  if (!isWholeAllocation(getTmem().getType()))
    return emitOpError() << "frees a whole allocation, got "
                         << getTmem().getType();
  return success();
}

LogicalResult TmemViewOp::verify() {
  TmemType source = getSource().getType(), result = getResult().getType();
  if (source.getLanes() != result.getLanes())
    return emitOpError() << "view keeps the lanes of its source ("
                         << source.getLanes() << "), got "
                         << result.getLanes();
  // I64Attr reads back unsigned; a negative column must stay negative here.
  int64_t column = static_cast<int64_t>(getColumn());
  if (column < 0 ||
      column > source.getNumColumns() - result.getNumColumns())
    return emitOpError() << "view of columns "
                         << rangeText(column, result.getNumColumns())
                         << " exceeds the " << source.getNumColumns()
                         << " columns of its source";
  return success();
}

LogicalResult TmemBufferOp::verify() {
  if (getBuffer().getType().getLanes() != limits::kTmemLanes)
    return emitOpError() << "a buffer spans all " << limits::kTmemLanes
                         << " lanes, got " << getBuffer().getType().getLanes();
  if (getName().empty())
    return emitOpError() << "needs a non-empty name";
  if ((*this)->getParentOfType<RoleOp>())
    return emitOpError() << "must be declared outside the roles that use it";
  return success();
}

/// Checks a row fragment of `vectorType` at `offset` elements of `tmem`:
/// same element width, whole 32-bit columns, a power-of-two number of them
/// (at most 128), inside the region.
static LogicalResult verifyRowFragment(Operation *op, TmemType tmem,
                                       VectorType vectorType, int64_t offset) {
  Type element = vectorType.getElementType();
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits != tmem.getElementType().getIntOrFloatBitWidth())
    return op->emitOpError()
           << "fragment element type " << element
           << " must have the width of the TMEM element type "
           << tmem.getElementType();
  int64_t elements = vectorType.getNumElements();
  int64_t registers = elements * bits / 32;
  if ((elements * bits) % 32 != 0 || !llvm::isPowerOf2_64(registers) ||
      registers > 128)
    return op->emitOpError()
           << "fragment must be 1, 2, 4, ..., or 128 32-bit registers, got "
           << elements << " x " << bits << " bits";
  if (offset < 0 || (offset * bits) % 32 != 0)
    return op->emitOpError() << "offset " << offset
                             << " must start a 32-bit column";
  if (offset > tmem.getElements() - elements)
    return op->emitOpError() << "elements " << rangeText(offset, elements)
                             << " exceed the " << tmem.getElements()
                             << " elements of a lane";
  if (tmem.getLanes() != limits::kTmemLanes)
    return op->emitOpError() << "a warpgroup accesses all "
                             << limits::kTmemLanes << " lanes, got a region of "
                             << tmem.getLanes();
  return success();
}

LogicalResult TmemLoadOp::verify() {
  if (getResult().getType().getElementType().getIntOrFloatBitWidth() != 32)
    return emitOpError() << "loads 32-bit elements, got "
                         << getResult().getType();
  return verifyRowFragment(*this, getSource().getType(),
                           getResult().getType(), getOffset());
}

LogicalResult TmemStoreOp::verify() {
  return verifyRowFragment(*this, getDest().getType(), getValue().getType(),
                           getOffset());
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

int64_t MmaOp::getK() {
  if (auto tmem = dyn_cast<TmemType>(getA().getType()))
    return tmem.getElements();
  return cast<MemRefType>(getA().getType()).getDimSize(0) * kAtomElements;
}

/// Checks that `tile` is a static [atoms, rows, 64] tile in shared memory.
static LogicalResult verifySmemTile(Operation *op, StringRef name,
                                    MemRefType tile) {
  if (!isWorkgroupMemRef(tile))
    return op->emitOpError() << name << " must live in shared memory, got "
                            << tile;
  if (!tile.hasStaticShape() || tile.getDimSize(2) != MmaOp::kAtomElements)
    return op->emitOpError() << name
                            << " must be a static [atoms, rows, 64] tile of "
                               "128-byte swizzle atoms, got "
                            << tile;
  return success();
}

/// Checks an MMA's shared-memory B operand against the M x N x K product
/// and A's element type.
static LogicalResult verifyBOperand(Operation *op, MemRefType b,
                                    Type elementType, OperandMajor major,
                                    int64_t m, int64_t n, int64_t k) {
  if (failed(verifySmemTile(op, "b", b)))
    return failure();
  if (b.getElementType() != elementType)
    return op->emitOpError() << "a and b element types differ: "
                             << elementType << " vs " << b.getElementType();
  bool kMajor = major == OperandMajor::k;
  int64_t atoms = b.getDimSize(0) * MmaOp::kAtomElements;
  int64_t rows = b.getDimSize(1);
  int64_t bN = kMajor ? rows : atoms, bK = kMajor ? atoms : rows;
  if (bN != n || bK != k)
    return op->emitOpError()
           << "b holds " << (kMajor ? "N x K = " : "K x N = ")
           << (kMajor ? bN : bK) << " x " << (kMajor ? bK : bN)
           << " but the MMA is M x N x K = " << m << " x " << n << " x " << k;
  return success();
}

LogicalResult MmaOp::verify() {
  TmemType d = getD().getType();
  if (!d.getElementType().isF32() || d.getLanes() != 128)
    return emitOpError() << "accumulator must be a 128-lane f32 TMEM region, "
                            "got "
                         << d;
  int64_t n = getN();
  if (n < 16 || n > 256 || n % 16 != 0)
    return emitOpError() << "N (accumulator columns) must be a multiple of 16 "
                            "in [16, 256], got "
                         << n;

  Type elementType;
  if (auto aTmem = dyn_cast<TmemType>(getA().getType())) {
    if (aTmem.getLanes() != 128 ||
        aTmem.getElementType().getIntOrFloatBitWidth() != 16)
      return emitOpError() << "a TMEM operand must be a 128-lane 16-bit "
                              "region, got "
                           << aTmem;
    elementType = aTmem.getElementType();
  } else {
    auto aTile = cast<MemRefType>(getA().getType());
    if (failed(verifySmemTile(*this, "a", aTile)))
      return failure();
    if (aTile.getDimSize(1) != 128)
      return emitOpError() << "a must have M = 128 rows, got "
                           << aTile.getDimSize(1);
    elementType = aTile.getElementType();
  }
  int64_t k = getK();
  if (k % 16 != 0)
    return emitOpError() << "K must be a multiple of 16, got " << k;

  return verifyBOperand(*this, getB().getType(), elementType, getBMajor(), 128,
                        n, k);
}

//===----------------------------------------------------------------------===//
// Warpgroup MMA
//===----------------------------------------------------------------------===//

int64_t WgmmaOp::getK() {
  if (auto fragment = dyn_cast<VectorType>(getA().getType()))
    return fragment.getNumElements() * 2;
  return cast<MemRefType>(getA().getType()).getDimSize(0) *
         MmaOp::kAtomElements;
}

LogicalResult WgmmaOp::verify() {
  int64_t n = getN();
  if (n < 16 || n > 256 || n % 16 != 0)
    return emitOpError() << "N (twice the result's elements) must be a "
                            "multiple of 16 in [16, 256], got "
                         << n;
  if (getAcc() && getAcc().getType() != getResult().getType())
    return emitOpError() << "accumulator " << getAcc().getType()
                         << " and result " << getResult().getType()
                         << " differ";
  Type elementType;
  if (auto fragment = dyn_cast<VectorType>(getA().getType())) {
    elementType = fragment.getElementType();
  } else {
    auto aTile = cast<MemRefType>(getA().getType());
    if (failed(verifySmemTile(*this, "a", aTile)))
      return failure();
    if (aTile.getDimSize(1) != kM)
      return emitOpError() << "a must have M = " << kM << " rows, got "
                           << aTile.getDimSize(1);
    elementType = aTile.getElementType();
  }
  int64_t k = getK();
  if (k % 16 != 0)
    return emitOpError() << "K must be a multiple of 16, got " << k;
  return verifyBOperand(*this, getB().getType(), elementType, getBMajor(), kM,
                        n, k);
}

LogicalResult WgmmaWaitOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// Synchronization and per-thread math
//===----------------------------------------------------------------------===//

/// Barrier 0 belongs to gpu.barrier (__syncthreads); a count is whole warps.
static LogicalResult verifyNamedBarrier(Operation *op, int64_t id,
                                        int64_t threads) {
  if (id < 1 || id > 15)
    return op->emitOpError() << "named barrier id must be in [1, 15] (0 is "
                                "gpu.barrier's), got "
                             << id;
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return op->emitOpError() << "thread count must be a multiple of 32 in "
                                "[32, 1024], got "
                             << threads;
  return success();
}

/// The ops on one hardware barrier agree on its thread count.
static LogicalResult verifyNamedBarrierCount(Operation *op, int64_t id,
                                             int64_t threads) {
  Operation *scope = op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!scope)
    return success();
  Operation *other = nullptr;
  int64_t otherThreads = 0;
  scope->walk([&](Operation *candidate) {
    int64_t candidateId, candidateThreads;
    if (auto sync = dyn_cast<NamedBarrierSyncOp>(candidate)) {
      candidateId = static_cast<int32_t>(sync.getId());
      candidateThreads = static_cast<int32_t>(sync.getThreads());
    } else if (auto arrive = dyn_cast<NamedBarrierArriveOp>(candidate)) {
      candidateId = static_cast<int32_t>(arrive.getId());
      candidateThreads = static_cast<int32_t>(arrive.getThreads());
    } else {
      return WalkResult::advance();
    }
    if (candidateId != id)
      return WalkResult::advance();
    other = candidate;
    otherThreads = candidateThreads;
    return WalkResult::interrupt();
  });
  // The first op on the barrier sets its count; the others are checked
  // against it.
  if (!other || other == op || otherThreads == threads)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "counts " << threads << " threads on named "
                            << "barrier " << id << ", which an earlier op "
                            << "counts with " << otherThreads
                            << "; a barrier has one thread count";
  diag.attachNote(other->getLoc()) << "the earlier op";
  return diag;
}

// I32Attr reads back unsigned; negative values must stay negative here.
LogicalResult NamedBarrierSyncOp::verify() {
  int64_t id = static_cast<int32_t>(getId());
  int64_t threads = static_cast<int32_t>(getThreads());
  if (failed(verifyNamedBarrier(*this, id, threads)))
    return failure();
  return verifyNamedBarrierCount(*this, id, threads);
}

LogicalResult NamedBarrierArriveOp::verify() {
  int64_t id = static_cast<int32_t>(getId());
  int64_t threads = static_cast<int32_t>(getThreads());
  if (failed(verifyNamedBarrier(*this, id, threads)))
    return failure();
  return verifyNamedBarrierCount(*this, id, threads);
}

// I32Attr reads back unsigned; a negative count must stay negative here.
LogicalResult WgmmaWaitOp::verify() {
  auto pending = static_cast<int32_t>(getPending());
  if (pending < 0)
    return emitOpError() << "pending wgmma groups must be >= 0, got "
                         << pending;
  return success();
}

LogicalResult TmaStoreWaitOp::verify() {
  auto pending = static_cast<int32_t>(getPending());
  if (pending < 0)
    return emitOpError() << "pending TMA store groups must be >= 0, got "
                         << pending;
  return success();
}

LogicalResult Exp2Op::verify() {
  int64_t emulated = static_cast<int64_t>(getEmulated());
  if (emulated < 0 || emulated > 16)
    return emitOpError() << "emulated must be in [0, 16] (elements of every "
                            "16), got "
                         << emulated;
  return success();
}

//===----------------------------------------------------------------------===//
// Warp roles
//===----------------------------------------------------------------------===//

LogicalResult RoleOp::verify() {
  int64_t begin = static_cast<int64_t>(getWarpBegin()),
          end = static_cast<int64_t>(getWarpEnd()),
          registers = static_cast<int64_t>(getRegisters());
  if (begin < 0 || begin >= end)
    return emitOpError() << "warp range [" << begin << ", " << end
                         << ") is empty";
  if (registers < limits::kMinRegisters || registers > limits::kMaxRegisters ||
      registers % 8 != 0)
    return emitOpError() << "registers must be a multiple of 8 in ["
                         << limits::kMinRegisters << ", "
                         << limits::kMaxRegisters << "], got " << registers;
  return success();
}

int64_t WarpSpecializeOp::getDefaultRegisters() {
  // What a CTA of this size gets per thread without setmaxnreg.
  int64_t threads = static_cast<int64_t>(getWarps()) * 32;
  return std::min<int64_t>(limits::kMaxRegisters,
                           (limits::kRegistersPerSm / threads) / 8 * 8);
}

SmallVector<int64_t> WarpSpecializeOp::getWarpgroupRegisters() {
  SmallVector<int64_t> registers(static_cast<int64_t>(getWarps()) / 4,
                                 getDefaultRegisters());
  for (auto role : getBody().getOps<RoleOp>()) {
    auto end = static_cast<int64_t>(role.getWarpEnd());
    for (auto warp = static_cast<int64_t>(role.getWarpBegin()); warp < end;
         ++warp)
      registers[warp / 4] = static_cast<int64_t>(role.getRegisters());
  }
  return registers;
}

LogicalResult WarpSpecializeOp::verify() {
  int64_t warps = static_cast<int64_t>(getWarps());
  if (warps < 4 || warps > 32 || warps % 4 != 0)
    return emitOpError() << "warps must be whole warpgroups, 4 to 32, got "
                         << warps;
  return success();
}

// The roles are checked against each other once each role has verified
// (its attributes exist and its range is not empty): a region verifier runs
// after the ops inside.
LogicalResult WarpSpecializeOp::verifyRegions() {
  int64_t warps = static_cast<int64_t>(getWarps());
  SmallVector<RoleOp> owner(warps);
  SmallVector<std::optional<int64_t>> groupRegisters(warps / 4);
  for (Operation &op : getBody().front()) {
    auto role = dyn_cast<RoleOp>(op);
    if (!role)
      return op.emitOpError() << "is not a role; fa4.warp_specialize holds "
                                 "fa4.role ops only";
    int64_t begin = static_cast<int64_t>(role.getWarpBegin());
    int64_t end = static_cast<int64_t>(role.getWarpEnd());
    if (end > warps)
      return role.emitOpError() << "warps up to " << end
                                << " exceed the CTA's " << warps;
    for (int64_t w = begin; w < end; ++w) {
      if (owner[w])
        return role.emitOpError() << "warp " << w << " already runs role '"
                                  << owner[w].getRole() << "'";
      owner[w] = role;
      std::optional<int64_t> &group = groupRegisters[w / 4];
      if (group && *group != static_cast<int64_t>(role.getRegisters()))
        return role.emitOpError()
               << "asks for " << role.getRegisters()
               << " registers but warpgroup " << w / 4 << " already has "
               << *group << "; a warpgroup has one budget";
      group = role.getRegisters();
    }
  }
  int64_t total = 0;
  for (int64_t registers : getWarpgroupRegisters())
    total += registers * limits::kThreadsPerWarpgroup;
  if (total > limits::kRegistersPerSm)
    return emitOpError() << "register budgets need " << total
                         << " registers, more than the "
                         << limits::kRegistersPerSm << " of an SM";
  return success();
}

//===----------------------------------------------------------------------===//
// Channels
//===----------------------------------------------------------------------===//

static LogicalResult verifyNamedBarrier(Operation *op, int64_t id,
                                        int64_t threads);

LogicalResult ChannelOp::verify() {
  if (getConsumer().getKind() == EndpointKind::tma)
    return emitOpError() << "a TMA endpoint can only produce";
  if (std::optional<uint32_t> id = getNamedBarrier()) {
    if (getProducer().getKind() != EndpointKind::threads ||
        getConsumer().getKind() != EndpointKind::threads)
      return emitOpError() << "a named barrier connects two threads "
                              "endpoints";
    if (getType().getStages() != 1)
      return emitOpError() << "a named barrier has no phase: the channel "
                              "needs exactly one stage, got "
                           << getType().getStages();
    if (failed(verifyNamedBarrier(
            *this, static_cast<int32_t>(*id),
            getProducer().getThreads() + getConsumer().getThreads())))
      return failure();
    // A hardware barrier serves one channel: two would mix their arrivals.
    if (Operation *scope =
            (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>()) {
      ChannelOp first;
      scope->walk([&](ChannelOp other) {
        if (other.getNamedBarrier() != id)
          return WalkResult::advance();
        first = other;
        return WalkResult::interrupt();
      });
      if (first && first != *this) {
        InFlightDiagnostic diag = emitOpError()
                                  << "uses named barrier " << *id
                                  << ", which channel '" << first.getName()
                                  << "' already uses";
        diag.attachNote(first.getLoc()) << "channel '" << first.getName()
                                        << "'";
        return diag;
      }
    }
  }
  if ((*this)->getParentOfType<RoleOp>())
    return emitOpError() << "must be declared outside the roles that use it";
  return success();
}

/// A channel step runs inside the role of its side.
static LogicalResult verifyChannelStep(Operation *op) {
  if (!op->getParentOfType<RoleOp>())
    return op->emitOpError() << "must run inside a fa4.role";
  return success();
}

LogicalResult ChannelAcquireOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelCommitOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelWaitOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelReleaseOp::verify() { return verifyChannelStep(*this); }

LogicalResult TmaLoadOp::verify() {
  auto channel = getChannel().getDefiningOp<ChannelOp>();
  if (channel && channel.getProducer().getKind() != EndpointKind::tma)
    return emitOpError() << "fills a slot of channel '" << channel.getName()
                         << "', whose producer is not #fa4.endpoint<tma>";
  auto buffer = cast<MemRefType>(getBuffer().getType());
  if (!isWorkgroupMemRef(buffer) || !buffer.hasStaticShape())
    return emitOpError() << "loads into a static shared-memory buffer, got "
                         << buffer;
  std::optional<int64_t> bytes = getStaticSizeInBytes(buffer);
  if (!bytes || *bytes <= 0 || *bytes > limits::kSmemBytes)
    return emitOpError() << "loads into a buffer of "
                         << (bytes ? std::to_string(*bytes) : "more than 2^63")
                         << " bytes; a TMA load fills 1 to "
                         << limits::kSmemBytes << " bytes of shared memory";
  return verifyChannelStep(*this);
}

StringRef LaunchOp::getOperandName(unsigned index) {
  static constexpr StringLiteral kNames[] = {"query", "key", "value", "output",
                                             "lse"};
  if (index >= std::size(kNames))
    return {};
  return kNames[index];
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (getNumOperands() < 4 || getNumOperands() > 5)
    return emitOpError() << "takes query, key, value, output and optionally "
                            "lse, got "
                         << getNumOperands() << " operands";
  // Before gpu-module-to-binary the kernel is a gpu.func of a gpu.module;
  // after it, the module is a gpu.binary whose kernels are opaque.
  Operation *container = symbolTable.lookupNearestSymbolFrom(
      *this, getKernel().getRootReference());
  if (isa_and_nonnull<gpu::BinaryOp>(container))
    return success();
  if (!isa_and_nonnull<gpu::GPUModuleOp>(container))
    return emitOpError() << "kernel " << getKernel()
                         << " names no gpu.module or gpu.binary";
  // Lowered to NVVM, the kernel is an llvm.func of the module.
  Operation *function = symbolTable.lookupNearestSymbolFrom(*this, getKernel());
  if (isa_and_nonnull<LLVM::LLVMFuncOp>(function))
    return success();
  auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(function);
  if (!kernel)
    return emitOpError() << "kernel " << getKernel()
                         << " is not a function of its gpu.module";
  if (!kernel.isKernel())
    return emitOpError() << "kernel " << getKernel()
                         << " is a gpu.func without the kernel attribute";
  return success();
}

void LaunchOp::setManifestEntry(Operation *root, gpu::GPUFuncOp kernelOp,
                                StringRef key, Attribute value) {
  auto module = kernelOp->getParentOfType<gpu::GPUModuleOp>();
  auto kernel = SymbolRefAttr::get(module.getNameAttr(),
                                   {FlatSymbolRefAttr::get(kernelOp)});
  root->walk([&](LaunchOp launch) {
    if (launch.getKernel() != kernel)
      return;
    NamedAttrList entries(launch.getManifestAttr());
    entries.set(key, value);
    launch.setManifestAttr(entries.getDictionary(launch.getContext()));
  });
}

//===----------------------------------------------------------------------===//
// Tiled program
//===----------------------------------------------------------------------===//

/// A tile's rows hold `heads` heads of each position: the count must divide
/// the rows and the operand's heads.
static LogicalResult verifyRowPacking(Operation *op, int64_t heads,
                                      int64_t rows, int64_t operandHeads) {
  if (heads <= 0 || rows % heads != 0)
    return op->emitOpError() << "packs " << heads << " heads per position, "
                             << "which must divide the tile's " << rows
                             << " rows";
  if (!ShapedType::isDynamic(operandHeads) && operandHeads % heads != 0)
    return op->emitOpError() << "packs " << heads
                             << " heads per position, which must divide the "
                             << operandHeads << " heads of the tensor";
  return success();
}

/// A [B, S, H, D] operand and a [rows, D] tile of the same element type.
static LogicalResult verifyRowTile(Operation *op, MemRefType memref,
                                   RankedTensorType tile, int64_t heads) {
  if (tile.getRank() != 2 || !tile.hasStaticShape())
    return op->emitOpError() << "needs a static 2-D tile, got " << tile;
  if (tile.getElementType() != memref.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType()
                             << " differs from the tensor's "
                             << memref.getElementType();
  if (tile.getDimSize(1) != memref.getDimSize(3))
    return op->emitOpError() << "tile has " << tile.getDimSize(1)
                             << " columns, the tensor's head dim is "
                             << memref.getDimSize(3);
  return verifyRowPacking(op, heads, tile.getDimSize(0), memref.getDimSize(2));
}

/// Per-row values of a tile with `rows` rows: a 1-D tensor<rows x f32>.
static LogicalResult verifyRowVector(Operation *op, StringRef what, Type type,
                                     int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() != 1 || tensor.getDimSize(0) != rows)
    return op->emitOpError() << what << " must be one value per row ("
                             << "tensor<" << rows << "xf32>), got " << type;
  return success();
}

/// A 2-D static tile.
static FailureOr<RankedTensorType> tile2D(Operation *op, StringRef what,
                                          Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() != 2 || !tensor.hasStaticShape())
    return op->emitOpError() << what << " must be a static 2-D tile, got "
                             << type;
  return tensor;
}

LogicalResult TileCoordsOp::verify() {
  if (static_cast<int64_t>(getHeadBlocks()) <= 0 ||
      static_cast<int64_t>(getHeads()) <= 0 ||
      static_cast<int64_t>(getPositions()) <= 0)
    return emitOpError() << "head_blocks, heads and positions must be "
                            "positive";
  return success();
}

LogicalResult TileLoadOp::verify() {
  return verifyRowTile(*this, getSource().getType(), getTile().getType(),
                       getHeads());
}

LogicalResult TileStoreOp::verify() {
  return verifyRowTile(*this, getDest().getType(), getTile().getType(),
                       getHeads());
}

LogicalResult TileMatmulOp::verify() {
  FailureOr<RankedTensorType> a = tile2D(*this, "a", getA().getType());
  FailureOr<RankedTensorType> b = tile2D(*this, "b", getB().getType());
  FailureOr<RankedTensorType> result =
      tile2D(*this, "the result", getResult().getType());
  if (failed(a) || failed(b) || failed(result))
    return failure();
  if (a->getElementType() != b->getElementType())
    return emitOpError() << "operands have different element types, "
                         << a->getElementType() << " and "
                         << b->getElementType();
  int64_t k = a->getDimSize(1);
  int64_t bk = getTransposeB() ? b->getDimSize(1) : b->getDimSize(0);
  int64_t n = getTransposeB() ? b->getDimSize(0) : b->getDimSize(1);
  if (bk != k)
    return emitOpError() << "reduces over " << k << " columns of a but "
                         << bk << (getTransposeB() ? " columns" : " rows")
                         << " of b";
  if (result->getDimSize(0) != a->getDimSize(0) || result->getDimSize(1) != n)
    return emitOpError() << "result must be " << a->getDimSize(0) << "x" << n
                         << ", got " << *result;
  return success();
}

LogicalResult TileMaskOp::verify() {
  FailureOr<RankedTensorType> scores =
      tile2D(*this, "scores", getScores().getType());
  if (failed(scores))
    return failure();
  return verifyRowPacking(*this, getHeads(), scores->getDimSize(0),
                          ShapedType::kDynamic);
}

LogicalResult TileSoftmaxOp::verify() {
  FailureOr<RankedTensorType> scores =
      tile2D(*this, "scores", getScores().getType());
  if (failed(scores))
    return failure();
  if (getProbabilities().getType().getShape() != scores->getShape())
    return emitOpError() << "probabilities must have the shape of the "
                            "scores, got "
                         << getProbabilities().getType();
  if (failed(verifyRowVector(*this, "max", getMax().getType(),
                             scores->getDimSize(0))))
    return failure();
  if (!(getScaleLog2().convertToDouble() > 0.0) ||
      !std::isfinite(getScaleLog2().convertToDouble()))
    return emitOpError() << "scale_log2 must be positive and finite";
  // The kernel takes it as an f32.
  if (getScaleLog2().convertToDouble() > FLT_MAX)
    return emitOpError() << "scale_log2 " << getScaleLog2().convertToDouble()
                         << " exceeds the largest f32 (" << FLT_MAX << ")";
  // I64Attr reads back unsigned; negative values must stay negative here.
  int64_t threshold = static_cast<int64_t>(getThreshold());
  int64_t emulated = static_cast<int64_t>(getEmulated());
  if (threshold < 0)
    return emitOpError() << "threshold must be non-negative, got "
                         << threshold;
  if (emulated < 0 || emulated > 16)
    return emitOpError() << "emulates " << emulated
                         << " of 16 exponentials; expected 0 to 16";
  // Probabilities reach 2^threshold and are rounded to their type: 2^15 is
  // the largest power of two an f16 holds.
  if (getProbabilities().getType().getElementType().isF16() && threshold > 15)
    return emitOpError() << "threshold " << threshold
                         << " lets f16 probabilities reach 2^" << threshold
                         << ", past the largest f16 (65504); at most 15";
  return success();
}

LogicalResult TileRescaleOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  return verifyRowVector(*this, "factors", getFactors().getType(),
                         tile->getDimSize(0));
}

LogicalResult TileNormalizeOp::verify() {
  FailureOr<RankedTensorType> tile = tile2D(*this, "tile", getTile().getType());
  if (failed(tile))
    return failure();
  if (getResult().getType().getShape() != tile->getShape())
    return emitOpError() << "result must have the shape of the tile, got "
                         << getResult().getType();
  return verifyRowVector(*this, "sums", getSums().getType(),
                         tile->getDimSize(0));
}

LogicalResult TileStoreLseOp::verify() {
  auto max = getMax().getType();
  if (max.getRank() != 1 || !max.hasStaticShape())
    return emitOpError() << "max must be one value per row, got " << max;
  return verifyRowPacking(*this, getHeads(), max.getDimSize(0),
                          getDest().getType().getDimSize(1));
}
