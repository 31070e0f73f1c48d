//===- EmitKernels.cpp - kernel files, manifests and resource reports -----===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4EMITKERNELS
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Manifest attributes as JSON values.
llvm::json::Value toJson(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dict)
      object[entry.getName().strref()] = toJson(entry.getValue());
    return object;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array values;
    for (Attribute element : array)
      values.push_back(toJson(element));
    return values;
  }
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    // Any width and signedness: what does not fit an int64 is written as
    // text.
    const APInt &value = integer.getValue();
    bool isUnsigned = integer.getType().isUnsignedInteger();
    if (isUnsigned ? value.getActiveBits() <= 63
                   : value.getSignificantBits() <= 64)
      return isUnsigned ? static_cast<int64_t>(value.getZExtValue())
                        : value.getSExtValue();
  }
  if (auto real = dyn_cast<FloatAttr>(attr))
    return real.getValueAsDouble();
  if (auto string = dyn_cast<StringAttr>(attr))
    return string.str();
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// ptxas from the option, the CUDA environment variables, /usr/local/cuda or
/// PATH; empty if none exists.
std::string findPtxas(StringRef requested) {
  if (!requested.empty())
    return requested.str();
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *root = std::getenv(variable)) {
      SmallString<128> path(root);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return path.str().str();
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  return "";
}

/// What `ptxas -v` says about a kernel.
struct PtxasResources {
  int64_t registers = 0, spillStores = 0, spillLoads = 0, staticSmem = 0;
};

