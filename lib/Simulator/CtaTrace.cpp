//===- CtaTrace.cpp - the protocol timeline of one CTA --------------------===//
//
// Tracks: warp w is track w ("softmax0 / warp 0"), following its lane 0;
// TMA copies take the first free of the tracks from kTmaTracks on (copies
// overlap, spans on one track may not); the MMA pipe of thread t is track
// kMmaTracks + t, the wgmma pipe of warpgroup g track kWgmmaTracks + g.
// Spans cover [first step, last step + 1), so that spans of one track nest
// or are disjoint and every arrow end lies inside its span.
//
//===----------------------------------------------------------------------===//

#include "CtaTrace.h"
#include "Cta.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

CtaTrace::CtaTrace(Cta &cta, Trace &trace)
    : cta(cta), trace(trace),
      pid(trace.process(
          llvm::formatv("CTA {0} (@{1})", cta.blockId,
                        gpu::GPUFuncOp(cta.launch.kernel).getName())
              .str())),
      threads(cta.actors.size()), wgmmaPipes(cta.warpgroups.size()),
      lastIssued(cta.warpgroups.size()), wgmmaDone(cta.warpgroups.size()) {
  nameWarps();
}

void CtaTrace::nameWarps() {
  std::vector<std::string> roles(cta.warps.size());
  gpu::GPUFuncOp(cta.launch.kernel).walk([&](RoleOp role) {
    for (uint64_t w = role.getWarpBegin();
         w < role.getWarpEnd() && w < roles.size(); ++w)
      roles[w] = role.getRole().str();
  });
  for (auto [w, role] : llvm::enumerate(roles))
    trace.track(pid, w,
                role.empty() ? llvm::formatv("warp {0} (no role)", w).str()
                             : llvm::formatv("{0} / warp {1}", role, w).str());
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string CtaTrace::barrierName(int64_t barrier) const {
  // Barriers are named 'channel.side'[stage]; the quotes are for reports.
  std::string name = cta.barriers[barrier].name;
  llvm::erase(name, '\'');
  return name;
}

std::string CtaTrace::sharedName(int64_t offset) const {
  // The smallest named buffer holding the byte.
  const std::tuple<int64_t, int64_t, std::string> *best = nullptr;
  for (const auto &named : cta.sharedNames) {
    auto &[begin, end, name] = named;
    if (offset >= begin && offset < end &&
        (!best || end - begin < std::get<1>(*best) - std::get<0>(*best)))
      best = &named;
  }
  if (!best)
    return "smem+" + std::to_string(offset);
  int64_t begin = std::get<0>(*best);
  return std::get<2>(*best) +
         (offset == begin ? "" : "+" + std::to_string(offset - begin));
}

std::string CtaTrace::tmemName(int64_t column) const {
  // Of the aliasing views holding the column, the one starting closest
  // before it: P in the upper columns of S is P.
  const std::tuple<int64_t, int64_t, std::string> *best = nullptr;
  for (const auto &named : cta.tmemNames) {
    auto &[begin, end, name] = named;
    if (column >= begin && column < end &&
        (!best || begin > std::get<0>(*best) ||
         (begin == std::get<0>(*best) && end < std::get<1>(*best))))
      best = &named;
  }
  if (!best)
    return "tmem column " + std::to_string(column);
  int64_t begin = std::get<0>(*best);
  return std::get<2>(*best) +
         (column == begin ? "" : "+" + std::to_string(column - begin));
}

std::string CtaTrace::location(Operation *op) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

int64_t CtaTrace::waitedBarrier(const Actor &actor, Operation *op) const {
  auto wait = cast<nvgpu::MBarrierTryWaitParityOp>(op);
  return actor.env.lookup(wait.getBarriers()).base +
         actor.env.lookup(wait.getMbarId()).ints[0];
}

std::string CtaTrace::waitName(const Actor &actor, Operation *op,
                               bool blocked) const {
  if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op))
    return llvm::formatv(
        "wait {0} parity {1}", barrierName(waitedBarrier(actor, op)),
        actor.env.lookup(wait.getPhaseParity()).ints[0] != 0 ? 1 : 0);
  if (auto sync = dyn_cast<NamedBarrierSyncOp>(op))
    return llvm::formatv("bar.sync {0} ({1} threads)", sync.getId(),
                         sync.getThreads());
  if (isa<gpu::BarrierOp>(op))
    return llvm::formatv("barrier (all {0} threads)", cta.launch.block);
  if (auto wait = dyn_cast<NVVM::Tcgen05WaitOp>(op))
    return wait.getKind() == NVVM::Tcgen05WaitKind::LOAD ? "tcgen05.wait::ld"
                                                         : "tcgen05.wait::st";
  if (auto wait = dyn_cast<WgmmaWaitOp>(op))
    return llvm::formatv("wgmma.wait {0}", wait.getPending());
  if (auto wait = dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op))
    return llvm::formatv("bulk wait_group {0}{1}", wait.getGroup(),
                         wait.getRead() ? " read" : "");
  // A warpgroup's collective op waits for its other warps. (The lanes of a
  // warp meeting at a shuffle or vote run in lockstep on the hardware: the
  // simulator's rendezvous there is no wait of the protocol.)
  if (blocked && isa<WgmmaOp, NVVM::WgmmaGroupSyncAlignedOp>(op))
    return llvm::formatv("gather {0} (warpgroup {1})", op->getName(),
                         actor.warp / 4);
  return "";
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

