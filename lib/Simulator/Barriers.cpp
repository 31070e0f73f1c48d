//===- Barriers.cpp - mbarriers, named barriers and collective ops --------===//
//
// The synchronization the threads of a CTA wait on: mbarriers (arrivals,
// transaction bytes, phases), named barriers (bar.sync and bar.arrive with
// a thread count), and the rendezvous of the threads of a collective op: a
// warp's votes and shuffles, a warpgroup's wgmma and commit. Arrivals
// release the arriving thread's clock into the barrier; waits acquire it.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

bool Cta::barrierIndex(Operation *op, const Val &group, Value index,
                       Actor &actor, int64_t &barrier) {
  const Val *i = use(actor, op, index);
  if (!i)
    return false;
  int64_t count = groupSizes.lookup(group.base);
  if (i->ints[0] < 0 || i->ints[0] >= count) {
    fail(op, llvm::formatv("barrier index {0} is out of the group's {1}",
                           i->ints[0], count));
    return false;
  }
  barrier = group.base + i->ints[0];
  if (!barriers[barrier].initialized) {
    fail(op, "uses mbarrier " + barriers[barrier].name +
                 " before it is initialized");
    return false;
  }
  return true;
}

void Cta::completed(int64_t barrier) {
  if (tracer)
    tracer->phaseCompleted(barrier);
  wake(WaitKind::mbarrier, barrier);
}

bool Cta::checkArrival(Operation *op, int64_t barrier, const VectorClock &clock,
                       const std::string &agent) {
  const MBarrier &b = barriers[barrier];
  if (b.followsLastPhase(clock))
    return true;
  fail(op, llvm::formatv("{0} arrives on mbarrier {1} in its phase {2}, but "
                         "is not ordered after the completion of phase {3}: "
                         "where that phase is still pending, the arrival "
                         "counts towards it",
                         agent, b.name, b.phase, b.phase - 1));
  return false;
}

