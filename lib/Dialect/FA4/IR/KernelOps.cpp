//===- KernelOps.cpp - verifiers of the TMEM, MMA and wgmma ops -----------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fa4;

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
  if (std::optional<uint64_t> depth = getDepth())
    return static_cast<int64_t>(*depth);
  auto tile = cast<MemRefType>(getA().getType());
  // An MN-major a's K runs along its rows.
  if (isAMnMajor())
    return tile.getDimSize(1);
  return tile.getDimSize(0) * tile.getDimSize(2);
}

/// Elements of `element` type in one 128-byte atom row (64 16-bit, 128
/// 8-bit).
static int64_t atomElementsOf(Type element) {
  return tcgen05::atomElements(element.getIntOrFloatBitWidth());
}

/// The atoms a K-major or MN-major extent of `elements` fills, the last in
/// part when it is not a multiple of an atom row.
static int64_t atomsOf(int64_t elements, Type element) {
  return llvm::divideCeil(elements, atomElementsOf(element));
}

/// Checks an explicit contraction depth against a shared-memory A tile:
/// it is set only where a's K comes from a tile, and ends in a's last atom.
static LogicalResult verifyDepth(Operation *op, std::optional<uint64_t> depth,
                                 Type a) {
  if (!depth)
    return success();
  auto tile = dyn_cast<MemRefType>(a);
  if (!tile)
    return op->emitOpError()
           << "depth applies to a shared-memory a only; a register or Tensor "
              "Memory a has its K as its size";
  int64_t k = static_cast<int64_t>(*depth), atoms = tile.getDimSize(0);
  int64_t width = tile.getDimSize(2);
  int64_t step =
      tcgen05::stepElements(tile.getElementType().getIntOrFloatBitWidth());
  if (atomsOf(k, tile.getElementType()) != atoms)
    return op->emitOpError()
           << "depth " << k << " must end in a's last atom (a has " << atoms
           << " atoms of " << width << ": depth in ["
           << (atoms - 1) * width + step << ", " << atoms * width << "])";
  return success();
}

/// Checks that `tile` is a static [atoms, rows, 64] tile in shared memory.
static LogicalResult verifySmemTile(Operation *op, StringRef name,
                                    MemRefType tile) {
  if (!isWorkgroupMemRef(tile))
    return op->emitOpError() << name << " must live in shared memory, got "
                            << tile;
  int64_t width = atomElementsOf(tile.getElementType());
  if (!tile.hasStaticShape() || tile.getDimSize(2) != width)
    return op->emitOpError()
           << name << " must be a static [atoms, rows, " << width
           << "] tile of 128-byte swizzle atoms, got " << tile;
  return success();
}

/// The K window of a K-major `tile` of one atom whose columns are fewer
/// than the atom's: a column subview (the PV split of an 8-bit key-major
/// V reads keys [0, split) and [split, blockN) of one atom). It starts at
/// a K step and spans whole ones inside the atom (each step's descriptor
/// is the window's start plus 32 bytes), rows one atom row apart. Returns
/// the columns it spans, or failure.
static FailureOr<int64_t> verifyKWindow(Operation *op, StringRef name,
                                        MemRefType tile) {
  int64_t width = atomElementsOf(tile.getElementType());
  int64_t columns = tile.getDimSize(2);
  int64_t step =
      tcgen05::stepElements(tile.getElementType().getIntOrFloatBitWidth());
  auto [strides, offset] = tile.getStridesAndOffset();
  if (columns % step != 0 || strides[1] != width || strides[2] != 1 ||
      ShapedType::isDynamic(offset) || (offset % width) % step != 0 ||
      offset % width + columns > width)
    return op->emitOpError()
           << name << " columns [c, c + " << columns << ") of one " << width
           << "-column atom must start at and span multiples of " << step
           << " inside the atom, rows one atom row apart, got " << tile;
  return columns;
}

