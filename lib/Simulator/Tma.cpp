//===- Tma.cpp - TMA loads and stores -------------------------------------===//
//
// The Tensor Memory Accelerator between global and shared memory. A load
// is issued against an mbarrier and lands at a random later point: it
// writes the box in the 128-byte swizzle and completes its transaction
// bytes. Stores are issued into the thread's open group, committed as a
// group, and each reads shared memory (through the async proxy) at a
// random point before its group retires.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// Issue
//===----------------------------------------------------------------------===//

Step Cta::tmaOp(Actor &actor, Operation *op) {
  if (auto load = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
    const Val *dst = use(actor, op, load.getDst());
    const Val *group = use(actor, op, load.getBarriers());
    const Val *map = use(actor, op, load.getTensorMapDescriptor());
    int64_t b;
    if (!dst || !group || !map ||
        !barrierIndex(op, *group, load.getMbarId(), actor, b))
      return Step::error;
    if (load.getPredicate() || load.getMulticastMask())
      return fail(op, "predicated and multicast TMA loads are not supported");
    int64_t elementBytes = bytesOf(load.getDst().getType().getElementType());
    TmaLoad work{op,          static_cast<unsigned>(map->base),
                 {},          dst->base + dst->offset * elementBytes,
                 b,           0,
                 actor.clock, agentFor(op, actor)};
    for (Value c : load.getCoordinates()) {
      const Val *v = use(actor, op, c);
      if (!v)
        return Step::error;
      work.coords.push_back(v->ints[0]);
    }
    const TensorMap &tensorMap = launch.maps[work.map];
    SmallVector<int64_t> shape(llvm::reverse(tensorMap.box));
    if (load.getDst().getType().getShape() != ArrayRef<int64_t>(shape))
      return fail(op, "the destination's shape is not the tensor map's box "
                      "(from the launch manifest)");
    // The hardware faults (an illegal instruction on the H100) on a box
    // whose innermost coordinate is not 16-byte aligned.
    if (!work.coords.empty() && (work.coords[0] * elementBytes) % 16 != 0)
      return fail(op, llvm::formatv("the TMA load's innermost coordinate {0} "
                                    "is not 16-byte aligned ({1}-byte "
                                    "elements)",
                                    work.coords[0], elementBytes));
    if (work.shared % 128 != 0)
      return fail(op, llvm::formatv("the destination (shared byte {0}) is not "
                                    "128-byte aligned",
                                    work.shared));
    if (!checkShared(op, work.shared,
                     ShapedType::getNumElements(shape) * elementBytes))
      return Step::error;
    work.slot = stampAsync(work.clock);
    loads.push_back(std::move(work));
    actor.clock.tick(actor.slot);
    return Step::next;
  }
  if (auto store = dyn_cast<nvgpu::TmaAsyncStoreOp>(op)) {
    const Val *src = use(actor, op, store.getSrc());
    const Val *map = use(actor, op, store.getTensorMapDescriptor());
    if (!src || !map)
      return Step::error;
    if (store.getPredicate())
      return fail(op, "predicated TMA stores are not supported");
    int64_t elementBytes = bytesOf(store.getSrc().getType().getElementType());
    TmaStore work{static_cast<unsigned>(map->base),
                  {},
                  src->base + src->offset * elementBytes,
                  op};
    for (Value c : store.getCoordinates()) {
      const Val *v = use(actor, op, c);
      if (!v)
        return Step::error;
      work.coords.push_back(v->ints[0]);
    }
    SmallVector<int64_t> shape(llvm::reverse(launch.maps[work.map].box));
    if (store.getSrc().getType().getShape() != ArrayRef<int64_t>(shape))
      return fail(op, "the source's shape is not the tensor map's box (from "
                      "the launch manifest)");
    if (work.shared % 128 != 0)
      return fail(op, "the source is not 128-byte aligned");
    if (!checkShared(op, work.shared,
                     ShapedType::getNumElements(shape) * elementBytes))
      return Step::error;
    actor.openStores.push_back(std::move(work));
    return Step::next;
  }
  if (isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
    if (actor.openStores.empty())
      return Step::next;
    uint64_t group = actor.storeGroupsRetired + actor.storeGroups.size();
    actor.storeGroups.push_back(actor.openStores.size());
    for (TmaStore &store : actor.openStores) {
      uint32_t agent = agentFor(store.op, actor);
      StoreInFlight work{std::move(store), actor.tid, 0,
                         actor.clock,      agent,     group};
      work.slot = stampAsync(work.clock);
      stores.push_back(std::move(work));
    }
    actor.openStores.clear();
    actor.clock.tick(actor.slot);
    return Step::next;
  }
  if (auto wait = dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
    uint32_t pending = wait.getGroup();
    if (static_cast<int32_t>(pending) < 0)
      return fail(op, "waits until " +
                          Twine(static_cast<int32_t>(pending)) +
                          " store groups are pending; the count must be >= 0");
    if (actor.storeGroups.size() > pending) {
      block(actor, op, WaitKind::storeGroups, actor.tid);
      return Step::blocked;
    }
    // Groups [0, complete) have retired; later ones may have too, but the
    // wait does not guarantee it, so it does not order their reads.
    uint64_t committed = actor.storeGroupsRetired + actor.storeGroups.size();
    uint64_t complete = committed > pending ? committed - pending : 0;
    actor.storeGroupsWaited = std::max(actor.storeGroupsWaited, complete);
    if (complete > 0) {
      auto done = actor.storeGroupsDone.upper_bound(complete - 1);
      if (done != actor.storeGroupsDone.begin())
        actor.clock.join(std::prev(done)->second);
    }
    return checkRetired(actor, cast<AsyncWaitOpInterface>(op));
  }
  return fail(op, "the simulator cannot execute this op");
}

