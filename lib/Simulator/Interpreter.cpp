//===- Interpreter.cpp - running one CTA of a kernel ----------------------===//
//
// Every thread of the CTA is an actor interpreting the kernel's ops with its
// own SSA values; a seeded scheduler interleaves the actors and completes
// asynchronous work (TMA loads and stores, the MMA pipe) at random points.
// Threads block on mbarrier waits, named barriers and warp votes exactly
// where the hardware would; when every live thread is blocked and nothing
// is in flight, the CTA is deadlocked.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"
#include "Values.h"

#include "fa4/Dialect/FA4/IR/Exp2.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <random>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

namespace {

constexpr int64_t kTmemLanes = 128, kTmemColumns = 512;
constexpr int64_t kWarpgroupThreads = 128;
/// Rotating vector-clock slots for TMA loads and stores in flight.
constexpr unsigned kAsyncSlots = 32;

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
  SmallVector<PendingTmem> pendingLoads, pendingStores;
  /// TMA stores issued since the last commit; committed groups in flight.
  SmallVector<TmaStore> openStores;
  std::deque<unsigned> storeGroups; // stores remaining per group
  /// Groups retired so far: the first in `storeGroups` has this index.
  uint64_t storeGroupsRetired = 0;
  /// fence.proxy.async executed so far: the thread's ordinary stores made
  /// at the current count are not yet visible to the async proxy.
  uint32_t proxyFences = 0;
  VectorClock storesDone;
  /// fa4.wgmma results not yet returned by a fa4.wgmma.wait: the wgmma
  /// that computes each.
  DenseMap<Value, std::shared_ptr<struct WgmmaWork>> pendingWgmma;
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
};

/// One fa4.wgmma of a warpgroup: the operands its 128 threads hold, and
/// each thread's fragment of the product once the pipe executed it.
struct WgmmaWork {
  Operation *op = nullptr;
  Val a, b; // shared-memory tiles (a only when A is not in registers)
  std::vector<SmallVector<float, 1>> aRegisters, acc, result;
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
// The CTA
//===----------------------------------------------------------------------===//

class Cta {
public:
  Cta(const Launch &launch, int64_t blockId, const Schedule &schedule);
  CtaOutcome run();

private:
  // Scheduling.
  Step step(Actor &actor);
  Step execute(Actor &actor, Operation *op);
  void block(Actor &actor, Operation *op, WaitKind kind, int64_t id);
  void wake(WaitKind kind, int64_t id);
  bool fireEvent();
  void reportDeadlock();

  // Values.
  const Val *use(Actor &actor, Operation *op, Value value);
  Val &define(Actor &actor, Value value) { return actor.env[value]; }
  Step fail(Operation *op, const Twine &message);
  std::string who(const Actor &actor) const;

