//===- Simulator.cpp - fa4-sim host side ----------------------------------===//
//
// What the runtime does on a real GPU, done for the simulated one: it reads
// the launch manifest, allocates the operands of the fa4.launch for the
// problem shape, fills them with seeded random values, builds the TMA tensor
// maps and kernel arguments, and launches the persistent grid (CTA after
// CTA: they share nothing but global memory). Then it compares O and LSE
// with a float64 reference of the same attention (ProblemShape.h: the
// problem and its operands; Reference.h: the reference and the verdict).
//
//===----------------------------------------------------------------------===//

#include "fa4/Simulator/Simulator.h"
#include "Interpreter.h"
#include "ProblemShape.h"
#include "Reference.h"
#include "Trace.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

double mlir::fa4::sim::outputErrorBound(StringRef dtype) {
  // Four unit roundoffs of the output type: O and P are rounded to it once
  // each, the exp2 polynomial adds < 1e-4 and the f32 accumulation less.
  return dtype == "bf16" ? 4 * 0x1p-8 : 4 * 0x1p-11;
}
/// The launch operand a manifest source names, or -1.
static int64_t operandIndex(LaunchOp launch, StringRef name) {
  for (unsigned i = 0; !launch.getOperandName(i).empty(); ++i)
    if (name == launch.getOperandName(i))
      return i;
  return -1;
}

