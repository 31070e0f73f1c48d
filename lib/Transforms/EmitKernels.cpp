//===- EmitKernels.cpp - kernel files, manifests and resource reports -----===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Kernels.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4EMITKERNELS
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

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
  int64_t headBlocks = cast<IntegerAttr>(grid.get("head_blocks")).getInt();
  int64_t rows = cast<IntegerAttr>(grid.get("query_rows_per_cta")).getInt();
  os << "  block " << cast<IntegerAttr>(block[0]).getInt() << " threads; ";
  if (cast<StringAttr>(grid.get("rule")).getValue() == "persistent_varlen")
    os << "persistent grid over each packed sequence's " << headBlocks
       << " head blocks x ceil(its seq_q / " << rows << ") tiles\n";
  else
    os << "persistent grid over batch x " << headBlocks
       << " head blocks x ceil(seq_q / " << rows << ") tiles\n";
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
    bool anyLaunch = false;
    module.walk([&](LaunchOp op) { anyLaunch |= op.getManifest().has_value(); });
    if (!anyLaunch)
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
    FailureOr<std::vector<CompiledKernel>> kernels =
        collectKernels(module, findPtxas(ptxas));
    if (failed(kernels))
      return signalPassFailure();
    for (const CompiledKernel &kernel : *kernels)
      if (failed(write(module, kernel)))
        return signalPassFailure();
  }

  /// `<kernel>.ptx`, `.cubin` (with ptxas) and `.json` in the emit
  /// directory, and the report.
  LogicalResult write(ModuleOp module, const CompiledKernel &kernel) {
    auto file = [&](StringRef extension, StringRef contents) {
      SmallString<128> path(emitDir);
      llvm::sys::path::append(path, kernel.name + extension);
      if (succeeded(writeFile(path, contents)))
        return success();
      module.emitError() << "fa4-emit-kernels: cannot write " << path;
      return failure();
    };
    if (failed(file(".ptx", kernel.ptx)) ||
        (kernel.ptxas && failed(file(".cubin", kernel.cubin))) ||
        failed(file(".json", kernel.manifestJson)))
      return failure();
    if (report)
      printReport(llvm::outs(), kernel.manifest, kernel.ptxas, emitDir);
    return success();
  }
};
} // namespace
