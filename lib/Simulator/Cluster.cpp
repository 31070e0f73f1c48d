//===- Cluster.cpp - the other CTAs of a thread-block cluster -------------===//
//
// The CTAs of a cluster reach each other's shared memory (distributed
// shared memory: fa4.dsmem.load/store, ordinary accesses race-checked in
// the owning CTA with the accessing thread's clock), arrive on each other's
// mbarriers (fa4.mbarrier.arrive_cluster: the arrival releases the
// thread's clock into the remote barrier, whose waiters acquire it), and
// meet at the cluster barrier (barrier.cluster.arrive/wait: every thread of
// every CTA). Vector-clock slots are numbered per CTA from distinct bases,
// so clocks compare across the cluster. A CTA that reaches one that exited
// fails: its shared memory is gone.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

Cta *Cta::clusterMember(Operation *op, int64_t target) {
  if (!cluster) {
    fail(op, "reaches another CTA of its cluster, but the launch has no "
             "cluster");
    return nullptr;
  }
  if (target < 0 || target >= static_cast<int64_t>(cluster->members.size())) {
    fail(op, llvm::formatv("reaches CTA {0} of a cluster of {1}", target,
                           cluster->members.size()));
    return nullptr;
  }
  Cta *member = cluster->members[target];
  if (member->stopped) {
    fail(op, llvm::formatv("reaches CTA {0} of its cluster (block {1}) after "
                           "that CTA exited: its shared memory is gone",
                           target, member->blockId));
    return nullptr;
  }
  return member;
}

Step Cta::clusterOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  // The remote side of a DSMEM access: bounds, data and races in the
  // owner's shared memory.
  auto remoteAccess = [&](Value memref, const Val &ref,
                          ArrayRef<const Val *> indices, const Val &target,
                          int64_t count,
                          bool write) -> std::pair<Cta *, int64_t> {
    Cta *owner = clusterMember(op, target.ints[0]);
    if (!owner)
      return {nullptr, 0};
    auto type = cast<MemRefType>(memref.getType());
    SmallVector<int64_t, 4> values;
    for (const Val *index : indices)
      values.push_back(index->ints[0]);
    std::optional<int64_t> address =
        sharedAddress(op, ref, type, values, count);
    if (!address)
      return {nullptr, 0};
    int64_t bytes = count * bytesOf(type.getElementType());
    auto [it, inserted] = owner->agents.try_emplace(
        {op, static_cast<unsigned>(actor.tid + launch.block * (1 + rank))}, 0);
    if (inserted)
      it->second = owner->races.agent(
          op, who(actor) +
                  llvm::formatv(" in CTA {0}'s shared memory", owner->blockId)
                      .str());
    // A store into another CTA is published by the writer's next
    // cluster-scope proxy fence, one into its own CTA by any.
    bool remote = owner != this;
    if (write)
      std::fill(owner->ordinaryStores.begin() + *address,
                owner->ordinaryStores.begin() + *address + bytes,
                OrdinaryStore{it->second + 1, actor.tid,
                              static_cast<uint32_t>(
                                  remote ? actor.clusterProxyFences.size()
                                         : actor.proxyFences.size()),
                              remote ? this : nullptr});
    owner->races.access(Memory::shared, *address, *address + bytes, write,
                        actor.slot, it->second, actor.clock);
    return {owner, *address};
  };

  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](ClusterArriveOp arrive) {
        if (!cluster ||
            static_cast<int64_t>(arrive.getCtas()) != launch.cluster)
          return fail(op, llvm::formatv("arrives in {0} CTAs, but the launch's "
                                        "clusters have {1}",
                                        arrive.getCtas(), launch.cluster));
        const Val &group = *in[0];
        int64_t index = in[1]->ints[0];
        for (int64_t target = 0; target < launch.cluster; ++target) {
          Cta *owner = clusterMember(op, target);
          if (!owner)
            return Step::error;
          int64_t count = owner->groupSizes.lookup(group.base);
          if (index < 0 || index >= count)
            return fail(op, llvm::formatv("barrier index {0} is out of the "
                                          "group's {1} in CTA {2}",
                                          index, count, owner->blockId));
          MBarrier &barrier = owner->barriers[group.base + index];
          if (!barrier.initialized)
            return fail(op, llvm::formatv("arrives on mbarrier {0} of CTA {1} "
                                          "before that CTA initialized it",
                                          barrier.name, owner->blockId));
          if (!barrier.followsLastPhase(actor.clock))
            return fail(
                op, llvm::formatv("{0} arrives on mbarrier {1} of CTA {2} in "
                                  "its phase {3}, but is not ordered after the "
                                  "completion of phase {4}",
                                  who(actor), barrier.name, owner->blockId,
                                  barrier.phase, barrier.phase - 1));
          if (barrier.arrive(actor.clock))
            owner->completed(group.base + index);
        }
        actor.clock.tick(actor.slot);
        return Step::next;
      })
      .Case([&](DsmemLoadOp load) {
        int64_t count = load.getResult().getType().getNumElements();
        auto [owner, address] =
            remoteAccess(load.getBuffer(), *in[0], in.slice(1, in.size() - 2),
                         *in.back(), count, /*write=*/false);
        if (!owner)
          return Step::error;
        Type element = load.getBuffer().getType().getElementType();
        Val out;
        for (int64_t i = 0; i < count; ++i)
          out.floats.push_back(
              owner->loadElement(element, address + i * bytesOf(element)));
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](DsmemStoreOp store) {
        int64_t count = store.getValue().getType().getNumElements();
        auto [owner, address] =
            remoteAccess(store.getBuffer(), *in[1], in.slice(2, in.size() - 3),
                         *in.back(), count, /*write=*/true);
        if (!owner)
          return Step::error;
        Type element = store.getBuffer().getType().getElementType();
        for (int64_t i = 0; i < count; ++i)
          owner->storeElement(element, address + i * bytesOf(element),
                              in[0]->floats.empty() ? 0 : in[0]->floats[i],
                              in[0]->ints.empty() ? 0 : in[0]->ints[i]);
        return Step::next;
      })
      .Case([&](NVVM::ClusterArriveOp) {
        if (!cluster)
          return fail(op, "arrives at the cluster barrier, but the launch has "
                          "no cluster");
        if (actor.clusterGeneration)
          return fail(op, who(actor) + " arrives at the cluster barrier again "
                                       "before waiting");
        actor.clusterGeneration = cluster->generation;
        cluster->arriving.join(actor.clock);
        actor.clock.tick(actor.slot);
        if (++cluster->arrived == launch.cluster * launch.block) {
          cluster->arrived = 0;
          ++cluster->generation;
          cluster->completed = std::move(cluster->arriving);
          cluster->arriving.clear();
          for (Cta *member : cluster->members)
            member->wake(WaitKind::clusterBarrier, 0);
        }
        return Step::next;
      })
      .Case([&](NVVM::ClusterWaitOp) {
        if (!actor.clusterGeneration)
          return fail(op, who(actor) + " waits at the cluster barrier without "
                                       "arriving");
        if (cluster->generation == *actor.clusterGeneration) {
          block(actor, op, WaitKind::clusterBarrier, 0);
          return Step::blocked;
        }
        actor.clock.join(cluster->completed);
        actor.clusterGeneration.reset();
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}
