//===- Scheduler.cpp - the threads of a CTA and their scheduling ----------===//
//
// Every thread of the CTA is an actor interpreting the kernel's ops with its
// own SSA values; a seeded scheduler interleaves the actors and completes
// asynchronous work (TMA loads and stores, the MMA and wgmma pipes) at
// random points. Threads block on mbarrier waits, named barriers and
// collective ops exactly where the hardware would; when every live thread
// is blocked and nothing is in flight, the CTA is deadlocked. This file
// also routes each op to the unit that gives it semantics, and words the
// reports.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// Construction and reports
//===----------------------------------------------------------------------===//

Cta::Cta(const Launch &launch, int64_t blockId, const Schedule &schedule,
         Cluster *cluster, unsigned rank)
    : launch(launch), blockId(blockId), cluster(cluster), rank(rank),
      rng(schedule.seed), maxSteps(schedule.maxSteps),
      shared(launch.dynamicSharedBytes, 0xA5),
      ordinaryStores(launch.dynamicSharedBytes),
      tmem(kTmemLanes * kTmemColumns, 0xFFFFFFFF),
      races(launch.dynamicSharedBytes, kTmemLanes * kTmemColumns,
            [this](Memory m, int64_t first, int64_t last) {
              return describeMemory(m, first, last);
            }) {
  int64_t threads = launch.block;
  warps.resize((threads + 31) / 32);
  warpgroups.resize((warps.size() + 3) / 4);
  // Slots: one per thread and one per thread's tcgen05 work, then the
  // rotating async slots and one per MMA or wgmma pipe, allocated on
  // demand. The CTAs of a cluster synchronize with each other, so each
  // numbers its slots from its own base.
  Slot base = rank * (2 * threads + kAsyncSlots + kMaxPipes);
  nextSlot = base + 2 * threads;
  actors.resize(threads);
  for (int64_t t = 0; t < threads; ++t) {
    Actor &actor = actors[t];
    actor.tid = t;
    actor.warp = t / 32;
    actor.lane = t % 32;
    actor.slot = base + t;
    actor.clock.set(actor.slot, 1);
    actor.tcSlot = base + threads + t;
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
  if (schedule.trace)
    tracer = std::make_unique<CtaTrace>(*this, *schedule.trace);
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
    // The result of an asynchronous access: what retires it is the access's
    // contract.
    std::string loc;
    llvm::raw_string_ostream os(loc);
    load->getLoc().print(os);
    AsyncCompletion completion =
        cast<AsyncAccessOpInterface>(load).getAsyncCompletion();
    StringRef waiter =
        completion == AsyncCompletion::wgmma_group_wait
            ? "a fa4.wgmma.wait returns it"
        : completion == AsyncCompletion::tmem_load_wait
            ? "nvvm.tcgen05.wait <load>"
            : "its completion";
    fail(op, "uses the result of " + load->getName().getStringRef() + " at " +
                 loc + " before " + waiter + " in " + who(actor));
    return nullptr;
  }
  return &it->second;
}

