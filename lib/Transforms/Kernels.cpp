//===- Kernels.cpp - compiled kernels in memory ---------------------------===//

#include "fa4/Transforms/Kernels.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Pipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

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

std::optional<int64_t> firstNumber(StringRef text, StringRef pattern) {
  SmallVector<StringRef> groups;
  if (!llvm::Regex(pattern).match(text, &groups))
    return std::nullopt;
  int64_t value;
  if (groups[1].getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Assembles `ptx` for `arch` with `ptxas -v` through temporary files: the
/// cubin's bytes into `cubin`, the log into `log`.
LogicalResult runPtxas(StringRef ptxas, StringRef arch, StringRef ptx,
                       std::string &cubin, std::string &log,
                       PtxasResources &resources) {
  SmallString<128> ptxFile, cubinFile, logFile;
  if (llvm::sys::fs::createTemporaryFile("fa4-kernel", "ptx", ptxFile) ||
      llvm::sys::fs::createTemporaryFile("fa4-kernel", "cubin", cubinFile) ||
      llvm::sys::fs::createTemporaryFile("fa4-ptxas", "log", logFile)) {
    log = "cannot create temporary files for ptxas";
    return failure();
  }
  llvm::FileRemover removePtx(ptxFile), removeCubin(cubinFile),
      removeLog(logFile);
  {
    std::error_code error;
    llvm::raw_fd_ostream os(ptxFile, error);
    if (error) {
      log = "cannot write " + ptxFile.str().str();
      return failure();
    }
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  SmallVector<StringRef> args = {ptxas, archFlag, "-v", ptxFile, "-o",
                                 cubinFile};
  std::optional<StringRef> redirects[] = {std::nullopt, logFile, logFile};
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  if (auto buffer = llvm::MemoryBuffer::getFile(logFile))
    log = (*buffer)->getBuffer().str();
  if (status != 0)
    return failure();
  auto bytes = llvm::MemoryBuffer::getFile(cubinFile, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes) {
    log += "\nptxas wrote no cubin";
    return failure();
  }
  cubin = (*bytes)->getBuffer().str();
  resources.registers = firstNumber(log, "Used ([0-9]+) registers").value_or(0);
  resources.spillStores =
      firstNumber(log, "([0-9]+) bytes spill stores").value_or(0);
  resources.spillLoads =
      firstNumber(log, "([0-9]+) bytes spill loads").value_or(0);
  resources.staticSmem = firstNumber(log, "([0-9]+) bytes smem").value_or(0);
  return success();
}

/// The kernel of `launch`, compiled.
FailureOr<CompiledKernel> collect(LaunchOp launch, StringRef ptxas) {
  DictionaryAttr manifest = *launch.getManifest();
  auto binary = SymbolTable::lookupNearestSymbolFrom<gpu::BinaryOp>(
      launch, launch.getKernel().getRootReference());
  if (!binary)
    return launch.emitOpError()
           << "kernel @" << launch.getKernel().getRootReference().getValue()
           << " has no gpu.binary; run gpu-module-to-binary first";
  auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
    return launch.emitOpError() << "needs the PTX of @" << binary.getName()
                                << " (gpu-module-to-binary{format=isa})";
  // Every entry read here and by the report, checked in one place.
  if (failed(LaunchOp::verifyManifest(
          manifest, launch.getKernel().getLeafReference().getValue(),
          [&] { return launch.emitOpError(); }, /*complete=*/true)))
    return failure();

  CompiledKernel kernel;
  kernel.name = cast<StringAttr>(manifest.get("kernel")).getValue().str();
  kernel.arch = cast<StringAttr>(manifest.get("arch")).getValue().str();
  kernel.ptx = object.getObject().getValue().str();
  kernel.manifest = manifest;
  if (!ptxas.empty()) {
    std::string log;
    PtxasResources resources;
    if (failed(runPtxas(ptxas, kernel.arch, kernel.ptx, kernel.cubin, log,
                        resources)))
      return launch.emitOpError()
             << "ptxas rejected the PTX of " << kernel.name << ":\n"
             << log;
    kernel.ptxas = resources;
  }

  llvm::json::Object document = *toJson(manifest).getAsObject();
  document["files"] = llvm::json::Object{
      {"ptx", kernel.name + ".ptx"},
      {"cubin", kernel.ptxas ? llvm::json::Value(kernel.name + ".cubin")
                             : llvm::json::Value(nullptr)}};
  if (kernel.ptxas)
    document["ptxas"] =
        llvm::json::Object{{"registers", kernel.ptxas->registers},
                           {"spill_store_bytes", kernel.ptxas->spillStores},
                           {"spill_load_bytes", kernel.ptxas->spillLoads},
                           {"static_smem_bytes", kernel.ptxas->staticSmem}};
  llvm::raw_string_ostream os(kernel.manifestJson);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(document)))
     << "\n";
  return kernel;
}

} // namespace

std::string mlir::fa4::findPtxas(StringRef requested) {
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

FailureOr<std::vector<CompiledKernel>>
mlir::fa4::collectKernels(ModuleOp module, StringRef ptxas) {
  std::vector<CompiledKernel> kernels;
  WalkResult result = module.walk([&](LaunchOp launch) {
    if (!launch.getManifest())
      return WalkResult::advance();
    FailureOr<CompiledKernel> kernel = collect(launch, ptxas);
    if (failed(kernel))
      return WalkResult::interrupt();
    kernels.push_back(std::move(*kernel));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return kernels;
}

FailureOr<std::vector<CompiledKernel>>
mlir::fa4::compileKernels(ModuleOp module, const CompileOptions &options) {
  CompileOptions inMemory;
  inMemory.copyOptionValuesFrom(options);
  inMemory.emitDir = "";
  PassManager pm(module.getContext());
  buildCompilePipeline(pm, inMemory);
  if (failed(pm.run(module)))
    return failure();
  return collectKernels(module, findPtxas(options.ptxas));
}