void CtaTrace::blocked(Actor &actor, Operation *op) {
  ThreadState &state = threads[actor.tid];
  if (state.blockedAt == op)
    return;
  state.blockedAt = op;
  state.since = now;
  // A bar.sync arrives when it first blocks.
  if (isa<NamedBarrierSyncOp, gpu::BarrierOp>(op))
    namedArrival(actor, op, now);
}

void CtaTrace::stepped(Actor &actor, Operation *op, Step result) {
  ThreadState &state = threads[actor.tid];
  if (result == Step::next) {
    bool wasBlocked = state.blockedAt == op;
    uint64_t begin = wasBlocked ? state.since : now;
    state.blockedAt = nullptr;
    issued(actor, op);
    if (!wasBlocked &&
        isa<NamedBarrierSyncOp, NamedBarrierArriveOp, gpu::BarrierOp>(op))
      namedArrival(actor, op, now);
    if (actor.lane == 0)
      waitEnded(actor, op, begin, wasBlocked);
  }
  ++now;
}

void CtaTrace::namedArrival(Actor &actor, Operation *op, uint64_t ts) {
  int64_t id = 0;
  if (auto sync = dyn_cast<NamedBarrierSyncOp>(op))
    id = sync.getId();
  else if (auto arrive = dyn_cast<NamedBarrierArriveOp>(op))
    id = arrive.getId();
  uint64_t generation = cta.namedBarriers[id].generation;
  uint64_t &seen = generations[id];
  if (generation == seen)
    return;
  // This arrival completed the generation.
  seen = generation;
  generationDone[id] = {actor.warp, ts};
  // Lane 0 at a bar.sync has the span of its wait there.
  if (actor.lane != 0 || isa<NamedBarrierArriveOp>(op))
    trace.span(
        pid, actor.warp, "arrive",
        llvm::formatv("arrive bar {0} (thread {1})", id, actor.tid).str(), ts,
        ts + 1, {{"at", location(op)}});
}

