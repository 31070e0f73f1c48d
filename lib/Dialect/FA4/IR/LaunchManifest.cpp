//===- LaunchManifest.cpp - the structure of fa4.launch manifests ---------===//
//
// The launch manifest is plain data that fa4-specialize writes from the
// attention's shape and plan, that fa4-assemble-manifest completes with the
// kernel facts later passes record on the kernel, and that fa4-emit-kernels,
// fa4-sim and the runtimes read. Its structure is checked here, in one place:
// the verifier of fa4.launch checks every entry present (kind, nested fields,
// ranges), the dialect's attribute verifier checks the kernel facts by the
// same rules, and fa4-emit-kernels also asks that the entries it reads be
// there.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cfloat>
#include <limits>

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Checks manifest values; every diagnostic names the entry by its path
/// (`roles[1].warps`).
class ManifestChecker {
public:
  /// With `kernelFact`, entries are named as the kernel attributes that
  /// hold them (`fa4.mbarriers`).
  ManifestChecker(function_ref<InFlightDiagnostic()> emitError,
                  bool kernelFact = false)
      : emitError(emitError), kernelFact(kernelFact) {}

  InFlightDiagnostic error(const Twine &path) {
    if (kernelFact)
      return emitError() << "'fa4." << path << "' ";
    return emitError() << "manifest entry '" << path << "' ";
  }

  /// A signless or index integer within int64, in [min, max].
  FailureOr<int64_t> integer(Attribute value, const Twine &path, int64_t min,
                             int64_t max) {
    auto attr = dyn_cast_or_null<IntegerAttr>(value);
    if (!attr || !(attr.getType().isSignlessInteger() ||
                   attr.getType().isIndex()) ||
        attr.getValue().getSignificantBits() > 64)
      return error(path) << "must be an integer, got " << value;
    int64_t result = attr.getValue().getSExtValue();
    if (result < min || result > max)
      return error(path) << "must be in [" << min << ", " << max << "], got "
                         << result;
    return result;
  }

  FailureOr<StringRef> string(Attribute value, const Twine &path) {
    auto attr = dyn_cast_or_null<StringAttr>(value);
    if (!attr || attr.getValue().empty())
      return error(path) << "must be a non-empty string, got " << value;
    return attr.getValue();
  }

  FailureOr<ArrayAttr> array(Attribute value, const Twine &path,
                             std::optional<size_t> size = std::nullopt) {
    auto attr = dyn_cast_or_null<ArrayAttr>(value);
    if (!attr || (size && attr.size() != *size)) {
      InFlightDiagnostic diag = error(path) << "must be an array";
      if (size)
        diag << " of " << *size << " elements";
      return diag << ", got " << value;
    }
    return attr;
  }

  FailureOr<DictionaryAttr> dictionary(Attribute value, const Twine &path) {
    auto attr = dyn_cast_or_null<DictionaryAttr>(value);
    if (!attr)
      return error(path) << "must be a dictionary, got " << value;
    return attr;
  }

  /// Field `key` of `dict` at `path`, which must be present.
  FailureOr<Attribute> field(DictionaryAttr dict, const Twine &path,
                             StringRef key) {
    if (Attribute value = dict.get(key))
      return value;
    return error(path) << "needs '" << key << "'";
  }

  /// `count` integers in [min, max].
  FailureOr<SmallVector<int64_t>> integers(Attribute value, const Twine &path,
                                           size_t count, int64_t min,
                                           int64_t max) {
    FailureOr<ArrayAttr> values = array(value, path, count);
    if (failed(values))
      return failure();
    SmallVector<int64_t> result;
    for (auto [index, element] : llvm::enumerate(*values)) {
      FailureOr<int64_t> v =
          integer(element, path + "[" + Twine(index) + "]", min, max);
      if (failed(v))
        return failure();
      result.push_back(*v);
    }
    return result;
  }

