//===- SpecializePass.cpp - build the warp-specialized kernels ------------===//
//
// Turns every tiled kernel into a kernel at the role level: a gpu.func whose
// CTA runs the roles of its plan's family, connected by channels, and gives
// its fa4.launch the manifest. Barriers are left to fa4-insert-barriers;
// this pass only says who hands what to whom. The work is split by concern:
// TiledProgram (recognize, readShape), KernelBuilder (signature, buffers,
// load and store roles), ScoreStage, WorkSchedule, RoleSet (the families)
// and Manifest.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Manifest.h"
#include "TiledProgram.h"

#include "fa4/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4SPECIALIZE
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

namespace {
struct FA4SpecializePass
    : public fa4::impl::FA4SpecializeBase<FA4SpecializePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    // Kernels that hold a tiled program; role-level kernels are left alone.
    module.walk([&](gpu::GPUFuncOp kernel) {
      WalkResult tiled = kernel.walk([](Operation *op) {
        return op->getName().getStringRef().starts_with("fa4.tile.")
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (tiled.wasInterrupted())
        kernels.push_back(kernel);
    });

    MLIRContext *ctx = &getContext();
    for (gpu::GPUFuncOp kernel : kernels) {
      auto plan = kernel->getAttrOfType<PlanAttr>("fa4.plan");
      if (!plan) {
        kernel.emitOpError() << "holds a tiled program but no fa4.plan";
        return signalPassFailure();
      }
      FailureOr<TiledProgram> program = recognize(kernel);
      if (failed(program))
        return signalPassFailure();
      FailureOr<KernelShape> shape = readShape(kernel, plan, *program);
      if (failed(shape))
        return signalPassFailure();

      // The role-level kernel takes the tiled one's place and name; the
      // tiled one goes once the kernel and its manifest are built (the
      // shape refers to its fa4.tile.modify).
      auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
      ImplicitLocOpBuilder builder(kernel.getLoc(), ctx);
      gpu::GPUFuncOp roles =
          KernelBuilder(builder, *shape).build(gpuModule, kernel.getName());

      // What follows from the shape and plan; later passes record the
      // rest on the kernel.
      NamedAttrList manifest(buildManifest(*shape, roles));
      kernel.erase();
      auto kernelRef = SymbolRefAttr::get(gpuModule.getNameAttr(),
                                          {FlatSymbolRefAttr::get(roles)});
      module->walk([&](LaunchOp launch) {
        if (launch.getKernel() != kernelRef)
          return;
        manifest.set("operands", operandsEntry(launch));
        launch.setManifestAttr(manifest.getDictionary(ctx));
      });
    }
  }
};
} // namespace