/// The launch: tensor maps and arguments from the manifest's params.
static FailureOr<Launch> buildLaunch(LaunchOp launch, gpu::GPUFuncOp kernel,
                                     const Shape &shape,
                                     std::vector<GlobalTensor> &tensors,
                                     unsigned ctas, raw_ostream &os) {
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
  // Thread-block clusters: [n, 1, 1], the grid whole clusters.
  if (auto cluster = manifest.getAs<ArrayAttr>("cluster")) {
    auto extent = [&](unsigned i) {
      auto value = i < cluster.size() ? dyn_cast<IntegerAttr>(cluster[i])
                                      : IntegerAttr();
      return value ? value.getInt() : int64_t(0);
    };
    if (cluster.size() != 3 || extent(0) < 1 || extent(0) > 16 ||
        extent(1) != 1 || extent(2) != 1)
      return fail("the cluster must be [n, 1, 1] with n in [1, 16]");
    result.cluster = extent(0);
  }
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
  int64_t tiles =
      headBlocks.getInt() *
      (shape.varlen ? queryBlocks + shape.batch : shape.batch * queryBlocks);
  // Split-KV: the units are (tile, split); the workspace holds each work
  // tile's partial rows (left NaN: a row read before a split wrote it
  // shows) and its counters (zeroed once, as the runtime allocates them;
  // the kernel leaves them 0).
  int64_t splits = 1;
  bool workspace = false;
  if (auto splitKv = manifest.getAs<DictionaryAttr>("split_kv")) {
    auto count = splitKv.getAs<IntegerAttr>("splits");
    auto words = splitKv.getAs<IntegerAttr>("partial_words_per_tile");
    auto counters = splitKv.getAs<IntegerAttr>("counters_per_tile");
    if (!count || !words || !counters || shape.varlen)
      return fail("split_kv needs splits, partial_words_per_tile and "
                  "counters_per_tile, and a dense batch");
    splits = count.getInt();
    // A cluster split combines in shared memory: no workspace.
    workspace =
        words.getInt() != 0 || counters.getInt() != 0 || result.cluster == 1;
    Builder b(kernel.getContext());
    if (workspace) {
      tensors.push_back(GlobalTensor{
          "split_partials",
          b.getF32Type(),
          {tiles * words.getInt()},
          std::vector<float>(tiles * words.getInt(),
                             std::numeric_limits<float>::quiet_NaN())});
      tensors.push_back(
          GlobalTensor{"split_counters",
                       b.getI32Type(),
                       {tiles * counters.getInt()},
                       std::vector<float>(tiles * counters.getInt(), 0.0f)});
    }
  }
  result.grid = std::max<int64_t>(1, std::min<int64_t>(tiles * splits, ctas));
  // Whole clusters, as a runtime rounds the persistent grid.
  result.grid =
      std::max(result.cluster, result.grid / result.cluster * result.cluster);

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
    if (tensorMap.tensor >= tensors.size())
      return fail("a tensor map names an operand the launch does not have");
    int64_t elementBytes =
        formatBytes(formatOf(tensors[tensorMap.tensor].element));
    if (tensorMap.box[0] * elementBytes != 128)
      return fail("a 128B-swizzled box must have 128 bytes innermost");
    // The dimensions and strides the runtime encodes: the tensor's, or for
    // a packed [T, H, D] tensor (1, T rows, H, D).
    // Packed sequences over a paged cache: K's and V's maps are the
    // cache's [pages, P, H, D].
    ArrayRef<int64_t> dims = tensors[tensorMap.tensor].shape;
    bool packed =
        shape.varlen &&
        !(shape.pageSize && (tensorMap.tensor == 1 || tensorMap.tensor == 2));
    auto varlen = map.getAs<BoolAttr>("varlen");
    if ((varlen && varlen.getValue()) != packed)
      return fail("a tensor map's varlen flag does not match the operands");
    if (dims.size() != (packed ? 3u : 4u))
      return fail("a tensor map's operand is not an activation tensor");
    int64_t stride = 1;
    for (int64_t d : llvm::reverse(dims)) {
      tensorMap.dims.push_back(d);
      tensorMap.strides.push_back(stride);
      stride *= d;
    }
    if (packed) {
      tensorMap.dims.push_back(1);
      tensorMap.strides.push_back(stride);
    }
    // Key-major (FP8 V): the dimensions (S, H, D, B) of the [B, S, H, D]
    // tensor, its keys innermost (packed: (T, H, D, 1)).
    auto keyMajor = map.getAs<BoolAttr>("key_major");
    if (keyMajor && keyMajor.getValue()) {
      std::swap(tensorMap.dims[0], tensorMap.dims[2]);
      std::swap(tensorMap.strides[0], tensorMap.strides[2]);
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
    } else if (kind == "pointer" && workspace &&
               (source == "workspace.partials" ||
                source == "workspace.counters")) {
      argument.kind = Argument::Kind::pointer;
      argument.index =
          tensors.size() - (source == "workspace.partials" ? 2 : 1);
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
      Schedule schedule{seed, options.maxSteps, n == 0 ? trace.get() : nullptr};
      for (CtaOutcome &outcome : runGrid(*run, schedule)) {
        steps += outcome.steps;
        errors.insert(errors.end(), outcome.errors.begin(),
                      outcome.errors.end());
        for (RaceReport &race : outcome.races)
          if (racingOps.insert(race.ops).second)
            races.push_back(std::move(race.text));
      }

      // Split-KV: the last split of every tile set its counters back to 0.
      if (errors.empty() && !tensors.empty() &&
          tensors.back().name == "split_counters") {
        const GlobalTensor &counters = tensors.back();
        for (auto [i, value] : llvm::enumerate(counters.data))
          if (value != 0.0f) {
            errors.push_back(llvm::formatv(
                "split-KV counter {0} is {1} after the launch, not 0", i,
                value));
            break;
          }
      }
      std::string numbers;
      if (errors.empty()) {
        Reference ref = reference(tensors, *shape, scale.getValueAsDouble());
        if (!ref.error.empty()) {
          os << "error: " << ref.error << "\n";
          return failure();
        }
        numbers = compareWithReference(tensors, *shape, ref, bound, errors);
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
         << " Hq=" << shape->headsQ << " Hkv=" << shape->headsKv
         << " D=" << shape->headDim;
      if (shape->headDimV != shape->headDim)
        os << " Dv=" << shape->headDimV;
      os << " " << shape->dtype << (shape->causal ? " causal" : "");
      if (shape->windowLeft >= 0 || (shape->windowRight >= 0 && !shape->causal))
        os << " window [" << shape->windowLeft << ", " << shape->windowRight
           << "]";
      if (shape->softcap)
        os << " softcap " << llvm::format("%g", *shape->softcap);
      if (shape->sink)
        os << " sink";
      if (shape->varlen)
        os << " varlen";
      if (shape->seqused)
        os << " seqused_k";
      if (shape->pageSize)
        os << " paged " << shape->maxPages << "x" << shape->pageSize;
      if (shape->ropeColumns)
        os << " rope [" << shape->ropeStart << ", "
           << shape->ropeStart + shape->ropeColumns << ")"
           << (shape->ropeOutput ? " output" : "");
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