Step Cta::mbarrierOp(Actor &actor, Operation *op) {
  if (auto create = dyn_cast<nvgpu::MBarrierCreateOp>(op)) {
    auto [it, inserted] = barrierGroups.try_emplace(op, barriers.size());
    if (inserted) {
      int64_t count = create.getBarriers().getType().getNumBarriers();
      groupSizes[barriers.size()] = count;
      std::string name;
      if (auto attr = op->getAttrOfType<StringAttr>("fa4.name"))
        name = "'" + attr.str() + "'";
      else {
        llvm::raw_string_ostream os(name);
        os << "created at ";
        op->getLoc().print(os);
      }
      for (int64_t i = 0; i < count; ++i) {
        MBarrier barrier;
        barrier.name = count > 1 ? name + "[" + std::to_string(i) + "]" : name;
        barriers.push_back(std::move(barrier));
      }
    }
    Val out;
    out.kind = Val::Kind::barriers;
    out.base = it->second;
    define(actor, create.getBarriers()) = std::move(out);
    return Step::next;
  }
  if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
    const Val *group = use(actor, op, init.getBarriers());
    const Val *count = use(actor, op, init.getCount());
    const Val *index = use(actor, op, init.getMbarId());
    if (!group || !count || !index)
      return Step::error;
    if (init.getPredicate()) {
      const Val *p = use(actor, op, init.getPredicate());
      if (!p)
        return Step::error;
      if (p->ints[0] == 0)
        return Step::next;
    }
    if (index->ints[0] < 0 || index->ints[0] >= groupSizes.lookup(group->base))
      return fail(op, "initializes a barrier outside its group");
    MBarrier &barrier = barriers[group->base + index->ints[0]];
    barrier.initialized = true;
    barrier.expected = barrier.pending = count->ints[0];
    barrier.tx = 0;
    barrier.phase = 0;
    if (barrier.expected <= 0)
      return fail(op, "initializes an mbarrier with a count below 1");
    return Step::next;
  }
  if (auto arrive = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
    const Val *group = use(actor, op, arrive.getBarriers());
    int64_t b;
    if (!group || !barrierIndex(op, *group, arrive.getMbarId(), actor, b) ||
        !checkArrival(op, b, actor.clock, who(actor)))
      return Step::error;
    if (tracer)
      tracer->arrived(b, actor, op);
    if (barriers[b].arrive(actor.clock))
      completed(b);
    actor.clock.tick(actor.slot);
    Val token;
    token.kind = Val::Kind::token;
    define(actor, arrive.getToken()) = token;
    return Step::next;
  }
  if (auto arrive = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
    const Val *group = use(actor, op, arrive.getBarriers());
    const Val *bytes = use(actor, op, arrive.getTxcount());
    int64_t b;
    if (!group || !bytes ||
        !barrierIndex(op, *group, arrive.getMbarId(), actor, b))
      return Step::error;
    if (arrive.getPredicate()) {
      const Val *p = use(actor, op, arrive.getPredicate());
      if (!p)
        return Step::error;
      if (p->ints[0] == 0)
        return Step::next;
    }
    if (!checkArrival(op, b, actor.clock, who(actor)))
      return Step::error;
    if (tracer)
      tracer->arrived(b, actor, op);
    barriers[b].tx += bytes->ints[0];
    if (barriers[b].arrive(actor.clock))
      completed(b);
    actor.clock.tick(actor.slot);
    return Step::next;
  }
  if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
    const Val *group = use(actor, op, wait.getBarriers());
    const Val *parity = use(actor, op, wait.getPhaseParity());
    int64_t b;
    if (!group || !parity ||
        !barrierIndex(op, *group, wait.getMbarId(), actor, b))
      return Step::error;
    // The lowering retries try_wait until it succeeds.
    if (!barriers[b].parityCompleted(parity->ints[0] != 0)) {
      block(actor, op, WaitKind::mbarrier, b);
      return Step::blocked;
    }
    actor.clock.join(barriers[b].completed);
    return Step::next;
  }
  return fail(op, "the simulator cannot execute this op");
}

//===----------------------------------------------------------------------===//
// Named barriers
//===----------------------------------------------------------------------===//

Step Cta::namedBarrier(Actor &actor, Operation *op, int64_t id, int64_t threads,
                       bool sync) {
  NamedBarrier &barrier = namedBarriers[id];
  if (!actor.arrivedGeneration) {
    if (threads <= 0 || threads % 32 != 0 || threads > launch.block)
      return fail(op,
                  llvm::formatv("named barrier {0} counts {1} threads, "
                                "not a multiple of 32 up to the block's {2}",
                                id, threads, launch.block));
    if (barrier.arrived == 0) {
      barrier.expected = threads;
      barrier.firstUse = op;
    } else if (barrier.expected != threads) {
      std::string first;
      llvm::raw_string_ostream os(first);
      barrier.firstUse->getLoc().print(os);
      return fail(op, llvm::formatv("named barrier {0} expects {1} threads "
                                    "here but {2} at {3}, where this "
                                    "generation began",
                                    id, threads, barrier.expected, first));
    }
    barrier.arriving.join(actor.clock);
    actor.clock.tick(actor.slot);
    uint64_t generation = barrier.generation;
    if (++barrier.arrived == barrier.expected) {
      barrier.arrived = 0;
      ++barrier.generation;
      barrier.completed = barrier.arriving;
      barrier.arriving.clear();
      wake(WaitKind::namedBarrier, id);
    }
    if (!sync)
      return Step::next;
    actor.arrivedGeneration = generation;
  }
  if (barrier.generation == *actor.arrivedGeneration) {
    block(actor, op, WaitKind::namedBarrier, id);
    return Step::blocked;
  }
  actor.arrivedGeneration.reset();
  actor.clock.join(barrier.completed);
  return Step::next;
}

//===----------------------------------------------------------------------===//
// Collective ops: warp votes and shuffles
//===----------------------------------------------------------------------===//