Step Cta::checkRetired(Actor &actor, AsyncWaitOpInterface wait) {
  for (unsigned k = 0; k <= getMaxEnumValForAsyncCompletion(); ++k) {
    auto kind = static_cast<AsyncCompletion>(k);
    if (!wait.retires(kind))
      continue;
    std::string left;
    switch (kind) {
    case AsyncCompletion::tmem_load_wait:
    case AsyncCompletion::tmem_store_wait:
      if (!actor.pendingTmem(kind).empty())
        left = "TMEM accesses are in flight";
      break;
    case AsyncCompletion::bulk_group_wait:
      if (!actor.storeGroups.empty())
        left = "TMA store groups are in flight";
      else if (!actor.openStores.empty())
        left = "TMA stores are not committed to a group, so the wait does "
               "not cover them";
      break;
    case AsyncCompletion::wgmma_group_wait: {
      const Warpgroup &group = warpgroups[actor.warp / 4];
      if (llvm::any_of(group.work, [&](const auto &work) {
            return work->group < group.committed;
          }))
        left = "wgmma groups are in flight";
      else if (llvm::any_of(actor.pendingWgmma, [&](const auto &entry) {
                 return entry.second->group >= group.committed;
               }))
        left = "wgmmas are not committed to a group, so the wait does not "
               "cover them";
      break;
    }
    case AsyncCompletion::mbarrier:
    case AsyncCompletion::tensor_core_commit:
      break;
    }
    if (!left.empty())
      return fail(wait, llvm::formatv("retires {0} accesses, but when it "
                                      "returns in {1}, {2}",
                                      stringifyAsyncCompletion(kind),
                                      who(actor), left));
  }
  return Step::next;
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
  if (tracer)
    tracer->blocked(actor, op);
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
  if (tracer)
    tracer->stepped(actor, op, result);
  if (result == Step::next)
    ++actor.stack.back().it;
  if (result == Step::done) {
    // A tcgen05.ld/st never waited for may happen as late as the thread's
    // end, at an epoch no fence has published: anything it was meant to be
    // ordered with races with it.
    completeTmemAccesses(actor, actor.pendingLoads);
    completeTmemAccesses(actor, actor.pendingStores);
    // TMA stores read shared memory until a wait retires them: a thread
    // that exits without one lets the CTA's shared memory go while they
    // may still read it, whether or not they happen to be done.
    uint64_t committed = actor.storeGroupsRetired + actor.storeGroups.size();
    if (committed > actor.storeGroupsWaited || !actor.openStores.empty())
      fail(nullptr, who(actor) + " exits with TMA stores that no "
                                 "fa4.tma.store_wait retired: the CTA's "
                                 "shared memory may be released while they "
                                 "read it");
  }
  return result;
}

