//===- Simulator.cpp - fa4-sim host side ----------------------------------===//
//
// What the runtime does on a real GPU, done for the simulated one: it reads
// the launch manifest, allocates the operands of the fa4.launch for the
// problem shape, fills them with seeded random values, builds the TMA tensor
// maps and kernel arguments, and launches the persistent grid (CTA after
// CTA: they share nothing but global memory). Then it compares O and LSE
// with a float64 reference of the same attention.
//
//===----------------------------------------------------------------------===//

#include "fa4/Simulator/Simulator.h"
#include "Interpreter.h"
#include "Modifiers.h"
#include "Trace.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

double mlir::fa4::sim::outputErrorBound(StringRef dtype) {
  // Four unit roundoffs of the output type: O and P are rounded to it once
  // each, the exp2 polynomial adds < 1e-4 and the f32 accumulation less.
  return dtype == "bf16" ? 4 * 0x1p-8 : 4 * 0x1p-11;
}

namespace {

struct Shape {
  /// Packed sequences: batch is their number, seqQ and seqKv the rows of
  /// the packed tensors (padding included).
  /// Dqk (Q, K) and Dv (V, O).
  int64_t batch, seqQ, seqKv, headsQ, headsKv, headDim, headDimV;
  bool causal;
  /// Packed sequences of variable lengths: each one's first query and key
  /// rows, its query rows and the keys it attends (seqused_k applied).
  bool varlen = false, seqused = false;
  std::vector<int64_t> startQ, lengthQ, startKv, lengthKv;
  /// The tables the kernel reads (seqused_k empty without it).
  std::vector<int64_t> cuSeqlensQ, cuSeqlensKv, sequsedKv;
  /// Key window around the bottom-right diagonal, -1 where unbounded
  /// (causal: right 0).
  int64_t windowLeft = -1, windowRight = -1;
  std::optional<double> softcap; // in the op's units
  bool lse = false, sink = false;
  std::string dtype;

