//===- InitAll.h - register fa4 and what its pipeline uses ------*- C++ -*-===//
//
// Embedders call these once to make the fa4 dialect, the upstream dialects
// and translations the pipeline produces, and the passes it runs available.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_INITALL_H
#define FA4_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fa4 {

/// Adds the fa4 dialect, the upstream dialects the pipeline emits (func,
/// arith, math, memref, scf, cf, vector, index, gpu, nvvm, llvm), their
/// conversion-to-LLVM interfaces, the NVVM target attribute model and the
/// LLVM IR translations gpu-module-to-binary needs.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the fa4 passes and the upstream passes the pipeline uses
/// (canonicalize, cse, the conversions to NVVM/LLVM and the GPU passes).
void registerAllPasses();

} // namespace fa4

#endif // FA4_INITALL_H