void CtaTrace::waitEnded(Actor &actor, Operation *op, uint64_t begin,
                         bool blocked) {
  std::string name = waitName(actor, op, blocked);
  if (name.empty())
    return;
  int64_t tid = actor.warp;
  Trace::Args args{{"thread", actor.tid}, {"at", location(op)}};
  SmallVector<std::pair<Point, std::string>, 4> sources;
  if (isa<nvgpu::MBarrierTryWaitParityOp>(op)) {
    int64_t b = waitedBarrier(actor, op);
    // The wait observes the phase completed last.
    args.push_back(
        {"phase observed", static_cast<int64_t>(cta.barriers[b].phase) - 1});
    for (const Arrival &arrival : released.lookup(b))
      sources.push_back({arrival.at, barrierName(b)});
  } else if (isa<NamedBarrierSyncOp, gpu::BarrierOp>(op)) {
    int64_t id = 0;
    if (auto sync = dyn_cast<NamedBarrierSyncOp>(op))
      id = sync.getId();
    auto done = generationDone.find(id);
    if (blocked && done != generationDone.end())
      sources.push_back({done->second, "bar " + std::to_string(id)});
  } else if (auto wait = dyn_cast<WgmmaWaitOp>(op)) {
    unsigned index = actor.warp / 4;
    uint64_t committed = cta.warpgroups[index].committed;
    uint64_t complete =
        committed > wait.getPending() ? committed - wait.getPending() : 0;
    args.push_back({"groups complete", static_cast<int64_t>(complete)});
    // The last wgmma of the groups the wait guarantees.
    for (auto it = wgmmaDone[index].rbegin(); it != wgmmaDone[index].rend();
         ++it)
      if (it->first < complete) {
        sources.push_back({it->second, "wgmma group"});
        break;
      }
  } else if (isa<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
    auto done = storeDoneOf.find(actor.tid);
    if (done != storeDoneOf.end())
      sources.push_back({done->second, "TMA store"});
  }
  trace.span(pid, tid,
             StringRef(name).starts_with("gather") ? "gather" : "wait", name,
             begin, now + 1, std::move(args));
  for (auto &[source, flowName] : sources)
    trace.flow(pid, source.tid, source.ts, tid, now, flowName);
}

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

void CtaTrace::arrived(int64_t barrier, const Actor &actor, Operation *op) {
  std::string name;
  if (auto arrive = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op))
    name = llvm::formatv(
        "arrive.expect_tx {0} ({1} B, thread {2})", barrierName(barrier),
        actor.env.lookup(arrive.getTxcount()).ints[0], actor.tid);
  else
    name = llvm::formatv("arrive {0} (thread {1})", barrierName(barrier),
                         actor.tid);
  SmallVector<Arrival, 2> &list = arriving[barrier];
  // One arrow per track: from its last arrival in the phase.
  int64_t tid = actor.warp;
  llvm::erase_if(list, [&](const Arrival &a) { return a.at.tid == tid; });
  list.push_back({{tid, now}, std::move(name)});
}

void CtaTrace::phaseCompleted(int64_t barrier) {
  SmallVector<Arrival, 2> &list = arriving[barrier];
  for (const Arrival &arrival : list)
    if (!arrival.name.empty())
      trace.span(pid, arrival.at.tid, "arrive", arrival.name, arrival.at.ts,
                 arrival.at.ts + 1,
                 {{"phase completed",
                   static_cast<int64_t>(cta.barriers[barrier].phase) - 1}});
  released[barrier] = std::move(list);
  list.clear();
}

//===----------------------------------------------------------------------===//
// Asynchronous units
//===----------------------------------------------------------------------===//

unsigned CtaTrace::copyLane(uint64_t begin) {
  for (unsigned lane = 0; lane < laneFree.size(); ++lane)
    if (laneFree[lane] <= begin) {
      laneFree[lane] = kBusy;
      return lane;
    }
  unsigned lane = laneFree.size();
  laneFree.push_back(kBusy);
  trace.track(pid, kTmaTracks + lane,
              llvm::formatv("TMA / copy {0}", lane).str());
  return lane;
}