Slot Cta::stampAsync(VectorClock &clock) {
  Slot slot = nextSlot + asyncCounter % kAsyncSlots;
  clock.set(slot, asyncCounter / kAsyncSlots + 1);
  ++asyncCounter;
  return slot;
}

//===----------------------------------------------------------------------===//
// Completion
//===----------------------------------------------------------------------===//

namespace {

/// Where box element `inner` (innermost first) at `coords` lies in the
/// tensor of `map`: its element offset, kOutOfBounds outside the map's
/// dimensions (loads read zeros, stores drop it) or kOutsideTensor where
/// the map addresses memory the tensor does not hold (a fault).
constexpr int64_t kOutOfBounds = -1, kOutsideTensor = -2;
int64_t globalElement(const TensorMap &map, const GlobalTensor &tensor,
                      ArrayRef<int64_t> coords, ArrayRef<int64_t> inner) {
  int64_t offset = map.base;
  for (size_t d = 0; d < map.dims.size(); ++d) {
    int64_t c = coords[d] + inner[d];
    if (c < 0 || c >= map.dims[d])
      return kOutOfBounds;
    offset += c * map.strides[d];
  }
  if (offset < 0 || offset >= static_cast<int64_t>(tensor.data.size()))
    return kOutsideTensor;
  return offset;
}

/// "[c0, c1, ...]": the map coordinates of box element `inner`.
std::string boxCoordinates(ArrayRef<int64_t> coords, ArrayRef<int64_t> inner) {
  std::string text = "[";
  for (size_t d = 0; d < inner.size(); ++d)
    text += (d ? ", " : "") + std::to_string(coords[d] + inner[d]);
  return text + "]";
}

/// Visits every element of a 4-D box (innermost first) with its linear
/// index in shared memory.
template <typename F> void forEachBoxElement(ArrayRef<int64_t> box, F f) {
  SmallVector<int64_t, 4> i(box.size(), 0);
  int64_t linear = 0;
  for (i[3] = 0; i[3] < box[3]; ++i[3])
    for (i[2] = 0; i[2] < box[2]; ++i[2])
      for (i[1] = 0; i[1] < box[1]; ++i[1])
        for (i[0] = 0; i[0] < box[0]; ++i[0])
          f(ArrayRef<int64_t>(i), linear++);
}

} // namespace

