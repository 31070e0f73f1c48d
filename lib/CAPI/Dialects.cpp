//===- Dialects.cpp - C API of the fa4 dialect ----------------------------===//

#include "fa4-c/Dialects.h"

#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/InitAll.h"
#include "fa4/Transforms/Kernels.h"
#include "fa4/Transforms/Pipeline.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FA4, fa4, mlir::fa4::FA4Dialect)

void fa4RegisterAllDialects(MlirDialectRegistry registry) {
  fa4::registerAllDialects(*unwrap(registry));
}

void fa4RegisterAllPasses(void) { fa4::registerAllPasses(); }

/// The options of fa4-compile, or a diagnostic on `module`.
static std::unique_ptr<mlir::fa4::CompileOptions>
parseOptions(mlir::ModuleOp module, MlirStringRef options) {
  std::unique_ptr<mlir::fa4::CompileOptions> parsed =
      mlir::fa4::CompileOptions::createFromString(unwrap(options));
  if (!parsed)
    module.emitError() << "fa4-compile: cannot parse options '"
                       << unwrap(options) << "'";
  return parsed;
}

MlirLogicalResult fa4CompileModule(MlirModule module, MlirStringRef options) {
  mlir::ModuleOp op = unwrap(module);
  std::unique_ptr<mlir::fa4::CompileOptions> parsed = parseOptions(op, options);
  if (!parsed)
    return mlirLogicalResultFailure();
  mlir::PassManager pm(op.getContext());
  mlir::fa4::buildCompilePipeline(pm, *parsed);
  return wrap(pm.run(op));
}

MlirLogicalResult fa4CompileModuleToKernels(MlirModule module,
                                            MlirStringRef options,
                                            Fa4KernelCallback callback,
                                            void *userData) {
  mlir::ModuleOp op = unwrap(module);
  std::unique_ptr<mlir::fa4::CompileOptions> parsed = parseOptions(op, options);
  if (!parsed)
    return mlirLogicalResultFailure();
  mlir::FailureOr<std::vector<mlir::fa4::CompiledKernel>> kernels =
      mlir::fa4::compileKernels(op, *parsed);
  if (mlir::failed(kernels))
    return mlirLogicalResultFailure();
  for (const mlir::fa4::CompiledKernel &kernel : *kernels) {
    Fa4CompiledKernel view = {wrap(llvm::StringRef(kernel.name)),
                              wrap(llvm::StringRef(kernel.arch)),
                              wrap(llvm::StringRef(kernel.ptx)),
                              wrap(llvm::StringRef(kernel.cubin)),
                              wrap(llvm::StringRef(kernel.manifestJson))};
    callback(&view, userData);
  }
  return mlirLogicalResultSuccess();
}
