//===- TensorCore.cpp - the tcgen05 MMA pipes -----------------------------===//
//
// fa4.mma and fa4.mma.commit queue on the issuing thread's MMA pipe, which
// executes them in issue order at random later points. Each K step builds
// the instruction and shared-memory descriptors the NVVM lowering emits,
// decodes them as the Tensor Core does and reads every operand element
// through them, so that a wrong stride, swizzle or descriptor field gives
// wrong numbers. A commit arrives on its mbarrier once the MMAs before it
// are done.
//
//===----------------------------------------------------------------------===//

#include "Cta.h"

#include "fa4/Dialect/FA4/IR/Tcgen05Encoding.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::sim;

Step Cta::mmaOp(Actor &actor, Operation *op, ArrayRef<const Val *> in) {
  return llvm::TypeSwitch<Operation *, Step>(op)
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
      .Default([&](Operation *) -> Step {
        llvm_unreachable("fa4Op routes only MMA ops here");
      });
}

MmaPipe &Cta::pipeOf(const Actor &actor) {
  for (MmaPipe &pipe : pipes)
    if (pipe.issuer == actor.tid)
      return pipe;
  pipes.push_back({actor.tid, pipeSlot(), {}, {}});
  return pipes.back();
}

bool Cta::operandRead(Operation *op, Format format,
                      const SmemDescriptor &descriptor, bool mnMajor,
                      int64_t count, Slot slot, uint32_t agent,
                      const VectorClock &clock, std::vector<float> &values) {
  int64_t bytes = formatBytes(format);
  int64_t step = tcgen05::kStepBytes / bytes;
  for (int64_t mn = 0; mn < count; ++mn)
    for (int64_t k = 0; k < step; ++k) {
      int64_t offset =
          swizzle128(operandAddress(descriptor, mnMajor, mn, k, bytes)) -
          kDynamicSharedBase;
      if (!checkShared(op, offset, bytes))
        return false;
      uint16_t bits = 0;
      std::memcpy(&bits, &shared[offset], bytes);
      values[mn * step + k] = decode(format, bits);
      races.access(Memory::shared, offset, offset + bytes, false, slot, agent,
                   clock);
      asyncProxyRead(offset, bytes, agent, clock);
    }
  return true;
}