  /// Every element of `value` is a dictionary with the non-empty string
  /// fields `keys`.
  LogicalResult dictionaries(Attribute value, const Twine &path,
                             ArrayRef<StringRef> keys) {
    FailureOr<ArrayAttr> values = array(value, path);
    if (failed(values))
      return failure();
    for (auto [index, element] : llvm::enumerate(*values)) {
      std::string at = (path + "[" + Twine(index) + "]").str();
      FailureOr<DictionaryAttr> dict = dictionary(element, at);
      if (failed(dict))
        return failure();
      for (StringRef key : keys) {
        FailureOr<Attribute> entry = field(*dict, at, key);
        if (failed(entry) || failed(string(*entry, at + "." + key)))
          return failure();
      }
    }
    return success();
  }

private:
  function_ref<InFlightDiagnostic()> emitError;
  bool kernelFact;
};

/// The entries fa4-emit-kernels reads and the pass that sets each.
struct RequiredEntry {
  StringLiteral key, setBy;
};
constexpr RequiredEntry kRequired[] = {
    {"kernel", "fa4-specialize"},
    {"arch", "fa4-specialize"},
    {"block", "fa4-specialize"},
    {"grid", "fa4-specialize"},
    {"roles", "fa4-assemble-manifest"},
    {"named_barriers", "fa4-assemble-manifest"},
    {"mbarriers", "fa4-assemble-manifest"},
    {"dynamic_smem_bytes", "fa4-assemble-manifest"},
    {"tmem_columns", "fa4-assemble-manifest"},
};

/// The kernel facts and the pass that records each on the kernel.
const std::pair<StringLiteral, StringLiteral> kKernelFacts[] = {
    {"tmem_columns", "fa4-allocate-tmem"},
    {"dynamic_smem_bytes", "fa4-allocate-smem"},
    {"mbarriers", "fa4-insert-barriers"},
    {"named_barriers", "fa4-insert-barriers"},
    {"roles", "fa4-lower-warp-specialize"},
};

constexpr int64_t kMaxThreads = 1024;
/// Hardware named barriers 1 to 15 (0 is gpu.barrier's).
constexpr int64_t kMaxNamedBarriers = 15;
/// mbarriers (8 bytes each) live in the shared memory the plan reserves.
constexpr int64_t kMaxMbarriers = limits::kSmemReservedBytes / 8;
/// TMA boxes have at most 256 elements per dimension.
constexpr int64_t kMaxBoxSize = 256;

} // namespace