  int64_t sequenceQ(int64_t b) const { return varlen ? lengthQ[b] : seqQ; }
  int64_t sequenceKv(int64_t b) const { return varlen ? lengthKv[b] : seqKv; }
  /// The row of the [B, S, H, D] or packed [T, H, D] tensors that holds
  /// query `i` or key `j` of sequence `b`.
  int64_t queryRow(int64_t b, int64_t i) const {
    return varlen ? startQ[b] + i : b * seqQ + i;
  }
  int64_t keyRow(int64_t b, int64_t j) const {
    return varlen ? startKv[b] + j : b * seqKv + j;
  }
  /// The element of LSE [B, Hq, Sq] or packed [Hq, Tq].
  int64_t lseIndex(int64_t b, int64_t h, int64_t i) const {
    return varlen ? h * seqQ + startQ[b] + i : (b * headsQ + h) * seqQ + i;
  }
  /// An activation tensor's shape for `heads` heads of `rows` per sequence
  /// and head dim `dim`.
  SmallVector<int64_t, 4> activation(int64_t rows, int64_t heads,
                                     int64_t dim) const {
    if (varlen)
      return {rows, heads, dim};
    return {batch, rows, heads, dim};
  }
  /// The captured operands' shapes (dynamic sizes resolved) and the
  /// regions that read them; null regions where the launch has none.
  SmallVector<SmallVector<int64_t, 4>> captureShapes;
  Region *score = nullptr, *mask = nullptr;
};

DictionaryAttr manifestOf(LaunchOp launch) {
  return launch->getAttrOfType<DictionaryAttr>("manifest");
}

/// Rows after the packed sequences that no sequence owns (where the
/// tensor's size is dynamic): the kernel must neither read them as a
/// sequence's nor write them.
constexpr int64_t kPaddingRows = 3;

/// Packed sequences: the lengths from --seqlens-q/--seqlens-kv (and
/// --seqused-k), the rows of the packed tensors from their types or the
/// lengths plus padding.
LogicalResult resolveSequences(LaunchOp launch, const Problem &problem,
                               Shape &shape, raw_ostream &os) {
  auto error = [&]() -> raw_ostream & { return os << "error: "; };
  if (problem.seqQ || problem.seqKv) {
    error() << "the kernel takes packed sequences: give their lengths with "
               "--seqlens-q and --seqlens-kv, not --seq-q and --seq-kv\n";
    return failure();
  }
  if (problem.seqlensQ.empty() && problem.seqlensKv.empty()) {
    error() << "the kernel takes packed sequences: give their lengths with "
               "--seqlens-q and --seqlens-kv\n";
    return failure();
  }
  if (problem.seqlensQ.size() != problem.seqlensKv.size()) {
    error() << "the kernel takes packed sequences: give as many lengths to "
               "--seqlens-kv as to --seqlens-q (one per sequence)\n";
    return failure();
  }
  int64_t count = problem.seqlensQ.size();
  if (problem.batch && *problem.batch != count) {
    error() << "--batch " << *problem.batch << " is not the " << count
            << " sequences of --seqlens-q\n";
    return failure();
  }
  if (shape.seqused != !problem.sequsedK.empty() ||
      (shape.seqused &&
       static_cast<int64_t>(problem.sequsedK.size()) != count)) {
    error() << (shape.seqused ? "the kernel takes seqused_k: give one count "
                                "per sequence to --seqused-k\n"
                              : "the kernel takes no seqused_k: drop "
                                "--seqused-k\n");
    return failure();
  }
  for (ArrayRef<int64_t> list :
       {ArrayRef(problem.seqlensQ), ArrayRef(problem.seqlensKv),
        ArrayRef(problem.sequsedK)})
    for (int64_t length : list)
      if (length < 0 || length > (int64_t(1) << 24)) {
        error() << "sequence lengths must lie in [0, 2^24], got " << length
                << "\n";
        return failure();
      }
  shape.batch = count;
  int64_t totalQ = 0, totalKv = 0;
  shape.cuSeqlensQ = {0};
  shape.cuSeqlensKv = {0};
  if (shape.seqused)
    shape.sequsedKv = problem.sequsedK;
  for (int64_t b = 0; b < count; ++b) {
    shape.startQ.push_back(totalQ);
    shape.lengthQ.push_back(problem.seqlensQ[b]);
    shape.startKv.push_back(totalKv);
    // seqused_k counts the keys of the sequence's rows it attends.
    shape.lengthKv.push_back(
        shape.seqused ? std::min(problem.sequsedK[b], problem.seqlensKv[b])
                      : problem.seqlensKv[b]);
    totalQ += problem.seqlensQ[b];
    totalKv += problem.seqlensKv[b];
    shape.cuSeqlensQ.push_back(totalQ);
    shape.cuSeqlensKv.push_back(totalKv);
  }
  // The packed rows: the type's, which must hold the sequences, or theirs
  // plus padding.
  auto rows = [&](Value operand, int64_t total, StringRef what) -> int64_t {
    int64_t fixed = cast<MemRefType>(operand.getType()).getDimSize(0);
    if (ShapedType::isDynamic(fixed))
      return total + kPaddingRows;
    if (fixed < total) {
      error() << "the kernel's packed " << what << " hold " << fixed
              << " rows, fewer than the sequences' " << total << "\n";
      return -1;
    }
    return fixed;
  };
  auto operands = launch.getTensors();
  shape.seqQ = rows(operands[0], totalQ, "queries");
  shape.seqKv = rows(operands[1], totalKv, "keys");
  if (shape.seqQ < 0 || shape.seqKv < 0)
    return failure();
  for (unsigned i = 4; i < operands.size(); ++i) {
    StringRef name = launch.getOperandName(i);
    int64_t entries = name == "seqused_k" ? count : count + 1;
    int64_t fixed = cast<MemRefType>(operands[i].getType()).getDimSize(0);
    if (name.contains("seq") && !ShapedType::isDynamic(fixed) &&
        fixed != entries) {
      error() << "the kernel's " << name << " has " << fixed
              << " entries, not the " << entries << " of " << count
              << " sequences\n";
      return failure();
    }
  }
  return success();
}

/// Resolves the problem against the launch's operand types and manifest.
FailureOr<Shape> resolveShape(LaunchOp launch, const Problem &problem,
                              raw_ostream &os) {
  auto operands = launch.getTensors();
  bool named = operands.size() >= 4;
  for (unsigned i = 0; i < operands.size(); ++i)
    named &= !launch.getOperandName(i).empty();
  if (!named) {
    os << "error: fa4.launch @" << launch.getKernel()
       << " does not have the attention operands (q, k, v, o[, lse][, "
          "sink][, cu_seqlens_q, cu_seqlens_k[, seqused_k]])\n";
    return failure();
  }
  auto q = cast<MemRefType>(operands[0].getType());
  auto k = cast<MemRefType>(operands[1].getType());
  bool ok = true;
  // A dimension from the kernel's type, or from the problem if dynamic.
  auto pick = [&](MemRefType type, unsigned dim, std::optional<int64_t> given,
                  StringRef option) -> int64_t {
    int64_t fixed = type.getDimSize(dim);
    if (!ShapedType::isDynamic(fixed)) {
      if (given && *given != fixed) {
        os << "error: the kernel was compiled for " << option << "=" << fixed
           << ", not " << *given << "\n";
        ok = false;
      }
      return fixed;
    }
    if (!given) {
      os << "error: the kernel's " << option << " is dynamic: give --" << option
         << "\n";
      ok = false;
      return 0;
    }
    if (*given < 1) {
      os << "error: --" << option << " must be at least 1\n";
      ok = false;
    }
    return *given;
  };
  Shape shape;
  for (unsigned i = 4; i < operands.size(); ++i) {
    shape.lse |= launch.getOperandName(i) == "lse";
    shape.sink |= launch.getOperandName(i) == "sink";
    shape.varlen |= launch.getOperandName(i) == "cu_seqlens_q";
    shape.seqused |= launch.getOperandName(i) == "seqused_k";
  }
  if (shape.varlen) {
    if (failed(resolveSequences(launch, problem, shape, os)))
      return failure();
  } else {
    if (!problem.seqlensQ.empty() || !problem.seqlensKv.empty() ||
        !problem.sequsedK.empty()) {
      os << "error: --seqlens-q, --seqlens-kv and --seqused-k are for "
            "kernels of packed sequences (with cu_seqlens tables)\n";
      return failure();
    }
    shape.batch = pick(q, 0, problem.batch, "batch");
    shape.seqQ = pick(q, 1, problem.seqQ, "seq-q");
    shape.seqKv = pick(k, 1, problem.seqKv, "seq-kv");
  }
  unsigned headsDim = shape.varlen ? 1 : 2;
  shape.headsQ = pick(q, headsDim, problem.headsQ, "heads-q");
  shape.headsKv = pick(k, headsDim, problem.headsKv, "heads-kv");
  shape.headDim = pick(q, headsDim + 1, problem.headDim, "head-dim");
  shape.headDimV = pick(cast<MemRefType>(operands[2].getType()), headsDim + 1,
                        std::nullopt, "head-dim-v");
  shape.dtype = q.getElementType().isBF16() ? "bf16" : "f16";
  if (problem.dtype && *problem.dtype != shape.dtype) {
    os << "error: the kernel was compiled for dtype " << shape.dtype << ", not "
       << *problem.dtype << "\n";
    ok = false;
  }
  auto causal = manifestOf(launch).getAs<BoolAttr>("causal");
  if (!causal) {
    os << "error: the launch manifest does not say whether the kernel is "
          "causal\n";
    return failure();
  }
  shape.causal = causal.getValue();
  if (problem.causal && *problem.causal != shape.causal) {
    os << "error: the kernel was compiled " << (shape.causal ? "" : "non-")
       << "causal\n";
    ok = false;
  }
  if (shape.causal)
    shape.windowRight = 0;
  DictionaryAttr manifest = manifestOf(launch);
  if (auto window = manifest.getAs<ArrayAttr>("window")) {
    auto bound = [&](unsigned i) -> std::optional<int64_t> {
      auto value = i < window.size() ? dyn_cast<IntegerAttr>(window[i])
                                     : IntegerAttr();
      if (!value || value.getInt() < -1)
        return std::nullopt;
      // A side past every 32-bit sequence is unbounded (as fa4-tile writes
      // it), which also keeps the reference's arithmetic in range.
      return value.getInt() > std::numeric_limits<int32_t>::max()
                 ? int64_t(-1)
                 : value.getInt();
    };
    if (window.size() != 2 || !bound(0) || !bound(1)) {
      os << "error: the launch manifest's window is not [left, right] with "
            "bounds of at least -1\n";
      return failure();
    }
    shape.windowLeft = *bound(0);
    if (!shape.causal)
      shape.windowRight = *bound(1);
  }
  if (auto softcap = manifest.getAs<FloatAttr>("softcap")) {
    if (!(softcap.getValueAsDouble() > 0)) {
      os << "error: the launch manifest's softcap is not positive\n";
      return failure();
    }
    shape.softcap = softcap.getValueAsDouble();
  }
  if (!launch.getScoreMod().empty())
    shape.score = &launch.getScoreMod();
  if (!launch.getMaskMod().empty())
    shape.mask = &launch.getMaskMod();
  size_t nextSize = 0;
  for (auto [index, capture] : llvm::enumerate(launch.getCaptures())) {
    auto type = cast<MemRefType>(capture.getType());
    SmallVector<int64_t, 4> sizes;
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      if (!type.isDynamicDim(dim)) {
        sizes.push_back(type.getDimSize(dim));
        continue;
      }
      if (nextSize >= problem.captureSizes.size()) {
        os << "error: dimension " << dim << " of capture" << index
           << " is dynamic: give its size in --capture-sizes\n";
        return failure();
      }
      int64_t size = problem.captureSizes[nextSize++];
      if (size < 1) {
        os << "error: --capture-sizes must be at least 1, got " << size
           << "\n";
        return failure();
      }
      sizes.push_back(size);
    }
    shape.captureShapes.push_back(std::move(sizes));
  }
  if (nextSize != problem.captureSizes.size()) {
    os << "error: --capture-sizes gives " << problem.captureSizes.size()
       << " sizes, the captures have " << nextSize << " dynamic dimensions\n";
    return failure();
  }
  if (problem.captureIntBound < 1) {
    os << "error: --capture-int-bound must be at least 1\n";
    return failure();
  }
  if (!ok)
    return failure();
  return shape;
}

