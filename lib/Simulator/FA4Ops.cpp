//===- FA4Ops.cpp - the fa4 dialect's ops ---------------------------------===//
//
// Routes each fa4 op to the unit that models it (Tensor Memory, the MMA and
// wgmma pipes, barriers) and gives semantics to the few that belong to
// none: warp specialization and exp2.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "fa4/Dialect/FA4/IR/Exp2.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

Step Cta::fa4Op(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case<TmemAllocOp, TmemDeallocOp, TmemBaseOp, TmemViewOp, TmemLoadOp,
            TmemStoreOp>([&](Operation *) { return tmemOp(actor, op, in); })
      .Case<MmaOp, MmaCommitOp>(
          [&](Operation *) { return mmaOp(actor, op, in); })
      .Case<ClusterArriveOp, DsmemLoadOp, DsmemStoreOp>(
          [&](Operation *) { return clusterOp(actor, op, in); })
      .Case([&](WgmmaQuantizeOp op) { return wgmmaQuantize(actor, op, in); })
      .Case([&](NamedBarrierSyncOp sync) {
        return namedBarrier(actor, op, sync.getId(), sync.getThreads(), true);
      })
      .Case([&](NamedBarrierArriveOp arrive) {
        return namedBarrier(actor, op, arrive.getId(), arrive.getThreads(),
                            false);
      })
      .Case([&](WarpSpecializeOp specialize) {
        for (Operation &child : specialize.getBody().front()) {
          auto role = dyn_cast<RoleOp>(child);
          if (!role)
            continue;
          if (actor.warp >= role.getWarpBegin() &&
              actor.warp < role.getWarpEnd()) {
            actor.role = role.getRole().str();
            Block &body = role.getBody().front();
            actor.stack.push_back({&body, body.begin(), role});
            return Step::entered;
          }
        }
        return Step::next;
      })
      .Case([&](Exp2Op exp2) {
        Val out;
        int64_t emulated = exp2.getEmulated();
        for (auto [i, x] : llvm::enumerate(in[0]->floats))
          out.floats.push_back(static_cast<int64_t>(i % 16) < emulated
                                   ? exp2poly::evaluate(x)
                                   : ftz(std::exp2(ftz(x))));
        define(actor, exp2.getResult()) = std::move(out);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}
