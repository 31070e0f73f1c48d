//===- Cta.h - the model of one CTA -----------------------------*- C++ -*-===//
//
// The state of one simulated CTA: its threads (actors), warps and
// warpgroups, shared and Tensor Memory, barriers and the asynchronous units
// (TMA, MMA and wgmma pipes), and the Cta class that runs them. Private to
// lib/Simulator; each unit's semantics is defined in its own .cpp file, as
// the member groups below name.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_CTA_H
#define FA4_LIB_SIMULATOR_CTA_H

#include "CtaTrace.h"
#include "Interpreter.h"
#include "Values.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <random>

namespace mlir::fa4::sim {

inline constexpr int64_t kTmemLanes = 128, kTmemColumns = 512;
inline constexpr int64_t kWarpgroupThreads = 128;
/// Rotating vector-clock slots for TMA loads and stores in flight.
inline constexpr unsigned kAsyncSlots = 32;
/// Vector-clock slots for MMA and wgmma pipes (one per issuing thread or
/// warpgroup).
inline constexpr unsigned kMaxPipes = 64;

//===----------------------------------------------------------------------===//
// Actors
//===----------------------------------------------------------------------===//

enum class Status { ready, blocked, done };
enum class Step { next, entered, blocked, done, error };

/// What a blocked thread waits for, so that the event that may release it
/// wakes it.
enum class WaitKind {
  none,
  mbarrier,
  clusterBarrier, // barrier.cluster.wait
  namedBarrier,
  warpVote,
  storeGroups,
  warpgroup, // a warpgroup-collective op (wgmma, commit) gathering
  wgmmaGroups
};

struct Frame {
  Block *block;
  Block::iterator it;
  Operation *owner;
  int64_t iv = 0, upper = 0, step = 1;
};

/// A tcgen05.ld/st whose TMEM access is checked when the thread waits for
/// it: the hardware performs it somewhere in between.
struct PendingTmem {
  int64_t lane, firstColumn, columns;
  /// Whether it writes TMEM (the op's effect on TensorMemoryResource).
  bool write;
  uint32_t agent;
  /// The thread's tcgen05 view when it issued the access: what is surely
  /// ordered before the access.
  std::shared_ptr<const VectorClock> issueView;
};

struct TmaStore {
  unsigned map;
  SmallVector<int64_t, 4> coords;
  int64_t shared;
  Operation *op;
};

struct WgmmaWork;

struct Actor {
  unsigned tid, warp, lane;
  Slot slot;
  /// The thread's tcgen05 operations (TMEM loads/stores, MMA issue) are
  /// ordered across thread synchronization only through tcgen05 fences:
  /// they run as `tcSlot` and see `tcView`, what the last
  /// fence::after_thread_sync made visible; fence::before_thread_sync
  /// publishes them into `clock` for the next arrive.
  Slot tcSlot;
  VectorClock tcView;
  /// A copy of tcView shared by the accesses issued under it.
  std::shared_ptr<const VectorClock> tcViewCopy;
  const std::shared_ptr<const VectorClock> &issueView() {
    if (!tcViewCopy)
      tcViewCopy = std::make_shared<const VectorClock>(tcView);
    return tcViewCopy;
  }
  std::string role = "-";
  Status status = Status::ready;
  WaitKind waitKind = WaitKind::none;
  int64_t waitId = 0;
  Operation *blockedAt = nullptr;
  VectorClock clock;
  DenseMap<Value, Val> env;
  SmallVector<Frame, 8> stack;
  /// Named barrier / warp vote: the generation this thread arrived in.
  std::optional<uint64_t> arrivedGeneration;
  SmallVector<Value> pendingLoadValues;
  /// tcgen05.ld/st issued and not yet retired, by what completes them (the
  /// ops' AsyncAccessOpInterface): tmem_load_wait, tmem_store_wait.
  SmallVector<PendingTmem> pendingLoads, pendingStores;
  SmallVectorImpl<PendingTmem> &pendingTmem(AsyncCompletion completion) {
    assert((completion == AsyncCompletion::tmem_load_wait ||
            completion == AsyncCompletion::tmem_store_wait) &&
           "not a TMEM access");
    return completion == AsyncCompletion::tmem_load_wait ? pendingLoads
                                                         : pendingStores;
  }
  /// TMA stores issued since the last commit; committed groups in flight.
  SmallVector<TmaStore> openStores;
  std::deque<unsigned> storeGroups; // stores remaining per group
  /// Groups retired so far: the first in `storeGroups` has this index.
  uint64_t storeGroupsRetired = 0;
  /// Groups the thread's store waits guaranteed retired: [0, this).
  uint64_t storeGroupsWaited = 0;
  /// The fence.proxy.async ops the thread executed, in program order, each
  /// with the thread's epoch (its own clock entry) when it ran. An ordinary
  /// store becomes visible to the async proxy through the thread's first
  /// fence after it, and only to readers whose view covers that fence's
  /// epoch: the fence must come before the release they acquire.
  struct ProxyFence {
    uint32_t epoch;
    Operation *op;
  };
  std::vector<ProxyFence> proxyFences;
  /// Those of them at cluster scope (fence.proxy.async.shared::cluster):
  /// only they publish the thread's stores into another CTA's shared
  /// memory.
  std::vector<ProxyFence> clusterProxyFences;
  /// barrier.cluster: the generation this thread arrived in.
  std::optional<uint64_t> clusterGeneration;
  /// The completion clocks of the stores of each group in flight, by group
  /// index; and for recently retired groups, the completion of every group
  /// up to and including it (groups retire in order). A wait acquires only
  /// the groups it guarantees.
  std::map<uint64_t, VectorClock> storeGroupClocks, storeGroupsDone;
  /// fa4.wgmma results not yet returned by a fa4.wgmma.wait: the wgmma
  /// that computes each.
  DenseMap<Value, std::shared_ptr<WgmmaWork>> pendingWgmma;
};

/// Threads meeting at a collective op (a warp vote or shuffle, a
/// warpgroup's wgmma or commit): the op, the threads arrived so far, and a
/// generation that advances when the last one arrives.
struct Rendezvous {
  Operation *op = nullptr;
  int64_t arrived = 0;
  uint64_t generation = 0;
};

struct Warp {
  Rendezvous meeting;
  bool any = false, lastResult = false;
  /// gpu.shuffle: each lane's value in the current generation, and all of
  /// them once the last lane arrived.
  std::array<float, 32> lanes{}, shuffled{};
  /// fa4.wgmma.quantize: each lane's accumulator fragment, likewise.
  std::array<std::vector<float>, 32> fragments, exchanged;
  /// bar.warp.sync: the lanes' clocks joined as they arrive, and once all
  /// have (what each lane has seen of the others' memory operations).
  VectorClock arriving, completed;
};

//===----------------------------------------------------------------------===//
// Asynchronous units
//===----------------------------------------------------------------------===//

/// One fa4.wgmma of a warpgroup: the operands its 128 threads hold, and
/// each thread's fragment of the product once the pipe executed it.
struct WgmmaWork {
  Operation *op = nullptr;
  Val a, b; // shared-memory tiles (a only when A is not in registers)
  std::vector<SmallVector<float, 1>> aRegisters, acc, result;
  /// The earlier wgmma whose result is the accumulator, where it was still
  /// in flight at issue (`acc` is then taken from its result).
  std::shared_ptr<WgmmaWork> accFrom;
  VectorClock clock; // the threads' clocks joined at issue
  uint32_t agent = 0;
  uint64_t group = 0; // commit groups before it
  bool done = false;
};

/// A warpgroup's collective ops and its wgmma pipe, which executes the
/// issued wgmmas in order.
struct Warpgroup {
  Rendezvous meeting;
  std::shared_ptr<WgmmaWork> gathering, issued;
  Slot slot = 0;
  VectorClock clock;
  std::deque<std::shared_ptr<WgmmaWork>> work;
  uint64_t committed = 0;
  /// The pipe's clock when each recent group's last wgmma completed.
  std::map<uint64_t, VectorClock> groupDone;
};

/// Work on the MMA pipe of one issuing thread, in issue order.
struct MmaWork {
  Operation *op;
  bool commit = false;
  int64_t barrier = 0;
  Val a, b, d;
  bool accumulate = false;
  VectorClock clock;
  uint32_t agent = 0;
};

struct MmaPipe {
  unsigned issuer;
  Slot slot;
  VectorClock clock;
  std::deque<MmaWork> work;
};

struct TmaLoad {
  Operation *op;
  unsigned map;
  SmallVector<int64_t, 4> coords;
  int64_t shared;
  int64_t barrier;
  Slot slot;
  VectorClock clock;
  uint32_t agent;
};

struct StoreInFlight {
  TmaStore store;
  unsigned issuer;
  Slot slot;
  VectorClock clock;
  uint32_t agent;
  /// The index of its group among the issuer's groups, counted from the
  /// first group ever committed.
  uint64_t group;
};

//===----------------------------------------------------------------------===//
// The cluster
//===----------------------------------------------------------------------===//

class Cta;

/// The CTAs of one thread-block cluster, which reach each other's shared
/// memory and mbarriers, and their cluster barrier (barrier.cluster): a
/// generation completes when every thread of every CTA arrived.
struct Cluster {
  std::vector<Cta *> members;
  int64_t arrived = 0;
  uint64_t generation = 0;
  VectorClock arriving, completed;
};

//===----------------------------------------------------------------------===//
// The CTA
//===----------------------------------------------------------------------===//

/// One CTA of a launch. Each op family has a dispatch member (`memrefOp`,
/// `tmemOp`, ...) that `execute` or `fa4Op` routes its ops to; each
/// asynchronous unit has a completion member that `fireEvent` calls.
class Cta {
public:
  /// CTA `rank` of `cluster` (none: a CTA alone).
  Cta(const Launch &launch, int64_t blockId, const Schedule &schedule,
      Cluster *cluster = nullptr, unsigned rank = 0);
  /// `stalled`: every thread waits and nothing is in flight, but another
  /// CTA of the cluster may still release it.
  enum class Progress { running, stalled, stopped };
  /// One scheduling step: an asynchronous completion, or a burst of one
  /// ready thread's ops. `stopped` once the CTA exited, failed or
  /// deadlocked.
  Progress advance();
  /// The outcome once the CTA stopped (or the grid did).
  CtaOutcome finish();
  bool hasFailed() const { return failed; }
  /// Whether the CTA is stalled (advance said so and nothing woke it).
  bool isStalled() const;
  bool hasStopped() const { return stopped; }
  Cluster *getCluster() const { return cluster; }
  /// Reports the deadlock of a cluster whose CTAs are all stalled.
  void stopDeadlocked() {
    reportDeadlock();
    stopped = true;
  }

private:
  /// CtaTrace.cpp: the timeline of --trace reads the state it records.
  friend class CtaTrace;