/// Whether seed `seed` draws keys whose scale rises along the sequence.
/// With plain normal inputs a row's maximum rarely grows by the rescale
/// threshold after the first block, so the conditional rescale of O would
/// hardly ever run; rising keys make it run a few times per row.
bool risingKeys(uint64_t seed) { return seed % 2 == 1; }

/// Operand tensors of the problem: q, k, v and the sinks random; o and lse
/// poisoned.
std::vector<GlobalTensor> makeTensors(LaunchOp launch, const Shape &s,
                                      uint64_t seed, int64_t intBound) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Type element =
      cast<MemRefType>(launch.getTensors()[0].getType()).getElementType();
  Half half = element.isBF16() ? Half::bf16 : Half::f16;
  std::vector<GlobalTensor> tensors;
  auto add = [&](StringRef name, Type type, SmallVector<int64_t, 4> shape,
                 bool random) {
    GlobalTensor t{name.str(), type, shape, {}};
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    t.data.resize(n, std::numeric_limits<float>::quiet_NaN());
    if (random)
      for (float &x : t.data)
        x = roundToHalf(half, normal(rng));
    tensors.push_back(std::move(t));
  };
  add("query", element, s.activation(s.seqQ, s.headsQ, s.headDim), true);
  add("key", element, s.activation(s.seqKv, s.headsKv, s.headDim), true);
  if (risingKeys(seed)) {
    // Key j scaled by 0.5 + 6 j / Skv: scores from about N(0, 0.25) to
    // N(0, 42), the row maximum growing by ~20 (log2) along the sequence.
    std::vector<float> &keys = tensors.back().data;
    int64_t row = s.headsKv * s.headDim;
    for (size_t i = 0; i < keys.size(); ++i) {
      int64_t j = static_cast<int64_t>(i) / row % s.seqKv;
      keys[i] = roundToHalf(half, keys[i] * (0.5f + 6.0f * j / s.seqKv));
    }
  }
  add("value", element, s.activation(s.seqKv, s.headsKv, s.headDimV), true);
  add("output", element, s.activation(s.seqQ, s.headsQ, s.headDimV), false);
  Type f32 = Float32Type::get(launch.getContext());
  if (s.lse)
    add("lse", f32,
        s.varlen ? SmallVector<int64_t, 4>{s.headsQ, s.seqQ}
                 : SmallVector<int64_t, 4>{s.batch, s.headsQ, s.seqQ},
        false);
  if (s.sink) {
    // About a row's log-sum-exp (scores near N(0, 1) over Skv keys), so that
    // the sink's share ranges from negligible to most of the denominator;
    // every fourth head has none (-inf).
    add("sink", f32, {s.headsQ}, false);
    std::vector<float> &sinks = tensors.back().data;
    for (size_t h = 0; h < sinks.size(); ++h)
      sinks[h] = h % 4 == 3 ? -std::numeric_limits<float>::infinity()
                            : std::log(static_cast<float>(s.seqKv)) +
                                  2.0f * normal(rng);
  }
  // The tables of packed sequences, as the kernel reads them.
  if (s.varlen) {
    Type i32 = IntegerType::get(launch.getContext(), 32);
    for (auto [name, table] :
         {std::pair{"cu_seqlens_q", &s.cuSeqlensQ},
          std::pair{"cu_seqlens_k", &s.cuSeqlensKv},
          std::pair{"seqused_k", &s.sequsedKv}}) {
      if (table->empty())
        continue;
      add(name, i32, {static_cast<int64_t>(table->size())}, false);
      llvm::copy(*table, tensors.back().data.begin());
    }
  }
  // What the regions read: N(0, 1) in the element type, or integers in
  // [0, intBound).
  std::uniform_int_distribution<int64_t> integer(0, intBound - 1);
  for (auto [index, capture] : llvm::enumerate(launch.getCaptures())) {
    Type type = cast<MemRefType>(capture.getType()).getElementType();
    add("capture" + std::to_string(index), type, s.captureShapes[index],
        false);
    for (float &x : tensors.back().data) {
      if (!isa<FloatType>(type))
        x = static_cast<float>(integer(rng));
      else if (type.isF32())
        x = normal(rng);
      else
        x = roundToHalf(type.isBF16() ? Half::bf16 : Half::f16, normal(rng));
    }
  }
  return tensors;
}