void Cta::executeMma(MmaPipe &pipe) {
  if (tracer)
    tracer->mmaExecuted(pipe, pipe.work.front());
  MmaWork work = std::move(pipe.work.front());
  pipe.work.pop_front();
  // The pipe runs in order: each piece of work is ordered after the last.
  pipe.clock.join(work.clock);
  pipe.clock.tick(pipe.slot);
  if (work.commit) {
    if (!checkArrival(work.op, work.barrier, pipe.clock,
                      "the MMA commit issued by " + who(actors[pipe.issuer])))
      return;
    if (barriers[work.barrier].arrive(pipe.clock))
      completed(work.barrier);
    return;
  }
  auto mma = cast<MmaOp>(work.op);
  auto bType = cast<MemRefType>(mma.getB().getType());
  Format format = formatOf(bType.getElementType());
  int64_t bytes = formatBytes(format), bits = 8 * bytes;
  // kind::f16 (16 16-bit elements per step) or kind::f8f6f4 (32 e4m3).
  int64_t kStep = tcgen05::stepElements(bits);
  uint32_t formatCode = format == Format::bf16  ? tcgen05::kFormatBF16
                        : format == Format::f16 ? tcgen05::kFormatF16
                                                : tcgen05::kFormatE4M3;
  bool bMnMajor = mma.getBMajor() == OperandMajor::mn;
  bool aMnMajor = mma.isAMnMajor();
  int64_t m = mma.getM(), n = mma.getN(), k = mma.getK();
  auto atomStride = [&](MemRefType type) {
    return type.getStridesAndOffset().first[0] * bytes;
  };
  // Tile addresses in the shared window, as the lowering takes them.
  int64_t bTile = kDynamicSharedBase + work.b.base + work.b.offset * bytes;
  auto aTile = dyn_cast<MemRefType>(mma.getA().getType());
  int64_t aAddress =
      aTile ? kDynamicSharedBase + work.a.base + work.a.offset * bytes : 0;
  int64_t dColumn = work.d.base;
  // The product's columns per lane group: all N at M = 128; a
  // weight-stationary M of 32 or 64 folds them over 128 / M lane groups.
  int64_t foldColumns = mma.getDColumns();
  if (!tmemColumnsAllocated(work.op, dColumn, foldColumns))
    return;

  std::vector<float> aValues(m * kStep), bValues(n * kStep);
  auto readShared = [&](const SmemDescriptor &d, bool mnMajor, int64_t count,
                        std::vector<float> &values) {
    return operandRead(work.op, format, d, mnMajor, count, pipe.slot,
                       work.agent, pipe.clock, values);
  };
  // Columns of a Tensor Memory A operand per step: 32 bytes of each lane.
  int64_t stepColumns = tcgen05::tmemStepColumns(1);
  for (int64_t step = 0; step < k / kStep; ++step) {
    // The instruction the lowering issues for this step, decoded the way
    // the Tensor Core reads it.
    uint32_t idesc =
        tcgen05::instructionDescriptor(formatCode, bMnMajor, m, n, aMnMajor);
    int64_t stepM = ((idesc >> 24) & 0x1F) << 4;
    int64_t stepN = ((idesc >> 17) & 0x3F) << 3;
    bool stepAMn = (idesc >> 15) & 1;
    bool stepBMn = (idesc >> 16) & 1;
    if (stepM != m || stepN != n)
      return (void)fail(work.op, "the instruction descriptor does not encode "
                                 "the MMA's shape");
    if (aTile) {
      SmemDescriptor a = decodeSmemDescriptor(tcgen05::smemDescriptor(
          aAddress + (stepAMn
                          ? tcgen05::mnMajorStepBytes(step)
                          : tcgen05::kMajorStepBytes(step, atomStride(aTile))),
          stepAMn ? atomStride(aTile) : tcgen05::kKMajorLeadingBytes,
          tcgen05::kKMajorStrideBytes));
      if (a.swizzle != tcgen05::kSwizzle128B)
        return (void)fail(work.op, "A is not in 128-byte swizzle mode");
      if (!readShared(a, stepAMn, m, aValues))
        return;
    } else {
      int64_t column = work.a.base + tcgen05::tmemStepColumns(step);
      if (!tmemColumnsAllocated(work.op, column, stepColumns))
        return;
      for (int64_t row = 0; row < m; ++row) {
        races.access(Memory::tensor, row * kTmemColumns + column,
                     row * kTmemColumns + column + stepColumns, false,
                     pipe.slot, work.agent, pipe.clock);
        for (int64_t kk = 0; kk < kStep; ++kk)
          aValues[row * kStep + kk] = decode(
              format,
              packedElement(tmem[row * kTmemColumns + column + kk * bits / 32],
                            bits, kk));
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
    // Element (row, col) of the product: lane row + M (col / foldColumns),
    // column col mod foldColumns of the region.
    for (int64_t group = 0; group < n / foldColumns; ++group)
      for (int64_t row = 0; row < m; ++row) {
        int64_t lane = row + m * group;
        races.access(Memory::tensor, lane * kTmemColumns + dColumn,
                     lane * kTmemColumns + dColumn + foldColumns, true,
                     pipe.slot, work.agent, pipe.clock);
      }
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t kk = 0; kk < kStep; ++kk)
          sum += static_cast<double>(aValues[row * kStep + kk]) *
                 bValues[col * kStep + kk];
        int64_t lane = row + m * (col / foldColumns);
        uint32_t &cell =
            tmem[lane * kTmemColumns + dColumn + col % foldColumns];
        float previous;
        std::memcpy(&previous, &cell, 4);
        float result = static_cast<float>(accumulate ? previous + sum : sum);
        std::memcpy(&cell, &result, 4);
      }
    }
  }
}
