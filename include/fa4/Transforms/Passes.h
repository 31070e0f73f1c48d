//===- Passes.h - fa4 passes ------------------------------------*- C++ -*-===//

#ifndef FA4_TRANSFORMS_PASSES_H
#define FA4_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fa4 {

#define GEN_PASS_DECL
#include "fa4/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa4/Transforms/Passes.h.inc"

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_PASSES_H