/// The launch operand a manifest source names, or -1.
int64_t operandIndex(LaunchOp launch, StringRef name) {
  for (unsigned i = 0; !launch.getOperandName(i).empty(); ++i)
    if (name == launch.getOperandName(i))
      return i;
  return -1;
}

/// The tensor of operand `name`, or null.
const GlobalTensor *tensorNamed(const std::vector<GlobalTensor> &tensors,
                                StringRef name) {
  for (const GlobalTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

/// The launch: tensor maps and arguments from the manifest's params.
FailureOr<Launch> buildLaunch(LaunchOp launch, gpu::GPUFuncOp kernel,
                              const Shape &shape,
                              std::vector<GlobalTensor> &tensors, unsigned ctas,
                              raw_ostream &os) {
  DictionaryAttr manifest = manifestOf(launch);
  auto fail = [&](const Twine &message) {
    os << "error: launch manifest of @" << kernel.getName() << ": " << message
       << "\n";
    return failure();
  };
  auto arch = manifest.getAs<StringAttr>("arch");
  if (arch && arch.getValue() != "sm_100a" && arch.getValue() != "sm_90a")
    return fail("the kernel is compiled for " + arch.getValue() +
                "; fa4-sim executes sm_100a and sm_90a kernels");
  Launch result;
  result.kernel = kernel;
  result.tensors = &tensors;
  auto block = manifest.getAs<ArrayAttr>("block");
  auto grid = manifest.getAs<DictionaryAttr>("grid");
  auto params = manifest.getAs<ArrayAttr>("params");
  auto maps = manifest.getAs<ArrayAttr>("tensor_maps");
  if (!block || !grid || !params || !maps)
    return fail("needs block, grid, params and tensor_maps");
  // The kernel's own shared memory, as fa4-allocate-smem placed it.
  auto smem = kernel->getAttrOfType<IntegerAttr>("fa4.dynamic_smem_bytes");
  if (!smem) {
    os << "error: @" << kernel.getName()
       << " has no fa4.dynamic_smem_bytes: run fa4-allocate-smem first\n";
    return failure();
  }
  result.block = cast<IntegerAttr>(block[0]).getInt();
  result.dynamicSharedBytes = smem.getInt();
  auto rule = grid.getAs<StringAttr>("rule");
  auto headBlocks = grid.getAs<IntegerAttr>("head_blocks");
  auto rows = grid.getAs<IntegerAttr>("query_rows_per_cta");
  if (!rule || !headBlocks || !rows)
    return fail("the grid needs a rule, head_blocks and query_rows_per_cta");
  if (rule.getValue() != (shape.varlen ? "persistent_varlen" : "persistent"))
    return fail("the grid rule '" + rule.getValue() + "' is not the one of " +
                (shape.varlen ? "packed sequences" : "a dense batch"));
  // What the runtime launches, knowing the packed tensors' rows but not
  // the tables' contents (on the device): a bound on the tiles.
  int64_t queryBlocks = llvm::divideCeil(shape.seqQ, rows.getInt());
  int64_t tiles = headBlocks.getInt() *
                  (shape.varlen ? queryBlocks + shape.batch
                                : shape.batch * queryBlocks);
  result.grid = std::max<int64_t>(1, std::min<int64_t>(tiles, ctas));

  for (Attribute attr : maps) {
    auto map = cast<DictionaryAttr>(attr);
    auto index = map.getAs<IntegerAttr>("operand_index");
    auto box = map.getAs<ArrayAttr>("box");
    auto swizzle = map.getAs<StringAttr>("swizzle");
    if (!index || !box || box.size() != 4 || !swizzle)
      return fail("a tensor map needs operand_index, a 4-D box and swizzle");
    if (swizzle.getValue() != "128B")
      return fail("only 128B-swizzled tensor maps are simulated");
    TensorMap tensorMap{static_cast<unsigned>(index.getInt()), {}, {}, {}};
    for (Attribute b : box)
      tensorMap.box.push_back(cast<IntegerAttr>(b).getInt());
    if (tensorMap.box[0] * 2 != 128)
      return fail("a 128B-swizzled box must have 64 16-bit elements innermost");
    if (tensorMap.tensor >= tensors.size())
      return fail("a tensor map names an operand the launch does not have");
    // The dimensions and strides the runtime encodes: the tensor's, or for
    // a packed [T, H, D] tensor (1, T rows, H, D).
    ArrayRef<int64_t> dims = tensors[tensorMap.tensor].shape;
    auto varlen = map.getAs<BoolAttr>("varlen");
    if ((varlen && varlen.getValue()) != shape.varlen)
      return fail("a tensor map's varlen flag does not match the operands");
    if (dims.size() != (shape.varlen ? 3u : 4u))
      return fail("a tensor map's operand is not an activation tensor");
    int64_t stride = 1;
    for (int64_t d : llvm::reverse(dims)) {
      tensorMap.dims.push_back(d);
      tensorMap.strides.push_back(stride);
      stride *= d;
    }
    if (shape.varlen) {
      tensorMap.dims.push_back(1);
      tensorMap.strides.push_back(stride);
    }
    result.maps.push_back(std::move(tensorMap));
  }

  if (params.size() != kernel.getNumArguments())
    return fail(llvm::formatv("lists {0} params for a kernel of {1} arguments",
                              params.size(), kernel.getNumArguments()));
  for (Attribute attr : params) {
    auto param = cast<DictionaryAttr>(attr);
    StringRef kind = param.getAs<StringAttr>("kind").getValue();
    StringRef source = param.getAs<StringAttr>("source").getValue();
    Argument argument;
    unsigned position;
    if (kind == "tensor_map" && source.consume_front("tensor_maps[") &&
        source.consume_back("]") && !source.getAsInteger(10, position) &&
        position < result.maps.size()) {
      argument.kind = Argument::Kind::tensorMap;
      argument.index = position;
    } else if (kind == "i32") {
      auto [operand, rest] = source.split(".shape[");
      int64_t index = operandIndex(launch, operand);
      if (index < 0 || index >= static_cast<int64_t>(tensors.size()) ||
          !rest.consume_back("]") || rest.getAsInteger(10, position) ||
          position >= tensors[index].shape.size())
        return fail("cannot resolve i32 source '" + source + "'");
      argument.kind = Argument::Kind::integer;
      argument.integer = tensors[index].shape[position];
    } else if (kind == "f32") {
      auto value = manifest.getAs<FloatAttr>(source);
      if (!value)
        return fail("no manifest value for f32 source '" + source + "'");
      argument.kind = Argument::Kind::real;
      argument.real = static_cast<float>(value.getValueAsDouble());
    } else if (kind == "pointer" && source.consume_back(".data")) {
      int64_t index = operandIndex(launch, source);
      if (index < 0 || index >= static_cast<int64_t>(tensors.size()))
        return fail("cannot resolve pointer source '" + source + "'");
      argument.kind = Argument::Kind::pointer;
      argument.index = index;
    } else {
      return fail("cannot resolve param of kind '" + kind + "' from '" +
                  param.getAs<StringAttr>("source").getValue() + "'");
    }
    result.arguments.push_back(argument);
  }
  return result;
}

/// O and LSE of the problem in float64 from the (rounded) inputs.
struct Reference {
  std::vector<double> output, lse;
  /// Per query row of O: whether a sequence owns it (padding rows of packed
  /// sequences do not, and must stay unwritten).
  std::vector<bool> owned;
  std::string error; // why the regions could not be evaluated
};

Reference reference(const std::vector<GlobalTensor> &t, const Shape &s,
                    double scale) {
  Reference ref;
  int64_t rows = s.varlen ? s.seqQ : s.batch * s.seqQ;
  ref.output.assign(rows * s.headsQ * s.headDimV, 0.0);
  ref.lse.assign(rows * s.headsQ, -std::numeric_limits<double>::infinity());
  ref.owned.assign(rows, !s.varlen);
  int64_t group = s.headsQ / s.headsKv;
  const GlobalTensor *sinks = tensorNamed(t, "sink");
  SmallVector<const GlobalTensor *> captures;
  for (size_t c = 0; c < s.captureShapes.size(); ++c)
    captures.push_back(tensorNamed(t, "capture" + std::to_string(c)));
  std::vector<double> scores(s.seqKv);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.headsQ; ++h)
      for (int64_t i = 0, seqQ = s.sequenceQ(b), seqKv = s.sequenceKv(b);
           i < seqQ; ++i) {
        ref.owned[s.queryRow(b, i)] = true;
        int64_t kvHead = h / group;
        // Row i sees keys [d - left, d + right] of [0, Skv) around its
        // bottom-right diagonal d = i + Skv - Sq (per packed sequence).
        int64_t diagonal = i + seqKv - seqQ;
        int64_t first =
            s.windowLeft < 0
                ? 0
                : std::clamp<int64_t>(diagonal - s.windowLeft, 0, seqKv);
        int64_t keys =
            s.windowRight < 0
                ? seqKv
                : std::clamp<int64_t>(diagonal + s.windowRight + 1, 0, seqKv);
        // The sink joins the denominator: a row without keys outputs 0 with
        // the sink as its LSE.
        double sink = sinks ? sinks->data[h]
                            : -std::numeric_limits<double>::infinity();
        if (keys <= first) {
          ref.lse[s.lseIndex(b, h, i)] = sink;
          continue;
        }
        const float *q =
            &t[0].data[(s.queryRow(b, i) * s.headsQ + h) * s.headDim];
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j < keys; ++j) {
          const float *k =
              &t[1].data[(s.keyRow(b, j) * s.headsKv + kvHead) * s.headDim];
          double dot = 0;
          for (int64_t d = 0; d < s.headDim; ++d)
            dot += static_cast<double>(q[d]) * k[d];
          scores[j] = dot * scale;
          if (s.softcap)
            scores[j] = *s.softcap * std::tanh(scores[j] / *s.softcap);
          // The regions compute in f32, as the kernel's inlined copies do;
          // both see the capped score.
          auto capped = static_cast<float>(scores[j]);
          ElementCoords at{b, h, i, j};
          for (Region *region : {s.score, s.mask}) {
            if (!region)
              continue;
            std::optional<Val> value =
                evaluateModifier(*region, capped, at, captures, ref.error);
            if (!value)
              return ref;
            if (region == s.score)
              scores[j] = value->floats[0];
            else if (value->ints[0] == 0)
              scores[j] = -std::numeric_limits<double>::infinity();
          }
          max = std::max(max, scores[j]);
        }
        max = std::max(max, sink);
        // Every key masked and no sink: O = 0, LSE = -inf.
        if (max == -std::numeric_limits<double>::infinity())
          continue;
        double sum = std::exp(sink - max);
        for (int64_t j = first; j < keys; ++j)
          sum += (scores[j] = std::exp(scores[j] - max));
        double *o =
            &ref.output[(s.queryRow(b, i) * s.headsQ + h) * s.headDimV];
        for (int64_t j = first; j < keys; ++j) {
          const float *v =
              &t[2].data[(s.keyRow(b, j) * s.headsKv + kvHead) * s.headDimV];
          for (int64_t d = 0; d < s.headDimV; ++d)
            o[d] += scores[j] / sum * v[d];
        }
        ref.lse[s.lseIndex(b, h, i)] = max + std::log(sum);
      }
  return ref;
}

} // namespace

