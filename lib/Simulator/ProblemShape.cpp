//===- ProblemShape.cpp - the simulated problem and its operands ----------===//
//
// Resolves the problem's sizes against the launch (the dynamic ones from the
// command line, packed sequences from their lengths) and draws the operand
// tensors of a seed.
//
//===----------------------------------------------------------------------===//

#include "ProblemShape.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

DictionaryAttr sim::manifestOf(LaunchOp launch) {
  return launch->getAttrOfType<DictionaryAttr>("manifest");
}

/// Rows after the packed sequences that no sequence owns (where the
/// tensor's size is dynamic): the kernel must neither read them as a
/// sequence's nor write them.
static constexpr int64_t kPaddingRows = 3;

/// Packed sequences: the lengths from --seqlens-q/--seqlens-kv (and
/// --seqused-k), the rows of the packed tensors from their types or the
/// lengths plus padding.
static LogicalResult resolveSequences(LaunchOp launch,
                                      const Problem &problem, Shape &shape,
                                      raw_ostream &os) {
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
  // A paged cache's keys are its pages' (resolvePages).
  bool paged = cast<MemRefType>(operands[1].getType()).getRank() == 4;
  shape.seqKv = paged ? 0 : rows(operands[1], totalKv, "keys");
  if (shape.seqQ < 0 || shape.seqKv < 0)
    return failure();
  // FP8 reads V key-major, each sequence from a 16-aligned row
  // (packedValueStart).
  auto valueType = cast<MemRefType>(operands[2].getType());
  if (isa<Float8E4M3FNType>(valueType.getElementType()) && !paged) {
    shape.valueRows =
        rows(operands[2], totalKv + kPackedValueAlignment * count, "values");
    if (shape.valueRows < 0)
      return failure();
  }
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

/// A paged KV cache: --seq-kv keys per batch (packed sequences: the
/// longest of --seqlens-kv), rounded up to whole pages (the kernel's
/// max_pages where static); the cache holds every batch's pages, shuffled,
/// and spare pages that no table entry of a batch's keys names (two, or the
/// rest of a static cache). Table entries past a batch's keys name a spare
/// page (whose keys and values are NaN: a kernel that reads them fails) or,
/// every third, -1 (outside the cache).
static LogicalResult resolvePages(LaunchOp launch, const Problem &problem,
                                  Shape &shape, raw_ostream &os) {
  auto k = cast<MemRefType>(launch.getTensors()[1].getType());
  shape.pageSize = k.getDimSize(1);
  // The launch's verifier puts the page table last.
  auto table = cast<MemRefType>(launch.getTensors().back().getType());
  int64_t fixedPages = table.getDimSize(1);
  std::optional<int64_t> keys = problem.seqKv;
  StringRef option = "--seq-kv";
  if (shape.varlen) {
    // At least one page per sequence.
    keys = std::max<int64_t>(1, *llvm::max_element(llvm::concat<const int64_t>(
                                    problem.seqlensKv, ArrayRef<int64_t>{0})));
    option = "the longest of --seqlens-kv";
  }
  if (!keys && ShapedType::isDynamic(fixedPages)) {
    os << "error: the kernel reads a paged KV cache: give the keys of each "
          "batch with --seq-kv (rounded up to whole pages of "
       << shape.pageSize << ")\n";
    return failure();
  }
  if (keys && (*keys < 1 || *keys > (int64_t(1) << 24))) {
    os << "error: " << option << " must lie in [1, 2^24], got " << *keys
       << "\n";
    return failure();
  }
  shape.maxPages = keys ? llvm::divideCeil(*keys, shape.pageSize) : fixedPages;
  if (shape.varlen && !ShapedType::isDynamic(fixedPages) &&
      shape.maxPages <= fixedPages)
    shape.maxPages = fixedPages;
  if (!ShapedType::isDynamic(fixedPages) && shape.maxPages != fixedPages) {
    os << "error: the kernel was compiled for " << fixedPages << " pages of "
       << shape.pageSize << " keys per batch, not " << option << " " << *keys
       << "\n";
    return failure();
  }
  shape.seqKv = shape.maxPages * shape.pageSize;
  shape.pages = shape.batch * shape.maxPages + 2;
  if (int64_t fixed = k.getDimSize(0); !ShapedType::isDynamic(fixed)) {
    if (fixed < shape.batch * shape.maxPages) {
      os << "error: the kernel's cache holds " << fixed
         << " pages, fewer than the " << shape.batch << " x " << shape.maxPages
         << " of the batches\n";
      return failure();
    }
    shape.pages = fixed;
  }
  return success();
}

/// The page table: the batches' pages in shuffled order (a fixed shuffle,
/// so that consecutive keys rarely lie in consecutive pages), entries past a
/// batch's keys a spare page or -1.
static void fillPageTable(Shape &shape) {
  std::vector<int64_t> order(shape.batch * shape.maxPages);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(0x5EED);
  std::shuffle(order.begin(), order.end(), rng);
  int64_t firstSpare = order.size();
  int64_t spares = shape.pages - firstSpare;
  shape.pageTable.resize(order.size());
  for (int64_t b = 0; b < shape.batch; ++b) {
    int64_t used = llvm::divideCeil(shape.sequenceKv(b), shape.pageSize);
    for (int64_t p = 0; p < shape.maxPages; ++p) {
      int64_t entry = b * shape.maxPages + p;
      shape.pageTable[entry] = p < used ? order[entry]
                               : entry % 3 == 2 || spares == 0
                                   ? -1
                                   : firstSpare + entry % spares;
    }
  }
}

/// A dense batch's keys: all of them, or each batch's --seqused-k (clamped
/// to [0, Skv]) for kernels that take seqused_k.
static LogicalResult resolveKeyCounts(const Problem &problem, Shape &shape,
                                      raw_ostream &os) {
  if (shape.seqused != !problem.sequsedK.empty() ||
      (shape.seqused &&
       static_cast<int64_t>(problem.sequsedK.size()) != shape.batch)) {
    os << "error: "
       << (shape.seqused ? "the kernel takes seqused_k: give one count per "
                           "batch to --seqused-k\n"
                         : "the kernel takes no seqused_k: drop "
                           "--seqused-k\n");
    return failure();
  }
  if (!shape.seqused)
    return success();
  shape.sequsedKv = problem.sequsedK;
  for (int64_t used : problem.sequsedK)
    shape.lengthKv.push_back(std::clamp<int64_t>(used, 0, shape.seqKv));
  return success();
}

/// Resolves the problem against the launch's operand types and manifest.
FailureOr<Shape> sim::resolveShape(LaunchOp launch, const Problem &problem,
                                   raw_ostream &os) {
  auto operands = launch.getTensors();
  bool named = operands.size() >= 4;
  for (unsigned i = 0; i < operands.size(); ++i)
    named &= !launch.getOperandName(i).empty();
  if (!named) {
    os << "error: fa4.launch @" << launch.getKernel()
       << " does not have the attention operands (q, k, v, o[, lse][, "
          "sink][, cu_seqlens_q, cu_seqlens_k][, seqused_k][, "
          "page_table])\n";
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
  bool paged = false;
  for (unsigned i = 4; i < operands.size(); ++i) {
    shape.lse |= launch.getOperandName(i) == "lse";
    shape.sink |= launch.getOperandName(i) == "sink";
    shape.descale |= launch.getOperandName(i) == "q_descale";
    shape.varlen |= launch.getOperandName(i) == "cu_seqlens_q";
    shape.seqused |= launch.getOperandName(i) == "seqused_k";
    paged |= launch.getOperandName(i) == "page_table";
  }
  if (shape.varlen) {
    if (failed(resolveSequences(launch, problem, shape, os)))
      return failure();
    // Packed sequences over a paged cache: each sequence's keys through its
    // row of the page table.
    if (paged) {
      if (failed(resolvePages(launch, problem, shape, os)))
        return failure();
      fillPageTable(shape);
    }
  } else {
    if (!problem.seqlensQ.empty() || !problem.seqlensKv.empty()) {
      os << "error: --seqlens-q and --seqlens-kv are for kernels of packed "
            "sequences (with cu_seqlens tables)\n";
      return failure();
    }
    shape.batch = pick(q, 0, problem.batch, "batch");
    shape.seqQ = pick(q, 1, problem.seqQ, "seq-q");
    if (paged && failed(resolvePages(launch, problem, shape, os)))
      return failure();
    if (!paged)
      shape.seqKv = pick(k, 1, problem.seqKv, "seq-kv");
    if (failed(resolveKeyCounts(problem, shape, os)))
      return failure();
    if (paged)
      fillPageTable(shape);
  }
  unsigned headsDim = shape.varlen ? 1 : 2;
  unsigned kvHeadsDim = paged ? 2 : headsDim;
  shape.headsQ = pick(q, headsDim, problem.headsQ, "heads-q");
  shape.headsKv = pick(k, kvHeadsDim, problem.headsKv, "heads-kv");
  shape.headDim = pick(q, headsDim + 1, problem.headDim, "head-dim");
  shape.headDimV = pick(cast<MemRefType>(operands[2].getType()), kvHeadsDim + 1,
                        std::nullopt, "head-dim-v");
  shape.dtype = q.getElementType().isBF16()  ? "bf16"
                : q.getElementType().isF16() ? "f16"
                                             : "e4m3";
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
  if (auto rope = manifest.getAs<DictionaryAttr>("rope")) {
    auto start = rope.getAs<IntegerAttr>("start");
    auto columns = rope.getAs<IntegerAttr>("columns");
    auto output = rope.getAs<BoolAttr>("output");
    auto table = cast<MemRefType>(operands[operands.size() - 2].getType());
    if (!start || !columns || !output || !launch.getRope() ||
        table.getDimSize(1) != columns.getInt() ||
        start.getInt() + columns.getInt() > shape.headDim) {
      os << "error: the launch manifest's rope is not {start, columns, "
            "output} of the launch's cos_sin table inside the head dim\n";
      return failure();
    }
    shape.ropeStart = start.getInt();
    shape.ropeColumns = columns.getInt();
    shape.ropeOutput = output.getValue();
    // Positions up to Skv + 8 with a few entries past either end, which
    // the kernel clamps into the table (makeTensors).
    shape.ropeRows =
        table.isDynamicDim(0) ? shape.seqKv + 8 : table.getDimSize(0);
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
bool sim::risingKeys(uint64_t seed) { return seed % 2 == 1; }

/// Operand tensors of the problem: q, k, v and the sinks random; o and lse
/// poisoned.
std::vector<GlobalTensor> sim::makeTensors(LaunchOp launch, const Shape &s,
                                           uint64_t seed, int64_t intBound) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto elementOfOperand = [&](unsigned index) {
    return cast<MemRefType>(launch.getTensors()[index].getType())
        .getElementType();
  };
  // Q, K, V in their format (FP8: e4m3); O in its own (16-bit).
  Type element = elementOfOperand(0), outElement = elementOfOperand(3);
  Format format = formatOf(element);
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
        x = roundTo(format, normal(rng));
    tensors.push_back(std::move(t));
  };
  add("query", element, s.activation(s.seqQ, s.headsQ, s.headDim), true);
  add("key", element, s.keyValue(s.headsKv, s.headDim), true);
  if (risingKeys(seed)) {
    // Key j scaled by 0.5 + 6 j / Skv: scores from about N(0, 0.25) to
    // N(0, 42), the row maximum growing by ~20 (log2) along the sequence.
    // (Paged: j is the key's row within its page.)
    std::vector<float> &keys = tensors.back().data;
    int64_t row = s.headsKv * s.headDim;
    int64_t period = s.pageSize ? s.pageSize : s.seqKv;
    for (size_t i = 0; i < keys.size(); ++i) {
      int64_t j = static_cast<int64_t>(i) / row % period;
      keys[i] = roundTo(format, keys[i] * (0.5f + 6.0f * j / period));
    }
  }
  add("value", element, s.valueShape(), true);
  if (s.pageSize) {
    // The spare pages (after the batches') hold NaN keys and values.
    int64_t spares = s.pages - s.batch * s.maxPages;
    for (GlobalTensor *t : {&tensors[1], &tensors[2]}) {
      size_t spare = t->data.size() / s.pages * spares;
      std::fill(t->data.end() - spare, t->data.end(),
                std::numeric_limits<float>::quiet_NaN());
    }
  }
  add("output", outElement, s.activation(s.seqQ, s.headsQ, s.headDimV), false);
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
  // FP8's dequantization factors [B, Hkv], in [0.5, 2).
  if (s.descale) {
    std::uniform_real_distribution<float> factor(0.5f, 2.0f);
    for (StringRef name : {"q_descale", "k_descale", "v_descale"}) {
      add(name, f32, {s.batch, s.headsKv}, false);
      for (float &x : tensors.back().data)
        x = factor(rng);
    }
  }
  // The tables of packed sequences, as the kernel reads them.
  Type i32 = IntegerType::get(launch.getContext(), 32);
  if (s.varlen) {
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
  // A dense KV cache's tables; a paged cache's (dense or packed).
  if (!s.varlen && s.seqused) {
    add("seqused_k", i32, {s.batch}, false);
    llvm::copy(s.sequsedKv, tensors.back().data.begin());
  }
  if (s.pageSize) {
    add("page_table", i32, {s.batch, s.maxPages}, false);
    llvm::copy(s.pageTable, tensors.back().data.begin());
  }
  // The rotary table of real angles (theta_k = 10000^(-2k / R)) and each
  // query's position: its bottom-right-aligned one, but every 5th past
  // the table's end and every 7th negative (the kernel clamps them).
  if (s.ropeColumns) {
    int64_t half = s.ropeColumns / 2;
    add("cos_sin", f32, {s.ropeRows, s.ropeColumns}, false);
    std::vector<float> &table = tensors.back().data;
    for (int64_t p = 0; p < s.ropeRows; ++p)
      for (int64_t k = 0; k < half; ++k) {
        double angle = p * std::pow(10000.0, -2.0 * k / s.ropeColumns);
        table[p * s.ropeColumns + k] = static_cast<float>(std::cos(angle));
        table[p * s.ropeColumns + half + k] =
            static_cast<float>(std::sin(angle));
      }
    // [B, Sq]; packed sequences' [Tq], a token's entry where its row is.
    add("positions", i32,
        s.varlen ? SmallVector<int64_t, 4>{s.seqQ}
                 : SmallVector<int64_t, 4>{s.batch, s.seqQ},
        false);
    std::vector<float> &positions = tensors.back().data;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0, seqQ = s.sequenceQ(b); i < seqQ; ++i) {
        int64_t entry = s.queryRow(b, i);
        int64_t aligned = std::max<int64_t>(
            i + s.sequenceKv(b) - seqQ + static_cast<int64_t>(seed), 0);
        positions[entry] = entry % 5 == 4   ? s.ropeRows + 3
                           : entry % 7 == 6 ? -2
                                            : aligned;
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
        x = roundTo(formatOf(type), normal(rng));
    }
  }
  return tensors;
}

/// The tensor of operand `name`, or null.
const GlobalTensor *
sim::tensorNamed(const std::vector<GlobalTensor> &tensors, StringRef name) {
  for (const GlobalTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}
