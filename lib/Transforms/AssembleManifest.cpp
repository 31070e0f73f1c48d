//===- AssembleManifest.cpp - kernel facts into launch manifests ----------===//
//
// The passes after fa4-specialize record what they decide on the kernel
// (fa4.tmem_columns, fa4.dynamic_smem_bytes, fa4.mbarriers,
// fa4.named_barriers, fa4.roles). Before the kernels are serialized, this
// pass copies those facts into the manifest of every launch of the kernel,
// so that the manifest describes the kernel that was built and a pass that
// did not run is an error here rather than a missing entry downstream.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4ASSEMBLEMANIFEST
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Completes the manifest of `launch` from the facts on its kernel.
LogicalResult assemble(LaunchOp launch, SymbolTableCollection &symbols) {
  DictionaryAttr manifest = launch.getManifestAttr();
  if (!manifest)
    return launch.emitOpError()
           << "has no launch manifest (fa4-specialize writes it)";
  Operation *kernel = symbols.lookupNearestSymbolFrom(launch, launch.getKernel());
  if (!isa_and_nonnull<gpu::GPUFuncOp, LLVM::LLVMFuncOp>(kernel))
    return launch.emitOpError()
           << "needs kernel " << launch.getKernel()
           << " as a gpu.func or llvm.func to read its facts; assemble the "
              "manifest before gpu-module-to-binary";
  NamedAttrList entries(manifest);
  for (auto [key, setBy] : LaunchOp::getKernelFacts()) {
    Attribute fact = kernel->getAttr((Twine("fa4.") + key).str());
    if (!fact) {
      InFlightDiagnostic diag = launch.emitOpError()
                                << "kernel " << launch.getKernel()
                                << " has no 'fa4." << key << "': run "
                                << setBy << " first";
      diag.attachNote(kernel->getLoc()) << "the kernel";
      return diag;
    }
    entries.set(key, fact);
  }
  DictionaryAttr assembled = entries.getDictionary(launch.getContext());
  if (failed(LaunchOp::verifyManifest(
          assembled, launch.getKernel().getLeafReference().getValue(),
          [&] { return launch.emitOpError(); }, /*complete=*/true)))
    return failure();
  launch.setManifestAttr(assembled);
  return success();
}

struct FA4AssembleManifestPass
    : public fa4::impl::FA4AssembleManifestBase<FA4AssembleManifestPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    WalkResult result = getOperation()->walk([&](LaunchOp launch) {
      return failed(assemble(launch, symbols)) ? WalkResult::interrupt()
                                               : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
