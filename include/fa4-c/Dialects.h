/*===- fa4-c/Dialects.h - C API of the fa4 dialect ----------------*- C -*-===*\
|*                                                                            *|
|* The C entry points of libFA4CAPI.so. Together with the upstream MLIR C API *|
|* for IR (mlir-c/IR.h, exported from the same library) they let any          *|
|* language with a C FFI parse, verify and print fa4 modules.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FA4_C_DIALECTS_H
#define FA4_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FA4, fa4);

/// Adds the fa4 dialect and every upstream dialect, interface and translation
/// the fa4 pipeline uses to `registry`.
MLIR_CAPI_EXPORTED void fa4RegisterAllDialects(MlirDialectRegistry registry);

/// Registers the fa4 passes and the upstream passes the pipeline uses.
MLIR_CAPI_EXPORTED void fa4RegisterAllPasses(void);

/// Runs the fa4-compile pipeline on `module` in place. `options` is the
/// pipeline's option string as fa4-opt takes it (for example
/// "emit-dir=kernels kv-stages=4"). Fails, with diagnostics on the module's
/// context, if the options do not parse or a pass fails.
MLIR_CAPI_EXPORTED MlirLogicalResult fa4CompileModule(MlirModule module,
                                                      MlirStringRef options);

/// One compiled kernel, valid during the callback only: the kernel symbol,
/// its chip ("sm_100a", "sm_90a"), the PTX, the cubin's bytes (length 0
/// when no ptxas was found) and the launch manifest as JSON.
typedef struct {
  MlirStringRef name;
  MlirStringRef arch;
  MlirStringRef ptx;
  MlirStringRef cubin;
  MlirStringRef manifest;
} Fa4CompiledKernel;

typedef void (*Fa4KernelCallback)(const Fa4CompiledKernel *kernel,
                                  void *userData);

/// Runs the fa4-compile pipeline on `module` in place, as fa4CompileModule,
/// and hands each compiled kernel to `callback` instead of writing files
/// (an `emit-dir` option is ignored; `ptxas=...` chooses the assembler).
/// Fails, with diagnostics on the module's context, if the options do not
/// parse, a pass fails or ptxas rejects a kernel; `callback` is then not
/// called.
MLIR_CAPI_EXPORTED MlirLogicalResult
fa4CompileModuleToKernels(MlirModule module, MlirStringRef options,
                          Fa4KernelCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* FA4_C_DIALECTS_H */
