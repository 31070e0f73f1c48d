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
/// the block is still in flight (AsyncAccessOpInterface) and no wait of
/// the thread has retired it (AsyncWaitOpInterface): a TMEM load until
/// `fa4.tcgen05.wait load`, a TMEM store until `fa4.tcgen05.wait store`, a
/// TMA store until `fa4.tma.store_wait 0`, a TMA load to the end of the
/// block (it completes in another role). An MMA reads and writes asynchronously to the end of
/// the block too, but the tcgen05 MMAs of one thread execute in issue
/// order, so only accesses other than MMAs conflict with one in flight.
///
/// Buffers `a` and `b` may share storage when
///  - every access of both is an op inside a `fa4.role` that declares a
///    memory effect on the buffer (a buffer passed to anything else, or
///    used outside the roles, shares nothing), and the same roles access
///    both: roles run
///    concurrently, so a buffer one role alone uses is live whenever that
///    role runs;
///  - program order means what it says: for TMEM each warp of a role of at
///    most four warps touches its own lanes and MMAs are issued by one
///    thread; shared memory shares only between buffers whose accesses all
///    run in the elected thread of a one-warp role;
///  - in every such role, block by block, the two never occupy storage at
///    once. A buffer occupies it at each op that accesses it or has an
///    access in flight, and wherever its value is still to be read
///    (backward liveness). Its value is replaced by a definition: a TMEM
///    store of every column of the buffer itself, an MMA into the whole
///    buffer that does not accumulate, or a wait on a channel committed by
///    another role that writes the buffer (taken to hand over all of it).
///    Partial writes replace nothing. Both may occupy storage at one op only
///    if it is an `scf.if` or `scf.for` holding both, whose blocks are
///    checked the same way; a loop body that reads a buffer before
///    redefining it reads the previous iteration's value, so it occupies
///    storage through the whole body. The softmax loop waits for S from the
///    MMA role, reads it, then writes P; the MMA loop waits for P, reads it,
///    then overwrites S: P shares S.
///
/// The channels order the roles: allocation assumes the protocol hands a
/// buffer's data over before the other role uses its alias, which is what
/// the simulator checks.
class BufferLiveness {
public:
  /// `laneLocal`: the buffers are TMEM, where each warp of a role accesses
  /// only its own lanes.
  BufferLiveness(ArrayRef<Value> buffers, bool laneLocal);

  /// Whether buffers `a` and `b` (indices into the constructor's list) may
  /// share storage.
  bool mayShare(unsigned a, unsigned b) const;

  struct Accesses {
    Value root;                         // the buffer
    llvm::SmallPtrSet<Value, 8> values; // the buffer and its views
    llvm::SmallPtrSet<Operation *, 16> ops;
    llvm::SmallSetVector<Operation *, 4> roles;
    llvm::SmallPtrSet<Operation *, 4> writers; // roles that write it
    bool outsideRoles = false, escapes = false, multiThreaded = false;
    bool wideRole = false; // a role of more than four warps uses it
  };

private:
  SmallVector<Accesses, 4> accesses;
  bool laneLocal;
};

/// Replaces the uses of `buffer` in each block with the placed buffer
/// `materialize` builds before the first of them. Placed buffers are addresses: rebuilding one costs
/// an instruction or two, while one value defined before the roles would
/// stay live in registers through every role, whatever its budget.
void materializeAtUses(Value buffer,
                       function_ref<Value(OpBuilder &)> materialize);

} // namespace mlir::fa4

#endif // FA4_TRANSFORMS_BUFFERLIVENESS_H