Cta::Progress Cta::advance() {
  if (failed)
    return Progress::stopped;
  bool events = asyncWorkInFlight();
  bool exited = ready.empty() && llvm::all_of(actors, [](const Actor &a) {
                  return a.status == Status::done;
                });
  if (exited) {
    stopped = true;
    if (events)
      fail(nullptr,
           llvm::formatv(
               "CTA {0} exited with asynchronous work in flight: "
               "{1} TMA loads, {2} TMA stores, {3} MMA pipes and {4} "
               "wgmma pipes with work",
               blockId, loads.size(), stores.size(),
               llvm::count_if(pipes,
                              [](const MmaPipe &p) { return !p.work.empty(); }),
               llvm::count_if(warpgroups, [](const Warpgroup &g) {
                 return !g.work.empty();
               })));
    checkTmemFreed();
    return Progress::stopped;
  }
  // Nothing in this CTA can move. Alone, no other CTA can release it (CTAs
  // share only global memory, which no kernel op waits on); in a cluster,
  // another CTA may (runGrid reports the deadlock once all are stalled).
  if (ready.empty() && !events) {
    if (cluster)
      return Progress::stalled;
    reportDeadlock();
    return Progress::stopped;
  }
  // Asynchronous completions interleave with the threads at random, so
  // that their latencies vary from a few ops to whole loop iterations.
  if (events && (ready.empty() || rng() % 8 == 0)) {
    fireEvent();
    return Progress::running;
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
  return failed ? Progress::stopped : Progress::running;
}

bool Cta::asyncWorkInFlight() const {
  return !loads.empty() || !stores.empty() ||
         llvm::any_of(pipes,
                      [](const MmaPipe &p) { return !p.work.empty(); }) ||
         llvm::any_of(warpgroups,
                      [](const Warpgroup &g) { return !g.work.empty(); });
}

bool Cta::isStalled() const {
  return !stopped && !failed && ready.empty() && !asyncWorkInFlight();
}

CtaOutcome Cta::finish() {
  if (tracer)
    tracer->finish();
  outcome.steps = steps;
  outcome.races = races.races();
  return std::move(outcome);
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
  if (tracer)
    tracer->tick();
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
    case WaitKind::clusterBarrier:
      os << ": waits at the cluster barrier (barrier.cluster) for generation "
         << cluster->generation << ", " << cluster->arrived << " of "
         << launch.cluster * launch.block << " threads arrived";
      break;
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
  // nvgpu's asynchronous accesses (AsyncAccessOpInterface, attached by the
  // fa4 dialect) are the TMA copies; the rest are mbarrier ops.
  if (dialect == "nvgpu")
    return isa<AsyncAccessOpInterface>(op) ? tmaOp(actor, op)
                                           : mbarrierOp(actor, op);
  if (dialect == "scf")
    return scfOp(actor, op);
  if (auto wait = dyn_cast<WgmmaWaitOp>(op))
    return wgmmaWait(actor, wait);
  if (auto wgmmaOp = dyn_cast<WgmmaOp>(op))
    return wgmma(actor, wgmmaOp);
  // The rest take all their operands' values up front.
  SmallVector<const Val *, 4> in;
  for (Value operand : op->getOperands()) {
    const Val *v = use(actor, op, operand);
    if (!v)
      return Step::error;
    in.push_back(v);
  }
  if (dialect == "arith" || dialect == "math")
    return pure(actor, op, in);
  if (dialect == "vector")
    return vectorOp(actor, op, in);
  if (dialect == "memref")
    return memrefOp(actor, op, in);
  if (dialect == "fa4")
    return fa4Op(actor, op, in);
  if (dialect == "nvvm")
    return nvvmOp(actor, op, in);
  if (dialect == "llvm")
    return llvmOp(actor, op, in);
  return fail(op, "the simulator cannot execute this op");
}

Step Cta::pure(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  Val out;
  std::string error;
  if (!evaluate(op, in, out, error))
    return fail(op, error);
  define(actor, op->getResult(0)) = std::move(out);
  return Step::next;
}

std::vector<CtaOutcome> mlir::fa4::sim::runGrid(const Launch &launch,
                                                const Schedule &schedule) {
  // Every CTA of the persistent grid is resident at once, as on the GPU
  // (the grid is at most one CTA per SM): a seeded pick among the CTAs
  // still running gives each scheduling step to one of them, so that their
  // global-memory protocols (split-KV's counters and partial rows)
  // interleave. The first CTA that fails stops the grid, as the first
  // error ends the run.
  // The CTAs of a cluster (consecutive block ids) reach each other; the
  // grid is whole clusters.
  std::vector<std::unique_ptr<Cta>> ctas;
  std::vector<std::unique_ptr<Cluster>> clusters;
  for (int64_t id = 0; id < launch.grid; ++id) {
    int64_t rank = id % launch.cluster;
    if (launch.cluster > 1 && rank == 0)
      clusters.push_back(std::make_unique<Cluster>());
    Cluster *cluster = launch.cluster > 1 ? clusters.back().get() : nullptr;
    ctas.push_back(
        std::make_unique<Cta>(launch, id,
                              Schedule{schedule.seed * 1000003 + id,
                                       schedule.maxSteps, schedule.trace},
                              cluster, static_cast<unsigned>(rank)));
    if (cluster)
      cluster->members.push_back(ctas.back().get());
  }
  std::mt19937_64 pick(schedule.seed);
  std::vector<size_t> running(ctas.size());
  std::iota(running.begin(), running.end(), 0);
  while (!running.empty()) {
    size_t at = pick() % running.size();
    Cta &cta = *ctas[running[at]];
    Cta::Progress progress = cta.advance();
    if (progress == Cta::Progress::running)
      continue;
    if (cta.hasFailed())
      break;
    if (progress == Cta::Progress::stalled) {
      // A cluster deadlocks once none of its running CTAs can move.
      Cluster &cluster = *cta.getCluster();
      auto stuck = [](Cta *member) {
        return member->isStalled() || member->hasStopped();
      };
      if (!llvm::all_of(cluster.members, stuck))
        continue;
      for (Cta *member : cluster.members)
        if (member->isStalled())
          member->stopDeadlocked();
      break;
    }
    running.erase(running.begin() + at);
  }
  std::vector<CtaOutcome> outcomes;
  for (auto &cta : ctas)
    outcomes.push_back(cta->finish());
  return outcomes;
}
