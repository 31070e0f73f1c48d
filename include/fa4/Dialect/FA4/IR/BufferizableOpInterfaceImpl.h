//===- BufferizableOpInterfaceImpl.h - fa4.attention on tensors -*- C++ -*-===//
//
// The bufferization model of fa4.attention's tensor form, so that upstream
// one-shot-bufferize turns it into the memref form the kernel pipeline
// starts from.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_DIALECT_FA4_IR_BUFFERIZABLEOPINTERFACEIMPL_H
#define FA4_DIALECT_FA4_IR_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace fa4 {
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace fa4
} // namespace mlir

#endif // FA4_DIALECT_FA4_IR_BUFFERIZABLEOPINTERFACEIMPL_H
