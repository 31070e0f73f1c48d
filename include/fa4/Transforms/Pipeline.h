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

/// Options of fa4-compile. Plan overrides use the fa4-plan conventions:
/// 0 (or -1 where 0 is meaningful, or "") leaves the choice to the planner.
struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("Target architecture"),
                           llvm::cl::init("sm_100a")};
  Option<std::string> emitDir{
      *this, "emit-dir",
      llvm::cl::desc("Write <kernel>.ptx/.cubin/.json here and print each "
                     "kernel's resource report (empty: keep the binaries in "
                     "the IR only)"),
      llvm::cl::init("")};
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("ptxas for cubins (default: found in CUDA_HOME, "
                     "CUDA_PATH, CUDA_ROOT, /usr/local/cuda or PATH)"),
      llvm::cl::init("")};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("Rows of a K/V block"),
                         llvm::cl::init(0)};
  Option<int64_t> qStages{*this, "q-stages",
                          llvm::cl::desc("Q tiles in flight per CTA"),
                          llvm::cl::init(0)};
  Option<int64_t> kvStages{*this, "kv-stages",
                           llvm::cl::desc("Slots of the K/V ring"),
                           llvm::cl::init(0)};
  Option<int64_t> gqaPack{*this, "gqa-pack",
                          llvm::cl::desc("Query heads packed per Q tile"),
                          llvm::cl::init(0)};
  Option<std::string> scheduler{*this, "scheduler",
                                llvm::cl::desc("linear, lpt or paired"),
                                llvm::cl::init("")};
  Option<int64_t> softmaxRegs{*this, "softmax-regs",
                              llvm::cl::desc("Softmax warpgroup registers"),
                              llvm::cl::init(0)};
  Option<int64_t> correctionRegs{
      *this, "correction-regs",
      llvm::cl::desc("Correction warpgroup registers"), llvm::cl::init(0)};
  Option<int64_t> producerRegs{
      *this, "producer-regs",
      llvm::cl::desc("Load/MMA/store warpgroup registers"), llvm::cl::init(0)};
  Option<int64_t> emulatedExp2{
      *this, "emulated-exp2",
      llvm::cl::desc("Of every 16 exponentials, how many use the FMA "
                     "polynomial (-1: choose)"),
      llvm::cl::init(-1)};
  Option<int64_t> pvSplit{*this, "pv-split",
                          llvm::cl::desc("Columns of P in the first PV MMA"),
                          llvm::cl::init(0)};
  Option<int64_t> rescaleThreshold{
      *this, "rescale-threshold",
      llvm::cl::desc("Row-max growth tolerated before rescaling O (-1: "
                     "choose)"),
      llvm::cl::init(-1)};
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
