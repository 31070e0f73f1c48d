//===- fa4-opt.cpp - the fa4 optimizer driver -----------------------------===//
//
// MlirOptMain with the fa4 dialect, the upstream dialects its pipeline
// produces, and every pass of the pipeline.
//
//===----------------------------------------------------------------------===//

#include "fa4/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  fa4::registerAllPasses();
  mlir::DialectRegistry registry;
  fa4::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fa4 optimizer driver: FlashAttention kernels in MLIR\n",
      registry));
}