/// Checks an MMA's shared-memory B operand against the M x N x K product
/// and A's element type. With `kWindow` a K-major b may be a K window of
/// one atom (verifyKWindow).
static LogicalResult verifyBOperand(Operation *op, MemRefType b,
                                    Type elementType, OperandMajor major,
                                    int64_t m, int64_t n, int64_t k,
                                    bool kWindow = false) {
  bool kMajor = major == OperandMajor::k;
  if (kWindow && kMajor && isWorkgroupMemRef(b) && b.hasStaticShape() &&
      b.getDimSize(0) == 1 &&
      b.getDimSize(2) < atomElementsOf(b.getElementType())) {
    FailureOr<int64_t> columns = verifyKWindow(op, "b", b);
    if (failed(columns))
      return failure();
    if (b.getElementType() != elementType)
      return op->emitOpError()
             << "a and b element types differ: " << elementType << " vs "
             << b.getElementType();
    if (b.getDimSize(1) != n || *columns != k)
      return op->emitOpError()
             << "b holds N x K = " << b.getDimSize(1) << " x " << *columns
             << " but the MMA is M x N x K = " << m << " x " << n << " x " << k;
    return success();
  }
  if (failed(verifySmemTile(op, "b", b)))
    return failure();
  if (b.getElementType() != elementType)
    return op->emitOpError() << "a and b element types differ: "
                             << elementType << " vs " << b.getElementType();
  // b's atoms run along K (K-major) or N (MN-major): the MMA reads the
  // atoms that extent ends in, the last perhaps in part.
  int64_t atoms = b.getDimSize(0);
  int64_t rows = b.getDimSize(1);
  int64_t alongAtoms = kMajor ? k : n, alongRows = kMajor ? n : k;
  if (!kMajor && elementType.getIntOrFloatBitWidth() == 8)
    return op->emitOpError() << "an 8-bit b must be K-major (wgmma has no "
                                "transposed 8-bit operand, and fa4's 8-bit "
                                "tiles are K-major on both targets)";
  if (rows != alongRows || atomsOf(alongAtoms, elementType) != atoms)
    return op->emitOpError()
           << "b holds " << (kMajor ? "N x K = " : "K x N = ") << rows << " x "
           << atoms * b.getDimSize(2) << " but the MMA is M x N x K = " << m
           << " x " << n << " x " << k;
  return success();
}