void CtaTrace::issued(Actor &actor, Operation *op) {
  auto box = [&](unsigned map) {
    std::string text;
    for (int64_t extent : cta.launch.maps[map].box)
      text += (text.empty() ? "" : "x") + std::to_string(extent);
    return text;
  };
  auto coords = [](ArrayRef<int64_t> values) {
    std::string text = "[";
    for (int64_t v : values)
      text += (text.size() > 1 ? ", " : "") + std::to_string(v);
    return text + "]";
  };
  auto tensorName = [&](unsigned map) {
    return (*cta.launch.tensors)[cta.launch.maps[map].tensor].name;
  };
  if (isa<nvgpu::TmaAsyncLoadOp>(op)) {
    const TmaLoad &load = cta.loads.back();
    Copy copy{copyLane(now),
              now,
              llvm::formatv("load {0} -> {1}", tensorName(load.map),
                            sharedName(load.shared))
                  .str(),
              {{"tensor", tensorName(load.map)},
               {"coordinates", coords(load.coords)},
               {"box", box(load.map)},
               {"buffer", sharedName(load.shared)},
               {"barrier", barrierName(load.barrier)},
               {"issued by", static_cast<int64_t>(actor.tid)},
               {"at", location(op)}}};
    copies[copyKey(load.slot, load.clock.get(load.slot))] = std::move(copy);
    return;
  }
  if (isa<nvgpu::TmaAsyncStoreOp>(op)) {
    threads[actor.tid].openStores.push_back(now);
    return;
  }
  if (isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
    std::deque<uint64_t> &open = threads[actor.tid].openStores;
    size_t count = std::min(open.size(), cta.stores.size());
    for (size_t i = cta.stores.size() - count; i < cta.stores.size(); ++i) {
      const StoreInFlight &store = cta.stores[i];
      Copy copy{copyLane(open.front()),
                open.front(),
                llvm::formatv("store {0} -> {1}",
                              sharedName(store.store.shared),
                              tensorName(store.store.map))
                    .str(),
                {{"tensor", tensorName(store.store.map)},
                 {"coordinates", coords(store.store.coords)},
                 {"box", box(store.store.map)},
                 {"buffer", sharedName(store.store.shared)},
                 {"group", static_cast<int64_t>(store.group)},
                 {"issued by", static_cast<int64_t>(actor.tid)},
                 {"at", location(store.store.op)}}};
      open.pop_front();
      copies[copyKey(store.slot, store.clock.get(store.slot))] =
          std::move(copy);
    }
    open.clear();
    return;
  }
  if (isa<MmaOp, MmaCommitOp>(op)) {
    auto [it, inserted] = mmaPipes.try_emplace(actor.tid);
    if (inserted)
      trace.track(pid, kMmaTracks + actor.tid,
                  llvm::formatv("tcgen05 MMA pipe / thread {0} ({1})",
                                actor.tid, actor.role)
                      .str());
    it->second.issued.push_back(now);
    return;
  }
  if (isa<WgmmaOp>(op)) {
    unsigned index = actor.warp / 4;
    const std::shared_ptr<WgmmaWork> &work = cta.warpgroups[index].issued;
    if (work == lastIssued[index])
      return;
    // The thread that completed the warpgroup's gather: the wgmma issues.
    if (!lastIssued[index])
      trace.track(
          pid, kWgmmaTracks + index,
          llvm::formatv("wgmma pipe / warpgroup {0} ({1})", index, actor.role)
              .str());
    lastIssued[index] = work;
    wgmmaPipes[index].issued.push_back(now);
  }
}

std::optional<int64_t> CtaTrace::finishCopy(uint32_t slot, uint32_t stamp) {
  auto it = copies.find(copyKey(slot, stamp));
  if (it == copies.end())
    return std::nullopt;
  Copy copy = std::move(it->second);
  copies.erase(it);
  laneFree[copy.lane] = now + 1;
  int64_t tid = kTmaTracks + copy.lane;
  trace.span(pid, tid, "tma", copy.name, copy.issued, now + 1,
             std::move(copy.args));
  return tid;
}

void CtaTrace::loadLanded(const TmaLoad &load) {
  std::optional<int64_t> tid = finishCopy(load.slot, load.clock.get(load.slot));
  if (!tid)
    return;
  SmallVector<Arrival, 2> &list = arriving[load.barrier];
  llvm::erase_if(list, [&](const Arrival &a) { return a.at.tid == *tid; });
  list.push_back({{*tid, now}, ""});
}

void CtaTrace::storeDone(const StoreInFlight &store) {
  if (std::optional<int64_t> tid =
          finishCopy(store.slot, store.clock.get(store.slot)))
    storeDoneOf[store.issuer] = {*tid, now};
}