  //===--- Scheduler.cpp: scheduling, dispatch and reports ----------------===//

  Step step(Actor &actor);
  Step execute(Actor &actor, Operation *op);
  void block(Actor &actor, Operation *op, WaitKind kind, int64_t id);
  void wake(WaitKind kind, int64_t id);
  bool fireEvent();
  void reportDeadlock();
  /// Whether TMA loads or stores, MMAs or wgmmas are in flight.
  bool asyncWorkInFlight() const;
  /// arith and memory-free vector ops.
  Step pure(Actor &actor, Operation *op, ArrayRef<const Val *> in);

  const Val *use(Actor &actor, Operation *op, Value value);
  Val &define(Actor &actor, Value value) { return actor.env[value]; }
  Step fail(Operation *op, const Twine &message);
  /// The contract of a wait (AsyncWaitOpInterface) once `wait` returns in
  /// `actor`: nothing of a kind it retires that the thread issued before it
  /// is in flight or left uncommitted. Fails otherwise.
  Step checkRetired(Actor &actor, AsyncWaitOpInterface wait);
  std::string who(const Actor &actor) const;
  /// The race detector's agent for `op` run by `actor` (for asynchronous
  /// ops: the unit it issued).
  uint32_t agentFor(Operation *op, const Actor &actor);
  std::string describeMemory(Memory memory, int64_t first, int64_t last) const;

