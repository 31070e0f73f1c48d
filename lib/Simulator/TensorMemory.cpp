//===- TensorMemory.cpp - Tensor Memory and tcgen05 ld/st -----------------===//
//
// The CTA's Tensor Memory, 128 lanes of 512 32-bit columns: its allocation,
// the views into it, the thread-issued tcgen05.ld/st, their waits, and the
// tcgen05 fences that order them across thread synchronization. A load or
// store takes its value at issue, but its access is race-checked when the
// thread waits for it (or exits), since the hardware performs it somewhere
// in between.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

namespace {

std::string locationOf(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

/// Whether `op` writes the Tensor Memory `tmem` names, as its memory effects
/// on TensorMemoryResource declare.
bool writesTmem(Operation *op, Value tmem) {
  auto effects = cast<MemoryEffectOpInterface>(op);
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffectsOnValue(tmem, instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Write>(e.getEffect()) &&
           isa<TensorMemoryResource>(e.getResource());
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

Step Cta::tmemOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](TmemAllocOp alloc) {
        // Warp-collective: lane 0 stands for the warp.
        if (actor.lane != 0)
          return Step::next;
        // The lowering relinquishes the CTA's allocation permit right after
        // allocating: a CTA allocates once.
        if (tmemAllocOp)
          return fail(op, "allocates Tensor Memory again, but the "
                          "fa4.tmem.alloc at " +
                              locationOf(tmemAllocOp) +
                              " relinquished the CTA's permit to allocate");
        int64_t columns = alloc.getColumns();
        tmemAllocated = columns;
        tmemAllocOp = op;
        tmemAllocWarp = actor.warp;
        std::optional<int64_t> address =
            sharedAddress(op, *in[0], alloc.getSlot().getType(), {0}, 1);
        if (!address)
          return Step::error;
        if (!sharedAccess(actor, op, alloc.getSlot(), *address, 4))
          return Step::error;
        uint32_t base = 0; // lane 0, column 0
        std::memcpy(&shared[*address], &base, 4);
        return Step::next;
      })
      .Case([&](TmemDeallocOp dealloc) {
        if (actor.lane != 0)
          return Step::next;
        if (tmemAllocated == 0)
          return fail(op, "frees Tensor Memory that is not allocated");
        if (actor.warp != tmemAllocWarp)
          return fail(op, llvm::formatv("frees Tensor Memory in warp {0}, "
                                        "but warp {1} allocated it at {2}",
                                        actor.warp, tmemAllocWarp,
                                        locationOf(tmemAllocOp)));
        int64_t first = in[0]->base,
                columns = dealloc.getTmem().getType().getNumColumns();
        if (first != 0 || columns != tmemAllocated)
          return fail(op, llvm::formatv("frees TMEM columns [{0}, {1}), but "
                                        "the allocation is columns [0, {2})",
                                        first, first + columns, tmemAllocated));
        // Freeing writes every column: in-flight accesses race with it.
        uint32_t agent = agentFor(op, actor);
        for (int64_t lane = 0; lane < kTmemLanes; ++lane)
          races.access(Memory::tensor, lane * kTmemColumns,
                       lane * kTmemColumns + tmemAllocated, true, actor.tcSlot,
                       agent, actor.tcView);
        tmemAllocated = 0;
        return Step::next;
      })
      .Case([&](TmemBaseOp base) {
        std::optional<int64_t> address =
            sharedAddress(op, *in[0], base.getSlot().getType(), {0}, 1);
        if (!address)
          return Step::error;
        if (!sharedAccess(actor, op, base.getSlot(), *address, 4))
          return Step::error;
        uint32_t value;
        std::memcpy(&value, &shared[*address], 4);
        if (value >> 16 != 0)
          return fail(op, "reads a TMEM address that no fa4.tmem.alloc wrote");
        Val out;
        out.kind = Val::Kind::tmem;
        out.base = value & 0xFFFF;
        define(actor, base.getTmem()) = std::move(out);
        return Step::next;
      })
      .Case([&](TmemViewOp view) {
        Val out = *in[0];
        out.base += view.getColumn();
        define(actor, view.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](TmemLoadOp load) {
        TmemType type = load.getSource().getType();
        unsigned bits = type.getElementType().getIntOrFloatBitWidth();
        int64_t n = load.getResult().getType().getNumElements();
        int64_t first = in[0]->base + load.getOffset() * bits / 32;
        int64_t columns = n * bits / 32;
        if (!tmemColumnsAllocated(op, first, columns))
          return Step::error;
        int64_t lane = tmemLane(actor);
        Val out;
        Format format = formatOf(type.getElementType());
        for (int64_t i = 0; i < n; ++i) {
          if (bits == 32) {
            float x;
            std::memcpy(&x, &tmem[lane * kTmemColumns + first + i], 4);
            out.floats.push_back(x);
          } else {
            out.floats.push_back(decode(
                format,
                packedElement(tmem[lane * kTmemColumns + first + i * bits / 32],
                              bits, i)));
          }
        }
        out.pendingLoad = op;
        define(actor, load.getResult()) = std::move(out);
        actor.pendingLoadValues.push_back(load.getResult());
        actor.pendingTmem(load.getAsyncCompletion())
            .push_back({lane, first, columns, writesTmem(op, load.getSource()),
                        agentFor(op, actor), actor.issueView()});
        return Step::next;
      })
      .Case([&](TmemStoreOp store) {
        TmemType type = store.getDest().getType();
        unsigned bits = type.getElementType().getIntOrFloatBitWidth();
        int64_t n = store.getValue().getType().getNumElements();
        int64_t first = in[1]->base + store.getOffset() * bits / 32;
        int64_t columns = (n * bits + 31) / 32;
        if (!tmemColumnsAllocated(op, first, columns))
          return Step::error;
        int64_t lane = tmemLane(actor);
        Format format = formatOf(type.getElementType());
        for (int64_t i = 0; i < n; ++i) {
          float x = in[0]->floats[i];
          if (bits == 32) {
            std::memcpy(&tmem[lane * kTmemColumns + first + i], &x, 4);
          } else {
            uint32_t &cell = tmem[lane * kTmemColumns + first + i * bits / 32];
            unsigned shift = bits * (i % (32 / bits));
            uint32_t mask = ((1u << bits) - 1) << shift;
            cell = (cell & ~mask) |
                   (static_cast<uint32_t>(encode(format, x)) << shift);
          }
        }
        actor.pendingTmem(store.getAsyncCompletion())
            .push_back({lane, first, columns, writesTmem(op, store.getDest()),
                        agentFor(op, actor), actor.issueView()});
        return Step::next;
      })
      .Case([&](NVVM::Tcgen05WaitOp) {
        // What the wait completes is its contract (AsyncWaitOpInterface).
        auto wait = cast<AsyncWaitOpInterface>(op);
        for (AsyncCompletion kind :
             {AsyncCompletion::tmem_load_wait, AsyncCompletion::tmem_store_wait})
          if (wait.retires(kind))
            completeTmemAccesses(actor, actor.pendingTmem(kind));
        if (wait.retires(AsyncCompletion::tmem_load_wait)) {
          for (Value v : actor.pendingLoadValues)
            actor.env[v].pendingLoad = nullptr;
          actor.pendingLoadValues.clear();
        }
        return checkRetired(actor, wait);
      })
      .Case([&](NVVM::Tcgen05FenceOp fence) {
        if (fence.getKind() == NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC) {
          actor.clock.set(actor.tcSlot, actor.tcView.get(actor.tcSlot));
          actor.tcView.tick(actor.tcSlot);
        } else {
          actor.tcView.join(actor.clock);
        }
        actor.tcViewCopy.reset();
        return Step::next;
      })
      .Default([&](Operation *) -> Step {
        llvm_unreachable("fa4Op and nvvmOp route only TMEM ops here");
      });
}

void Cta::completeTmemAccesses(Actor &actor,
                               SmallVectorImpl<PendingTmem> &pending) {
  // The access happened somewhere between its issue and now: whatever it
  // conflicts with must be ordered before the issue. It is recorded at the
  // thread's current epoch, which only a later fence publishes.
  RaceDetector::Explanation explanations[] = {
      {&actor.tcView,
       "are ordered only after the thread's tcgen05.wait, but the thread "
       "synchronized before that wait: its TMEM access may complete after "
       "the other one"},
      {&actor.clock,
       "are ordered only for ordinary accesses: the second thread waited on "
       "a barrier, but no tcgen05.fence after_thread_sync follows that "
       "wait"}};
  for (const PendingTmem &access : pending) {
    int64_t first = access.lane * kTmemColumns + access.firstColumn;
    races.access(Memory::tensor, first, first + access.columns, access.write,
                 actor.tcSlot, access.agent, *access.issueView,
                 actor.tcView.get(actor.tcSlot), explanations);
  }
  pending.clear();
}

bool Cta::tmemColumnsAllocated(Operation *op, int64_t first, int64_t columns) {
  if (first >= 0 && first + columns <= tmemAllocated)
    return true;
  fail(op, llvm::formatv("accesses TMEM columns [{0}, {1}) but only [0, {2}) "
                         "are allocated",
                         first, first + columns, tmemAllocated));
  return false;
}

void Cta::checkTmemFreed() {
  if (tmemAllocated != 0)
    fail(tmemAllocOp,
         llvm::formatv("CTA {0} exited with TMEM columns [0, {1}) still "
                       "allocated: no fa4.tmem.dealloc freed them",
                       blockId, tmemAllocated));
}