/// Whether `op` declares the allocation of one of its results.
static bool allocatesBuffer(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect()) &&
           isa_and_nonnull<OpResult>(e.getValue());
  });
}

LogicalResult mlir::fa4::sim::simulate(ModuleOp module, const Problem &problem,
                                       const Options &options,
                                       raw_ostream &os) {
  SmallVector<LaunchOp> launches;
  module.walk([&](LaunchOp launch) { launches.push_back(launch); });
  if (launches.empty()) {
    os << "error: the module has no fa4.launch: run the pipeline through "
          "fa4-insert-barriers first\n";
    return failure();
  }
  // The trace of the first seed of each launch; the file is opened first,
  // so that a bad path fails before anything runs, and written however the
  // simulation ends.
  std::unique_ptr<Trace> trace;
  std::unique_ptr<llvm::raw_fd_ostream> traceStream;
  if (!options.traceFile.empty()) {
    std::error_code error;
    traceStream = std::make_unique<llvm::raw_fd_ostream>(
        options.traceFile, error, llvm::sys::fs::OF_Text);
    if (error) {
      os << "error: cannot write the trace to " << options.traceFile << ": "
         << error.message() << "\n";
      return failure();
    }
    trace = std::make_unique<Trace>(options.traceLimit);
    trace->note("clock",
                "ts counts the scheduler steps of each CTA (a logical clock, "
                "shown as 1 us per step): every op a thread executes and "
                "every completion of asynchronous work is one step; every "
                "CTA (process) starts at 0");
    trace->note(
        "tracks",
        "one per warp (following its lane 0), per TMA copy in "
        "flight, per tcgen05 MMA pipe (issuing thread) and per wgmma "
        "pipe (warpgroup); arrows end at a wait and start at what it "
        "observed: each track's last arrival in the mbarrier phase, "
        "the arrival completing a named barrier, the last wgmma of "
        "the groups waited for, the last TMA store (docs/SIMULATOR.md)");
  }
  llvm::scope_exit writeTrace([&] {
    if (trace)
      trace->write(*traceStream);
  });
  bool allPassed = true;
  for (LaunchOp launch : launches) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        launch, launch.getKernel());
    if (!kernel) {
      os << "error: fa4.launch names no gpu.func @" << launch.getKernel()
         << "\n";
      return failure();
    }
    // Channels and their steps must have become barriers, and buffers must
    // be placed: an op that allocates memory as its result (an unplaced
    // TMEM buffer, a memref.alloc) has not been replaced by a view.
    bool synchronized = true;
    kernel.walk([&](Operation *op) {
      if (isa<ChannelOp, ChannelStepOpInterface>(op) || allocatesBuffer(op))
        synchronized = false;
    });
    if (!synchronized) {
      os << "error: @" << kernel.getName()
         << " still has channels or unplaced buffers: run fa4-allocate-tmem, "
            "fa4-allocate-smem and fa4-insert-barriers first\n";
      return failure();
    }
    if (!manifestOf(launch)) {
      os << "error: fa4.launch @" << launch.getKernel()
         << " has no launch manifest\n";
      return failure();
    }
    FailureOr<Shape> shape = resolveShape(launch, problem, os);
    if (failed(shape))
      return failure();
    auto scale = manifestOf(launch).getAs<FloatAttr>("scale");
    if (!scale) {
      os << "error: the launch manifest has no scale\n";
      return failure();
    }
    double bound = outputErrorBound(shape->dtype);
    for (unsigned n = 0; n < options.seeds; ++n) {
      uint64_t seed = options.seed + n;
      std::vector<GlobalTensor> tensors =
          makeTensors(launch, *shape, seed, problem.captureIntBound);
      FailureOr<Launch> run =
          buildLaunch(launch, kernel, *shape, tensors, options.ctas, os);
      if (failed(run))
        return failure();
      std::vector<std::string> errors, races;
      llvm::DenseSet<std::pair<const void *, const void *>> racingOps;
      uint64_t steps = 0;
      for (int64_t cta = 0; cta < run->grid && errors.empty(); ++cta) {
        Schedule schedule{seed * 1000003 + cta, options.maxSteps,
                          n == 0 ? trace.get() : nullptr};
        CtaOutcome outcome = runCta(*run, cta, schedule);
        steps += outcome.steps;
        errors.insert(errors.end(), outcome.errors.begin(),
                      outcome.errors.end());
        for (RaceReport &race : outcome.races)
          if (racingOps.insert(race.ops).second)
            races.push_back(std::move(race.text));
      }

      std::string numbers;
      bool numbersOk = errors.empty();
      if (errors.empty()) {
        Reference ref = reference(tensors, *shape, scale.getValueAsDouble());
        if (!ref.error.empty()) {
          os << "error: " << ref.error << "\n";
          return failure();
        }
        const std::vector<float> &o = tensors[3].data;
        double diff = 0, norm = 0;
        int64_t unwritten = -1, stray = -1;
        int64_t rowElements = shape->headsQ * shape->headDimV;
        for (size_t i = 0; i < o.size(); ++i) {
          if (!ref.owned[i / rowElements]) {
            if (!std::isnan(o[i])) {
              stray = i;
              break;
            }
            continue;
          }
          if (std::isnan(o[i])) {
            unwritten = i;
            break;
          }
          diff += (o[i] - ref.output[i]) * (o[i] - ref.output[i]);
          norm += ref.output[i] * ref.output[i];
        }
        if (unwritten >= 0 || stray >= 0) {
          int64_t at = unwritten >= 0 ? unwritten : stray;
          int64_t d = at % shape->headDimV,
                  h = at / shape->headDimV % shape->headsQ,
                  row = at / rowElements;
          std::string element =
              shape->varlen
                  ? llvm::formatv("O[{0}, {1}, {2}]", row, h, d).str()
                  : llvm::formatv("O[{0}, {1}, {2}, {3}]", row / shape->seqQ,
                                  row % shape->seqQ, h, d)
                        .str();
          errors.push_back(unwritten >= 0
                               ? element + " was never written (or is NaN)"
                               : element + " lies in no sequence but was "
                                           "written");
          numbersOk = false;
        } else {
          double relative = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
          numbersOk = relative <= bound;
          numbers =
              llvm::formatv("O rel-err {0:e2} (bound {1:e2})", relative, bound);
          if (!numbersOk)
            errors.push_back("O differs from the float64 reference: " +
                             numbers);
        }
        const GlobalTensor *lseTensor = tensorNamed(tensors, "lse");
        if (lseTensor && errors.empty()) {
          const std::vector<float> &lse = lseTensor->data;
          double worst = 0;
          for (size_t i = 0; i < lse.size(); ++i) {
            // Packed: [Hq, Tq], whose padding columns stay unwritten.
            if (shape->varlen && !ref.owned[i % shape->seqQ]) {
              if (!std::isnan(lse[i])) {
                errors.push_back(llvm::formatv(
                    "LSE[{0}, {1}] lies in no sequence but was written",
                    i / shape->seqQ, i % shape->seqQ));
                break;
              }
              continue;
            }
            bool noKeys = std::isinf(ref.lse[i]);
            bool bad = noKeys ? !(std::isinf(lse[i]) && lse[i] < 0)
                              : std::isnan(lse[i]) || std::isinf(lse[i]);
            if (bad) {
              errors.push_back(llvm::formatv("LSE[{0}] is {1}, expected {2}", i,
                                             lse[i], ref.lse[i]));
              break;
            }
            if (!noKeys)
              worst = std::max(worst, std::fabs(lse[i] - ref.lse[i]));
          }
          numbers += llvm::formatv(", LSE max-err {0:e2} (bound {1:e2})", worst,
                                   kLseErrorBound);
          if (worst > kLseErrorBound)
            errors.push_back(llvm::formatv(
                "LSE differs from the float64 reference by {0:e2}", worst));
        }
      }
      bool passed = errors.empty() && races.empty();
      allPassed &= passed;
      if (trace && n == 0)
        trace->note(("@" + kernel.getName()).str(),
                    llvm::formatv("seed {0}: {1}", seed,
                                  passed            ? std::string("ok")
                                  : !errors.empty() ? "FAIL: " + errors.front()
                                                    : "FAIL: " + races.front())
                        .str());
      os << "seed " << seed << ": " << (passed ? "ok" : "FAIL") << ": @"
         << kernel.getName() << " B=" << shape->batch
         << (shape->varlen ? " Tq=" : " Sq=") << shape->seqQ
         << (shape->varlen ? " Tkv=" : " Skv=") << shape->seqKv
         << " Hq=" << shape->headsQ
         << " Hkv=" << shape->headsKv << " D=" << shape->headDim;
      if (shape->headDimV != shape->headDim)
        os << " Dv=" << shape->headDimV;
      os << " "
         << shape->dtype << (shape->causal ? " causal" : "");
      if (shape->windowLeft >= 0 || (shape->windowRight >= 0 && !shape->causal))
        os << " window [" << shape->windowLeft << ", " << shape->windowRight
           << "]";
      if (shape->softcap)
        os << " softcap " << llvm::format("%g", *shape->softcap);
      if (shape->sink)
        os << " sink";
      if (shape->varlen)
        os << " varlen" << (shape->seqused ? " seqused_k" : "");
      os << (risingKeys(seed) ? ", rising keys" : "") << ", " << run->grid
         << " CTAs, " << steps << " steps";
      if (!numbers.empty())
        os << ", " << numbers;
      os << "\n";
      // The first races tell the story; the rest are usually its echoes.
      constexpr size_t kShownRaces = 6;
      for (const std::string &race : ArrayRef(races).take_front(kShownRaces))
        os << "  " << race << "\n";
      if (races.size() > kShownRaces)
        os << "  ... and " << races.size() - kShownRaces
           << " more races between other pairs of ops\n";
      for (const std::string &error : errors)
        os << "  error: " << error << "\n";
    }
  }
  return success(allPassed);
}