  //===--- ControlFlow.cpp: scf, gpu and llvm ops -------------------------===//

  Step scfOp(Actor &actor, Operation *op);
  Step yield(Actor &actor, Operation *op);
  Step gpuOp(Actor &actor, Operation *op);
  Step llvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  /// bar.warp.sync over the whole warp: orders each lane's memory
  /// operations before it before every lane's after it.
  Step syncWarp(Actor &actor, NVVM::SyncWarpOp op, ArrayRef<const Val *> in);

  //===--- FA4Ops.cpp: the fa4 dialect's ops, routed to their units -------===//

  Step fa4Op(Actor &actor, Operation *op, ArrayRef<const Val *> in);

  //===--- NVVMOps.cpp: the nvvm ops of kernels, routed to their units ----===//

  Step nvvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);

  //===--- SharedMemory.cpp: memref and vector memory ops -----------------===//

  Step memrefOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step vectorOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  /// The shared byte offset of element `indices` of memref `ref` (of type
  /// `type`) and the bytes of `count` elements there; fails out of bounds.
  std::optional<int64_t> sharedAddress(Operation *op, const Val &ref,
                                       MemRefType type,
                                       ArrayRef<int64_t> indices,
                                       int64_t count);
  bool checkShared(Operation *op, int64_t offset, int64_t bytes);
  /// An ordinary load or store by `op` of `count` consecutive elements of
  /// its memref operand `memref` (of value `ref`) at `indices`: checks
  /// bounds, records the access, and returns the shared byte offset of the
  /// first element.
  std::optional<int64_t> elementsAccess(Actor &actor, Operation *op,
                                        Value memref, const Val &ref,
                                        ArrayRef<const Val *> indices,
                                        int64_t count);
  float loadElement(Type element, int64_t offset);
  void storeElement(Type element, int64_t offset, float real, int64_t integer);
  /// An ordinary access by `op` of shared bytes [offset, offset + bytes)
  /// through its memref operand `memref`: a read or a write as the op's
  /// memory effects on that operand declare. Race-checks it and records
  /// writes for the async proxy; false on an error.
  bool sharedAccess(Actor &actor, Operation *op, Value memref, int64_t offset,
                    int64_t bytes);
  /// An async-proxy read (TMA store, MMA or wgmma operand) of shared bytes
  /// [offset, offset + bytes) by `reader` with view `clock`: an ordinary
  /// store is invisible to it unless a fence.proxy.async of the storing
  /// thread after the store happens before the read.
  void asyncProxyRead(int64_t offset, int64_t bytes, uint32_t reader,
                      const VectorClock &clock);
  /// An async-proxy write (a TMA load landing) of shared bytes [offset,
  /// offset + bytes): ordinary stores there are overwritten.
  void asyncProxyWrite(int64_t offset, int64_t bytes);

