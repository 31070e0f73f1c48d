//===- VerifyLLVMIR.cpp - refuse kernels the NVPTX backend cannot take ----===//
//
// gpu-module-to-binary translates each kernel module to LLVM IR and hands it
// to the NVPTX backend without running LLVM's verifier, and the LLVM
// dialect's op verifiers do not check everything LLVM IR requires (an
// fptrunc between vectors of different lengths is accepted). Invalid IR then
// ends in a backend fatal error, and a value too wide for any register file
// in a translation that does not finish. This pass refuses both with a
// diagnostic, before the backend sees them.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Support/SourceMgr.h"

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

struct FA4VerifyLLVMIRPass
    : public fa4::impl::FA4VerifyLLVMIRBase<FA4VerifyLLVMIRPass> {
  void runOnOperation() override {
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>())
      if (failed(verifyRegisterValues(module)) ||
          failed(verifyTranslation(module)))
        return signalPassFailure();
  }
};

} // namespace
