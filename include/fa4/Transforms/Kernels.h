//===- Kernels.h - compiled kernels in memory -------------------*- C++ -*-===//
//
// What fa4-compile produces for each launched kernel, handed to the caller
// instead of (or as well as) written to files: the PTX, the cubin when
// ptxas is available, and the launch manifest as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_KERNELS_H
#define FA4_TRANSFORMS_KERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fa4 {

struct CompileOptions;

/// What `ptxas -v` reports for a kernel.
struct PtxasResources {
  int64_t registers = 0, spillStores = 0, spillLoads = 0, staticSmem = 0;
};

/// One compiled kernel.
struct CompiledKernel {
  /// The kernel symbol (the manifest's `kernel`) and its chip (`arch`).
  std::string name, arch;
  std::string ptx;
  /// The cubin's bytes; empty when no ptxas was found.
  std::string cubin;
  /// The launch manifest as fa4-emit-kernels writes `<name>.json`: the
  /// fa4.launch manifest, the file names and, with a cubin, ptxas's
  /// resources.
  std::string manifestJson;
  /// The same manifest as an attribute (owned by the module's context).
  DictionaryAttr manifest;
  std::optional<PtxasResources> ptxas;
};

/// ptxas from `requested`, else $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT,
/// /usr/local/cuda or PATH; empty if none is found.
std::string findPtxas(StringRef requested);

/// The kernels of every `fa4.launch` with a manifest in `module`, which has
/// been through gpu-module-to-binary{format=isa} (and fa4-assemble-manifest):
/// each manifest is checked complete, and with a non-empty `ptxas` the PTX
/// is assembled. Fails with a diagnostic at the launch.
FailureOr<std::vector<CompiledKernel>> collectKernels(ModuleOp module,
                                                      StringRef ptxas);

/// Runs the fa4-compile pipeline on `module` (without writing files, even
/// if `options` names an emit directory) and returns its kernels; the
/// module holds the compiled IR afterwards.
FailureOr<std::vector<CompiledKernel>>
compileKernels(ModuleOp module, const CompileOptions &options);

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_KERNELS_H