Step Cta::gather(Actor &actor, Operation *op, Rendezvous &meeting,
                 int64_t threads, WaitKind kind, int64_t id, StringRef group,
                 function_ref<void()> arrive, function_ref<void()> complete) {
  if (!actor.arrivedGeneration) {
    if (meeting.arrived == 0) {
      meeting.op = op;
    } else if (meeting.op != op) {
      std::string loc;
      llvm::raw_string_ostream os(loc);
      meeting.op->getLoc().print(os);
      return fail(op, group +
                          " reach different collective ops: this one "
                          "and the one at " +
                          loc);
    }
    actor.arrivedGeneration = meeting.generation;
    arrive();
    if (++meeting.arrived == threads) {
      complete();
      meeting.arrived = 0;
      ++meeting.generation;
      wake(kind, id);
    }
  }
  if (meeting.generation == *actor.arrivedGeneration) {
    block(actor, op, kind, id);
    return Step::blocked;
  }
  actor.arrivedGeneration.reset();
  return Step::next;
}

Step Cta::gatherWarp(Actor &actor, Operation *op, function_ref<void()> arrive,
                     function_ref<void()> complete) {
  return gather(actor, op, warps[actor.warp].meeting, 32, WaitKind::warpVote,
                actor.warp, "lanes of warp " + std::to_string(actor.warp),
                arrive, complete);
}

Step Cta::shuffle(Actor &actor, gpu::ShuffleOp op) {
  const Val *value = use(actor, op, op.getValue());
  const Val *offset = use(actor, op, op.getOffset());
  const Val *width = use(actor, op, op.getWidth());
  if (!value || !offset || !width)
    return Step::error;
  if (op.getMode() != gpu::ShuffleMode::XOR || width->ints[0] != 32 ||
      value->floats.size() != 1)
    return fail(op, "only xor shuffles of an f32 over the whole warp are "
                    "simulated");
  Warp &warp = warps[actor.warp];
  Step met = gatherWarp(
      actor, op, [&] { warp.lanes[actor.lane] = value->floats[0]; },
      [&] { warp.shuffled = warp.lanes; });
  if (met != Step::next)
    return met;
  Val result, valid;
  result.floats = {warp.shuffled[(actor.lane ^ offset->ints[0]) % 32]};
  valid.ints = {-1};
  define(actor, op.getShuffleResult()) = std::move(result);
  define(actor, op.getValid()) = std::move(valid);
  return Step::next;
}

Step Cta::warpAny(Actor &actor, NVVM::VoteSyncOp any,
                  ArrayRef<const Val *> in) {
  if (any.getKind() != NVVM::VoteSyncKind::any || in[0]->ints[0] != -1)
    return fail(any, "only votes of kind 'any' over all 32 lanes (mask -1) "
                     "are simulated");
  Warp &warp = warps[actor.warp];
  Step met = gatherWarp(
      actor, any, [&] { warp.any |= in[1]->ints[0] != 0; },
      [&] {
        warp.lastResult = warp.any;
        warp.any = false;
      });
  if (met != Step::next)
    return met;
  Val out;
  out.ints = {warp.lastResult ? -1 : 0};
  define(actor, any.getResult()) = std::move(out);
  return Step::next;
}

Step Cta::syncWarp(Actor &actor, NVVM::SyncWarpOp op,
                   ArrayRef<const Val *> in) {
  if (in[0]->ints[0] != -1)
    return fail(op, "only bar.warp.sync over all 32 lanes (mask -1) is "
                    "simulated");
  Warp &warp = warps[actor.warp];
  Step met = gatherWarp(
      actor, op,
      [&] {
        warp.arriving.join(actor.clock);
        actor.clock.tick(actor.slot);
      },
      [&] {
        warp.completed = warp.arriving;
        warp.arriving.clear();
      });
  if (met != Step::next)
    return met;
  actor.clock.join(warp.completed);
  return Step::next;
}