std::optional<int64_t> firstNumber(StringRef text, StringRef pattern) {
  SmallVector<StringRef> groups;
  if (!llvm::Regex(pattern).match(text, &groups))
    return std::nullopt;
  int64_t value;
  if (groups[1].getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Assembles `ptx` into `cubin` for `arch`; the ptxas log goes to `log`.
LogicalResult runPtxas(StringRef ptxas, StringRef arch, StringRef ptx,
                       StringRef cubin, std::string &log,
                       PtxasResources &resources) {
  SmallString<128> logFile;
  if (llvm::sys::fs::createTemporaryFile("fa4-ptxas", "log", logFile))
    return failure();
  llvm::FileRemover remover(logFile);
  std::string archFlag = ("-arch=" + arch).str();
  SmallVector<StringRef> args = {ptxas, archFlag, "-v", ptx, "-o", cubin};
  std::optional<StringRef> redirects[] = {std::nullopt, logFile, logFile};
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  if (auto buffer = llvm::MemoryBuffer::getFile(logFile))
    log = (*buffer)->getBuffer().str();
  if (status != 0)
    return failure();
  resources.registers = firstNumber(log, "Used ([0-9]+) registers").value_or(0);
  resources.spillStores =
      firstNumber(log, "([0-9]+) bytes spill stores").value_or(0);
  resources.spillLoads =
      firstNumber(log, "([0-9]+) bytes spill loads").value_or(0);
  resources.staticSmem = firstNumber(log, "([0-9]+) bytes smem").value_or(0);
  return success();
}

LogicalResult writeFile(StringRef path, StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return failure();
  os << contents;
  return success();
}

void printReport(llvm::raw_ostream &os, DictionaryAttr manifest,
                 const std::optional<PtxasResources> &resources,
                 StringRef directory) {
  auto get = [&](StringRef key) { return manifest.get(key); };
  auto integer = [&](StringRef key) {
    return cast<IntegerAttr>(get(key)).getInt();
  };
  StringRef kernel = cast<StringAttr>(get("kernel")).getValue();
  auto block = cast<ArrayAttr>(get("block"));
  auto grid = cast<DictionaryAttr>(get("grid"));
  os << "kernel " << kernel << " ("
     << cast<StringAttr>(get("arch")).getValue() << ")\n";
  os << "  block " << cast<IntegerAttr>(block[0]).getInt()
     << " threads; persistent grid over batch x "
     << cast<IntegerAttr>(grid.get("head_blocks")).getInt()
     << " head blocks x ceil(seq_q / "
     << cast<IntegerAttr>(grid.get("query_rows_per_cta")).getInt()
     << ") tiles\n";
  os << "  roles:";
  for (Attribute roleAttr : cast<ArrayAttr>(get("roles"))) {
    auto role = cast<DictionaryAttr>(roleAttr);
    auto warps = cast<ArrayAttr>(role.get("warps"));
    os << " " << cast<StringAttr>(role.get("name")).getValue() << " [warps "
       << cast<IntegerAttr>(warps[0]).getInt() << "-"
       << cast<IntegerAttr>(warps[1]).getInt() - 1 << ", "
       << cast<IntegerAttr>(role.get("registers")).getInt() << " regs]";
  }
  os << "\n";
  if (resources)
    os << "  ptxas: " << resources->registers << " registers, "
       << resources->spillStores << " bytes spill stores, "
       << resources->spillLoads << " bytes spill loads\n";
  else
    os << "  ptxas: not found, cubin skipped\n";
  os << "  shared memory: " << integer("dynamic_smem_bytes")
     << " bytes dynamic";
  if (resources)
    os << " + " << resources->staticSmem << " bytes static";
  os << "\n  tensor memory: " << integer("tmem_columns") << " columns\n";
  os << "  barriers: " << integer("mbarriers") << " mbarriers, "
     << integer("named_barriers") << " named\n";
  os << "  files: " << directory << "/" << kernel << ".{ptx"
     << (resources ? ",cubin" : "") << ",json}\n";
}

struct FA4EmitKernelsPass
    : public fa4::impl::FA4EmitKernelsBase<FA4EmitKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LaunchOp> launches;
    module.walk([&](LaunchOp op) {
      if (op.getManifest())
        launches.push_back(op);
    });
    if (launches.empty())
      return;
    if (emitDir.empty()) {
      module.emitError() << "fa4-emit-kernels: emit-dir is required";
      return signalPassFailure();
    }
    if (std::error_code error = llvm::sys::fs::create_directories(emitDir)) {
      module.emitError() << "fa4-emit-kernels: cannot create '" << emitDir
                         << "': " << error.message();
      return signalPassFailure();
    }
    std::string ptxasPath = findPtxas(ptxas);

    for (LaunchOp launch : launches)
      if (failed(emit(launch, ptxasPath)))
        return signalPassFailure();
  }

  LogicalResult emit(LaunchOp launch, StringRef ptxasPath) {
    DictionaryAttr manifest = *launch.getManifest();
    auto binary = SymbolTable::lookupNearestSymbolFrom<gpu::BinaryOp>(
        launch, launch.getKernel().getRootReference());
    if (!binary)
      return launch.emitOpError()
             << "kernel @" << launch.getKernel().getRootReference().getValue()
             << " has no gpu.binary; run gpu-module-to-binary first";
    auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      return launch.emitOpError()
             << "needs the PTX of @" << binary.getName()
             << " (gpu-module-to-binary{format=isa})";

    // Every entry read below and by the report, checked in one place.
    if (failed(LaunchOp::verifyManifest(
            manifest, launch.getKernel().getLeafReference().getValue(),
            [&] { return launch.emitOpError(); }, /*complete=*/true)))
      return failure();
    StringRef kernel = cast<StringAttr>(manifest.get("kernel")).getValue();

    SmallString<128> ptx(emitDir), cubin(emitDir), json(emitDir);
    llvm::sys::path::append(ptx, kernel + ".ptx");
    llvm::sys::path::append(cubin, kernel + ".cubin");
    llvm::sys::path::append(json, kernel + ".json");
    if (failed(writeFile(ptx, object.getObject().getValue())))
      return launch.emitOpError() << "cannot write " << ptx;

    std::optional<PtxasResources> resources;
    if (!ptxasPath.empty()) {
      std::string log;
      PtxasResources parsed;
      StringRef arch = cast<StringAttr>(manifest.get("arch")).getValue();
      if (failed(runPtxas(ptxasPath, arch, ptx, cubin, log, parsed)))
        return launch.emitOpError() << "ptxas rejected " << ptx << ":\n"
                                    << log;
      resources = parsed;
    }

    llvm::json::Object document = *toJson(manifest).getAsObject();
    document["files"] = llvm::json::Object{
        {"ptx", (kernel + ".ptx").str()},
        {"cubin", resources ? llvm::json::Value((kernel + ".cubin").str())
                            : llvm::json::Value(nullptr)}};
    if (resources)
      document["ptxas"] = llvm::json::Object{
          {"registers", resources->registers},
          {"spill_store_bytes", resources->spillStores},
          {"spill_load_bytes", resources->spillLoads},
          {"static_smem_bytes", resources->staticSmem}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(document)))
       << "\n";
    if (failed(writeFile(json, text)))
      return launch.emitOpError() << "cannot write " << json;

    if (report)
      printReport(llvm::outs(), manifest, resources, emitDir);
    return success();
  }
};
} // namespace