void CtaTrace::mmaExecuted(const MmaPipe &pipe, const MmaWork &work) {
  PipeState &state = mmaPipes[pipe.issuer];
  uint64_t issuedAt = now;
  if (!state.issued.empty()) {
    issuedAt = state.issued.front();
    state.issued.pop_front();
  }
  // In order: the pipe starts on this work once issued and done with the
  // previous one.
  uint64_t begin = std::max(issuedAt, state.free);
  state.free = now + 1;
  int64_t tid = kMmaTracks + pipe.issuer;
  if (work.commit) {
    trace.span(
        pid, tid, "mma", "commit -> " + barrierName(work.barrier), begin,
        now + 1,
        {{"barrier", barrierName(work.barrier)}, {"at", location(work.op)}});
    SmallVector<Arrival, 2> &list = arriving[work.barrier];
    llvm::erase_if(list, [&](const Arrival &a) { return a.at.tid == tid; });
    list.push_back({{tid, now}, ""});
    return;
  }
  auto mma = cast<MmaOp>(work.op);
  bool sharedA = isa<MemRefType>(mma.getA().getType());
  std::string a = sharedA ? sharedName(work.a.base + work.a.offset * 2)
                          : tmemName(work.a.base);
  std::string b = sharedName(work.b.base + work.b.offset * 2);
  std::string d = tmemName(work.d.base);
  trace.span(
      pid, tid, "mma",
      llvm::formatv("mma {0} {1} {2} * {3}", d, work.accumulate ? "+=" : "=", a,
                    b)
          .str(),
      begin, now + 1,
      {{"shape",
        llvm::formatv("{0}x{1}x{2}", mma.getM(), mma.getN(), mma.getK()).str()},
       {"A", a},
       {"B", b},
       {"D", d},
       {"accumulate", static_cast<int64_t>(work.accumulate)},
       {"at", location(work.op)}});
}

void CtaTrace::wgmmaExecuted(unsigned warpgroup, const WgmmaWork &work) {
  PipeState &state = wgmmaPipes[warpgroup];
  uint64_t issuedAt = now;
  if (!state.issued.empty()) {
    issuedAt = state.issued.front();
    state.issued.pop_front();
  }
  uint64_t begin = std::max(issuedAt, state.free);
  state.free = now + 1;
  int64_t tid = kWgmmaTracks + warpgroup;
  auto op = cast<WgmmaOp>(work.op);
  bool sharedA = isa<MemRefType>(op.getA().getType());
  int64_t bytes = bytesOf(op.getB().getType().getElementType());
  std::string a =
      sharedA ? sharedName(work.a.base + work.a.offset * bytes) : "registers";
  std::string b = sharedName(work.b.base + work.b.offset * bytes);
  trace.span(
      pid, tid, "wgmma",
      llvm::formatv("wgmma acc {0} {1} * {2}", op.getAcc() ? "+=" : "=", a, b)
          .str(),
      begin, now + 1,
      {{"shape",
        llvm::formatv("{0}x{1}x{2}", WgmmaOp::kM, op.getN(), op.getK()).str()},
       {"A", a},
       {"B", b},
       {"commit group", static_cast<int64_t>(work.group)},
       {"at", location(work.op)}});
  std::deque<std::pair<uint64_t, Point>> &done = wgmmaDone[warpgroup];
  done.push_back({work.group, {tid, now}});
  while (done.size() > 16)
    done.pop_front();
}

//===----------------------------------------------------------------------===//
// The end
//===----------------------------------------------------------------------===//

void CtaTrace::finish() {
  for (const Actor &actor : cta.actors) {
    const ThreadState &state = threads[actor.tid];
    if (actor.lane != 0 || actor.status != Status::blocked || !state.blockedAt)
      continue;
    std::string name = waitName(actor, state.blockedAt, true);
    if (name.empty())
      name = "blocked at " + state.blockedAt->getName().getStringRef().str();
    trace.span(pid, actor.warp, "wait", name + " (never released)", state.since,
               std::max(now, state.since + 1),
               {{"thread", actor.tid}, {"at", location(state.blockedAt)}});
  }
  for (auto &[key, copy] : copies)
    trace.span(pid, kTmaTracks + copy.lane, "tma",
               copy.name + " (in flight at the end)", copy.issued,
               std::max(now, copy.issued + 1), copy.args);
  copies.clear();
}
