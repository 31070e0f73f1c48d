//===- Dialects.cpp - C API of the fa4 dialect ----------------------------===//

#include "fa4-c/Dialects.h"

#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FA4, fa4, mlir::fa4::FA4Dialect)

void fa4RegisterAllDialects(MlirDialectRegistry registry) {
  fa4::registerAllDialects(*unwrap(registry));
}

void fa4RegisterAllPasses(void) { fa4::registerAllPasses(); }
