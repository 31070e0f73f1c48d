//===- ClusterOps.cpp - verifiers of the thread-block cluster ops ---------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fa4;

LogicalResult ClusterArriveOp::verify() {
  int64_t ctas = static_cast<int64_t>(getCtas());
  if (ctas < 2 || ctas > limits::kMaxClusterCtas)
    return emitOpError() << "a cluster has 2 to " << limits::kMaxClusterCtas
                         << " CTAs, got " << ctas;
  APInt index;
  int64_t count = getBarriers().getType().getNumBarriers();
  if (matchPattern(getIndex(), m_ConstantInt(&index)) &&
      (index.isNegative() || index.getSExtValue() >= count))
    return emitOpError() << "barrier index " << index.getSExtValue()
                         << " is outside the group's " << count;
  return success();
}

/// The shared-memory buffer, its indices and the vector's elements of a
/// dsmem load or store: a workgroup memref, one index per dimension, the
/// buffer's element type, a count that fits the innermost dimension and a
/// 16-byte access at most (the widest ld/st.shared::cluster).
static LogicalResult verifyRemoteAccess(Operation *op, MemRefType buffer,
                                        ValueRange indices, VectorType vector) {
  if (!gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(buffer))
    return op->emitOpError() << "reaches shared memory: the buffer must be in "
                                "the workgroup address space, got "
                             << buffer;
  if (static_cast<int64_t>(indices.size()) != buffer.getRank())
    return op->emitOpError() << "needs " << buffer.getRank() << " indices for "
                             << buffer << ", got " << indices.size();
  if (vector.getElementType() != buffer.getElementType())
    return op->emitOpError() << "moves " << vector << " but the buffer holds "
                             << buffer.getElementType();
  int64_t bytes = vector.getNumElements() * vector.getElementTypeBitWidth() / 8;
  if (bytes > 16 || !llvm::isPowerOf2_64(bytes) || bytes < 4)
    return op->emitOpError()
           << "moves " << bytes << " bytes: one access moves 4, 8 or 16";
  int64_t inner = buffer.getShape().back();
  if (!ShapedType::isDynamic(inner) && vector.getNumElements() > inner)
    return op->emitOpError() << "moves " << vector.getNumElements()
                             << " elements, more than the buffer's innermost "
                                "dimension of "
                             << inner;
  return success();
}

LogicalResult DsmemLoadOp::verify() {
  return verifyRemoteAccess(*this, getBuffer().getType(), getIndices(),
                            getResult().getType());
}

LogicalResult DsmemStoreOp::verify() {
  return verifyRemoteAccess(*this, getBuffer().getType(), getIndices(),
                            getValue().getType());
}
