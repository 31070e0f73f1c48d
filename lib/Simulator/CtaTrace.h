//===- CtaTrace.h - the protocol timeline of one CTA ------------*- C++ -*-===//
//
// Records what the threads and asynchronous units of a simulated CTA do
// into a Trace (fa4-sim --trace): one track per warp (its lane 0, the lane
// that issues the warp's TMA, MMA and commits), one per TMA copy in flight,
// one per MMA or wgmma pipe; spans for waits, copies and MMAs; arrows from
// the arrivals that complete an mbarrier phase (or a named barrier's
// generation, a wgmma group, a TMA store) to the waits that observe them.
// The Cta calls the hooks below only when it has a CtaTrace, so a run
// without --trace pays a null check per hook.
//
// Time is the CTA's scheduler step: every op a thread executes and every
// completion of asynchronous work is one step.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_CTATRACE_H
#define FA4_LIB_SIMULATOR_CTATRACE_H

#include "Trace.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <deque>
#include <map>
#include <memory>

namespace mlir::fa4::sim {

class Cta;
struct Actor;
struct TmaLoad;
struct StoreInFlight;
struct MmaPipe;
struct MmaWork;
struct WgmmaWork;
enum class Step;

class CtaTrace {
public:
  CtaTrace(Cta &cta, Trace &trace);

  //===--- Hooks ----------------------------------------------------------===//

  /// A thread executed `op` (Scheduler.cpp, step): one step of the clock.
  /// Ends the span of a wait that returned, and notes what `op` issued.
  void stepped(Actor &actor, Operation *op, Step result);
  /// One completion of asynchronous work (Scheduler.cpp, fireEvent).
  void tick() { ++now; }
  /// A thread blocks at `op` (Scheduler.cpp, block); a thread retrying the
  /// op it blocked at keeps the time it first blocked.
  void blocked(Actor &actor, Operation *op);
  /// A thread arrives on mbarrier `barrier` with `op` (Barriers.cpp).
  void arrived(int64_t barrier, const Actor &actor, Operation *op);
  /// Mbarrier `barrier` completed a phase (Barriers.cpp, completed).
  void phaseCompleted(int64_t barrier);
  /// A TMA load lands (Tma.cpp, before its transaction bytes complete).
  void loadLanded(const TmaLoad &load);
  /// A TMA store completes (Tma.cpp).
  void storeDone(const StoreInFlight &store);
  /// The MMA pipe executes the work at its head (TensorCore.cpp).
  void mmaExecuted(const MmaPipe &pipe, const MmaWork &work);
  /// The wgmma pipe of `warpgroup` executes `work` (Wgmma.cpp).
  void wgmmaExecuted(unsigned warpgroup, const WgmmaWork &work);
  /// The CTA stopped (Scheduler.cpp, run): waits never released and copies
  /// still in flight end here, marked as such.
  void finish();

private:
  /// A point on a track: the source of an arrow.
  struct Point {
    int64_t tid = -1;
    uint64_t ts = 0;
  };
  /// An arrival on an mbarrier in its current phase, the last one of its
  /// track; thread arrivals get their span when the phase completes.
  struct Arrival {
    Point at;
    std::string name; // the span of a thread arrival, empty for units
  };
  struct Copy {
    unsigned lane;
    uint64_t issued;
    std::string name;
    Trace::Args args;
  };
  struct ThreadState {
    Operation *blockedAt = nullptr;
    uint64_t since = 0;
    /// Issue times of the TMA stores not yet committed.
    std::deque<uint64_t> openStores;
  };
  struct PipeState {
    std::deque<uint64_t> issued; // issue times of the work queued
    uint64_t free = 0;           // when the pipe finished its last work
  };

  static constexpr int64_t kTmaTracks = 1000, kMmaTracks = 2000,
                           kWgmmaTracks = 3000;

  void nameWarps();
  /// The bookkeeping of asynchronous work `op` issued.
  void issued(Actor &actor, Operation *op);
  /// `op` returned for lane 0 of a warp after waiting since `begin`.
  void waitEnded(Actor &actor, Operation *op, uint64_t begin, bool blocked);
  /// An arrival of a named barrier's op (bar.sync, bar.arrive,
  /// gpu.barrier) at `ts`.
  void namedArrival(Actor &actor, Operation *op, uint64_t ts);
  /// The wait `op` of `actor` as a span name, or "" when `op` is no wait.
  std::string waitName(const Actor &actor, Operation *op, bool blocked) const;
  /// The mbarrier a try_wait of `actor` waits on.
  int64_t waitedBarrier(const Actor &actor, Operation *op) const;
  std::string barrierName(int64_t barrier) const;
  std::string sharedName(int64_t offset) const;
  std::string tmemName(int64_t column) const;
  std::string location(Operation *op) const;
  /// The first TMA track free from `begin` on, for a copy from then.
  unsigned copyLane(uint64_t begin);
  static uint64_t copyKey(uint32_t slot, uint32_t value) {
    return (static_cast<uint64_t>(value) << 32) | slot;
  }
  /// Ends the span of the TMA copy stamped `stamp` in `slot` now and frees
  /// its track; returns the track, or nullopt for a copy not traced.
  std::optional<int64_t> finishCopy(uint32_t slot, uint32_t stamp);

  Cta &cta;
  Trace &trace;
  int64_t pid;
  uint64_t now = 0;
  std::vector<ThreadState> threads;
  /// Per mbarrier: the arrivals of its current phase, and the sources of
  /// the phase it completed last (what a successful wait observes).
  DenseMap<int64_t, SmallVector<Arrival, 2>> arriving, released;
  /// Per named barrier: the generation seen so far and the arrival that
  /// completed the last one.
  std::map<int64_t, uint64_t> generations;
  std::map<int64_t, Point> generationDone;
  /// TMA copies in flight by their async slot and clock value, and when
  /// each TMA track is free (kBusy while a copy is in flight on it).
  DenseMap<uint64_t, Copy> copies;
  static constexpr uint64_t kBusy = ~uint64_t(0);
  std::vector<uint64_t> laneFree;
  /// The last TMA store completion of each issuing thread.
  DenseMap<unsigned, Point> storeDoneOf;
  DenseMap<unsigned, PipeState> mmaPipes;
  std::vector<PipeState> wgmmaPipes;
  std::vector<std::shared_ptr<WgmmaWork>> lastIssued;
  /// Per warpgroup, recent wgmma executions: commit group and point.
  std::vector<std::deque<std::pair<uint64_t, Point>>> wgmmaDone;
};

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_CTATRACE_H
