//===- Pipeline.h - the fa4-compile pipeline --------------------*- C++ -*-===//
//
// The whole compiler as one pass pipeline, for fa4-opt (--fa4-compile) and
// for embedders (buildCompilePipeline).
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_PIPELINE_H
#define FA4_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::fa4 {

/// Options of fa4-compile: every option of fa4-plan (the plan overrides;
/// 0, -1 or "" leave a choice to the planner) and of fa4-emit-kernels,
/// each declared once in Passes.td. With an empty `emit-dir` the binaries
/// stay in the IR and fa4-emit-kernels does not run.
struct CompileOptions : public PassPipelineOptions<CompileOptions> {
#define FA4_PASS_OPTION(TYPE, NAME, ARGUMENT, DEFAULT, DESCRIPTION)           \
  Option<TYPE> NAME{*this, ARGUMENT, llvm::cl::desc(DESCRIPTION),              \
                    llvm::cl::init(DEFAULT)};
#include "fa4/Transforms/PlanOptions.inc"
#define FA4_PASS_OPTION(TYPE, NAME, ARGUMENT, DEFAULT, DESCRIPTION)           \
  Option<TYPE> NAME{*this, ARGUMENT, llvm::cl::desc(DESCRIPTION),              \
                    llvm::cl::init(DEFAULT)};
#include "fa4/Transforms/EmitKernelsOptions.inc"
};

/// Adds the passes down to the synchronization level: fa4-plan, fa4-tile,
/// fa4-specialize, fa4-allocate-tmem, fa4-allocate-smem and
/// fa4-insert-barriers. The result is the complete kernel protocol, what
/// the NVVM lowering consumes and fa4-sim executes.
void buildSynchronizePipeline(OpPassManager &pm, const CompileOptions &options);

/// Adds buildSynchronizePipeline, fa4-lower-warp-specialize, the upstream
/// lowering to NVVM and gpu-module-to-binary (PTX), and, with an emit
/// directory, fa4-emit-kernels.
void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options);

/// Registers the pipelines as --fa4-synchronize and --fa4-compile.
void registerCompilePipeline();

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_PIPELINE_H