/// Checks every entry of `manifest` present.
static LogicalResult verifyEntries(DictionaryAttr manifest,
                                   StringRef kernelName,
                                   ManifestChecker &check) {

  // Names a file and the kernel symbol: the launch's kernel.
  if (Attribute value = manifest.get("kernel")) {
    FailureOr<StringRef> kernel = check.string(value, "kernel");
    if (failed(kernel))
      return failure();
    // It names the kernel's files in fa4-emit-kernels' directory.
    auto isIdentifierChar = [](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '$';
    };
    if (llvm::isDigit(kernel->front()) ||
        !llvm::all_of(*kernel, isIdentifierChar))
      return check.error("kernel")
             << "must be a PTX identifier (letters, digits, '_' and '$', not "
                "starting with a digit), got \""
             << *kernel << "\"";
    if (*kernel != kernelName)
      return check.error("kernel") << "must name the launched kernel @"
                                   << kernelName << ", got \"" << *kernel
                                   << "\"";
  }
  std::optional<Arch> arch;
  if (Attribute value = manifest.get("arch")) {
    FailureOr<StringRef> name = check.string(value, "arch");
    if (failed(name))
      return failure();
    arch = symbolizeArch(*name);
    if (!arch)
      return check.error("arch") << "must be sm_100a or sm_90a, got \""
                                 << *name << "\"";
  }
  if (Attribute value = manifest.get("plan")) {
    auto plan = dyn_cast<PlanAttr>(value);
    if (!plan)
      return check.error("plan") << "must be a #fa4.plan, got " << value;
    if (arch && plan.getArch() != *arch)
      return check.error("plan") << "is for " << stringifyArch(plan.getArch())
                                 << " but 'arch' is "
                                 << stringifyArch(*arch);
  }

  // Threads: whole warps, at most 1024 in the CTA.
  std::optional<int64_t> warps;
  if (Attribute value = manifest.get("block")) {
    FailureOr<SmallVector<int64_t>> block =
        check.integers(value, "block", 3, 1, kMaxThreads);
    if (failed(block))
      return failure();
    int64_t threads = (*block)[0] * (*block)[1] * (*block)[2];
    if ((*block)[0] % 32 != 0 || threads > kMaxThreads)
      return check.error("block")
             << "must be whole warps in x and at most " << kMaxThreads
             << " threads, got [" << (*block)[0] << ", " << (*block)[1]
             << ", " << (*block)[2] << "]";
    warps = (*block)[0] / 32;
  }
  if (Attribute value = manifest.get("cluster"))
    if (failed(check.integers(value, "cluster", 3, 1, 16)))
      return failure();

  if (Attribute value = manifest.get("grid")) {
    FailureOr<DictionaryAttr> grid = check.dictionary(value, "grid");
    if (failed(grid))
      return failure();
    FailureOr<Attribute> rule = check.field(*grid, "grid", "rule");
    if (failed(rule))
      return failure();
    FailureOr<StringRef> ruleName = check.string(*rule, "grid.rule");
    if (failed(ruleName))
      return failure();
    if (*ruleName != "persistent" && *ruleName != "persistent_varlen")
      return check.error("grid.rule")
             << "must be \"persistent\" or \"persistent_varlen\", got \""
             << *ruleName << "\"";
    for (StringRef key : {"head_blocks", "query_rows_per_cta"}) {
      FailureOr<Attribute> entry = check.field(*grid, "grid", key);
      if (failed(entry) ||
          failed(check.integer(*entry, "grid." + key, 1,
                               std::numeric_limits<int32_t>::max())))
        return failure();
    }
  }

  // Split-KV: the splits and the workspace per work tile.
  if (Attribute value = manifest.get("split_kv")) {
    FailureOr<DictionaryAttr> split = check.dictionary(value, "split_kv");
    if (failed(split))
      return failure();
    struct Field {
      StringRef key;
      int64_t min, max;
    };
    // A cluster split ([splits, 1, 1] clusters) has no workspace: its
    // sizes are 0; a workspace split's are positive.
    auto cluster = dyn_cast_or_null<ArrayAttr>(manifest.get("cluster"));
    int64_t clusterCtas = 1;
    if (cluster && !cluster.empty())
      if (auto first = dyn_cast<IntegerAttr>(cluster[0]))
        clusterCtas = first.getInt();
    bool workspace = clusterCtas == 1;
    int64_t least = workspace ? 1 : 0;
    for (Field field :
         {Field{"splits", workspace ? 2 : clusterCtas,
                workspace ? limits::kMaxKvSplits : clusterCtas},
          Field{"partial_words_per_tile", least,
                workspace ? std::numeric_limits<int32_t>::max() : 0},
          // One counter per Q stage: up to three (sm_90a's consumers).
          Field{"counters_per_tile", least, workspace ? 3 : 0}}) {
      FailureOr<Attribute> entry = check.field(*split, "split_kv", field.key);
      if (failed(entry) || failed(check.integer(*entry, "split_kv." + field.key,
                                                field.min, field.max)))
        return failure();
    }
  }

  // The rotary embedding: Q's rotated columns [start, start + columns),
  // in whole 16-byte pieces, and whether O's are rotated back.
  if (Attribute value = manifest.get("rope")) {
    FailureOr<DictionaryAttr> rope = check.dictionary(value, "rope");
    if (failed(rope))
      return failure();
    for (auto [key, least] :
         {std::pair<StringRef, int64_t>{"start", 0}, {"columns", 8}}) {
      FailureOr<Attribute> entry = check.field(*rope, "rope", key);
      if (failed(entry))
        return failure();
      FailureOr<int64_t> number =
          check.integer(*entry, "rope." + key, least, limits::kMaxHeadDim);
      if (failed(number))
        return failure();
      if (*number % 8 != 0)
        return check.error("rope." + key)
               << "must be a multiple of 8, got " << *number;
    }
    FailureOr<Attribute> output = check.field(*rope, "rope", "output");
    if (failed(output))
      return failure();
    if (!isa<BoolAttr>(*output))
      return check.error("rope.output") << "must be a boolean, got " << *output;
  }

  // Roles: named warp ranges of the block with a register budget.
  if (Attribute value = manifest.get("roles")) {
    FailureOr<ArrayAttr> roles = check.array(value, "roles");
    if (failed(roles))
      return failure();
    for (auto [index, roleAttr] : llvm::enumerate(*roles)) {
      std::string at = ("roles[" + Twine(index) + "]").str();
      FailureOr<DictionaryAttr> role = check.dictionary(roleAttr, at);
      if (failed(role))
        return failure();
      FailureOr<Attribute> name = check.field(*role, at, "name");
      if (failed(name) || failed(check.string(*name, at + ".name")))
        return failure();
      FailureOr<Attribute> range = check.field(*role, at, "warps");
      if (failed(range))
        return failure();
      FailureOr<SmallVector<int64_t>> bounds = check.integers(
          *range, at + ".warps", 2, 0, warps.value_or(kMaxThreads / 32));
      if (failed(bounds))
        return failure();
      if ((*bounds)[0] >= (*bounds)[1])
        return check.error(at + ".warps")
               << "must be a non-empty range [begin, end), got ["
               << (*bounds)[0] << ", " << (*bounds)[1] << ")";
      FailureOr<Attribute> registers = check.field(*role, at, "registers");
      if (failed(registers))
        return failure();
      FailureOr<int64_t> budget =
          check.integer(*registers, at + ".registers", limits::kMinRegisters,
                        limits::kMaxRegisters);
      if (failed(budget))
        return failure();
      if (*budget % 8 != 0)
        return check.error(at + ".registers")
               << "must be a multiple of 8, got " << *budget;
    }
  }

  // Resources of one CTA.
  struct Count {
    StringRef key;
    int64_t max;
  };
  for (Count count : {Count{"mbarriers", kMaxMbarriers},
                      Count{"named_barriers", kMaxNamedBarriers},
                      Count{"dynamic_smem_bytes", limits::kSmemBytes},
                      Count{"tmem_columns", limits::kTmemColumns}})
    if (Attribute value = manifest.get(count.key))
      if (failed(check.integer(value, count.key, 0, count.max)))
        return failure();
  if (Attribute value = manifest.get("tmem_columns")) {
    int64_t columns = cast<IntegerAttr>(value).getInt();
    if (columns != 0 && (columns < 32 || !llvm::isPowerOf2_64(columns)))
      return check.error("tmem_columns")
             << "must be 0 or a power of two in [32, " << limits::kTmemColumns
             << "], got " << columns;
  }

  // What the runtimes read to build the arguments.
  if (Attribute value = manifest.get("params"))
    if (failed(check.dictionaries(value, "params", {"name", "kind", "source"})))
      return failure();
  if (Attribute value = manifest.get("operands")) {
    if (failed(check.dictionaries(value, "operands", {"name", "element"})))
      return failure();
    for (auto [index, operand] : llvm::enumerate(cast<ArrayAttr>(value))) {
      std::string at = ("operands[" + Twine(index) + "]").str();
      FailureOr<Attribute> shape =
          check.field(cast<DictionaryAttr>(operand), at, "shape");
      if (failed(shape) || failed(check.array(*shape, at + ".shape")))
        return failure();
      for (auto [d, size] : llvm::enumerate(cast<ArrayAttr>(*shape)))
        if (failed(check.integer(size, at + ".shape[" + Twine(d) + "]", -1,
                                 std::numeric_limits<int64_t>::max())))
          return failure();
    }
  }
  if (Attribute value = manifest.get("tensor_maps")) {
    if (failed(check.dictionaries(value, "tensor_maps",
                                  {"operand", "element", "swizzle"})))
      return failure();
    for (auto [index, mapAttr] : llvm::enumerate(cast<ArrayAttr>(value))) {
      auto map = cast<DictionaryAttr>(mapAttr);
      std::string at = ("tensor_maps[" + Twine(index) + "]").str();
      FailureOr<Attribute> operand = check.field(map, at, "operand_index");
      if (failed(operand) ||
          failed(check.integer(*operand, at + ".operand_index", 0, 4)))
        return failure();
      FailureOr<Attribute> box = check.field(map, at, "box");
      if (failed(box) ||
          failed(check.integers(*box, at + ".box", 4, 1, kMaxBoxSize)))
        return failure();
      if (Attribute varlen = map.get("varlen"); varlen && !isa<BoolAttr>(varlen))
        return check.error(at + ".varlen")
               << "must be a boolean, got " << varlen;
    }
  }
  for (StringRef key : {"causal", "programmatic_launch"})
    if (Attribute value = manifest.get(key); value && !isa<BoolAttr>(value))
      return check.error(key) << "must be a boolean, got " << value;
  for (StringRef key : {"scale", "scale_log2"})
    if (Attribute value = manifest.get(key)) {
      auto real = dyn_cast<FloatAttr>(value);
      double v = real ? real.getValueAsDouble() : 0.0;
      if (!real || !(v > 0.0) || !(v <= FLT_MAX))
        return check.error(key)
               << "must be a positive float within f32, got " << value;
    }
  return success();
}

