//===- Dialects.cpp - C API of the fa4 dialect ----------------------------===//

#include "fa4-c/Dialects.h"

#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/InitAll.h"
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

MlirLogicalResult fa4CompileModule(MlirModule module, MlirStringRef options) {
  mlir::ModuleOp op = unwrap(module);
  std::unique_ptr<mlir::fa4::CompileOptions> parsed =
      mlir::fa4::CompileOptions::createFromString(unwrap(options));
  if (!parsed) {
    op.emitError() << "fa4-compile: cannot parse options '"
                   << unwrap(options) << "'";
    return mlirLogicalResultFailure();
  }
  mlir::PassManager pm(op.getContext());
  mlir::fa4::buildCompilePipeline(pm, *parsed);
  return wrap(pm.run(op));
}
