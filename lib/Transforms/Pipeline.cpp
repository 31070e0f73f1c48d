//===- Pipeline.cpp - the fa4-compile pipeline ----------------------------===//

#include "fa4/Transforms/Pipeline.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fa4;

void mlir::fa4::buildSynchronizePipeline(OpPassManager &pm,
                                         const CompileOptions &options) {
  FA4PlanOptions plan;
#define FA4_PASS_OPTION(TYPE, NAME, ...) plan.NAME = options.NAME;
#include "fa4/Transforms/PlanOptions.inc"
  pm.addPass(createFA4Plan(plan));
  pm.addPass(createFA4Tile());
  pm.addPass(createFA4Specialize());
  // The role builders write each index computation where it is needed;
  // folding and sharing them keeps the levels below small to read and to
  // simulate.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createFA4AllocateTmem());
  pm.addPass(createFA4AllocateSmem());
  pm.addPass(createFA4InsertBarriers());
}

void mlir::fa4::buildCompilePipeline(OpPassManager &pm,
                                     const CompileOptions &options) {
  buildSynchronizePipeline(pm, options);
  pm.addPass(createFA4LowerWarpSpecialize());

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createSCFToControlFlowPass());
  // 32-bit index arithmetic: half the registers for addresses and counters.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 32;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createFA4AlignSharedMemory());
  kernels.addPass(createFA4FoldClusterAddressCasts());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createFA4AssembleManifest());
  pm.addPass(createFA4VerifyLLVMIR());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (!options.emitDir.empty()) {
    FA4EmitKernelsOptions emit;
#define FA4_PASS_OPTION(TYPE, NAME, ...) emit.NAME = options.NAME;
#include "fa4/Transforms/EmitKernelsOptions.inc"
    pm.addPass(createFA4EmitKernels(emit));
  }
}

void mlir::fa4::registerCompilePipeline() {
  PassPipelineRegistration<CompileOptions>(
      "fa4-synchronize",
      "Compile fa4.attention down to the synchronization level (plan, tile, "
      "specialize, TMEM and shared-memory placement, barriers): the complete "
      "kernel protocol that fa4-sim executes",
      buildSynchronizePipeline);
  PassPipelineRegistration<CompileOptions>(
      "fa4-compile",
      "Compile fa4.attention to warp-specialized kernels: plan, tile, specialize, "
      "TMEM and shared-memory placement, barriers, roles, NVVM, PTX, and (with emit-dir) PTX/cubin/manifest "
      "files and a resource report",
      buildCompilePipeline);
}
