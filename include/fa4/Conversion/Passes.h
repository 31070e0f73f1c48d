//===- Passes.h - fa4 conversion passes -------------------------*- C++ -*-===//

#ifndef FA4_CONVERSION_PASSES_H
#define FA4_CONVERSION_PASSES_H

#include "fa4/Conversion/FA4ToNVVM/FA4ToNVVM.h"

#include "mlir/Pass/Pass.h"

namespace mlir::fa4 {

#define GEN_PASS_DECL
#include "fa4/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa4/Conversion/Passes.h.inc"

} // namespace mlir::fa4

#endif // FA4_CONVERSION_PASSES_H
