//===- FA4Ops.cpp - fa4 op classes, the attention op and the launch -------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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

bool mlir::fa4::isWorkgroupMemRef(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

bool AttentionOp::isValueKeyMajor() {
  auto memref = dyn_cast<MemRefType>(getValue().getType());
  if (!memref)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(memref.getStridesAndOffset(strides, offset)) &&
         strides.back() != 1 && strides[getKeySequenceDim()] == 1;
}

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
  ShapedType type;
  std::array<StringRef, 4> dimNames;

  int64_t dim(unsigned i) const { return type.getDimSize(i); }
};

/// Verifies the properties of one operand on its own: positive static sizes,
/// static head counts and head dims, and (memrefs) a unit-stride innermost
/// dimension, or, where `keyMajorDim` is given, unit stride in that one
/// instead.
LogicalResult verifyOperandShape(AttentionOp op, const NamedOperand &operand,
                                 ArrayRef<unsigned> mustBeStatic,
                                 std::optional<unsigned> keyMajorDim = {}) {
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
  auto memref = dyn_cast<MemRefType>(operand.type);
  if (!memref)
    return success(); // a tensor's layout is bufferization's choice
  SmallVector<int64_t> strides;
  int64_t offset;
  bool layout = succeeded(memref.getStridesAndOffset(strides, offset));
  if (layout && strides.back() == 1)
    return success();
  if (keyMajorDim) {
    if (layout && strides[*keyMajorDim] == 1)
      return success();
    return op.emitOpError()
           << operand.name << " of an 8-bit type must have unit stride in its "
           << operand.dimNames[operand.type.getRank() - 1] << " or its "
           << operand.dimNames[*keyMajorDim] << " dimension, got "
           << operand.type;
  }
  return op.emitOpError() << operand.name
                          << " must have unit stride in its innermost ("
                          << operand.dimNames[operand.type.getRank() - 1]
                          << ") dimension, got " << operand.type;
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

/// With packed sequences (`cuSeqlensQ` of B + 1 entries), that dimension 0
/// of `operand` has one `unit` ("entry", "row") per sequence where both
/// sizes are static.
LogicalResult verifyPerSequence(AttentionOp op, const NamedOperand &operand,
                                ShapedType cuSeqlensQ, StringRef unit) {
  int64_t entries = cuSeqlensQ.getDimSize(0), rows = operand.dim(0);
  if (ShapedType::isDynamic(entries) || ShapedType::isDynamic(rows) ||
      rows + 1 == entries)
    return success();
  return op.emitOpError() << operand.name << " must have one " << unit
                          << " per sequence: cu_seqlens_q has " << entries
                          << " entries (" << entries - 1 << " sequences) but "
                          << operand.name << " has " << rows;
}

/// Whether a table the kernel reads through a plain pointer can be one: a
/// contiguous memref in global memory (a tensor bufferizes to one).
bool isContiguousGlobal(ShapedType type) {
  auto memref = dyn_cast<MemRefType>(type);
  return !memref ||
         (memref.getLayout().isIdentity() && !memref.getMemorySpace());
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
  // Memrefs throughout, or tensors throughout with O (and LSE) as results.
  bool tensors = isTensorForm();
  for (OpOperand &operand : getOperation()->getOpOperands())
    if (isa<TensorType>(operand.get().getType()) != tensors)
      return emitOpError()
             << "operand #" << operand.getOperandNumber() << " is a "
             << (tensors ? "memref" : "tensor") << " but query is a "
             << (tensors ? "tensor" : "memref")
             << ": the operands are all memrefs or all tensors";
  if (!tensors && getNumResults() != 0)
    return emitOpError() << "on memrefs writes output and lse in place and "
                            "has no results, got "
                         << getNumResults();
  if (tensors) {
    SmallVector<Type> expected = {getOutput().getType()};
    if (getLse())
      expected.push_back(getLse().getType());
    if (getResultTypes() != TypeRange(expected))
      return emitOpError()
             << "on tensors returns the output"
             << (getLse() ? " and the lse" : "") << " it writes, of types "
             << TypeRange(expected) << ", got " << getResultTypes();
  }
  // Packed sequences drop the batch dimension of Q, K, V and O.
  bool varlen = isVarlen();
  if (static_cast<bool>(getCuSeqlensK()) != varlen)
    return emitOpError() << "takes cu_seqlens_q and cu_seqlens_k together";
  // A paged K/V is [pages, P, heads, head_dim] whether the queries are a
  // dense batch or packed sequences.
  bool paged = isPaged();
  int64_t rank = varlen ? 3 : 4;
  for (auto [name, value] : {std::pair<StringRef, Value>{"query", getQuery()},
                             {"key", getKey()},
                             {"value", getValue()},
                             {"output", getOutput()}}) {
    bool pagedCache = paged && (name == "key" || name == "value");
    if (cast<ShapedType>(value.getType()).getRank() != (pagedCache ? 4 : rank))
      return emitOpError()
             << name << " must be "
             << (pagedCache ? "[pages, page_size, heads, head_dim] in a paged "
                              "KV cache"
                 : varlen   ? "[total, heads, head_dim] with variable lengths"
                            : "[batch, seq, heads, head_dim]")
             << ", got " << value.getType();
  }
  auto named = [&](StringRef name, Value value, StringRef seq, StringRef heads,
                   StringRef dim) {
    NamedOperand operand{name, cast<ShapedType>(value.getType()), {}};
    if (paged && seq == "seq_kv")
      operand.dimNames = {"pages", "page_size", heads, dim};
    else if (varlen)
      operand.dimNames = {seq == "seq_q" ? "total_q" : "total_kv", heads, dim,
                          ""};
    else
      operand.dimNames = {"batch", seq, heads, dim};
    return operand;
  };
  NamedOperand q = named("query", getQuery(), "seq_q", "heads_q",
                         "head_dim_qk");
  NamedOperand k = named("key", getKey(), "seq_kv", "heads_kv", "head_dim_qk");
  NamedOperand v = named("value", getValue(), "seq_kv", "heads_kv",
                         "head_dim_v");
  NamedOperand o = named("output", getOutput(), "seq_q", "heads_q",
                         "head_dim_v");
  // Dimension indices of the sequence, the heads and the head dim: of Q and
  // O, and of K and V (a paged cache's differ from packed queries').
  unsigned seq = getSequenceDim(), heads = seq + 1, dim = seq + 2;
  unsigned kvSeq = getKeySequenceDim(), kvHeads = kvSeq + 1, kvDim = kvSeq + 2;

  // Head counts and head dims shape the kernel; only batch and sequence
  // lengths may be chosen at run time. An FP8 V may be key-major.
  bool fp8 = isFp8();
  for (const NamedOperand *operand : {&q, &k, &v, &o}) {
    bool kv = operand == &k || operand == &v;
    if (failed(verifyOperandShape(
            *this, *operand, {kv ? kvHeads : heads, kv ? kvDim : dim},
            fp8 && operand == &v ? std::optional<unsigned>(kvSeq)
                                 : std::nullopt)))
      return failure();
  }

  Type elementType = q.type.getElementType();
  for (const NamedOperand *operand : {&k, &v})
    if (operand->type.getElementType() != elementType)
      return emitOpError() << operand->name << " element type "
                           << operand->type.getElementType()
                           << " must match query element type " << elementType;
  Type outputType = o.type.getElementType();
  if (fp8 && !outputType.isBF16() && !outputType.isF16())
    return emitOpError() << "output element type must be bf16 or f16 with "
                            "FP8 operands (O is written in 16 bits), got "
                         << outputType;
  if (!fp8 && outputType != elementType)
    return emitOpError() << "output element type " << outputType
                         << " must match query element type " << elementType;

  // Packed sequences with a key-major (FP8) V: V's own rows, each sequence
  // from packedValueStart.
  bool paddedValue = varlen && fp8 && !paged;
  if ((!varlen && !paged &&
       (failed(verifySameDim(*this, "batch", q, 0, k, 0)) ||
        failed(verifySameDim(*this, "batch", q, 0, v, 0)))) ||
      (!varlen && failed(verifySameDim(*this, "batch", q, 0, o, 0))) ||
      (paged && failed(verifySameDim(*this, "pages", k, 0, v, 0))) ||
      failed(verifySameDim(*this, q.dimNames[seq], q, seq, o, seq)) ||
      (!paddedValue &&
       failed(verifySameDim(*this, k.dimNames[kvSeq], k, kvSeq, v, kvSeq))) ||
      failed(verifySameDim(*this, "heads_q", q, heads, o, heads)) ||
      failed(verifySameDim(*this, "heads_kv", k, kvHeads, v, kvHeads)) ||
      failed(verifySameDim(*this, "head_dim_qk", q, dim, k, kvDim)) ||
      failed(verifySameDim(*this, "head_dim_v", v, kvDim, o, dim)))
    return failure();

  if (varlen) {
    // The tables are read through plain pointers: contiguous, one entry
    // per sequence boundary (seqused_k one per sequence).
    NamedOperand cuQ{"cu_seqlens_q", getCuSeqlensQ().getType(),
                     {"batch + 1", "", "", ""}};
    NamedOperand cuK{"cu_seqlens_k", getCuSeqlensK().getType(),
                     {"batch + 1", "", "", ""}};
    for (const NamedOperand *table : {&cuQ, &cuK}) {
      if (failed(verifyOperandShape(*this, *table, {})))
        return failure();
      if (!isContiguousGlobal(table->type))
        return emitOpError() << table->name
                             << " must be a contiguous tensor in global "
                                "memory, got "
                             << table->type;
    }
    if (failed(verifySameDim(*this, "batch + 1", cuQ, 0, cuK, 0)))
      return failure();
    if (paddedValue && !k.type.isDynamicDim(0) && !v.type.isDynamicDim(0) &&
        !cuQ.type.isDynamicDim(0)) {
      int64_t sequences = std::max<int64_t>(cuQ.type.getDimSize(0) - 1, 0);
      int64_t needed = k.type.getDimSize(0) + kPackedValueAlignment * sequences;
      if (v.type.getDimSize(0) < needed)
        return emitOpError()
               << "FP8 packed sequences read V key-major from row "
                  "align16(cu_seqlens_k[b]) + 16 b (16-byte aligned TMA "
                  "boxes): value needs at least total_kv + 16 batch = "
               << needed << " rows, got " << v.type.getDimSize(0);
    }
    if (TypedValue<ShapedType> used = getSequsedK()) {
      NamedOperand u{"seqused_k", used.getType(), {"batch", "", "", ""}};
      if (failed(verifyOperandShape(*this, u, {})))
        return failure();
      if (!isContiguousGlobal(u.type))
        return emitOpError() << "seqused_k must be a contiguous tensor in "
                                "global memory, got "
                             << u.type;
      if (failed(verifyPerSequence(*this, u, cuQ.type, "entry")))
        return failure();
    }
  }

  if (TypedValue<ShapedType> used = getSequsedK(); used && !varlen) {
    // A KV cache: each batch's keys.
    NamedOperand u{"seqused_k", used.getType(), {"batch", "", "", ""}};
    if (failed(verifyOperandShape(*this, u, {})) ||
        failed(verifySameDim(*this, "batch", q, 0, u, 0)) ||
        failed(verifySameDim(*this, "batch", o, 0, u, 0)) ||
        (!paged && failed(verifySameDim(*this, "batch", k, 0, u, 0))))
      return failure();
    if (!isContiguousGlobal(u.type))
      return emitOpError() << "seqused_k must be a contiguous tensor in "
                              "global memory, got "
                           << u.type;
  }
  if (paged) {
    NamedOperand table{
        "page_table", getPageTable().getType(), {"batch", "max_pages", "", ""}};
    if (failed(verifyOperandShape(*this, table, {})) ||
        (!varlen && (failed(verifySameDim(*this, "batch", q, 0, table, 0)) ||
                     failed(verifySameDim(*this, "batch", o, 0, table, 0)))))
      return failure();
    // Packed sequences: a row of pages per sequence.
    if (varlen &&
        failed(verifyPerSequence(
            *this, table, cast<ShapedType>(getCuSeqlensQ().getType()), "row")))
      return failure();
    if (TypedValue<ShapedType> used = getSequsedK()) {
      NamedOperand u{"seqused_k", used.getType(), {"batch", "", "", ""}};
      if (failed(verifySameDim(*this, "batch", u, 0, table, 0)))
        return failure();
    }
    if (!isContiguousGlobal(table.type))
      return emitOpError() << "page_table must be a contiguous tensor in "
                              "global memory, got "
                           << table.type;
    int64_t pageSize = k.type.getDimSize(1);
    // Pages of 8 keys would take 16 TMA boxes per sm_100a block (the load
    // warp spills); vLLM's smallest is 16.
    if (ShapedType::isDynamic(pageSize) || pageSize < 16 ||
        !llvm::isPowerOf2_64(pageSize))
      return emitOpError() << "paged key and value must be [pages, P, "
                              "heads_kv, head_dim] with a static page size P "
                              "that is a power of two of at least 16, got "
                           << k.type;
  }

  if (getNumQueryHeads() % getNumKeyValueHeads() != 0)
    return emitOpError() << "query heads (" << getNumQueryHeads()
                         << ") must be a multiple of key/value heads ("
                         << getNumKeyValueHeads() << ")";

  if (TypedValue<ShapedType> lse = getLse()) {
    if (lse.getType().getRank() != rank - 1)
      return emitOpError() << "lse must be "
                           << (varlen ? "[heads_q, total_q] with variable "
                                        "lengths"
                                      : "[batch, heads_q, seq_q]")
                           << ", got " << lse.getType();
    if (varlen) {
      NamedOperand l{"lse", lse.getType(), {"heads_q", "total_q", "", ""}};
      if (failed(verifyOperandShape(*this, l, {0})) ||
          failed(verifySameDim(*this, "heads_q", q, heads, l, 0)) ||
          failed(verifySameDim(*this, "total_q", q, seq, l, 1)))
        return failure();
    } else {
      NamedOperand l{"lse", lse.getType(), {"batch", "heads_q", "seq_q", ""}};
      if (failed(verifyOperandShape(*this, l, {1})) ||
          failed(verifySameDim(*this, "batch", q, 0, l, 0)) ||
          failed(verifySameDim(*this, "heads_q", q, heads, l, 1)) ||
          failed(verifySameDim(*this, "seq_q", q, seq, l, 2)))
        return failure();
    }
  }

  if (TypedValue<ShapedType> sink = getSink()) {
    // One logit per query head; its size may be left to run time.
    NamedOperand s{"sink", sink.getType(), {"heads_q", "", "", ""}};
    if (failed(verifyOperandShape(*this, s, {})) ||
        failed(verifySameDim(*this, "heads_q", q, heads, s, 0)))
      return failure();
  }

  if (static_cast<bool>(getQDescale()) != static_cast<bool>(getKDescale()) ||
      static_cast<bool>(getQDescale()) != static_cast<bool>(getVDescale()))
    return emitOpError() << "takes q_descale, k_descale and v_descale "
                            "together";
  if (getQDescale()) {
    if (!fp8)
      return emitOpError() << "descale factors apply to FP8 operands, but "
                              "query is "
                           << elementType;
    // One factor per (batch or sequence, KV head), read through a pointer.
    for (auto [name, value] :
         {std::pair<StringRef, Value>{"q_descale", getQDescale()},
          {"k_descale", getKDescale()},
          {"v_descale", getVDescale()}}) {
      NamedOperand d{name,
                     cast<ShapedType>(value.getType()),
                     {"batch", "heads_kv", "", ""}};
      if (failed(verifyOperandShape(*this, d, {})) ||
          failed(verifySameDim(*this, "heads_kv", k, kvHeads, d, 1)))
        return failure();
      if (varlen ? failed(verifyPerSequence(
                       *this, d, cast<ShapedType>(getCuSeqlensQ().getType()),
                       "row"))
                 : failed(verifySameDim(*this, "batch", q, 0, d, 0))) {
        return failure();
      }
      if (!isContiguousGlobal(d.type))
        return emitOpError() << name
                             << " must be a contiguous tensor in "
                                "global memory, got "
                             << d.type;
    }
  }

  if (static_cast<bool>(getCosSin()) != static_cast<bool>(getPositions()))
    return emitOpError() << "takes the rope table and positions together";
  if (!hasRope() && (getRopeStartAttr() || getRopeOutput()))
    return emitOpError() << (getRopeOutput() ? "rope_output" : "rope_start")
                         << " needs rope(%cos_sin, %positions)";
  if (hasRope()) {
    if (fp8)
      return emitOpError() << "rope rotates 16-bit queries; FP8 operands "
                              "take their queries rotated";
    NamedOperand table{"cos_sin",
                       cast<ShapedType>(getCosSin().getType()),
                       {"positions", "rotary_dims", "", ""}};
    if (failed(verifyOperandShape(*this, table, {1})))
      return failure();
    auto [first, rotated] = getRopeDims();
    // Pairs are rotated four at a time, from 16-byte pieces of Q (8
    // elements) and of each half of the table (4 f32).
    if (rotated <= 0 || rotated % 8 != 0 || first < 0 || first % 8 != 0 ||
        first + rotated > getHeadDimQK() ||
        (getRopeOutput() && first + rotated > getHeadDimV()))
      return emitOpError()
             << "rope rotates dims [rope_start, rope_start + R) of Q"
             << (getRopeOutput() ? " and O" : "")
             << ": R (cos_sin's dim 1) and rope_start must be multiples of 8 "
                "with R > 0 and rope_start + R <= head dim "
             << (getRopeOutput() ? std::min(getHeadDimQK(), getHeadDimV())
                                 : getHeadDimQK())
             << ", got rope_start = " << first << ", R = " << rotated;
    NamedOperand where{"positions",
                       cast<ShapedType>(getPositions().getType()),
                       {"batch", "seq_q", "", ""}};
    if (varlen)
      where.dimNames = {"total_q", "", "", ""};
    if (where.type.getRank() != rank - 2)
      return emitOpError() << "positions must be "
                           << (varlen ? "[total_q] with variable lengths"
                                      : "[batch, seq_q]")
                           << ", got " << where.type;
    if (failed(verifyOperandShape(*this, where, {})) ||
        (!varlen && (failed(verifySameDim(*this, "batch", q, 0, where, 0)) ||
                     failed(verifySameDim(*this, "seq_q", q, 1, where, 1)))) ||
        (varlen && failed(verifySameDim(*this, "total_q", q, 0, where, 0))))
      return failure();
    for (const NamedOperand *operand : {&table, &where})
      if (!isContiguousGlobal(operand->type))
        return emitOpError() << operand->name
                             << " must be a contiguous tensor in global "
                                "memory, got "
                             << operand->type;
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

  if (failed(verifyScoreModifiers(*this, getScoreMod(), getMaskMod(),
                                  getCaptures().getTypes())))
    return failure();

  if (PlanAttr plan = getPlanAttr()) {
    if (plan.getHeadDim() != getHeadDimQK() ||
        plan.getValueHeadDim() != getHeadDimV())
      return emitOpError() << "plan head dims (qk " << plan.getHeadDim()
                           << ", v " << plan.getValueHeadDim()
                           << ") do not match the operands' (qk "
                           << getHeadDimQK() << ", v " << getHeadDimV() << ")";
    if (plan.isFp8() != fp8)
      return emitOpError() << "plan operandBytes (" << plan.getElementBytes()
                           << ") does not match the operands' element type "
                           << elementType;
    if (paged && getPageSize() % plan.getBlockN() != 0 &&
        plan.getBlockN() % getPageSize() != 0)
      return emitOpError() << "plan blockN " << plan.getBlockN()
                           << " and the page size " << getPageSize()
                           << " must divide one another: a KV block lies "
                              "in one page or spans whole ones";
    if (getNumQueryHeads() % (plan.getGqaPack() * getNumKeyValueHeads()) != 0)
      return emitOpError() << "plan gqaPack " << plan.getGqaPack()
                           << " must divide the query heads per key/value "
                              "head ("
                           << getGroupSize() << ")";
  }
  return success();
}

MutableOperandRange AttentionOp::getDpsInitsMutable() {
  // O and LSE are adjacent operands (segments 3 and 4).
  return MutableOperandRange(getOperation(),
                             getOutputMutable().getOperandNumber(),
                             getLse() ? 2 : 1);
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // The tensor form is pure; the memref form reads its inputs and writes O
  // (and LSE).
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

std::string LaunchOp::getOperandName(unsigned index) {
  static constexpr StringLiteral kActivations[] = {"query", "key", "value",
                                                   "output"};
  unsigned operands = getTensors().size();
  if (index >= operands) {
    if (index - operands < getCaptures().size())
      return "capture" + std::to_string(index - operands);
    return {};
  }
  if (index < std::size(kActivations))
    return kActivations[index].str();
  // With rope, the last two: the cos | sin table and the positions.
  if (getRope() && operands >= std::size(kActivations) + 2 &&
      index + 2 >= operands)
    return index + 2 == operands ? "cos_sin" : "positions";
  // The optional operands follow O in the attention op's order, each known
  // by its type: LSE [B, Hq, Sq] (or [Hq, total_q]) and the sinks [Hq] in
  // f32, then the i32 tables: of variable lengths in order (a packed, rank-3
  // query), or a dense batch's seqused_k [B], and the page table [B, pages].
  auto type = cast<MemRefType>(getTensors()[index].getType());
  // The rope operands are named above; the others are counted without them.
  auto named = getTensors().take_front(operands - (getRope() ? 2 : 0));
  if (type.getElementType().isF32()) {
    if (type.getRank() == 1)
      return "sink";
    // FP8 descale factors: the last three of the f32 [B, Hkv] operands (a
    // packed batch's LSE [Hq, total_q] is of rank 2 too, and comes first).
    auto isMatrix = [](Value tensor) {
      auto t = cast<MemRefType>(tensor.getType());
      return t.getElementType().isF32() && t.getRank() == 2;
    };
    bool fp8 = isa<Float8E4M3FNType>(
        cast<MemRefType>(getTensors()[0].getType()).getElementType());
    auto optional = named.drop_front(std::size(kActivations));
    int64_t matrices = llvm::count_if(optional, isMatrix);
    int64_t before = llvm::count_if(
        optional.take_front(index - std::size(kActivations)), isMatrix);
    static constexpr StringLiteral kDescales[] = {"q_descale", "k_descale",
                                                  "v_descale"};
    if (fp8 && type.getRank() == 2 && matrices >= 3 && before >= matrices - 3)
      return kDescales[before - (matrices - 3)].str();
    return "lse";
  }
  if (!type.getElementType().isSignlessInteger(32))
    return {};
  if (type.getRank() == 2)
    return "page_table";
  if (cast<MemRefType>(getTensors()[0].getType()).getRank() == 4)
    return type.getRank() == 1 ? "seqused_k" : "";
  static constexpr StringLiteral kTables[] = {"cu_seqlens_q", "cu_seqlens_k",
                                              "seqused_k"};
  unsigned table = 0;
  for (unsigned i = std::size(kActivations); i < index; ++i)
    table += cast<MemRefType>(named[i].getType())
                 .getElementType()
                 .isSignlessInteger(32);
  if (type.getElementType().isSignlessInteger(32) && type.getRank() == 1 &&
      table < std::size(kTables))
    return kTables[table].str();
  return {};
}

/// Whether a manifest param of `kind` can bind a kernel argument of `type`:
/// a TMA descriptor, a global pointer (a memref before lowering), or the i32
/// and f32 scalars (an i32 size is an index before lowering, with the
/// kernels' 32-bit index); lowered to LLVM, descriptors and memrefs are
/// pointers.
static bool paramBinds(StringRef kind, Type type) {
  bool pointer = isa<LLVM::LLVMPointerType>(type);
  if (kind == "tensor_map")
    return isa<nvgpu::TensorMapDescriptorType>(type) || pointer;
  if (kind == "pointer")
    return isa<MemRefType>(type) || pointer;
  if (kind == "i32")
    return type.isSignlessInteger(32) || type.isIndex();
  if (kind == "f32")
    return type.isF32();
  return false;
}

/// The runtimes and fa4-sim pass the manifest's params as the kernel's
/// arguments, in order: one per argument, each of a kind that argument
/// takes.
static LogicalResult verifyParams(LaunchOp launch, TypeRange arguments) {
  std::optional<DictionaryAttr> manifest = launch.getManifest();
  auto params = manifest ? manifest->getAs<ArrayAttr>("params") : ArrayAttr();
  if (!params)
    return success();
  if (params.size() != arguments.size())
    return launch.emitOpError()
           << "manifest lists " << params.size() << " params for kernel "
           << launch.getKernel() << " of " << arguments.size() << " arguments";
  for (auto [index, param, type] : llvm::enumerate(params, arguments)) {
    auto entry = dyn_cast<DictionaryAttr>(param);
    auto kind = entry ? entry.getAs<StringAttr>("kind") : StringAttr();
    if (kind && !paramBinds(kind.getValue(), type))
      return launch.emitOpError()
             << "manifest param #" << index << " of kind '" << kind.getValue()
             << "' cannot bind kernel argument #" << index << " of type "
             << type;
  }
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // query, key, value, output, then optionally lse and sink, then the
  // tables of variable lengths, in this order.
  std::string previous = "output";
  // A dense batch (rank-4 query) takes seqused_k and page_table without the
  // packed sequences' tables; packed sequences take a page table after
  // theirs.
  bool dense = !getTensors().empty() &&
               cast<MemRefType>(getTensors()[0].getType()).getRank() == 4;
  for (unsigned i = 0, e = getTensors().size(); i < e; ++i) {
    std::string name = getOperandName(i);
    bool afterSink =
        previous == "output" || previous == "lse" || previous == "sink";
    bool afterDescale = afterSink || previous == "v_descale";
    bool inOrder =
        i < 4 || (name == "lse" && previous == "output") ||
        (name == "sink" && (previous == "output" || previous == "lse")) ||
        (name == "q_descale" && afterSink) ||
        (name == "k_descale" && previous == "q_descale") ||
        (name == "v_descale" && previous == "k_descale") ||
        (name == "cu_seqlens_q" && afterDescale) ||
        (name == "cu_seqlens_k" && previous == "cu_seqlens_q") ||
        (name == "seqused_k" &&
         (previous == "cu_seqlens_k" || (dense && afterDescale))) ||
        (name == "page_table" &&
         (dense ? afterDescale || previous == "seqused_k"
                : previous == "cu_seqlens_k" || previous == "seqused_k")) ||
        (name == "cos_sin" && previous != "cu_seqlens_q") ||
        (name == "positions" && previous == "cos_sin");
    if (!inOrder)
      return emitOpError()
             << "takes query, key, value, output and optionally lse (f32 "
                "[B, Hq, Sq] or [Hq, total_q]), sink (f32 [Hq]), "
                "q_descale, k_descale, v_descale (f32 [B, Hkv]), "
                "cu_seqlens_q, cu_seqlens_k (i32 [B + 1]), seqused_k (i32 "
                "[B]), page_table (i32 [B, pages]) and, with rope, cos_sin "
                "and positions, in this order; operand #"
             << i << " is " << getOperand(i).getType();
    previous = name;
  }
  if (previous == "cu_seqlens_q")
    return emitOpError() << "takes cu_seqlens_k after cu_seqlens_q";
  if (getRope()) {
    auto type = [&](int64_t fromEnd) {
      return getTensors().size() < 6
                 ? MemRefType()
                 : cast<MemRefType>(
                       getTensors()[getTensors().size() - fromEnd].getType());
    };
    MemRefType table = type(2), positions = type(1);
    if (!table || !table.getElementType().isF32() || table.getRank() != 2 ||
        !positions.getElementType().isSignlessInteger(32) ||
        positions.getRank() > 2)
      return emitOpError() << "with rope takes the f32 cos_sin table [P, R] "
                              "and the i32 positions as its last two "
                              "operands after query, key, value and output";
  }
  if (getTensors().size() < 4)
    return emitOpError() << "takes query, key, value, output and optionally "
                            "lse and sink, got "
                         << getTensors().size() << " operands";
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
  if (auto lowered = dyn_cast_or_null<LLVM::LLVMFuncOp>(function))
    return verifyParams(*this, lowered.getArgumentTypes());
  auto kernel = dyn_cast_or_null<gpu::GPUFuncOp>(function);
  if (!kernel)
    return emitOpError() << "kernel " << getKernel()
                         << " is not a function of its gpu.module";
  if (!kernel.isKernel())
    return emitOpError() << "kernel " << getKernel()
                         << " is a gpu.func without the kernel attribute";
  return verifyParams(*this, kernel.getArgumentTypes());
}