void Cta::completeTmaLoad(size_t index) {
  if (tracer)
    tracer->loadLanded(loads[index]);
  TmaLoad work = std::move(loads[index]);
  loads.erase(loads.begin() + index);
  const TensorMap &map = launch.maps[work.map];
  const GlobalTensor &tensor = (*launch.tensors)[map.tensor];
  Format format = formatOf(tensor.element);
  int64_t elementBytes = formatBytes(format);
  int64_t bytes = 0;
  SmallVector<int64_t, 4> box(map.box);
  bool ok = true;
  forEachBoxElement(box, [&](ArrayRef<int64_t> inner, int64_t linear) {
    if (!ok)
      return;
    int64_t global = globalElement(map, tensor, work.coords, inner);
    if (global == kOutsideTensor) {
      fail(work.op, "the TMA load reads outside '" + tensor.name +
                        "' at map coordinates " +
                        boxCoordinates(work.coords, inner));
      ok = false;
      return;
    }
    float value = global < 0 ? 0.0f : tensor.data[global];
    int64_t offset =
        swizzle128(kDynamicSharedBase + work.shared + elementBytes * linear) -
        kDynamicSharedBase;
    if (!checkShared(work.op, offset, elementBytes)) {
      ok = false;
      return;
    }
    uint16_t bits = encode(format, value);
    std::memcpy(&shared[offset], &bits, elementBytes);
    bytes += elementBytes;
  });
  if (!ok)
    return;
  // Race-check the whole box region (the swizzle permutes within it).
  races.access(Memory::shared, work.shared, work.shared + bytes, true,
               work.slot, work.agent, work.clock);
  asyncProxyWrite(work.shared, bytes);
  if (!checkArrival(work.op, work.barrier, work.clock,
                    "the transaction of " + races.agentName(work.agent)))
    return;
  if (barriers[work.barrier].completeTx(bytes, work.clock))
    completed(work.barrier);
}

void Cta::completeStore(size_t index) {
  if (tracer)
    tracer->storeDone(stores[index]);
  StoreInFlight work = std::move(stores[index]);
  stores.erase(stores.begin() + index);
  const TensorMap &map = launch.maps[work.store.map];
  GlobalTensor &tensor = (*launch.tensors)[map.tensor];
  Format format = formatOf(tensor.element);
  int64_t elementBytes = formatBytes(format);
  int64_t bytes = 0;
  SmallVector<int64_t, 4> box(map.box);
  std::string fault;
  forEachBoxElement(box, [&](ArrayRef<int64_t> inner, int64_t linear) {
    int64_t offset = swizzle128(kDynamicSharedBase + work.store.shared +
                                elementBytes * linear) -
                     kDynamicSharedBase;
    bytes += elementBytes;
    if (offset < 0 ||
        offset + elementBytes > static_cast<int64_t>(shared.size()))
      return;
    int64_t global = globalElement(map, tensor, work.store.coords, inner);
    if (global == kOutsideTensor && fault.empty())
      fault = boxCoordinates(work.store.coords, inner);
    if (global < 0)
      return;
    uint16_t bits = 0;
    std::memcpy(&bits, &shared[offset], elementBytes);
    tensor.data[global] = decode(format, bits);
  });
  if (!fault.empty())
    fail(work.store.op, "the TMA store writes outside '" + tensor.name +
                            "' at map coordinates " + fault);
  races.access(Memory::shared, work.store.shared, work.store.shared + bytes,
               false, work.slot, work.agent, work.clock);
  asyncProxyRead(work.store.shared, bytes, work.agent, work.clock);
  Actor &issuer = actors[work.issuer];
  issuer.storeGroupClocks[work.group].join(work.clock);
  if (--issuer.storeGroups[work.group - issuer.storeGroupsRetired] == 0) {
    // Groups retire in order once every store of each is done.
    while (!issuer.storeGroups.empty() && issuer.storeGroups.front() == 0) {
      uint64_t group = issuer.storeGroupsRetired;
      VectorClock done = std::move(issuer.storeGroupClocks[group]);
      issuer.storeGroupClocks.erase(group);
      if (!issuer.storeGroupsDone.empty())
        done.join(issuer.storeGroupsDone.rbegin()->second);
      issuer.storeGroupsDone[group] = std::move(done);
      // Waits ask for the last few groups only.
      while (issuer.storeGroupsDone.size() > 8)
        issuer.storeGroupsDone.erase(issuer.storeGroupsDone.begin());
      issuer.storeGroups.pop_front();
      ++issuer.storeGroupsRetired;
    }
  }
  wake(WaitKind::storeGroups, work.issuer);
}