  //===--- Barriers.cpp: mbarriers, named barriers, collectives -----------===//

  /// The nvgpu mbarrier ops.
  Step mbarrierOp(Actor &actor, Operation *op);
  bool barrierIndex(Operation *op, const Val &group, Value index, Actor &actor,
                    int64_t &barrier);
  /// Mbarrier `barrier` completed a phase: wakes its waiters.
  void completed(int64_t barrier);
  /// An arrival on (or transaction bytes for) `barrier` by `op` of `agent`
  /// at `clock` must be ordered after the barrier's last completed phase:
  /// otherwise, on a schedule where that phase is still pending, it counts
  /// towards it. Fails if not.
  bool checkArrival(Operation *op, int64_t barrier, const VectorClock &clock,
                    const std::string &agent);
  Step namedBarrier(Actor &actor, Operation *op, int64_t id, int64_t threads,
                    bool sync);
  /// Runs collective op `op` of `threads` threads for `actor`: `arrive`
  /// once per thread, `complete` when the last one arrived; each thread
  /// continues only then (Step::next), blocked (on `kind`, `id`) before.
  /// `group` names the threads in the error for threads at different ops.
  Step gather(Actor &actor, Operation *op, Rendezvous &meeting, int64_t threads,
              WaitKind kind, int64_t id, StringRef group,
              function_ref<void()> arrive, function_ref<void()> complete);
  /// `gather` over the 32 lanes of `actor`'s warp.
  Step gatherWarp(Actor &actor, Operation *op, function_ref<void()> arrive,
                  function_ref<void()> complete);
  Step shuffle(Actor &actor, gpu::ShuffleOp op);
  /// nvvm.vote.sync any over the lanes of the warp.
  Step warpAny(Actor &actor, NVVM::VoteSyncOp op, ArrayRef<const Val *> in);

