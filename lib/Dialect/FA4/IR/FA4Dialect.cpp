//===- FA4Dialect.cpp - the fa4 dialect -----------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

using namespace mlir;
using namespace mlir::fa4;

#include "fa4/Dialect/FA4/IR/FA4OpsDialect.cpp.inc"

void FA4Dialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "fa4/Dialect/FA4/IR/FA4Ops.cpp.inc"
      >();
}
