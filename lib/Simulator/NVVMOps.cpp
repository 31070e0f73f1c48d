//===- NVVMOps.cpp - the upstream nvvm ops of kernels ---------------------===//
//
// Kernels use upstream NVVM ops for single instructions: elect and vote,
// the async-proxy fence, TMA bulk-group commits and waits, tcgen05 waits and
// fences, wgmma commits, grid dependency control. Routes each to the unit
// that models it.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

Step Cta::nvvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case<NVVM::Tcgen05WaitOp, NVVM::Tcgen05FenceOp>(
          [&](Operation *) { return tmemOp(actor, op, in); })
      .Case<NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp>(
          [&](Operation *) { return tmaOp(actor, op); })
      .Case(
          [&](NVVM::WgmmaGroupSyncAlignedOp) { return wgmmaCommit(actor, op); })
      .Case([&](NVVM::VoteSyncOp vote) { return warpAny(actor, vote, in); })
      .Case([&](NVVM::SyncWarpOp sync) { return syncWarp(actor, sync, in); })
      .Case<NVVM::ClusterArriveOp, NVVM::ClusterWaitOp>(
          [&](Operation *) { return clusterOp(actor, op, in); })
      .Case([&](NVVM::FenceMbarrierInitOp) {
        // Barriers are visible to the cluster once initialized; the cluster
        // barrier after the initialization orders the remote arrivals.
        return Step::next;
      })
      .Case([&](NVVM::GriddepcontrolOp) {
        // One launch, no prerequisite grid: the wait passes at once.
        return Step::next;
      })
      .Case([&](NVVM::InlinePtxOp ptx) {
        // The score stage's opaque copies of coordinates.
        if (ptx.getPtxCode() != "mov.b32 $0, $1;" || in.size() != 1 ||
            ptx->getNumResults() != 1 || ptx.getPredicate())
          return fail(op, "the simulator executes only inline PTX "
                          "'mov.b32 $0, $1;'");
        // Copied before define(), which may move the values `in` points to.
        Val copy = *in[0];
        define(actor, ptx->getResult(0)) = std::move(copy);
        return Step::next;
      })
      .Case([&](NVVM::ElectSyncOp elect) {
        if (elect.getMembermask())
          return fail(op, "only elect.sync over the whole warp is simulated");
        Val out;
        out.ints = {actor.lane == 0 ? -1 : 0};
        define(actor, elect.getPred()) = std::move(out);
        return Step::next;
      })
      .Case([&](NVVM::FenceProxyOp fence) {
        if (fence.getKind() != NVVM::ProxyKind::async_shared ||
            !fence.getSpace())
          return fail(op, "only fence.proxy.async.shared::{cta,cluster} is "
                          "simulated");
        // A cluster-scope fence also publishes the thread's stores into
        // other CTAs' shared memory.
        Actor::ProxyFence published{actor.clock.get(actor.slot), op};
        actor.proxyFences.push_back(published);
        if (*fence.getSpace() == NVVM::SharedSpace::shared_cluster)
          actor.clusterProxyFences.push_back(published);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}
