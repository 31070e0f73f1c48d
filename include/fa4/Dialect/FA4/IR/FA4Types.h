//===- FA4Types.h - fa4 types -----------------------------------*- C++ -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4TYPES_H
#define FA4_DIALECT_FA4_IR_FA4TYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Types.h.inc"

#endif // FA4_DIALECT_FA4_IR_FA4TYPES_H
