//===- KernelLimits.cpp - what a planned kernel can run -------------------===//
//
// checkKernelLimits: the static sizes, strides and scales a kernel of a
// plan computes with (32-bit values, TMA strides, the LSE's layout, f32
// scales), checked at the op for fa4-plan's plans and hand-written ones.
//
//===----------------------------------------------------------------------===//

#include "fa4/Transforms/Planning.h"

#include "llvm/Support/MathExtras.h"

#include <cfloat>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;

namespace {
/// The kernel's batch, lengths, tile counts and coordinates are 32-bit
/// signed values (i32 parameters, 32-bit index arithmetic, TMA's int32
/// coordinates).
constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
/// TMA global strides are multiples of 16 bytes below 2^40.
constexpr int64_t kTmaStrideAlignment = 16;
constexpr int64_t kTmaMaxStride = int64_t(1) << 40;
/// 2^15 is the largest power of two below the largest f16 (65504).
constexpr int64_t kMaxF16Threshold = 15;

/// `a * b`, or nullopt past int64.
std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::MulOverflow(a, b, result))
    return std::nullopt;
  return result;
}

/// Whether `value` (nullopt: past int64) exceeds the 32-bit range.
bool exceeds32(std::optional<int64_t> value) {
  return !value || *value > kMax32;
}
} // namespace