LogicalResult MmaOp::verify() {
  TmemType d = getD().getType();
  if (!d.getElementType().isF32() || d.getLanes() != 128)
    return emitOpError() << "accumulator must be a 128-lane f32 TMEM region, "
                            "got "
                         << d;
  // The weight-stationary MMA: M = 32 or 64 with N = 64, 128 or 256,
  // folded over the 128 lanes into N M / 128 columns.
  int64_t m = getM();
  if (getWs()) {
    if (m != 32 && m != 64)
      return emitOpError() << "ws(M) takes M = 32 or 64, got " << m;
    int64_t n = getN();
    if (getDColumns() * 128 % m != 0 || (n != 64 && n != 128 && n != 256))
      return emitOpError() << "a ws(" << m << ") accumulator of "
                           << getDColumns()
                           << " columns holds N = " << getDColumns()
                           << " x 128 / " << m << "; N must be 64, 128 or 256 ("
                           << 64 * m / 128 << ", " << 128 * m / 128 << " or "
                           << 256 * m / 128 << " columns)";
    if (isa<TmemType>(getA().getType()))
      return emitOpError() << "ws(" << m
                           << ") reads a from shared memory only (a Tensor "
                              "Memory a of the folded layout is not built)";
  }
  int64_t n = getN();
  if (n < 16 || n > 256 || n % 16 != 0)
    return emitOpError() << "N (accumulator columns) must be a multiple of 16 "
                            "in [16, 256], got "
                         << n;

  // kind::f16 takes f16/bf16 operands, kind::f8f6f4 e4m3.
  auto isOperandType = [](Type t) {
    return t.isF16() || t.isBF16() || isa<Float8E4M3FNType>(t);
  };
  Type elementType;
  if (auto aTmem = dyn_cast<TmemType>(getA().getType())) {
    if (aTmem.getLanes() != 128 || !isOperandType(aTmem.getElementType()))
      return emitOpError() << "a TMEM operand must be a 128-lane f16, bf16 "
                              "or f8E4M3FN region, got "
                           << aTmem;
    elementType = aTmem.getElementType();
  } else {
    auto aTile = cast<MemRefType>(getA().getType());
    if (failed(verifySmemTile(*this, "a", aTile)))
      return failure();
    elementType = aTile.getElementType();
    // An MN-major a holds M along its atoms and K along its rows.
    if (isAMnMajor()) {
      if (elementType.getIntOrFloatBitWidth() != 16)
        return emitOpError() << "an MN-major a must be 16-bit (8-bit MMA "
                                "operands are K-major), got "
                             << elementType;
      if (getWs() || getDepth())
        return emitOpError() << "an MN-major a takes neither ws nor depth";
      if (aTile.getDimSize(0) * aTile.getDimSize(2) != m)
        return emitOpError() << "an MN-major a must hold M = " << m
                             << " columns in its atoms, got "
                             << aTile.getDimSize(0) * aTile.getDimSize(2);
    } else if (aTile.getDimSize(1) != m) {
      return emitOpError() << "a must have M = " << m << " rows, got "
                           << aTile.getDimSize(1);
    }
  }
  if (isAMnMajor() && isa<TmemType>(getA().getType()))
    return emitOpError() << "a_major applies to a shared-memory a only";
  if (failed(verifyDepth(*this, getDepth(), getA().getType())))
    return failure();
  int64_t k = getK();
  int64_t step = tcgen05::stepElements(elementType.getIntOrFloatBitWidth());
  if (k % step != 0)
    return emitOpError() << "K must be a multiple of " << step << " for "
                         << elementType << ", got " << k;

  return verifyBOperand(*this, getB().getType(), elementType, getBMajor(), m, n,
                        k, /*kWindow=*/true);
}

//===----------------------------------------------------------------------===//
// Warpgroup MMA
//===----------------------------------------------------------------------===//

int64_t WgmmaOp::getK() {
  if (auto fragment = dyn_cast<VectorType>(getA().getType()))
    return fragment.getNumElements() * 2;
  if (std::optional<uint64_t> depth = getDepth())
    return static_cast<int64_t>(*depth);
  auto tile = cast<MemRefType>(getA().getType());
  return tile.getDimSize(0) * tile.getDimSize(2);
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
  if (failed(verifyDepth(*this, getDepth(), getA().getType())))
    return failure();
  int64_t k = getK();
  int64_t step = wgmma::stepElements(elementType.getIntOrFloatBitWidth());
  if (k % step != 0)
    return emitOpError() << "K must be a multiple of " << step << " for "
                         << elementType << ", got " << k;
  return verifyBOperand(*this, getB().getType(), elementType, getBMajor(), kM,
                        n, k);
}

LogicalResult WgmmaQuantizeOp::verify() {
  VectorType source = getSource().getType(), result = getResult().getType();
  if (!isa<Float8E4M3FNType>(result.getElementType()))
    return emitOpError() << "rounds to e4m3 (f8E4M3FN) operands, got "
                         << result.getElementType();
  if (source.getNumElements() != result.getNumElements())
    return emitOpError() << "source and result fragments differ in size: "
                         << source.getNumElements() << " vs "
                         << result.getNumElements();
  // K = 2 * elements, in whole k32 steps.
  if (source.getNumElements() % 16 != 0)
    return emitOpError() << "fragment of " << source.getNumElements()
                         << " elements is not whole k32 steps (a multiple "
                            "of 16: K = 2 x elements)";
  return success();
}

LogicalResult WgmmaWaitOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}
