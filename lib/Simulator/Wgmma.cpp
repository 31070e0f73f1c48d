//===- Wgmma.cpp - warpgroup MMA (sm_90a) ---------------------------------===//
//
// fa4.wgmma and fa4.wgmma.commit are collective over the 128 threads of a
// warpgroup: they rendezvous, each contributing its register fragments and
// clock, and the wgmma queues on the warpgroup's in-order pipe. The pipe
// executes it at a random later point, reading its shared-memory operands
// through the descriptors the lowering encodes. Its result fragments are
// unusable until a fa4.wgmma.wait that guarantees its commit group returns
// them.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"
#include "fa4/Dialect/FA4/IR/WgmmaEncoding.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

//===----------------------------------------------------------------------===//
// Issue and wait
//===----------------------------------------------------------------------===//

Step Cta::wgmma(Actor &actor, WgmmaOp op) {
  // A and B are ordinary values; the accumulator may be the result of an
  // earlier wgmma of this thread still in flight (the pipe runs them in
  // order, so this one reads the other's result).
  const Val *in[3] = {use(actor, op, op.getA()), use(actor, op, op.getB()),
                      nullptr};
  if (!in[0] || !in[1])
    return Step::error;
  std::shared_ptr<WgmmaWork> accFrom;
  if (Value acc = op.getAcc()) {
    auto pending = actor.pendingWgmma.find(acc);
    if (pending != actor.pendingWgmma.end())
      accFrom = pending->second;
    else if (!(in[2] = use(actor, op, acc)))
      return Step::error;
  }
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
          work->accFrom = accFrom;
          group.gathering = std::move(work);
        }
        WgmmaWork &work = *group.gathering;
        auto sameTile = [](const Val &x, const Val *y) {
          return x.base == y->base && x.offset == y->offset;
        };
        mismatch = !sameTile(work.b, in[1]) ||
                   (!registersA && !sameTile(work.a, in[0])) ||
                   work.accFrom != accFrom;
        if (registersA)
          work.aRegisters[t] = in[0]->floats;
        if (in[2])
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
                        " name different shared-memory tiles or "
                        "accumulators");
  if (gathered != Step::next)
    return gathered;
  // The accumulator's registers now belong to this wgmma: only its result
  // may be waited for.
  if (accFrom)
    actor.pendingWgmma.erase(op.getAcc());
  actor.clock.tick(actor.slot);
  Val pending;
  pending.pendingLoad = op;
  define(actor, op.getResult()) = std::move(pending);
  actor.pendingWgmma[op.getResult()] = group.issued;
  return Step::next;
}

Step Cta::wgmmaQuantize(Actor &actor, WgmmaQuantizeOp op,
                        ArrayRef<const Val *> in) {
  Warp &warp = warps[actor.warp];
  Step met = gatherWarp(
      actor, op,
      [&] {
        warp.fragments[actor.lane].assign(in[0]->floats.begin(),
                                          in[0]->floats.end());
      },
      [&] { warp.exchanged = warp.fragments; });
  if (met != Step::next)
    return met;
  // Element i of the operand: the thread's row (i / 4) % 2 at column c,
  // which the accumulator holds in lane 2 ((c mod 8) / 2) of the quad,
  // element 4 (c / 8) + 2 row + c mod 2.
  int64_t count = op.getSource().getType().getNumElements();
  Val out;
  for (int64_t i = 0; i < count; ++i) {
    int64_t column = wgmma::operandColumn(actor.lane, i, 8);
    int64_t row = wgmma::operandRow(actor.lane, i, 8) >= 8 ? 1 : 0;
    unsigned source = (actor.lane & ~3u) | ((column % 8) / 2);
    const std::vector<float> &fragment = warp.exchanged[source];
    if (static_cast<int64_t>(fragment.size()) != count)
      return fail(op, "the lanes' fragments differ in size");
    out.floats.push_back(roundTo(
        Format::e4m3, fragment[4 * (column / 8) + 2 * row + column % 2]));
  }
  define(actor, op.getResult()) = std::move(out);
  return Step::next;
}

Step Cta::wgmmaCommit(Actor &actor, Operation *op) {
  unsigned index = actor.warp / 4;
  Warpgroup &group = warpgroups[index];
  return gather(
      actor, op, group.meeting, kWarpgroupThreads, WaitKind::warpgroup, index,
      "threads of warpgroup " + std::to_string(index), [] {},
      [&] { ++group.committed; });
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
  return checkRetired(actor, op);
}

//===----------------------------------------------------------------------===//
// The wgmma pipe
//===----------------------------------------------------------------------===//

void Cta::executeWgmma(unsigned index) {
  Warpgroup &group = warpgroups[index];
  if (tracer)
    tracer->wgmmaExecuted(index, *group.work.front());
  std::shared_ptr<WgmmaWork> work = std::move(group.work.front());
  group.work.pop_front();
  if (!group.slot)
    group.slot = pipeSlot();
  group.clock.join(work->clock);
  group.clock.tick(group.slot);
  auto op = cast<WgmmaOp>(work->op);
  // A chained accumulator: the earlier wgmma ran first (in order).
  if (std::shared_ptr<WgmmaWork> from = std::move(work->accFrom)) {
    if (!from->done)
      return (void)fail(op, "its accumulator's wgmma has not run");
    work->acc = from->result;
  }
  auto bType = cast<MemRefType>(op.getB().getType());
  Format format = formatOf(bType.getElementType());
  int64_t bytes = formatBytes(format), bits = 8 * bytes;
  bool bMnMajor = op.getBMajor() == OperandMajor::mn;
  int64_t m = WgmmaOp::kM, n = op.getN(), k = op.getK();
  // 16 16-bit or 32 8-bit elements per step.
  int64_t kStep = wgmma::stepElements(bits);
  auto atomStride = [&](MemRefType type) {
    return type.getStridesAndOffset().first[0] * bytes;
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
    return operandRead(op, format, d, mnMajor, count, group.slot, work->agent,
                       group.clock, values);
  };
  auto aTile = dyn_cast<MemRefType>(op.getA().getType());
  int64_t aAddress =
      aTile ? kDynamicSharedBase + work->a.base + work->a.offset * bytes : 0;
  int64_t bTile = kDynamicSharedBase + work->b.base + work->b.offset * bytes;
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
      // The register fragments hold A in the operand layout of its element
      // width (16-bit: the accumulator's) over K; their values are already
      // in A's format.
      for (int64_t t = 0; t < kWarpgroupThreads; ++t)
        for (int64_t i = 0; i < k / 2; ++i) {
          int64_t column = wgmma::operandColumn(t, i, bits);
          if (column / kStep == step)
            aValues[wgmma::operandRow(t, i, bits) * kStep + column % kStep] =
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