  //===--- Cluster.cpp: the other CTAs of the cluster ---------------------===//

  /// fa4.mbarrier.arrive_cluster, fa4.dsmem.load/store, barrier.cluster.
  Step clusterOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  /// CTA `rank` of the cluster, if `op` may reach it now.
  Cta *clusterMember(Operation *op, int64_t rank);

  //===--- Tma.cpp: TMA loads and stores ----------------------------------===//

  /// nvgpu TMA loads and stores, bulk-group commits and waits.
  Step tmaOp(Actor &actor, Operation *op);
  /// Gives a TMA load or store issued with `clock` its vector-clock slot
  /// (rotating among kAsyncSlots, each use a higher value) and returns it.
  Slot stampAsync(VectorClock &clock);
  void completeTmaLoad(size_t index);
  void completeStore(size_t index);

  //===--- TensorMemory.cpp: TMEM and the tcgen05 ld/st/wait/fence --------===//

  Step tmemOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  bool tmemColumnsAllocated(Operation *op, int64_t first, int64_t columns);
  /// Checks and records `pending` TMEM accesses of `actor` as happening
  /// now, then forgets them.
  void completeTmemAccesses(Actor &actor,
                            SmallVectorImpl<PendingTmem> &pending);
  int64_t tmemLane(const Actor &actor) const {
    return 32 * (actor.warp % 4) + actor.lane;
  }
  /// At the CTA's exit: every TMEM allocation must have been freed.
  void checkTmemFreed();

  //===--- TensorCore.cpp: the tcgen05 MMA pipes --------------------------===//

  /// fa4.mma and fa4.mma.commit.
  Step mmaOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  /// The MMA pipe of the thread `actor`, created on its first MMA.
  MmaPipe &pipeOf(const Actor &actor);
  /// A vector-clock slot for an in-order unit (MMA or wgmma pipe).
  Slot pipeSlot() { return nextSlot + kAsyncSlots + nextPipeSlot++; }
  /// A Tensor Core read of one K step (16 elements) of the first `count`
  /// rows (along M or N) of the 16-bit operand `descriptor` describes, by
  /// `agent` of the unit `slot` at `clock`, into `values` (row-major);
  /// false (and an error) out of bounds.
  bool operandRead(Operation *op, Format format,
                   const SmemDescriptor &descriptor, bool mnMajor,
                   int64_t count, Slot slot, uint32_t agent,
                   const VectorClock &clock, std::vector<float> &values);
  void executeMma(MmaPipe &pipe);

  //===--- Wgmma.cpp: warpgroup MMA (sm_90a) ------------------------------===//

  /// Issues a wgmma; it reads its operands itself, since its accumulator may
  /// be an earlier wgmma's result still in flight (a chain of products into
  /// the same registers, which the pipe runs in order).
  Step wgmma(Actor &actor, WgmmaOp op);
  /// fa4.wgmma.quantize: collective over the warp (the quads exchange
  /// their columns).
  Step wgmmaQuantize(Actor &actor, WgmmaQuantizeOp op,
                     ArrayRef<const Val *> in);
  /// nvvm.wgmma.commit.group.sync.aligned.
  Step wgmmaCommit(Actor &actor, Operation *op);
  /// fa4.wgmma.wait: its fragments may be wgmma results, which only it may
  /// read.
  Step wgmmaWait(Actor &actor, WgmmaWaitOp op);
  void executeWgmma(unsigned index);