  // Op semantics.
  /// arith and memory-free vector ops.
  Step pure(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step vectorOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step memrefOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step gpuOp(Actor &actor, Operation *op);
  Step nvgpuOp(Actor &actor, Operation *op);
  Step fa4Op(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step llvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in);
  Step scfOp(Actor &actor, Operation *op);
  Step yield(Actor &actor, Operation *op);

  // Memory.
  /// The shared byte offset of element `indices` of memref `ref` (of type
  /// `type`) and the bytes of `count` elements there; fails out of bounds.
  std::optional<int64_t> sharedAddress(Operation *op, const Val &ref,
                                       MemRefType type,
                                       ArrayRef<int64_t> indices,
                                       int64_t count);
  bool checkShared(Operation *op, int64_t offset, int64_t bytes);
  /// An ordinary load or store of `count` consecutive elements of memref
  /// `ref` at `indices`: checks bounds, records the access, and returns the
  /// shared byte offset of the first element.
  std::optional<int64_t> elementsAccess(Actor &actor, Operation *op,
                                        const Val &ref, MemRefType type,
                                        ArrayRef<const Val *> indices,
                                        int64_t count, bool write);
  float loadElement(Type element, int64_t offset);
  void storeElement(Type element, int64_t offset, float real, int64_t integer);
  bool sharedAccess(Actor &actor, Operation *op, int64_t offset, int64_t bytes,
                    bool write);
  /// An async-proxy read (TMA store, MMA operand) of shared bytes
  /// [offset, offset + bytes): ordinary stores not yet fenced by their
  /// thread are invisible to it.
  void asyncProxyRead(int64_t offset, int64_t bytes, uint32_t reader);
  bool tmemColumnsAllocated(Operation *op, int64_t first, int64_t columns);
  /// Checks and records `pending` TMEM accesses of `actor` as happening
  /// now, then forgets them.
  void completeTmemAccesses(Actor &actor, SmallVectorImpl<PendingTmem> &pending,
                            bool write);
  int64_t tmemLane(const Actor &actor) const {
    return 32 * (actor.warp % 4) + actor.lane;
  }

  // Asynchronous units.
  void completeTmaLoad(size_t index);
  /// A Tensor Core read of one K step (16 elements) of the first `count`
  /// rows (along M or N) of the 16-bit operand `descriptor` describes, by
  /// `agent` of the unit `slot` at `clock`, into `values` (row-major);
  /// false (and an error) out of bounds.
  bool operandRead(Operation *op, Half half, const SmemDescriptor &descriptor,
                   bool mnMajor, int64_t count, Slot slot, uint32_t agent,
                   const VectorClock &clock, std::vector<float> &values);
  void executeMma(MmaPipe &pipe);
  /// Gives a TMA load or store issued with `clock` its vector-clock slot
  /// (rotating among kAsyncSlots, each use a higher value) and returns it.
  Slot stampAsync(VectorClock &clock);
  /// The MMA pipe of the thread `actor`, created on its first MMA.
  MmaPipe &pipeOf(const Actor &actor);
  void completeStore(size_t index);
  /// A vector-clock slot for an in-order unit (MMA or wgmma pipe).
  Slot pipeSlot() { return nextSlot + kAsyncSlots + nextPipeSlot++; }

  // Warpgroup MMA (sm_90a).
  /// Runs collective op `op` of `threads` threads for `actor`: `arrive`
  /// once per thread, `complete` when the last one arrived; each thread
  /// continues only then (Step::next), blocked (on `kind`, `id`) before.
  /// `group` names the threads in the error for threads at different ops.
  Step gather(Actor &actor, Operation *op, Rendezvous &meeting, int64_t threads,
              WaitKind kind, int64_t id, StringRef group,
              function_ref<void()> arrive, function_ref<void()> complete);
  Step wgmma(Actor &actor, WgmmaOp op, ArrayRef<const Val *> in);
  /// fa4.wgmma.wait: its fragments may be wgmma results, which only it may
  /// read.
  Step wgmmaWait(Actor &actor, WgmmaWaitOp op);
  void executeWgmma(unsigned index);
  Step shuffle(Actor &actor, gpu::ShuffleOp op);

  bool barrierIndex(Operation *op, const Val &group, Value index, Actor &actor,
                    int64_t &barrier);
  void completed(int64_t barrier);
  Step namedBarrier(Actor &actor, Operation *op, int64_t id, int64_t threads,
                    bool sync);
  /// The race detector's agent for `op` run by `actor` (for asynchronous
  /// ops: the unit it issued).
  uint32_t agentFor(Operation *op, const Actor &actor);

  std::string describeMemory(Memory memory, int64_t first, int64_t last) const;

  const Launch &launch;
  int64_t blockId;
  std::mt19937_64 rng;
  uint64_t maxSteps;
  CtaOutcome outcome;
  bool failed = false;

  std::vector<uint8_t> shared;
  /// Per shared byte, the last ordinary store to it: its agent + 1 (0 for
  /// none), its thread and that thread's proxyFences when it stored.
  struct OrdinaryStore {
    uint32_t agent = 0, thread = 0, fences = 0;
  };
  std::vector<OrdinaryStore> ordinaryStores;
  /// Whether the async proxy cannot see byte `i` yet.
  bool unfenced(int64_t i) const {
    const OrdinaryStore &store = ordinaryStores[i];
    return store.agent && actors[store.thread].proxyFences == store.fences;
  }
  std::vector<uint32_t> tmem;
  int64_t tmemAllocated = 0;
  std::vector<MBarrier> barriers;
  DenseMap<Operation *, int64_t> barrierGroups;
  std::map<int64_t, NamedBarrier> namedBarriers;
  std::vector<Actor> actors;
  std::vector<Warp> warps;
  std::vector<unsigned> ready;
  std::vector<TmaLoad> loads;
  std::vector<MmaPipe> pipes;
  std::vector<Warpgroup> warpgroups;
  Slot nextPipeSlot = 0;
  std::vector<StoreInFlight> stores;
  Slot nextSlot;
  uint64_t asyncCounter = 0;
  RaceDetector races;
  DenseMap<std::pair<Operation *, unsigned>, uint32_t> agents;
  /// Barriers per mbarrier group, by the group's first barrier.
  DenseMap<int64_t, int64_t> groupSizes;
  /// Named shared-memory ranges and TMEM column ranges, for reports.
  std::vector<std::tuple<int64_t, int64_t, std::string>> sharedNames, tmemNames;
};

Cta::Cta(const Launch &launch, int64_t blockId, const Schedule &schedule)
    : launch(launch), blockId(blockId), rng(schedule.seed),
      maxSteps(schedule.maxSteps), shared(launch.dynamicSharedBytes, 0xA5),
      ordinaryStores(launch.dynamicSharedBytes),
      tmem(kTmemLanes * kTmemColumns, 0xFFFFFFFF),
      races(launch.dynamicSharedBytes, kTmemLanes * kTmemColumns,
            [this](Memory m, int64_t first, int64_t last) {
              return describeMemory(m, first, last);
            }) {
  int64_t threads = launch.block;
  warps.resize((threads + 31) / 32);
  warpgroups.resize((warps.size() + 3) / 4);
  // Slots: one per thread, then one per MMA pipe and the rotating async
  // slots, allocated on demand.
  nextSlot = 2 * threads;
  actors.resize(threads);
  for (int64_t t = 0; t < threads; ++t) {
    Actor &actor = actors[t];
    actor.tid = t;
    actor.warp = t / 32;
    actor.lane = t % 32;
    actor.slot = t;
    actor.clock.set(t, 1);
    actor.tcSlot = threads + t;
    actor.tcView = actor.clock;
    actor.tcView.set(actor.tcSlot, 1);
    gpu::GPUFuncOp kernel = launch.kernel;
    Block &entry = kernel.getBody().front();
    actor.stack.push_back({&entry, entry.begin(), launch.kernel});
    for (auto [argument, value] :
         llvm::zip(entry.getArguments(), launch.arguments)) {
      Val v;
      switch (value.kind) {
      case Argument::Kind::integer:
        v.ints = {value.integer};
        break;
      case Argument::Kind::real:
        v.floats = {value.real};
        break;
      case Argument::Kind::tensorMap:
        v.kind = Val::Kind::tensorMap;
        v.base = value.index;
        break;
      case Argument::Kind::pointer:
        v.kind = Val::Kind::pointer;
        v.base = value.index;
        break;
      }
      actor.env[argument] = v;
    }
    ready.push_back(t);
  }

  // Names of the buffers: placed shared-memory views and TMEM views.
  gpu::GPUFuncOp kernel = launch.kernel;
  kernel.walk([&](Operation *op) {
    auto name = op->getAttrOfType<StringAttr>("fa4.name");
    if (!name)
      return;
    if (auto view = dyn_cast<memref::ViewOp>(op)) {
      APInt shift;
      if (isa<gpu::DynamicSharedMemoryOp>(view.getSource().getDefiningOp()) &&
          matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
        sharedNames.emplace_back(
            shift.getSExtValue(),
            shift.getSExtValue() + view.getType().getNumElements() *
                                       bytesOf(view.getType().getElementType()),
            name.str());
    } else if (auto view = dyn_cast<TmemViewOp>(op)) {
      TmemType type = view.getType();
      int64_t columns = type.getElements() *
                        type.getElementType().getIntOrFloatBitWidth() / 32;
      tmemNames.emplace_back(view.getColumn(), view.getColumn() + columns,
                             name.str());
    }
  });
}

uint32_t Cta::agentFor(Operation *op, const Actor &actor) {
  auto [it, inserted] = agents.try_emplace({op, actor.tid}, 0);
  if (inserted) {
    std::string text = who(actor);
    if (isa<nvgpu::TmaAsyncLoadOp>(op))
      text = "the TMA load issued by " + text;
    else if (isa<nvgpu::TmaAsyncStoreOp>(op))
      text = "the TMA store issued by " + text;
    else if (isa<MmaOp>(op))
      text = "the MMA issued by " + text;
    else if (isa<WgmmaOp>(op))
      text = llvm::formatv("the wgmma of warpgroup {0} (role {1}, CTA {2})",
                           actor.warp / 4, actor.role, blockId);
    it->second = races.agent(op, text);
  }
  return it->second;
}

std::string Cta::who(const Actor &actor) const {
  return llvm::formatv("thread {0} (warp {1}, role {2}, CTA {3})", actor.tid,
                       actor.warp, actor.role, blockId);
}

std::string Cta::describeMemory(Memory memory, int64_t first,
                                int64_t last) const {
  if (memory == Memory::shared) {
    std::string where;
    for (auto &[begin, end, name] : sharedNames)
      if (first >= begin && first < end)
        where = llvm::formatv(" ('{0}' + {1})", name, first - begin);
    return llvm::formatv("shared memory bytes [{0}, {1}]{2}", first, last,
                         where);
  }
  int64_t lane = first / kTmemColumns, column = first % kTmemColumns;
  int64_t lastLane = last / kTmemColumns, lastColumn = last % kTmemColumns;
  // Every buffer the columns belong to: aliases share columns.
  std::string where;
  for (auto &[begin, end, name] : tmemNames)
    if (column >= begin && column < end &&
        where.find("'" + name + "'") == std::string::npos)
      where += (where.empty() ? " ('" : ", '") + name + "'";
  if (!where.empty())
    where += ")";
  return llvm::formatv("TMEM lanes {0}-{1}, columns {2}-{3}{4}", lane, lastLane,
                       column, lane == lastLane ? lastColumn : kTmemColumns - 1,
                       where);
}

Step Cta::fail(Operation *op, const Twine &message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (op) {
    op->getLoc().print(os);
    os << ": " << op->getName() << ": ";
  }
  os << message;
  outcome.errors.push_back(text);
  failed = true;
  return Step::error;
}

const Val *Cta::use(Actor &actor, Operation *op, Value value) {
  auto it = actor.env.find(value);
  if (it == actor.env.end()) {
    fail(op, "an operand has no value in " + who(actor));
    return nullptr;
  }
  if (Operation *load = it->second.pendingLoad) {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    load->getLoc().print(os);
    if (isa<WgmmaOp>(load))
      fail(op, "uses the result of fa4.wgmma at " + loc +
                   " before a fa4.wgmma.wait returns it in " + who(actor));
    else
      fail(op, "uses the result of fa4.tmem.load at " + loc +
                   " before fa4.tcgen05.wait load in " + who(actor));
    return nullptr;
  }
  return &it->second;
}

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

void Cta::block(Actor &actor, Operation *op, WaitKind kind, int64_t id) {
  actor.status = Status::blocked;
  actor.blockedAt = op;
  actor.waitKind = kind;
  actor.waitId = id;
  llvm::erase(ready, actor.tid);
}

void Cta::wake(WaitKind kind, int64_t id) {
  for (Actor &actor : actors)
    if (actor.status == Status::blocked && actor.waitKind == kind &&
        actor.waitId == id) {
      actor.status = Status::ready;
      actor.waitKind = WaitKind::none;
      ready.push_back(actor.tid);
    }
}

Step Cta::step(Actor &actor) {
  Frame &frame = actor.stack.back();
  if (frame.it == frame.block->end()) {
    // A region without terminator (a role) ran to its end.
    actor.stack.pop_back();
    if (actor.stack.empty())
      return Step::done;
    ++actor.stack.back().it;
    return Step::next;
  }
  Operation *op = &*frame.it;
  Step result = execute(actor, op);
  if (result == Step::next)
    ++actor.stack.back().it;
  if (result == Step::done) {
    // A tcgen05.ld/st never waited for may happen as late as the thread's
    // end, at an epoch no fence has published: anything it was meant to be
    // ordered with races with it.
    completeTmemAccesses(actor, actor.pendingLoads, /*write=*/false);
    completeTmemAccesses(actor, actor.pendingStores, /*write=*/true);
  }
  return result;
}

CtaOutcome Cta::run() {
  uint64_t steps = 0;
  while (!failed) {
    bool events =
        !loads.empty() || !stores.empty() ||
        llvm::any_of(pipes, [](const MmaPipe &p) { return !p.work.empty(); }) ||
        llvm::any_of(warpgroups,
                     [](const Warpgroup &g) { return !g.work.empty(); });
    bool exited = ready.empty() && llvm::all_of(actors, [](const Actor &a) {
                    return a.status == Status::done;
                  });
    if (exited) {
      if (events)
        fail(nullptr,
             llvm::formatv(
                 "CTA {0} exited with asynchronous work in flight: "
                 "{1} TMA loads, {2} TMA stores, {3} MMA pipes and {4} "
                 "wgmma pipes with work",
                 blockId, loads.size(), stores.size(),
                 llvm::count_if(
                     pipes, [](const MmaPipe &p) { return !p.work.empty(); }),
                 llvm::count_if(warpgroups, [](const Warpgroup &g) {
                   return !g.work.empty();
                 })));
      break;
    }
    if (ready.empty() && !events) {
      reportDeadlock();
      break;
    }
    // Asynchronous completions interleave with the threads at random, so
    // that their latencies vary from a few ops to whole loop iterations.
    if (events && (ready.empty() || rng() % 8 == 0)) {
      fireEvent();
      continue;
    }
    Actor &actor = actors[ready[rng() % ready.size()]];
    for (unsigned burst = 1 + rng() % 48; burst > 0 && !failed; --burst) {
      if (++steps > maxSteps) {
        fail(nullptr, llvm::formatv("CTA {0} ran more than {1} ops; "
                                    "raise --max-steps if this is expected",
                                    blockId, maxSteps));
        break;
      }
      Step result = step(actor);
      if (result == Step::done) {
        actor.status = Status::done;
        llvm::erase(ready, actor.tid);
        break;
      }
      if (result == Step::blocked || result == Step::error)
        break;
    }
  }
  outcome.steps = steps;
  outcome.races = races.races();
  return outcome;
}

bool Cta::fireEvent() {
  // Every TMA load and store completes independently; each MMA pipe runs in
  // issue order.
  SmallVector<std::pair<int, size_t>> candidates;
  for (size_t i = 0; i < loads.size(); ++i)
    candidates.push_back({0, i});
  for (size_t i = 0; i < pipes.size(); ++i)
    if (!pipes[i].work.empty())
      candidates.push_back({1, i});
  for (size_t i = 0; i < stores.size(); ++i)
    candidates.push_back({2, i});
  for (size_t i = 0; i < warpgroups.size(); ++i)
    if (!warpgroups[i].work.empty())
      candidates.push_back({3, i});
  if (candidates.empty())
    return false;
  auto [kind, index] = candidates[rng() % candidates.size()];
  if (kind == 0)
    completeTmaLoad(index);
  else if (kind == 1)
    executeMma(pipes[index]);
  else if (kind == 2)
    completeStore(index);
  else
    executeWgmma(index);
  return true;
}

void Cta::reportDeadlock() {
  // Group blocked threads by where and on what they wait.
  std::map<std::tuple<unsigned, Operation *, int, int64_t>,
           std::vector<unsigned>>
      groups;
  // Roles in warp order; threads of no role (idle warps) last.
  auto roleOrder = [](const Actor &actor) {
    return actor.role == "-" ? ~0u : actor.warp;
  };
  for (const Actor &actor : actors)
    if (actor.status == Status::blocked) {
      unsigned first = roleOrder(actor);
      for (const Actor &other : actors)
        if (other.role == actor.role)
          first = std::min(first, roleOrder(other));
      groups[{first, actor.blockedAt, static_cast<int>(actor.waitKind),
              actor.waitId}]
          .push_back(actor.tid);
    }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "deadlock in CTA " << blockId
     << ": every live thread waits and nothing is in flight";
  for (auto &[key, tids] : groups) {
    auto [order, op, kind, id] = key;
    const Actor &first = actors[tids.front()];
    os << "\n  " << (tids.size() == 1 ? "thread " : "threads ") << tids.front();
    if (tids.size() > 1)
      os << "-" << tids.back();
    os << " (";
    if (tids.size() > 1)
      os << tids.size() << ", ";
    os << (first.role == "-" ? std::string("no role") : "role " + first.role)
       << ") at ";
    op->getLoc().print(os);
    switch (static_cast<WaitKind>(kind)) {
    case WaitKind::mbarrier: {
      const MBarrier &barrier = barriers[id];
      bool parity = false;
      if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
        auto it = first.env.find(wait.getPhaseParity());
        parity = it != first.env.end() && it->second.ints[0] != 0;
      }
      os << ": waits on mbarrier " << barrier.name << " for phase parity "
         << parity << "; it is in phase " << barrier.phase << " with "
         << barrier.pending << " of " << barrier.expected << " arrivals and "
         << barrier.tx << " transaction bytes pending";
      break;
    }
    case WaitKind::namedBarrier: {
      const NamedBarrier &barrier = namedBarriers[id];
      os << ": waits on "
         << (id == 0 ? std::string("the CTA barrier")
                     : "named barrier " + std::to_string(id))
         << ": " << barrier.arrived << " of " << barrier.expected
         << " threads arrived";
      break;
    }
    case WaitKind::warpVote:
      os << ": waits for the rest of warp " << id << " at a warp vote";
      break;
    case WaitKind::storeGroups:
      os << ": waits for its TMA store groups";
      break;
    case WaitKind::warpgroup:
      os << ": waits for the rest of warpgroup " << id << " ("
         << warpgroups[id].meeting.arrived << " of 128 threads arrived)";
      break;
    case WaitKind::wgmmaGroups:
      os << ": waits for wgmma groups of warpgroup " << id << " ("
         << warpgroups[id].committed << " committed, "
         << warpgroups[id].work.size() << " wgmmas not executed)";
      break;
    case WaitKind::none:
      break;
    }
  }
  fail(nullptr, text);
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Step Cta::execute(Actor &actor, Operation *op) {
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "gpu")
    return gpuOp(actor, op);
  if (dialect == "nvgpu")
    return nvgpuOp(actor, op);
  if (dialect == "scf")
    return scfOp(actor, op);
  if (auto wait = dyn_cast<WgmmaWaitOp>(op))
    return wgmmaWait(actor, wait);
  // The rest take all their operands' values up front.
  SmallVector<const Val *, 4> in;
  for (Value operand : op->getOperands()) {
    const Val *v = use(actor, op, operand);
    if (!v)
      return Step::error;
    in.push_back(v);
  }
  if (dialect == "arith")
    return pure(actor, op, in);
  if (dialect == "vector")
    return vectorOp(actor, op, in);
  if (dialect == "memref")
    return memrefOp(actor, op, in);
  if (dialect == "fa4")
    return fa4Op(actor, op, in);
  if (dialect == "llvm")
    return llvmOp(actor, op, in);
  return fail(op, "the simulator cannot execute this op");
}

//===----------------------------------------------------------------------===//
// vector memory ops (the others are pure)
//===----------------------------------------------------------------------===//

Step Cta::vectorOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](vector::StoreOp store) {
        std::optional<int64_t> address = elementsAccess(
            actor, op, *in[1], store.getMemRefType(), in.drop_front(2),
            store.getVectorType().getNumElements(), /*write=*/true);
        if (!address)
          return Step::error;
        Type element = store.getMemRefType().getElementType();
        for (int64_t i = 0, e = store.getVectorType().getNumElements(); i < e;
             ++i)
          storeElement(element, *address + i * bytesOf(element),
                       in[0]->floats.empty() ? 0 : in[0]->floats[i],
                       in[0]->ints.empty() ? 0 : in[0]->ints[i]);
        return Step::next;
      })
      .Case([&](vector::LoadOp load) {
        int64_t n = load.getVectorType().getNumElements();
        std::optional<int64_t> address =
            elementsAccess(actor, op, *in[0], load.getMemRefType(),
                           in.drop_front(1), n, /*write=*/false);
        if (!address)
          return Step::error;
        Type element = load.getMemRefType().getElementType();
        Val out;
        for (int64_t i = 0; i < n; ++i)
          out.floats.push_back(
              loadElement(element, *address + i * bytesOf(element)));
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Default([&](Operation *) { return pure(actor, op, in); });
}

Step Cta::pure(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  Val out;
  std::string error;
  if (!evaluate(op, in, out, error))
    return fail(op, error);
  define(actor, op->getResult(0)) = std::move(out);
  return Step::next;
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

std::optional<int64_t> Cta::sharedAddress(Operation *op, const Val &ref,
                                          MemRefType type,
                                          ArrayRef<int64_t> indices,
                                          int64_t count) {
  if (ref.kind != Val::Kind::memref) {
    fail(op, "accesses a memref the simulator does not place in shared memory");
    return std::nullopt;
  }
  int64_t element = ref.offset;
  for (auto [i, index] : llvm::enumerate(indices)) {
    int64_t size = type.getDimSize(i);
    int64_t extent = i + 1 == indices.size() ? index + count : index + 1;
    if (index < 0 || (!ShapedType::isDynamic(size) && extent > size)) {
      fail(op, llvm::formatv("index {0} of dimension {1} is out of bounds "
                             "(size {2})",
                             index, i, size));
      return std::nullopt;
    }
    element += index * ref.strides[i];
  }
  int64_t offset = ref.base + element * bytesOf(type.getElementType());
  if (!checkShared(op, offset, count * bytesOf(type.getElementType())))
    return std::nullopt;
  return offset;
}

std::optional<int64_t> Cta::elementsAccess(Actor &actor, Operation *op,
                                           const Val &ref, MemRefType type,
                                           ArrayRef<const Val *> indices,
                                           int64_t count, bool write) {
  SmallVector<int64_t, 4> values;
  for (const Val *index : indices)
    values.push_back(index->ints[0]);
  std::optional<int64_t> address = sharedAddress(op, ref, type, values, count);
  if (address)
    sharedAccess(actor, op, *address, count * bytesOf(type.getElementType()),
                 write);
  return address;
}

bool Cta::checkShared(Operation *op, int64_t offset, int64_t bytes) {
  if (offset >= 0 && offset + bytes <= static_cast<int64_t>(shared.size()))
    return true;
  fail(op, llvm::formatv("accesses shared memory bytes [{0}, {1}) beyond the "
                         "{2} dynamic bytes of the launch",
                         offset, offset + bytes, shared.size()));
  return false;
}

float Cta::loadElement(Type element, int64_t offset) {
  if (element.isF32()) {
    float x;
    std::memcpy(&x, &shared[offset], 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, &shared[offset], 2);
  if (element.isBF16())
    return bf16Value(bits);
  if (element.isF16())
    return f16Value(bits);
  int32_t i;
  std::memcpy(&i, &shared[offset], 4);
  return static_cast<float>(i);
}

void Cta::storeElement(Type element, int64_t offset, float real,
                       int64_t integer) {
  if (element.isF32()) {
    std::memcpy(&shared[offset], &real, 4);
  } else if (element.isBF16() || element.isF16()) {
    uint16_t bits = element.isBF16() ? bf16Bits(real) : f16Bits(real);
    std::memcpy(&shared[offset], &bits, 2);
  } else {
    int32_t i = static_cast<int32_t>(integer);
    std::memcpy(&shared[offset], &i, bytesOf(element));
  }
}

bool Cta::sharedAccess(Actor &actor, Operation *op, int64_t offset,
                       int64_t bytes, bool write) {
  uint32_t agent = agentFor(op, actor);
  if (write)
    std::fill(ordinaryStores.begin() + offset,
              ordinaryStores.begin() + offset + bytes,
              OrdinaryStore{agent + 1, actor.tid, actor.proxyFences});
  return races.access(Memory::shared, offset, offset + bytes, write, actor.slot,
                      agent, actor.clock);
}

void Cta::asyncProxyRead(int64_t offset, int64_t bytes, uint32_t reader) {
  for (int64_t i = offset; i < offset + bytes; ++i) {
    if (!unfenced(i))
      continue;
    uint32_t writer = ordinaryStores[i].agent;
    int64_t last = i;
    while (last + 1 < offset + bytes && unfenced(last + 1) &&
           ordinaryStores[last + 1].agent == writer)
      ++last;
    races.proxyRace(i, last, writer - 1, reader);
    return;
  }
}

Step Cta::memrefOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](memref::ViewOp view) {
        const Val &source = *in[0];
        if (source.kind != Val::Kind::memref)
          return fail(op, "views a memref outside shared memory");
        MemRefType type = view.getType();
        if (!type.hasStaticShape())
          return fail(op, "only views of static shape are supported");
        MemRefType sourceType = view.getSource().getType();
        int64_t shift = in[1]->ints[0];
        int64_t bytes = type.getNumElements() * bytesOf(type.getElementType());
        if (sourceType.hasStaticShape()) {
          int64_t available = sourceType.getNumElements() *
                              bytesOf(sourceType.getElementType());
          if (shift < 0 || shift + bytes > available)
            return fail(op,
                        llvm::formatv("views bytes [{0}, {1}) of a {2}-byte "
                                      "buffer",
                                      shift, shift + bytes, available));
        }
        Val out;
        out.kind = Val::Kind::memref;
        out.base = source.base +
                   source.offset * bytesOf(sourceType.getElementType()) + shift;
        if (!checkShared(op, out.base, bytes))
          return Step::error;
        out.strides.assign(type.getRank(), 1);
        for (int64_t i = type.getRank() - 2; i >= 0; --i)
          out.strides[i] = out.strides[i + 1] * type.getDimSize(i + 1);
        define(actor, view.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::SubViewOp subview) {
        const Val &source = *in[0];
        Val out = source;
        auto valueOf = [&](OpFoldResult r) -> int64_t {
          if (auto attr = dyn_cast<Attribute>(r))
            return cast<IntegerAttr>(attr).getInt();
          return actor.env[cast<Value>(r)].ints[0];
        };
        SmallVector<OpFoldResult> offsets = subview.getMixedOffsets(),
                                  strides = subview.getMixedStrides();
        SmallVector<int64_t, 4> newStrides;
        llvm::SmallBitVector dropped = subview.getDroppedDims();
        for (size_t i = 0; i < offsets.size(); ++i) {
          out.offset += valueOf(offsets[i]) * source.strides[i];
          if (!dropped.test(i))
            newStrides.push_back(source.strides[i] * valueOf(strides[i]));
        }
        out.strides = newStrides;
        define(actor, subview.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::LoadOp load) {
        std::optional<int64_t> address =
            elementsAccess(actor, op, *in[0], load.getMemRefType(),
                           in.drop_front(1), 1, /*write=*/false);
        if (!address)
          return Step::error;
        Type element = load.getMemRefType().getElementType();
        Val out;
        if (isa<FloatType>(element)) {
          out.floats = {loadElement(element, *address)};
        } else {
          int32_t i;
          std::memcpy(&i, &shared[*address], 4);
          out.ints = {i};
        }
        define(actor, load.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](memref::StoreOp store) {
        std::optional<int64_t> address =
            elementsAccess(actor, op, *in[1], store.getMemRefType(),
                           in.drop_front(2), 1, /*write=*/true);
        if (!address)
          return Step::error;
        storeElement(store.getMemRefType().getElementType(), *address,
                     in[0]->floats.empty() ? 0 : in[0]->floats[0],
                     in[0]->ints.empty() ? 0 : in[0]->ints[0]);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

//===----------------------------------------------------------------------===//
// gpu
//===----------------------------------------------------------------------===//

Step Cta::gpuOp(Actor &actor, Operation *op) {
  auto number = [&](Value result, int64_t v) {
    Val out;
    out.ints = {v};
    define(actor, result) = std::move(out);
    return Step::next;
  };
  auto xOnly = [&](gpu::Dimension dimension, int64_t x) -> int64_t {
    return dimension == gpu::Dimension::x ? x : 0;
  };
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](gpu::ThreadIdOp id) {
        return number(id, xOnly(id.getDimension(), actor.tid));
      })
      .Case([&](gpu::BlockIdOp id) {
        return number(id, xOnly(id.getDimension(), blockId));
      })
      .Case([&](gpu::GridDimOp dim) {
        return number(dim, dim.getDimension() == gpu::Dimension::x ? launch.grid
                                                                   : 1);
      })
      .Case([&](gpu::BlockDimOp dim) {
        return number(
            dim, dim.getDimension() == gpu::Dimension::x ? launch.block : 1);
      })
      .Case([&](gpu::DynamicSharedMemoryOp dynamic) {
        Val out;
        out.kind = Val::Kind::memref;
        out.strides = {1};
        define(actor, dynamic.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](gpu::BarrierOp) {
        // __syncthreads: barrier 0 over the whole block.
        return namedBarrier(actor, op, 0, launch.block, /*sync=*/true);
      })
      .Case([&](gpu::ShuffleOp op) { return shuffle(actor, op); })
      .Case([&](gpu::ReturnOp) { return Step::done; })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

//===----------------------------------------------------------------------===//
// nvgpu: mbarriers and TMA
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

void Cta::completed(int64_t barrier) { wake(WaitKind::mbarrier, barrier); }

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

Step Cta::nvgpuOp(Actor &actor, Operation *op) {
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
    if (!group || !barrierIndex(op, *group, arrive.getMbarId(), actor, b))
      return Step::error;
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
    TmaLoad work{op,          static_cast<unsigned>(map->base),
                 {},          dst->base + dst->offset * 2,
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
    if (work.shared % 128 != 0)
      return fail(op, llvm::formatv("the destination (shared byte {0}) is not "
                                    "128-byte aligned",
                                    work.shared));
    if (!checkShared(op, work.shared, ShapedType::getNumElements(shape) * 2))
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
    TmaStore work{
        static_cast<unsigned>(map->base), {}, src->base + src->offset * 2, op};
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
    if (!checkShared(op, work.shared, ShapedType::getNumElements(shape) * 2))
      return Step::error;
    actor.openStores.push_back(std::move(work));
    return Step::next;
  }
  return fail(op, "the simulator cannot execute this op");
}

/// The element offset in the row-major [B, S, H, D] tensor of box element
/// `inner` (innermost first) at `coords`, or -1 out of bounds.
int64_t globalElement(const GlobalTensor &tensor, ArrayRef<int64_t> coords,
                      ArrayRef<int64_t> inner) {
  int64_t rank = tensor.shape.size(), offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t c = coords[rank - 1 - d] + inner[rank - 1 - d];
    if (c < 0 || c >= tensor.shape[d])
      return -1;
    offset = offset * tensor.shape[d] + c;
  }
  return offset;
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

void Cta::completeTmaLoad(size_t index) {
  TmaLoad work = std::move(loads[index]);
  loads.erase(loads.begin() + index);
  const TensorMap &map = launch.maps[work.map];
  const GlobalTensor &tensor = (*launch.tensors)[map.tensor];
  Half half = tensor.element.isBF16() ? Half::bf16 : Half::f16;
  int64_t bytes = 0;
  SmallVector<int64_t, 4> box(map.box);
  bool ok = true;
  forEachBoxElement(box, [&](ArrayRef<int64_t> inner, int64_t linear) {
    if (!ok)
      return;
    int64_t global = globalElement(tensor, work.coords, inner);
    float value = global < 0 ? 0.0f : tensor.data[global];
    int64_t offset = swizzle128(kDynamicSharedBase + work.shared + 2 * linear) -
                     kDynamicSharedBase;
    if (!checkShared(work.op, offset, 2)) {
      ok = false;
      return;
    }
    uint16_t bits = halfBits(half, value);
    std::memcpy(&shared[offset], &bits, 2);
    bytes += 2;
  });
  if (!ok)
    return;
  // Race-check the whole box region (the swizzle permutes within it).
  races.access(Memory::shared, work.shared, work.shared + bytes, true,
               work.slot, work.agent, work.clock);
  if (barriers[work.barrier].completeTx(bytes, work.clock))
    completed(work.barrier);
}

void Cta::completeStore(size_t index) {
  StoreInFlight work = std::move(stores[index]);
  stores.erase(stores.begin() + index);
  const TensorMap &map = launch.maps[work.store.map];
  GlobalTensor &tensor = (*launch.tensors)[map.tensor];
  Half half = tensor.element.isBF16() ? Half::bf16 : Half::f16;
  int64_t bytes = 0;
  SmallVector<int64_t, 4> box(map.box);
  forEachBoxElement(box, [&](ArrayRef<int64_t> inner, int64_t linear) {
    int64_t offset =
        swizzle128(kDynamicSharedBase + work.store.shared + 2 * linear) -
        kDynamicSharedBase;
    bytes += 2;
    if (offset < 0 || offset + 2 > static_cast<int64_t>(shared.size()))
      return;
    int64_t global = globalElement(tensor, work.store.coords, inner);
    if (global < 0)
      return;
    uint16_t bits;
    std::memcpy(&bits, &shared[offset], 2);
    tensor.data[global] = halfValue(half, bits);
  });
  races.access(Memory::shared, work.store.shared, work.store.shared + bytes,
               false, work.slot, work.agent, work.clock);
  asyncProxyRead(work.store.shared, bytes, work.agent);
  Actor &issuer = actors[work.issuer];
  issuer.storesDone.join(work.clock);
  if (--issuer.storeGroups[work.group - issuer.storeGroupsRetired] == 0) {
    // Groups retire in order once every store of each is done.
    while (!issuer.storeGroups.empty() && issuer.storeGroups.front() == 0) {
      issuer.storeGroups.pop_front();
      ++issuer.storeGroupsRetired;
    }
  }
  wake(WaitKind::storeGroups, work.issuer);
}

//===----------------------------------------------------------------------===//
// fa4: Tensor Memory, MMA, roles, named barriers
//===----------------------------------------------------------------------===//

void Cta::completeTmemAccesses(Actor &actor,
                               SmallVectorImpl<PendingTmem> &pending,
                               bool write) {
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
    races.access(Memory::tensor, first, first + access.columns, write,
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

Slot Cta::stampAsync(VectorClock &clock) {
  Slot slot = nextSlot + asyncCounter % kAsyncSlots;
  clock.set(slot, asyncCounter / kAsyncSlots + 1);
  ++asyncCounter;
  return slot;
}

MmaPipe &Cta::pipeOf(const Actor &actor) {
  for (MmaPipe &pipe : pipes)
    if (pipe.issuer == actor.tid)
      return pipe;
  pipes.push_back({actor.tid, pipeSlot(), {}, {}});
  return pipes.back();
}

bool Cta::operandRead(Operation *op, Half half,
                      const SmemDescriptor &descriptor, bool mnMajor,
                      int64_t count, Slot slot, uint32_t agent,
                      const VectorClock &clock, std::vector<float> &values) {
  constexpr int64_t kStep = tcgen05::kKStep;
  for (int64_t mn = 0; mn < count; ++mn)
    for (int64_t k = 0; k < kStep; ++k) {
      int64_t offset = swizzle128(operandAddress(descriptor, mnMajor, mn, k)) -
                       kDynamicSharedBase;
      if (!checkShared(op, offset, 2))
        return false;
      uint16_t bits;
      std::memcpy(&bits, &shared[offset], 2);
      values[mn * kStep + k] = halfValue(half, bits);
      races.access(Memory::shared, offset, offset + 2, false, slot, agent,
                   clock);
      asyncProxyRead(offset, 2, agent);
    }
  return true;
}

void Cta::executeMma(MmaPipe &pipe) {
  MmaWork work = std::move(pipe.work.front());
  pipe.work.pop_front();
  // The pipe runs in order: each piece of work is ordered after the last.
  pipe.clock.join(work.clock);
  pipe.clock.tick(pipe.slot);
  if (work.commit) {
    if (barriers[work.barrier].arrive(pipe.clock))
      completed(work.barrier);
    return;
  }
  auto mma = cast<MmaOp>(work.op);
  auto bType = cast<MemRefType>(mma.getB().getType());
  bool bf16 = bType.getElementType().isBF16();
  Half half = bf16 ? Half::bf16 : Half::f16;
  bool bMnMajor = mma.getBMajor() == OperandMajor::mn;
  int64_t m = mma.getM(), n = mma.getN(), k = mma.getK();
  auto atomStride = [](MemRefType type) {
    return type.getStridesAndOffset().first[0] * 2;
  };
  // Tile addresses in the shared window, as the lowering takes them.
  int64_t bTile = kDynamicSharedBase + work.b.base + work.b.offset * 2;
  auto aTile = dyn_cast<MemRefType>(mma.getA().getType());
  int64_t aAddress =
      aTile ? kDynamicSharedBase + work.a.base + work.a.offset * 2 : 0;
  int64_t dColumn = work.d.base;
  if (!tmemColumnsAllocated(work.op, dColumn, n))
    return;

  std::vector<float> aValues(m * tcgen05::kKStep), bValues(n * tcgen05::kKStep);
  auto readShared = [&](const SmemDescriptor &d, bool mnMajor, int64_t count,
                        std::vector<float> &values) {
    return operandRead(work.op, half, d, mnMajor, count, pipe.slot, work.agent,
                       pipe.clock, values);
  };
  for (int64_t step = 0; step < k / tcgen05::kKStep; ++step) {
    // The instruction the lowering issues for this step, decoded the way
    // the Tensor Core reads it.
    uint32_t idesc = tcgen05::instructionDescriptor(bf16, bMnMajor, m, n);
    int64_t stepM = ((idesc >> 24) & 0x1F) << 4;
    int64_t stepN = ((idesc >> 17) & 0x3F) << 3;
    bool stepBMn = (idesc >> 16) & 1;
    if (stepM != m || stepN != n)
      return (void)fail(work.op, "the instruction descriptor does not encode "
                                 "the MMA's shape");
    if (aTile) {
      SmemDescriptor a = decodeSmemDescriptor(tcgen05::smemDescriptor(
          aAddress + tcgen05::kMajorStepBytes(step, atomStride(aTile)),
          tcgen05::kKMajorLeadingBytes, tcgen05::kKMajorStrideBytes));
      if (a.swizzle != tcgen05::kSwizzle128B)
        return (void)fail(work.op, "A is not in 128-byte swizzle mode");
      if (!readShared(a, false, m, aValues))
        return;
    } else {
      int64_t column = work.a.base + tcgen05::tmemStepColumns(step);
      if (!tmemColumnsAllocated(work.op, column, tcgen05::kKStep / 2))
        return;
      for (int64_t row = 0; row < m; ++row) {
        races.access(Memory::tensor, row * kTmemColumns + column,
                     row * kTmemColumns + column + tcgen05::kKStep / 2, false,
                     pipe.slot, work.agent, pipe.clock);
        for (int64_t kk = 0; kk < tcgen05::kKStep; ++kk) {
          uint32_t cell = tmem[row * kTmemColumns + column + kk / 2];
          aValues[row * tcgen05::kKStep + kk] =
              halfValue(half, static_cast<uint16_t>(cell >> (16 * (kk % 2))));
        }
      }
    }
    int64_t bAddress =
        bTile + (stepBMn ? tcgen05::mnMajorStepBytes(step)
                         : tcgen05::kMajorStepBytes(step, atomStride(bType)));
    SmemDescriptor b = decodeSmemDescriptor(tcgen05::smemDescriptor(
        bAddress, stepBMn ? atomStride(bType) : tcgen05::kKMajorLeadingBytes,
        tcgen05::kPatternBytes));
    if (!readShared(b, stepBMn, n, bValues))
      return;
    // f32 accumulation of exact products, one rounding per K step.
    bool accumulate = work.accumulate || step > 0;
    for (int64_t row = 0; row < m; ++row) {
      races.access(Memory::tensor, row * kTmemColumns + dColumn,
                   row * kTmemColumns + dColumn + n, true, pipe.slot,
                   work.agent, pipe.clock);
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t kk = 0; kk < tcgen05::kKStep; ++kk)
          sum += static_cast<double>(aValues[row * tcgen05::kKStep + kk]) *
                 bValues[col * tcgen05::kKStep + kk];
        uint32_t &cell = tmem[row * kTmemColumns + dColumn + col];
        float previous;
        std::memcpy(&previous, &cell, 4);
        float result = static_cast<float>(accumulate ? previous + sum : sum);
        std::memcpy(&cell, &result, 4);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Warp shuffles and warpgroup MMA (sm_90a)
//===----------------------------------------------------------------------===//

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
  Step met = gather(
      actor, op, warp.meeting, 32, WaitKind::warpVote, actor.warp,
      "lanes of warp " + std::to_string(actor.warp),
      [&] { warp.lanes[actor.lane] = value->floats[0]; },
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

Step Cta::wgmma(Actor &actor, WgmmaOp op, ArrayRef<const Val *> in) {
  unsigned t = actor.tid % kWarpgroupThreads;
  bool registersA = isa<VectorType>(op.getA().getType());
  bool mismatch = false;
  unsigned index = actor.warp / 4;
  Warpgroup &group = warpgroups[index];
  Step gathered = gather(
      actor, op, group.meeting, kWarpgroupThreads, WaitKind::warpgroup, index,
      "threads of warpgroup " + std::to_string(index),
      [&] {
        if (!group.gathering) {
          auto work = std::make_shared<WgmmaWork>();
          work->op = op;
          work->b = *in[1];
          if (!registersA)
            work->a = *in[0];
          work->aRegisters.resize(kWarpgroupThreads);
          work->acc.resize(kWarpgroupThreads);
          work->result.resize(kWarpgroupThreads);
          group.gathering = std::move(work);
        }
        WgmmaWork &work = *group.gathering;
        auto sameTile = [](const Val &x, const Val *y) {
          return x.base == y->base && x.offset == y->offset;
        };
        mismatch = !sameTile(work.b, in[1]) ||
                   (!registersA && !sameTile(work.a, in[0]));
        if (registersA)
          work.aRegisters[t] = in[0]->floats;
        if (op.getAcc())
          work.acc[t] = in[2]->floats;
        work.clock.join(actor.clock);
      },
      [&] {
        std::shared_ptr<WgmmaWork> work = std::move(group.gathering);
        work->agent = agentFor(op, actors[index * kWarpgroupThreads]);
        work->group = group.committed;
        group.work.push_back(work);
        group.issued = std::move(work);
      });
  if (mismatch)
    return fail(op, "threads of warpgroup " + std::to_string(index) +
                        " name different shared-memory tiles");
  if (gathered != Step::next)
    return gathered;
  actor.clock.tick(actor.slot);
  Val pending;
  pending.pendingLoad = op;
  define(actor, op.getResult()) = std::move(pending);
  actor.pendingWgmma[op.getResult()] = group.issued;
  return Step::next;
}

Step Cta::wgmmaWait(Actor &actor, WgmmaWaitOp op) {
  unsigned index = actor.warp / 4;
  Warpgroup &group = warpgroups[index];
  // Groups [0, complete) have completed when the wait returns.
  uint64_t pending = op.getPending();
  uint64_t complete = group.committed > pending ? group.committed - pending : 0;
  for (const std::shared_ptr<WgmmaWork> &work : group.work)
    if (work->group < complete) {
      block(actor, op, WaitKind::wgmmaGroups, index);
      return Step::blocked;
    }
  unsigned t = actor.tid % kWarpgroupThreads;
  SmallVector<Val> results;
  for (Value fragment : op.getFragments()) {
    auto it = actor.pendingWgmma.find(fragment);
    if (it == actor.pendingWgmma.end()) {
      const Val *value = use(actor, op, fragment);
      if (!value)
        return Step::error;
      results.push_back(*value);
      continue;
    }
    const WgmmaWork &work = *it->second;
    if (work.group >= complete) {
      std::string loc;
      llvm::raw_string_ostream os(loc);
      work.op->getLoc().print(os);
      return fail(op, llvm::formatv(
                          "returns the result of the fa4.wgmma at {0}, which "
                          "may still run: its commit group is not among those "
                          "a wait for at most {1} pending groups completes",
                          loc, pending));
    }
    Val value;
    value.floats = work.result[t];
    results.push_back(std::move(value));
    actor.pendingWgmma.erase(it);
  }
  // The completion of the last complete group orders everything before it:
  // the pipe runs in order.
  if (complete > 0) {
    auto done = group.groupDone.lower_bound(complete);
    if (done != group.groupDone.begin())
      actor.clock.join(std::prev(done)->second);
  }
  for (auto [result, value] : llvm::zip(op.getResults(), results))
    define(actor, result) = std::move(value);
  return Step::next;
}

void Cta::executeWgmma(unsigned index) {
  Warpgroup &group = warpgroups[index];
  std::shared_ptr<WgmmaWork> work = std::move(group.work.front());
  group.work.pop_front();
  if (!group.slot)
    group.slot = pipeSlot();
  group.clock.join(work->clock);
  group.clock.tick(group.slot);
  auto op = cast<WgmmaOp>(work->op);
  auto bType = cast<MemRefType>(op.getB().getType());
  Half half = bType.getElementType().isBF16() ? Half::bf16 : Half::f16;
  bool bMnMajor = op.getBMajor() == OperandMajor::mn;
  int64_t m = WgmmaOp::kM, n = op.getN(), k = op.getK();
  constexpr int64_t kStep = wgmma::kKStep;
  auto atomStride = [](MemRefType type) {
    return type.getStridesAndOffset().first[0] * 2;
  };
  for (int64_t t = 0; t < kWarpgroupThreads; ++t)
    if ((op.getAcc() && static_cast<int64_t>(work->acc[t].size()) != n / 2) ||
        (!work->aRegisters[t].empty() &&
         static_cast<int64_t>(work->aRegisters[t].size()) != k / 2))
      return (void)fail(op, "a thread's fragment has the wrong size");

  // The product in row-major order, from the accumulator fragments.
  std::vector<float> d(m * n, 0.0f);
  if (op.getAcc())
    for (int64_t t = 0; t < kWarpgroupThreads; ++t)
      for (int64_t i = 0; i < n / 2; ++i)
        d[wgmma::accumulatorRow(t, i) * n + wgmma::accumulatorColumn(t, i)] =
            work->acc[t][i];
  auto readShared = [&](const SmemDescriptor &d, bool mnMajor, int64_t count,
                        std::vector<float> &values) {
    return operandRead(op, half, d, mnMajor, count, group.slot, work->agent,
                       group.clock, values);
  };
  auto aTile = dyn_cast<MemRefType>(op.getA().getType());
  int64_t aAddress =
      aTile ? kDynamicSharedBase + work->a.base + work->a.offset * 2 : 0;
  int64_t bTile = kDynamicSharedBase + work->b.base + work->b.offset * 2;
  std::vector<float> aValues(m * kStep), bValues(n * kStep);
  for (int64_t step = 0; step < k / kStep; ++step) {
    // The descriptors the lowering encodes, decoded as wgmma reads them.
    if (aTile) {
      SmemDescriptor a = decodeWgmmaDescriptor(wgmma::smemDescriptor(
          aAddress + tcgen05::kMajorStepBytes(step, atomStride(aTile)),
          tcgen05::kKMajorLeadingBytes, tcgen05::kKMajorStrideBytes));
      if (a.swizzle != wgmma::kSwizzle128B)
        return (void)fail(op, "A is not in 128-byte swizzle mode");
      if (!readShared(a, false, m, aValues))
        return;
    } else {
      // The register fragments hold A in the accumulator layout over K.
      for (int64_t t = 0; t < kWarpgroupThreads; ++t)
        for (int64_t i = 0; i < k / 2; ++i) {
          int64_t column = wgmma::accumulatorColumn(t, i);
          if (column / kStep == step)
            aValues[wgmma::accumulatorRow(t, i) * kStep + column % kStep] =
                work->aRegisters[t][i];
        }
    }
    int64_t bAddress =
        bTile + (bMnMajor ? tcgen05::mnMajorStepBytes(step)
                          : tcgen05::kMajorStepBytes(step, atomStride(bType)));
    SmemDescriptor b = decodeWgmmaDescriptor(wgmma::smemDescriptor(
        bAddress, bMnMajor ? atomStride(bType) : tcgen05::kKMajorLeadingBytes,
        tcgen05::kPatternBytes));
    if (b.swizzle != wgmma::kSwizzle128B)
      return (void)fail(op, "B is not in 128-byte swizzle mode");
    if (!readShared(b, bMnMajor, n, bValues))
      return;
    // f32 accumulation of exact products, one rounding per K step.
    bool accumulate = op.getAcc() || step > 0;
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t kk = 0; kk < kStep; ++kk)
          sum += static_cast<double>(aValues[row * kStep + kk]) *
                 bValues[col * kStep + kk];
        float &cell = d[row * n + col];
        cell = static_cast<float>(accumulate ? cell + sum : sum);
      }
  }
  for (int64_t t = 0; t < kWarpgroupThreads; ++t) {
    work->result[t].resize(n / 2);
    for (int64_t i = 0; i < n / 2; ++i)
      work->result[t][i] =
          d[wgmma::accumulatorRow(t, i) * n + wgmma::accumulatorColumn(t, i)];
  }
  work->done = true;
  group.groupDone[work->group] = group.clock;
  // Threads are at most one commit apart: older groups are never asked for.
  while (!group.groupDone.empty() &&
         group.groupDone.begin()->first + 4 < work->group)
    group.groupDone.erase(group.groupDone.begin());
  wake(WaitKind::wgmmaGroups, index);
}

Step Cta::fa4Op(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
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
      .Case([&](TmemAllocOp alloc) {
        // Warp-collective: lane 0 stands for the warp.
        if (actor.lane != 0)
          return Step::next;
        if (tmemAllocated != 0)
          return fail(op, "allocates Tensor Memory twice");
        int64_t columns = alloc.getColumns();
        tmemAllocated = columns;
        std::optional<int64_t> address =
            sharedAddress(op, *in[0], alloc.getSlot().getType(), {0}, 1);
        if (!address)
          return Step::error;
        sharedAccess(actor, op, *address, 4, true);
        uint32_t base = 0; // lane 0, column 0
        std::memcpy(&shared[*address], &base, 4);
        return Step::next;
      })
      .Case([&](TmemDeallocOp) {
        if (actor.lane != 0)
          return Step::next;
        if (tmemAllocated == 0)
          return fail(op, "frees Tensor Memory that is not allocated");
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
        sharedAccess(actor, op, *address, 4, false);
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
        Half half = type.getElementType().isBF16() ? Half::bf16 : Half::f16;
        for (int64_t i = 0; i < n; ++i) {
          if (bits == 32) {
            float x;
            std::memcpy(&x, &tmem[lane * kTmemColumns + first + i], 4);
            out.floats.push_back(x);
          } else {
            uint32_t cell = tmem[lane * kTmemColumns + first + i / 2];
            out.floats.push_back(
                halfValue(half, static_cast<uint16_t>(cell >> (16 * (i % 2)))));
          }
        }
        out.pendingLoad = op;
        define(actor, load.getResult()) = std::move(out);
        actor.pendingLoadValues.push_back(load.getResult());
        actor.pendingLoads.push_back(
            {lane, first, columns, agentFor(op, actor), actor.issueView()});
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
        Half half = type.getElementType().isBF16() ? Half::bf16 : Half::f16;
        for (int64_t i = 0; i < n; ++i) {
          float x = in[0]->floats[i];
          if (bits == 32) {
            std::memcpy(&tmem[lane * kTmemColumns + first + i], &x, 4);
          } else {
            uint32_t &cell = tmem[lane * kTmemColumns + first + i / 2];
            unsigned shift = 16 * (i % 2);
            cell = (cell & ~(0xFFFFu << shift)) |
                   (static_cast<uint32_t>(halfBits(half, x)) << shift);
          }
        }
        actor.pendingStores.push_back(
            {lane, first, columns, agentFor(op, actor), actor.issueView()});
        return Step::next;
      })
      .Case([&](Tcgen05WaitOp wait) {
        bool loadKind = wait.getKind() == Tcgen05WaitKind::load;
        completeTmemAccesses(
            actor, loadKind ? actor.pendingLoads : actor.pendingStores,
            /*write=*/!loadKind);
        if (loadKind) {
          for (Value v : actor.pendingLoadValues)
            actor.env[v].pendingLoad = nullptr;
          actor.pendingLoadValues.clear();
        }
        return Step::next;
      })
      .Case([&](Tcgen05FenceOp fence) {
        if (fence.getKind() == Tcgen05FenceKind::before_thread_sync) {
          actor.clock.set(actor.tcSlot, actor.tcView.get(actor.tcSlot));
          actor.tcView.tick(actor.tcSlot);
        } else {
          actor.tcView.join(actor.clock);
        }
        actor.tcViewCopy.reset();
        return Step::next;
      })
      .Case([&](FenceProxyAsyncOp) {
        ++actor.proxyFences;
        return Step::next;
      })
      .Case([&](MmaOp mma) {
        MmaPipe &pipe = pipeOf(actor);
        MmaWork work;
        work.op = op;
        work.a = *in[0];
        work.b = *in[1];
        work.d = *in[2];
        work.accumulate = in[3]->ints[0] != 0;
        work.clock = actor.tcView;
        work.agent = agentFor(op, actor);
        pipe.work.push_back(std::move(work));
        actor.clock.tick(actor.slot);
        return Step::next;
      })
      .Case([&](MmaCommitOp commit) {
        int64_t b;
        if (!barrierIndex(op, *in[0], commit.getIndex(), actor, b))
          return Step::error;
        MmaPipe &pipe = pipeOf(actor);
        MmaWork work;
        work.op = op;
        work.commit = true;
        work.barrier = b;
        work.clock = actor.tcView;
        pipe.work.push_back(std::move(work));
        actor.clock.tick(actor.slot);
        return Step::next;
      })
      .Case([&](NamedBarrierSyncOp sync) {
        return namedBarrier(actor, op, sync.getId(), sync.getThreads(), true);
      })
      .Case([&](WgmmaOp op) { return wgmma(actor, op, in); })
      .Case([&](WgmmaCommitOp) {
        unsigned index = actor.warp / 4;
        Warpgroup &group = warpgroups[index];
        return gather(
            actor, op, group.meeting, kWarpgroupThreads, WaitKind::warpgroup,
            index, "threads of warpgroup " + std::to_string(index), [] {},
            [&] { ++group.committed; });
      })
      .Case([&](NamedBarrierArriveOp arrive) {
        return namedBarrier(actor, op, arrive.getId(), arrive.getThreads(),
                            false);
      })
      .Case([&](ElectOp elect) {
        Val out;
        out.ints = {actor.lane == 0 ? -1 : 0};
        define(actor, elect.getElected()) = std::move(out);
        return Step::next;
      })
      .Case([&](WarpAnyOp any) {
        Warp &warp = warps[actor.warp];
        Step met = gather(
            actor, op, warp.meeting, 32, WaitKind::warpVote, actor.warp,
            "lanes of warp " + std::to_string(actor.warp),
            [&] { warp.any |= in[0]->ints[0] != 0; },
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
      })
      .Case([&](TmaStoreCommitOp) {
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
      })
      .Case([&](TmaStoreWaitOp wait) {
        if (actor.storeGroups.size() > wait.getPending()) {
          block(actor, op, WaitKind::storeGroups, actor.tid);
          return Step::blocked;
        }
        actor.clock.join(actor.storesDone);
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

//===----------------------------------------------------------------------===//
// llvm (the LSE store)
//===----------------------------------------------------------------------===//

Step Cta::llvmOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
      .Case([&](LLVM::GEPOp gep) {
        if (in.size() != 2 || gep.getIndices().size() != 1 ||
            !gep.getElemType().isIntOrFloat())
          return fail(op, "only one-index pointer arithmetic is supported");
        Val out = *in[0];
        out.offset +=
            in[1]->ints[0] *
            static_cast<int64_t>(gep.getElemType().getIntOrFloatBitWidth() / 8);
        define(actor, gep.getResult()) = std::move(out);
        return Step::next;
      })
      .Case([&](LLVM::StoreOp store) {
        const Val &pointer = *in[1];
        if (pointer.kind != Val::Kind::pointer)
          return fail(op,
                      "stores through a pointer that is not a kernel argument");
        GlobalTensor &tensor = (*launch.tensors)[pointer.base];
        int64_t index = pointer.offset / 4;
        if (pointer.offset % 4 != 0 || index < 0 ||
            index >= static_cast<int64_t>(tensor.data.size()))
          return fail(op, llvm::formatv("stores to byte {0} of '{1}', outside "
                                        "its {2} bytes",
                                        pointer.offset, tensor.name,
                                        tensor.data.size() * 4));
        tensor.data[index] = in[0]->floats[0];
        return Step::next;
      })
      .Case([&](LLVM::CallIntrinsicOp call) {
        StringRef name = call.getIntrin();
        Val out;
        if (name == "llvm.nvvm.lg2.approx.f" ||
            name == "llvm.nvvm.lg2.approx.ftz.f")
          out.floats = {std::log2(in[0]->floats[0])};
        else if (name == "llvm.nvvm.ex2.approx.ftz.f32" ||
                 name == "llvm.nvvm.ex2.approx.f")
          out.floats = {ftz(std::exp2(in[0]->floats[0]))};
        else
          return fail(op, "the simulator does not know intrinsic " + name);
        define(actor, call.getResult(0)) = std::move(out);
        return Step::next;
      })
      .Default([&](Operation *) {
        return fail(op, "the simulator cannot execute this op");
      });
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

Step Cta::scfOp(Actor &actor, Operation *op) {
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    const Val *lower = use(actor, op, forOp.getLowerBound());
    const Val *upper = use(actor, op, forOp.getUpperBound());
    const Val *step = use(actor, op, forOp.getStep());
    if (!lower || !upper || !step)
      return Step::error;
    SmallVector<Val> inits;
    for (Value init : forOp.getInitArgs()) {
      const Val *v = use(actor, op, init);
      if (!v)
        return Step::error;
      inits.push_back(*v);
    }
    bool isSigned = forOp.getUnsignedCmp() == false;
    int64_t lb = lower->ints[0], ub = upper->ints[0], st = step->ints[0];
    if (st <= 0)
      return fail(op, "loop step must be positive");
    bool empty = isSigned ? lb >= ub : uint64_t(lb) >= uint64_t(ub);
    if (empty) {
      for (auto [result, init] : llvm::zip(forOp.getResults(), inits))
        define(actor, result) = init;
      return Step::next;
    }
    Block *body = forOp.getBody();
    Val iv;
    iv.ints = {lb};
    define(actor, forOp.getInductionVar()) = iv;
    for (auto [arg, init] : llvm::zip(forOp.getRegionIterArgs(), inits))
      define(actor, arg) = init;
    actor.stack.push_back({body, body->begin(), op, lb, ub, st});
    return Step::entered;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    const Val *cond = use(actor, op, ifOp.getCondition());
    if (!cond)
      return Step::error;
    Region &region =
        cond->ints[0] != 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
    if (region.empty())
      return Step::next;
    actor.stack.push_back({&region.front(), region.front().begin(), op});
    return Step::entered;
  }
  if (isa<scf::YieldOp>(op))
    return yield(actor, op);
  return fail(op, "the simulator cannot execute this op");
}

Step Cta::yield(Actor &actor, Operation *op) {
  SmallVector<Val> values;
  for (Value operand : op->getOperands()) {
    const Val *v = use(actor, op, operand);
    if (!v)
      return Step::error;
    values.push_back(*v);
  }
  Frame &frame = actor.stack.back();
  Operation *owner = frame.owner;
  if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
    int64_t next = frame.iv + frame.step;
    bool more = forOp.getUnsignedCmp() ? uint64_t(next) < uint64_t(frame.upper)
                                       : next < frame.upper;
    if (next > frame.iv && more) {
      frame.iv = next;
      Val iv;
      iv.ints = {next};
      define(actor, forOp.getInductionVar()) = iv;
      for (auto [arg, v] : llvm::zip(forOp.getRegionIterArgs(), values))
        define(actor, arg) = v;
      frame.it = frame.block->begin();
      return Step::entered;
    }
  }
  for (auto [result, v] : llvm::zip(owner->getResults(), values))
    define(actor, result) = v;
  actor.stack.pop_back();
  ++actor.stack.back().it;
  return Step::entered;
}

} // namespace

CtaOutcome mlir::fa4::sim::runCta(const Launch &launch, int64_t blockId,
                                  const Schedule &schedule) {
  Cta cta(launch, blockId, schedule);
  return cta.run();
}
