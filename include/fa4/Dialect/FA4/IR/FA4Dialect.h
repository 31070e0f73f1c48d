//===- FA4Dialect.h - the fa4 dialect ---------------------------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4DIALECT_H
#define FA4_DIALECT_FA4_IR_FA4DIALECT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Dialect.h"

#include "fa4/Dialect/FA4/IR/FA4Attrs.h"

#include "fa4/Dialect/FA4/IR/FA4OpsDialect.h.inc"

#endif // FA4_DIALECT_FA4_IR_FA4DIALECT_H
