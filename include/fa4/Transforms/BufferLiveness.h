//===- BufferLiveness.h - when two kernel buffers may share storage -------===//
//
// The storage passes place the buffers of a role-level kernel: TMEM buffers
// (fa4.tmem.buffer) and shared-memory buffers (gpu.func workgroup
// attributions). Two buffers may share storage when no role ever has both
// live at once.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_BUFFERLIVENESS_H
#define FA4_TRANSFORMS_BUFFERLIVENESS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fa4 {

/// Answers, for pairs of a kernel's buffers, whether they may share storage.
///
/// An access is any op that uses a buffer or a view of it (fa4.tmem.view,
/// memref views and subviews). A buffer is live at an op of a block if the
/// op or an op nested in it accesses the buffer, or if an earlier access in
/// the block is still in flight: a TMEM load until `fa4.tcgen05.wait load`,
/// a TMEM store until `fa4.tcgen05.wait store`, a TMA store until
/// `fa4.tma.store_wait`, a TMA load until the end of the block (it completes
/// in another role). MMAs count only where they are issued: tcgen05 ops of
/// one thread execute in issue order.
///
/// Buffers `a` and `b` may share storage when
///  - every access of both is inside a `fa4.role`, and the same roles access
///    both (roles run concurrently, so a buffer one role alone uses is live
///    whenever that role runs), and
///  - in every such role, their live ranges do not overlap: in each block,
///    the ops from the first to the last where `a` is live and those where
///    `b` is live overlap only in region ops (loops, conditionals) that
///    access both and in whose blocks the same holds. A loop body is thus
///    checked for one iteration: `S` read then `P` written in the softmax
///    loop, `P` read then `S` written in the MMA loop.
///
/// Hand-offs between roles are the channels' job: allocation assumes that
/// the protocol orders one role's last use of a buffer before another
/// role's first use of its alias, which is what the simulator checks.
class BufferLiveness {
public:
  explicit BufferLiveness(ArrayRef<Value> buffers);

  /// Whether buffers `a` and `b` (indices into the constructor's list) may
  /// share storage.
  bool mayShare(unsigned a, unsigned b) const;

  struct Accesses {
    llvm::SmallPtrSet<Operation *, 16> ops;
    llvm::SmallSetVector<Operation *, 4> roles;
    bool outsideRoles = false;
  };

private:
  SmallVector<Accesses> accesses;
};

/// Replaces the uses of `buffer` in each block with the placed buffer
/// `materialize` builds before the first of them. Placed buffers are addresses: rebuilding one costs
/// an instruction or two, while one value defined before the roles would
/// stay live in registers through every role, whatever its budget.
void materializeAtUses(Value buffer,
                       function_ref<Value(OpBuilder &)> materialize);

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_BUFFERLIVENESS_H