LogicalResult mlir::fa4::checkKernelLimits(AttentionOp op, PlanAttr plan) {
  if (plan.getTanhOnFma() > 0 && !op.getSoftcap())
    return op.emitOpError()
           << "plan's polynomialTanh = " << plan.getTanhOnFma()
           << " applies to a softcap's tanh; this attention has no softcap";
  if (int64_t ceiling = plan.getCeiling()) {
    if (!op.getSoftcap())
      return op.emitOpError()
             << "plan's softcapCeiling = " << ceiling
             << " bounds a softcap's scores; this attention has no softcap";
    if (op.getQuery().getType().getElementType().isF16() &&
        ceiling > limits::kMaxF16SoftcapCeiling)
      return op.emitOpError()
             << "plan's softcapCeiling = " << ceiling << " exceeds f16's "
             << limits::kMaxF16SoftcapCeiling << ": P = 2^(s - B) down to 2^-"
             << 2 * ceiling << " would leave f16's normal range (2^-14)";
  }
  struct Operand {
    StringRef name;
    ShapedType type;
    std::array<StringRef, 4> dims;
  };
  bool varlen = op.isVarlen();
  auto activation = [&](StringRef name, Value value, StringRef seq,
                        StringRef heads, StringRef dim) {
    Operand operand{name, cast<ShapedType>(value.getType()), {}};
    if (op.isPaged() && seq == "seq_kv")
      operand.dims = {"pages", "page_size", heads, dim};
    else if (varlen)
      operand.dims = {seq == "seq_q" ? "total_q" : "total_kv", heads, dim, ""};
    else
      operand.dims = {"batch", seq, heads, dim};
    return operand;
  };
  SmallVector<Operand> operands = {
      activation("query", op.getQuery(), "seq_q", "heads_q", "head_dim_qk"),
      activation("key", op.getKey(), "seq_kv", "heads_kv", "head_dim_qk"),
      activation("value", op.getValue(), "seq_kv", "heads_kv", "head_dim_v"),
      activation("output", op.getOutput(), "seq_q", "heads_q", "head_dim_v")};
  // A memref's layout is checked here; a tensor's is bufferization's choice.
  auto isContiguous = [](ShapedType type) {
    auto memref = dyn_cast<MemRefType>(type);
    return !memref || memref.getLayout().isIdentity();
  };
  if (TypedValue<ShapedType> lse = op.getLse()) {
    // The LSE is written through a plain pointer, element (b, h, i) at
    // (b * Hq + h) * Sq + i (packed: h * Tq + i).
    if (!isContiguous(lse.getType()))
      return op.emitOpError() << "the kernel writes LSE to a contiguous "
                              << (varlen ? "[Hq, Tq]" : "[B, Hq, Sq]")
                              << " tensor, got " << lse.getType();
    operands.push_back(
        {"lse", lse.getType(),
         varlen ? std::array<StringRef, 4>{"heads_q", "total_q"}
                : std::array<StringRef, 4>{"batch", "heads_q", "seq_q"}});
  }
  for (auto [name, table] :
       {std::pair<StringRef, Value>{"cu_seqlens_q", op.getCuSeqlensQ()},
        {"cu_seqlens_k", op.getCuSeqlensK()},
        {"seqused_k", op.getSequsedK()}})
    if (table)
      operands.push_back({name,
                          cast<ShapedType>(table.getType()),
                          {name == "seqused_k" ? "batch" : "batch + 1"}});
  if (TypedValue<ShapedType> table = op.getPageTable())
    operands.push_back({"page_table", table.getType(), {"batch", "max_pages"}});
  if (op.hasRope()) {
    // A position per query row: positions[b, i] of a dense batch, the
    // token's of packed sequences.
    operands.push_back({"cos_sin",
                        cast<ShapedType>(op.getCosSin().getType()),
                        {"positions", "rotary_dims"}});
    operands.push_back({"positions",
                        cast<ShapedType>(op.getPositions().getType()),
                        varlen ? std::array<StringRef, 4>{"total_q"}
                               : std::array<StringRef, 4>{"batch", "seq_q"}});
  }
  // The sinks are read through a plain pointer, head h at element h.
  if (TypedValue<ShapedType> sink = op.getSink();
      sink && !isContiguous(sink.getType()))
    return op.emitOpError()
           << "the kernel reads the sinks from a contiguous [Hq] tensor, got "
           << sink.getType();

  // The kernel takes each dynamic size of a capture as an i32.
  for (auto [index, capture] : llvm::enumerate(op.getCaptures())) {
    auto type = cast<ShapedType>(capture.getType());
    for (unsigned i = 0, e = type.getRank(); i < e; ++i)
      if (!type.isDynamicDim(i) && type.getDimSize(i) > kMax32)
        return op.emitOpError()
               << "capture #" << index << " dimension " << i << " is "
               << type.getDimSize(i) << ", more than the kernel's 32-bit "
               << "sizes hold (" << kMax32 << ")";
  }

  for (const Operand &operand : operands) {
    for (unsigned i = 0, e = operand.type.getRank(); i < e; ++i) {
      int64_t size = operand.type.getDimSize(i);
      if (!ShapedType::isDynamic(size) && size > kMax32)
        return op.emitOpError()
               << operand.name << " dimension " << i << " (" << operand.dims[i]
               << ") is " << size
               << ", more than the kernel's 32-bit sizes and TMA coordinates "
                  "hold ("
               << kMax32 << ")";
    }
    if (operand.type.getRank() < 3)
      continue; // LSE and the tables: plain pointers
    // A TMA descriptor gives each outer dimension a byte stride and the
    // tensor a base address: both 16-byte aligned, strides below 2^40.
    auto memref = dyn_cast<MemRefType>(operand.type);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!memref || failed(memref.getStridesAndOffset(strides, offset)))
      continue; // tensors have no strides yet; the verifier refuses the rest
    int64_t elementBytes = operand.type.getElementTypeBitWidth() / 8;
    // The unit-stride dimension (the head dim, or a key-major V's keys) is
    // the map's innermost.
    unsigned inner =
        strides.back() == 1 ? strides.size() - 1 : op.getKeySequenceDim();
    for (unsigned i = 0; i < strides.size(); ++i) {
      if (i == inner || ShapedType::isDynamic(strides[i]))
        continue;
      std::optional<int64_t> bytes = mul(strides[i], elementBytes);
      if (!bytes || *bytes % kTmaStrideAlignment != 0 ||
          *bytes >= kTmaMaxStride)
        return op.emitOpError()
               << operand.name << " stride " << strides[i] << " of dimension "
               << i << " (" << operand.dims[i] << ") is "
               << (bytes ? std::to_string(*bytes) : "> 2^63")
               << " bytes, which a TMA descriptor cannot describe (a "
                  "multiple of "
               << kTmaStrideAlignment << " bytes below 2^40)";
    }
    if (!ShapedType::isDynamic(offset) &&
        (offset * elementBytes) % kTmaStrideAlignment != 0)
      return op.emitOpError()
             << operand.name << " offset " << offset << " is "
             << offset * elementBytes << " bytes, not a multiple of the "
             << kTmaStrideAlignment << " bytes a TMA base address needs";
  }

  // What the kernel computes from the sizes, in 32 bits.
  ShapedType query = op.getQuery().getType();
  unsigned seqDim = op.getSequenceDim();
  int64_t seqQ = query.getDimSize(seqDim);
  int64_t seqKv = op.getKey().getType().getDimSize(seqDim);
  // Paged: a batch holds up to max_pages pages (the kernel computes its
  // capacity, and the table offsets b * max_pages + page, in 32 bits).
  if (TypedValue<ShapedType> table = op.getPageTable()) {
    int64_t maxPages = table.getType().getDimSize(1);
    seqKv = ShapedType::kDynamic;
    if (!ShapedType::isDynamic(maxPages)) {
      std::optional<int64_t> capacity = mul(maxPages, op.getPageSize());
      if (exceeds32(capacity))
        return op.emitOpError()
               << "max_pages x page size = " << maxPages << " x "
               << op.getPageSize()
               << " keys exceeds the kernel's 32-bit key positions (" << kMax32
               << ")";
      seqKv = *capacity;
      int64_t rows = table.getType().getDimSize(0);
      if (!ShapedType::isDynamic(rows) && exceeds32(mul(rows, maxPages)))
        return op.emitOpError()
               << "page_table of batch x max_pages = " << rows << " x "
               << maxPages << " entries exceeds the kernel's 32-bit offsets ("
               << kMax32 << ")";
    }
  }
  // Packed: the sequences are the batch, one fewer than the table's
  // entries.
  int64_t batch = query.getDimSize(0);
  if (varlen) {
    int64_t entries = op.getCuSeqlensQ().getType().getDimSize(0);
    batch = ShapedType::isDynamic(entries) ? entries : entries - 1;
  }
  int64_t heads = op.getNumQueryHeads();
  int64_t pack = plan.getGqaPack();
  int64_t tileRows = plan.getQStages() * (plan.getBlockM() / pack);
  // Sizes are at most 2^31 - 1 here; tiles of at most 256 rows.
  if (!ShapedType::isDynamic(seqQ) && seqQ + tileRows - 1 > kMax32)
    return op.emitOpError()
           << "seq_q " << seqQ << " rounded up to whole work tiles of "
           << tileRows << " query positions exceeds the kernel's 32-bit row "
           << "coordinates (" << kMax32 << ")";
  if (!ShapedType::isDynamic(seqKv) && seqKv + plan.getBlockN() - 1 > kMax32)
    return op.emitOpError()
           << "seq_kv " << seqKv << " rounded up to whole blocks of "
           << plan.getBlockN() << " keys exceeds the kernel's 32-bit row "
           << "coordinates (" << kMax32 << ")";
  if (varlen && !ShapedType::isDynamic(seqQ)) {
    // The schedule numbers at most ceil(Tq / rows) + B tiles per head
    // block (each sequence's last tile may be partial); the LSE of h at
    // h * Tq + i.
    std::optional<int64_t> tiles = (seqQ + tileRows - 1) / tileRows;
    if (!ShapedType::isDynamic(batch))
      tiles = mul(*tiles + batch, heads / pack);
    if (exceeds32(tiles))
      return op.emitOpError()
             << "head blocks x (query tiles of " << seqQ
             << " packed rows + sequences) exceed the kernel's 32-bit tile "
                "count ("
             << kMax32 << ")";
    if (op.getLse() && exceeds32(mul(heads, seqQ)))
      return op.emitOpError()
             << "LSE of heads_q x total_q = " << heads << " x " << seqQ
             << " elements exceeds the kernel's 32-bit LSE offsets (" << kMax32
             << ")";
  } else if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(seqQ)) {
    int64_t tilesPerHead = (seqQ + tileRows - 1) / tileRows;
    std::optional<int64_t> tiles = mul(batch, heads / pack);
    if (tiles)
      tiles = mul(*tiles, tilesPerHead);
    if (exceeds32(tiles))
      return op.emitOpError()
             << "batch x head blocks x query tiles = " << batch << " x "
             << heads / pack << " x " << tilesPerHead
             << " work tiles exceed the kernel's 32-bit tile count (" << kMax32
             << ")";
    std::optional<int64_t> lseElements = mul(batch, heads);
    if (lseElements)
      lseElements = mul(*lseElements, seqQ);
    if (op.getLse() && exceeds32(lseElements))
      return op.emitOpError()
             << "LSE of batch x heads_q x seq_q = " << batch << " x " << heads
             << " x " << seqQ
             << " elements exceeds the kernel's 32-bit LSE offsets (" << kMax32
             << ")";
  }

  // Split-KV: the workspace holds a record per row of every work tile,
  // numbered in 32 bits (the offsets within it are 64-bit).
  if (int64_t splits = plan.getSplits(); splits > 1) {
    if (varlen)
      return op.emitOpError()
             << "kvSplits " << splits
             << " with packed sequences (cu_seqlens) is not supported; "
                "split-KV takes dense batches (kv-splits=1 here)";
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(seqQ)) {
      std::optional<int64_t> rows =
          mul(batch, (heads / pack) * plan.getQStages() * plan.getBlockM());
      if (rows)
        rows = mul(*rows, llvm::divideCeil(seqQ, tileRows));
      std::optional<int64_t> units =
          rows ? mul(*rows / (plan.getQStages() * plan.getBlockM()), splits)
               : std::nullopt;
      if (exceeds32(rows) || exceeds32(units))
        return op.emitOpError()
               << "split-KV over " << splits << " CTAs numbers the rows "
               << "and units of batch x head blocks x query tiles = " << batch
               << " x " << heads / pack << " x "
               << llvm::divideCeil(seqQ, tileRows)
               << " work tiles past the kernel's 32-bit range (" << kMax32
               << ")";
    }
  }

  // FP8: the PV MMA (wgmma, tcgen05 kind::f8f6f4) reads 8-bit V K-major,
  // so V's keys are contiguous, and a block in one box.
  if (op.isFp8()) {
    if (!op.isTensorForm() && !op.isValueKeyMajor())
      return op.emitOpError()
             << "FP8 reads V K-major (the PV MMA takes 8-bit B operands "
                "K-major only): value must have unit stride in "
                "its seq_kv dimension (keys contiguous, e.g. a [B, Hkv, Dv, "
                "Skv] buffer viewed as [B, Skv, Hkv, Dv]), got "
             << op.getValue().getType();
    if (op.isPaged() && op.getPageSize() < limits::kFp8MinPageSize)
      return op.emitOpError() << fp8PagesRule() << ", got pages of "
                              << op.getPageSize() << " keys";
  }

  // P is rounded to the element type and grows up to 2^rescaleThreshold
  // between rescales.
  if (query.getElementType().isF16() &&
      plan.getRescaleThreshold() > kMaxF16Threshold)
    return op.emitOpError()
           << "rescaleThreshold " << plan.getRescaleThreshold()
           << " lets probabilities grow to 2^" << plan.getRescaleThreshold()
           << ", past the largest f16 (65504) that P is rounded to; at most "
           << kMaxF16Threshold << " with f16";

  // The kernel takes the scale in log2 units as an f32.
  double scale = op.getEffectiveScale();
  if (!(scale * M_LOG2E <= FLT_MAX))
    return op.emitOpError()
           << "scale " << scale << " times log2(e) is " << scale * M_LOG2E
           << ", more than an f32 holds (" << FLT_MAX
           << "): the kernel takes the scale in log2 units as an f32";
  // And the softcap in raw-score units (over the scale), also as an f32.
  if (std::optional<APFloat> softcap = op.getSoftcap()) {
    double cap = softcap->convertToDouble() / scale;
    if (!(cap <= FLT_MAX) || !(cap * scale * M_LOG2E <= FLT_MAX))
      return op.emitOpError()
             << "softcap " << softcap->convertToDouble() << " over the scale "
             << scale << " is " << cap << ", more than an f32 holds ("
             << FLT_MAX << "): the kernel takes the cap in raw-score units "
             << "as an f32";
  }
  return success();
}