LogicalResult LaunchOp::verifyManifest(
    DictionaryAttr manifest, StringRef kernelName,
    function_ref<InFlightDiagnostic()> emitError, bool complete) {
  if (complete)
    for (const RequiredEntry &entry : kRequired)
      if (!manifest.get(entry.key))
        return emitError() << "manifest needs '" << entry.key << "' (set by "
                           << entry.setBy << ")";
  ManifestChecker check(emitError);
  return verifyEntries(manifest, kernelName, check);
}

ArrayRef<std::pair<StringLiteral, StringLiteral>> LaunchOp::getKernelFacts() {
  return kKernelFacts;
}

LogicalResult
LaunchOp::verifyKernelFact(StringRef key, Attribute value,
                           function_ref<InFlightDiagnostic()> emitError) {
  ManifestChecker check(emitError, /*kernelFact=*/true);
  Builder b(value.getContext());
  return verifyEntries(b.getDictionaryAttr(b.getNamedAttr(key, value)),
                       /*kernelName=*/"", check);
}

LogicalResult LaunchOp::verify() {
  if (failed(verifyScoreModifiers(*this, getScoreMod(), getMaskMod(),
                                  getCaptures().getTypes())))
    return failure();
  std::optional<DictionaryAttr> manifest = getManifest();
  if (!manifest)
    return success();
  if (failed(verifyManifest(*manifest,
                            getKernel().getLeafReference().getValue(),
                            [&] { return emitOpError(); },
                            /*complete=*/false)))
    return failure();
  // The plan's head dims are the operands' (its tiles, boxes and MMA shapes
  // were built for them): query and key Dqk, value and output Dv.
  auto plan = dyn_cast_or_null<PlanAttr>(manifest->get("plan"));
  if (!plan || getTensors().size() < 4)
    return success();
  int64_t headDims[] = {plan.getHeadDim(), plan.getHeadDim(),
                        plan.getValueHeadDim(), plan.getValueHeadDim()};
  for (auto [index, headDim] : llvm::enumerate(headDims)) {
    auto type = cast<MemRefType>(getTensors()[index].getType());
    if (type.getRank() == 0 || type.isDynamicDim(type.getRank() - 1))
      continue;
    int64_t size = type.getShape().back();
    if (size != headDim)
      return emitOpError() << "manifest plan is for head dim " << headDim
                           << " but the " << getOperandName(index)
                           << " operand has head dim " << size;
  }
  return success();
}