  //===--- State ----------------------------------------------------------===//

  const Launch &launch;
  int64_t blockId;
  Cluster *cluster;
  unsigned rank;
  /// Set once the CTA stopped (exited, failed or deadlocked).
  bool stopped = false;
  std::mt19937_64 rng;
  uint64_t maxSteps, steps = 0;
  CtaOutcome outcome;
  bool failed = false;

  std::vector<Actor> actors;
  std::vector<Warp> warps;
  std::vector<Warpgroup> warpgroups;
  std::vector<unsigned> ready;

  std::vector<uint8_t> shared;
  /// Per shared byte, the last ordinary store to it: its agent + 1 (0 for
  /// none), its thread and how many proxy fences that thread had executed
  /// when it stored (the index of the fence that publishes the store).
  struct OrdinaryStore {
    uint32_t agent = 0, thread = 0, fences = 0;
    /// The writer's CTA where another CTA of the cluster stored it
    /// (fa4.dsmem.store; `fences` then counts its cluster-scope fences).
    const Cta *remote = nullptr;
  };
  std::vector<OrdinaryStore> ordinaryStores;
  /// The fence that makes byte `i` visible to the async proxy, if its
  /// thread executed it yet.
  const Actor &storingThread(const OrdinaryStore &store) const {
    return (store.remote ? store.remote : this)->actors[store.thread];
  }
  const Actor::ProxyFence *publishingFence(int64_t i) const {
    const OrdinaryStore &store = ordinaryStores[i];
    const Actor &thread = storingThread(store);
    const auto &fences =
        store.remote ? thread.clusterProxyFences : thread.proxyFences;
    return store.fences < fences.size() ? &fences[store.fences] : nullptr;
  }
  /// Whether an async-proxy read with view `clock` cannot see byte `i`.
  bool invisibleToAsyncProxy(int64_t i, const VectorClock &clock) const {
    const OrdinaryStore &store = ordinaryStores[i];
    if (!store.agent)
      return false;
    const Actor::ProxyFence *fence = publishingFence(i);
    return !fence || clock.get(storingThread(store).slot) < fence->epoch;
  }

  std::vector<uint32_t> tmem;
  /// The columns allocated (0 for none), and the op and warp that
  /// allocated them; the op also stands for the allocation permit the CTA
  /// gave up.
  int64_t tmemAllocated = 0;
  Operation *tmemAllocOp = nullptr;
  unsigned tmemAllocWarp = 0;

  std::vector<MBarrier> barriers;
  DenseMap<Operation *, int64_t> barrierGroups;
  /// Barriers per mbarrier group, by the group's first barrier.
  DenseMap<int64_t, int64_t> groupSizes;
  std::map<int64_t, NamedBarrier> namedBarriers;

  // Asynchronous work in flight, which fireEvent completes.
  std::vector<TmaLoad> loads;
  std::vector<StoreInFlight> stores;
  std::vector<MmaPipe> pipes;

  // Vector-clock slots: one per thread and one per thread's tcgen05 work,
  // then the rotating async slots from `nextSlot`, then the pipes'.
  Slot nextPipeSlot = 0;
  Slot nextSlot;
  uint64_t asyncCounter = 0;

  RaceDetector races;
  DenseMap<std::pair<Operation *, unsigned>, uint32_t> agents;
  /// Named shared-memory ranges and TMEM column ranges, for reports.
  std::vector<std::tuple<int64_t, int64_t, std::string>> sharedNames, tmemNames;

  /// The timeline of the run, when one is recorded: every hook is behind a
  /// null check of it.
  std::unique_ptr<CtaTrace> tracer;
};

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_CTA_H
