//===- VerifyLLVMIR.cpp - refuse kernels the NVPTX backend cannot take ----===//
//
// gpu-module-to-binary translates each kernel module to LLVM IR and hands it
// to the NVPTX backend without running LLVM's verifier, and the LLVM
// dialect's op verifiers do not check everything LLVM IR requires (an
// fptrunc between vectors of different lengths is accepted). Invalid IR then
// ends in a backend fatal error, and a value too wide for any register file
// in a translation that does not finish. A #nvvm.target the backend does not
// know (a chip or PTX version it only warns about) makes it compile for a
// default PTX version without the instructions fa4 emits, and instruction
// selection ends the process. This pass refuses all three with a
// diagnostic, before the backend sees them.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTargetMC();

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4VERIFYLLVMIR
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// The first line of a verifier report and the instruction it names.
std::string firstComplaint(StringRef report) {
  SmallVector<StringRef, 3> lines;
  report.trim().split(lines, '\n', /*MaxSplit=*/2);
  std::string text = lines[0].str();
  if (lines.size() > 1)
    text += ": " + lines[1].trim().str();
  return text;
}

/// Translates `module` as gpu-module-to-binary will and checks the result
/// with LLVM's verifier and LLVM's IR parser: the verifier does not check
/// everything the parser does (cast operand and result types), and the
/// backend relies on both.
LogicalResult verifyTranslation(gpu::GPUModuleOp module) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(
      module, context, module.getName(), /*disableVerification=*/true);
  if (!llvmModule)
    return module.emitOpError()
           << "does not translate to LLVM IR (lower every op to the LLVM and "
              "NVVM dialects first)";
  auto refuse = [&](const std::string &why) {
    return module.emitOpError() << "translates to invalid LLVM IR, which the "
                                   "NVPTX backend cannot compile: "
                                << why;
  };
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(*llvmModule, &os))
    return refuse(firstComplaint(report));
  std::string text;
  llvm::raw_string_ostream printer(text);
  llvmModule->print(printer, /*AAW=*/nullptr);
  llvm::LLVMContext reparsed;
  llvm::SMDiagnostic error;
  if (!llvm::parseAssemblyString(text, error, reparsed))
    return refuse(error.getMessage().str() + ": " +
                  StringRef(error.getLineContents()).trim().str());
  return success();
}

constexpr StringLiteral kTriple = "nvptx64-nvidia-cuda";

/// The NVPTX backend's description of `chip`, whose feature table names
/// the PTX versions the backend knows.
std::unique_ptr<llvm::MCSubtargetInfo> nvptxSubtarget(StringRef chip) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
  });
  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, chip, ""));
}

/// The first PTX version with `arch`'s instructions (PTX ISA 8.0 added
/// sm_90a, 8.6 sm_100a); the backend refuses an older one with a fatal
/// error, and its feature table does not say which.
unsigned minimumPtxVersion(Arch arch) {
  return arch == Arch::sm_90a ? 80 : 86;
}

/// A kernel module's #nvvm.target must be one the NVPTX backend compiles
/// fa4's kernels for: the CUDA triple, a chip fa4 targets, no features but a
/// PTX version the backend knows and the chip supports (the attribute's
/// own verifier checks its optimization level).
LogicalResult verifyTarget(gpu::GPUModuleOp module,
                           NVVM::NVVMTargetAttr target) {
  auto refuse = [&] {
    return module.emitOpError() << "targets " << target << ", ";
  };
  if (target.getTriple() != kTriple)
    return refuse() << "but fa4's kernels compile for the \"" << kTriple
                    << "\" triple";
  StringRef chip = target.getChip();
  std::optional<Arch> arch = symbolizeArch(chip);
  if (!arch)
    return refuse() << "but fa4's kernels compile for sm_100a or sm_90a";
  StringRef features = target.getFeatures();
  if (features.empty())
    return success();
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget = nvptxSubtarget(chip);
  if (!subtarget)
    return refuse() << "but this LLVM has no NVPTX backend";
  StringRef version = features;
  unsigned number;
  if (!version.consume_front("+ptx") || version.getAsInteger(10, number) ||
      llvm::none_of(subtarget->getAllProcessorFeatures(),
                    [&](const llvm::SubtargetFeatureKV &feature) {
                      return features.drop_front() == StringRef(feature.Key);
                    }))
    return refuse() << "whose features are not one PTX version the NVPTX "
                       "backend knows (\"+ptxNN\")";
  unsigned minimum = minimumPtxVersion(*arch);
  if (number < minimum)
    return refuse() << "but " << chip << " needs PTX " << minimum / 10 << "."
                    << minimum % 10 << " or later";
  return success();
}

LogicalResult verifyTargets(gpu::GPUModuleOp module) {
  std::optional<ArrayAttr> targets = module.getTargets();
  if (!targets || !*targets)
    return success();
  for (Attribute target : *targets)
    if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target);
        nvvm && failed(verifyTarget(module, nvvm)))
      return failure();
  return success();
}

struct FA4VerifyLLVMIRPass
    : public fa4::impl::FA4VerifyLLVMIRBase<FA4VerifyLLVMIRPass> {
  void runOnOperation() override {
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>())
      if (failed(verifyTargets(module)) ||
          failed(verifyRegisterValues(module)) ||
          failed(verifyTranslation(module)))
        return signalPassFailure();
  }
};

} // namespace
