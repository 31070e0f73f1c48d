//===- InsertBarriers.cpp - channels to mbarriers -------------------------===//
//
// Every channel slot gets a full and an empty mbarrier whose arrival counts
// come from the channel's endpoints; every channel step becomes the wait or
// signal its side performs, with the slot and phase parity computed from the
// hand-off number.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Targets.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4INSERTBARRIERS
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// How long one try_wait may suspend the thread before it polls again.
constexpr int64_t kWaitTicks = 10000000;

/// A channel and the barriers that now implement it.
struct ChannelBarriers {
  StringRef name;
  int64_t stages;
  EndpointAttr producer, consumer;
  /// The full direction: an mbarrier group, or a named barrier id.
  Value full;
  std::optional<uint32_t> namedBarrier;
  Value empty;
  /// The kernel runs on a chip with tcgen05 (its gpu.module targets one).
  bool tcgen05Target;

  /// Whether `self`, synchronizing with `other`, must fence its tcgen05
  /// work around the thread-level hand-off: an MMA issuer always; threads
  /// whenever the chip has tcgen05, since their TMEM accesses may be
  /// ordered through this hand-off (even transitively, as O's rescale is
  /// ordered after the previous PV MMA through softmax).
  bool needsTcgen05Fence(EndpointAttr self, EndpointAttr other) const {
    return self.getKind() == EndpointKind::mma ||
           (self.getKind() == EndpointKind::threads &&
            (tcgen05Target || other.getKind() == EndpointKind::mma));
  }
};

/// Whether `op` sits in a gpu.module that targets a chip with tcgen05.
bool inTcgen05Module(Operation *op) {
  return llvm::any_of(enclosingNvvmChips(op), hasTcgen05);
}

/// The slot of hand-off `iteration`.
Value slotOf(OpBuilder &b, Location loc, Value iteration, int64_t stages) {
  return arith::RemUIOp::create(b, loc, iteration,
                                arith::ConstantIndexOp::create(b, loc, stages));
}

/// The phase parity of hand-off `iteration`: its round modulo 2.
Value parityOf(OpBuilder &b, Location loc, Value iteration, int64_t stages) {
  Value round = arith::DivUIOp::create(
      b, loc, iteration, arith::ConstantIndexOp::create(b, loc, stages));
  Value round64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), round);
  return arith::TruncIOp::create(b, loc, b.getI1Type(), round64);
}

void waitParity(OpBuilder &b, Location loc, Value barriers, Value slot,
                Value parity) {
  Value ticks = arith::ConstantIndexOp::create(b, loc, kWaitTicks);
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, barriers, parity, ticks,
                                          slot);
}

/// Signals `barriers[slot]` the way `self` does (TMA producers are handled
/// with their loads).
void signal(OpBuilder &b, Location loc, const ChannelBarriers &channel,
            EndpointAttr self, EndpointAttr other, Value barriers, Value slot) {
  if (self.getKind() == EndpointKind::mma) {
    MmaCommitOp::create(b, loc, barriers, slot);
    return;
  }
  if (self.getKind() == EndpointKind::cluster) {
    ClusterArriveOp::create(b, loc, barriers, slot,
                            b.getI64IntegerAttr(self.getThreads()));
    return;
  }
  if (channel.needsTcgen05Fence(self, other))
    NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  nvgpu::MBarrierArriveOp::create(
      b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), barriers, slot);
}

/// A TMA producer's commit announces the bytes of the slot's loads before
/// the first of them and makes each load complete on the full barrier.
LogicalResult lowerTmaCommit(ChannelCommitOp commit,
                             const ChannelBarriers &channel) {
  SmallVector<TmaLoadOp> loads;
  for (Operation *op = commit->getPrevNode(); op; op = op->getPrevNode())
    if (auto load = dyn_cast<TmaLoadOp>(op))
      if (load.getChannel() == commit.getChannel() &&
          load.getIteration() == commit.getIteration())
        loads.insert(loads.begin(), load);
  if (loads.empty())
    return commit.emitOpError()
           << "commits a TMA slot of channel '" << channel.name
           << "' with no fa4.tma.load of that slot before it in its block";

  int64_t bytes = 0;
  for (TmaLoadOp load : loads) {
    auto type = cast<MemRefType>(load.getBuffer().getType());
    bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
  OpBuilder b(loads.front());
  Location loc = commit.getLoc();
  Value slot = slotOf(b, loc, commit.getIteration(), channel.stages);
  Value txBytes = arith::ConstantIndexOp::create(b, loc, bytes);
  nvgpu::MBarrierArriveExpectTxOp::create(b, loc, channel.full, txBytes, slot,
                                          /*predicate=*/Value());
  for (TmaLoadOp load : loads) {
    OpBuilder lb(load);
    nvgpu::TmaAsyncLoadOp::create(lb, load.getLoc(), load.getBuffer(),
                                  channel.full, load.getDescriptor(),
                                  load.getCoordinates(), slot,
                                  /*multicastMask=*/Value(),
                                  /*predicate=*/Value());
    load.erase();
  }
  commit.erase();
  return success();
}

/// The full direction of a named-barrier channel: the producer arrives,
/// the consumer syncs, both counting every thread of both sides.
void lowerNamedBarrierStep(ChannelStepOpInterface step,
                           const ChannelBarriers &channel) {
  OpBuilder b(step);
  Location loc = step->getLoc();
  int32_t threads = static_cast<int32_t>(channel.producer.getThreads() +
                                         channel.consumer.getThreads());
  if (step.isProducerStep()) {
    if (channel.needsTcgen05Fence(channel.producer, channel.consumer))
      NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    NamedBarrierArriveOp::create(b, loc, *channel.namedBarrier, threads);
  } else {
    NamedBarrierSyncOp::create(b, loc, *channel.namedBarrier, threads);
    if (channel.needsTcgen05Fence(channel.consumer, channel.producer))
      NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  }
  step->erase();
}

LogicalResult lowerStep(ChannelStepOpInterface step,
                        const ChannelBarriers &channel) {
  if (auto commit = dyn_cast<ChannelCommitOp>(step.getOperation()))
    if (channel.producer.getKind() == EndpointKind::tma)
      return lowerTmaCommit(commit, channel);
  if (channel.namedBarrier && step.concernsFull()) {
    lowerNamedBarrierStep(step, channel);
    return success();
  }

  OpBuilder b(step);
  Location loc = step->getLoc();
  Value iteration = step.getIteration();
  Value slot = slotOf(b, loc, iteration, channel.stages);
  // Waits of one side on the other's barrier.
  auto wait = [&](Value barriers, Value parity, EndpointAttr self,
                  EndpointAttr other) {
    waitParity(b, loc, barriers, slot, parity);
    // The wait acquires at CTA scope; the fence extends it to the other
    // CTAs' releases (their remote arrivals) that completed the phase.
    if (other.getKind() == EndpointKind::cluster)
      LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "cluster");
    if (channel.needsTcgen05Fence(self, other))
      NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  };

  bool producer = step.isProducerStep();
  if (step.isBlocking() && producer) {
    // The slot is free once the consumer's previous round completed; a
    // fresh barrier treats the round before round 0 as complete.
    Value previous = arith::XOrIOp::create(
        b, loc, parityOf(b, loc, iteration, channel.stages),
        arith::ConstantIntOp::create(b, loc, 1, 1));
    wait(channel.empty, previous, channel.producer, channel.consumer);
  } else if (step.isBlocking()) {
    wait(channel.full, parityOf(b, loc, iteration, channel.stages),
         channel.consumer, channel.producer);
  } else if (producer) {
    signal(b, loc, channel, channel.producer, channel.consumer, channel.full,
           slot);
  } else {
    signal(b, loc, channel, channel.consumer, channel.producer, channel.empty,
           slot);
  }
  step->erase();
  return success();
}

/// Creates the channel's barrier groups and initializes them from thread 0.
/// The empty direction exists only if some step acquires or releases.
ChannelBarriers createBarriers(ChannelOp channel, bool needsEmpty) {
  OpBuilder b(channel);
  Location loc = channel.getLoc();
  MLIRContext *ctx = channel.getContext();
  auto groupType = nvgpu::MBarrierGroupType::get(
      ctx, gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup),
      channel.getType().getStages());
  std::optional<uint32_t> namedBarrier = channel.getNamedBarrier();
  ChannelBarriers barriers{
      channel.getName(),
      channel.getType().getStages(),
      channel.getProducer(),
      channel.getConsumer(),
      namedBarrier ? Value() : nvgpu::MBarrierCreateOp::create(b, loc, groupType),
      namedBarrier,
      needsEmpty ? nvgpu::MBarrierCreateOp::create(b, loc, groupType) : Value(),
      inTcgen05Module(channel)};

  // Names for diagnostics and the simulator's reports.
  auto name = [&](Value group, StringRef direction) {
    if (group)
      group.getDefiningOp()->setAttr(
          "fa4.name", b.getStringAttr(channel.getName() + "." + direction));
  };
  name(barriers.full, "full");
  name(barriers.empty, "empty");

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      arith::ConstantIndexOp::create(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value fullCount = arith::ConstantIndexOp::create(
      b, loc, channel.getProducer().getArrivals());
  Value emptyCount = arith::ConstantIndexOp::create(
      b, loc, channel.getConsumer().getArrivals());
  for (int64_t stage = 0; stage < barriers.stages; ++stage) {
    Value slot = arith::ConstantIndexOp::create(b, loc, stage);
    if (barriers.full)
      nvgpu::MBarrierInitOp::create(b, loc, barriers.full, fullCount, slot,
                                    /*predicate=*/Value());
    if (barriers.empty)
      nvgpu::MBarrierInitOp::create(b, loc, barriers.empty, emptyCount, slot,
                                    /*predicate=*/Value());
  }
  // Other CTAs arrive on these barriers: the initialization is released at
  // cluster scope (and the cluster synchronizes before the roles).
  if (channel.getProducer().getKind() == EndpointKind::cluster)
    NVVM::FenceMbarrierInitOp::create(b, loc);
  return barriers;
}

struct FA4InsertBarriersPass
    : public fa4::impl::FA4InsertBarriersBase<FA4InsertBarriersPass> {
  void runOnOperation() override {
    SmallVector<ChannelOp> channels;
    getOperation()->walk([&](ChannelOp op) { channels.push_back(op); });

    // Roles must see initialized barriers: one CTA barrier after the last
    // initialization of each block. Where a channel reaches the other CTAs
    // of a cluster, a cluster barrier instead (no CTA signals a barrier of
    // another before that CTA initialized it), and another before the
    // kernel returns (none signals one, or reads its shared memory, after
    // that CTA exited).
    llvm::SmallPtrSet<Block *, 4> blocks;
    for (ChannelOp channel : channels)
      blocks.insert(channel->getBlock());
    for (Block *block : blocks) {
      ChannelOp last;
      bool cluster = false;
      for (auto channel : block->getOps<ChannelOp>()) {
        last = channel;
        cluster |= channel.getProducer().getKind() == EndpointKind::cluster;
      }
      OpBuilder b(last->getBlock(), std::next(last->getIterator()));
      if (!cluster) {
        gpu::BarrierOp::create(b, last.getLoc());
        continue;
      }
      auto syncCluster = [&] {
        NVVM::ClusterArriveOp::create(b, last.getLoc(), UnitAttr());
        NVVM::ClusterWaitOp::create(b, last.getLoc(), UnitAttr());
      };
      syncCluster();
      Operation *terminator =
          block->mightHaveTerminator() ? block->getTerminator() : nullptr;
      if (!terminator || !isa<gpu::ReturnOp>(terminator)) {
        last.emitOpError() << "reaches other CTAs of its cluster, so the "
                              "kernel must end in the block that declares it";
        return signalPassFailure();
      }
      b.setInsertionPoint(terminator);
      syncCluster();
    }

    // The hardware barriers of each fa4 kernel, recorded on it for its
    // launch manifest: mbarriers made and named barrier ids used.
    llvm::MapVector<gpu::GPUFuncOp, int64_t> mbarriers;
    llvm::DenseMap<gpu::GPUFuncOp, llvm::SmallDenseSet<uint32_t>> namedIds;
    getOperation()->walk([&](gpu::GPUFuncOp kernel) {
      if (kernel.isKernel() && kernel->hasAttr("fa4.plan"))
        mbarriers[kernel] = 0;
    });
    for (ChannelOp channel : channels) {
      SmallVector<ChannelStepOpInterface> steps;
      for (Operation *user : channel->getUsers())
        if (auto step = dyn_cast<ChannelStepOpInterface>(user))
          steps.push_back(step);
      bool needsEmpty = llvm::any_of(steps, [](ChannelStepOpInterface step) {
        return !step.concernsFull();
      });
      ChannelBarriers barriers = createBarriers(channel, needsEmpty);
      if (auto kernel = channel->getParentOfType<gpu::GPUFuncOp>()) {
        mbarriers[kernel] += barriers.stages * ((barriers.full ? 1 : 0) +
                                                (barriers.empty ? 1 : 0));
        if (barriers.namedBarrier)
          namedIds[kernel].insert(*barriers.namedBarrier);
      }
      for (ChannelStepOpInterface step : steps)
        if (failed(lowerStep(step, barriers)))
          return signalPassFailure();
      if (!channel->use_empty()) {
        InFlightDiagnostic diag = channel.emitOpError()
                                  << "has fa4.tma.load ops not committed by "
                                     "a fa4.channel.commit";
        diag.attachNote(channel->user_begin()->getLoc()) << "this load";
        return signalPassFailure();
      }
      channel.erase();
    }
    // Named barriers the roles use directly (a warpgroup's own sync).
    for (auto &[kernel, count] : mbarriers)
      kernel.walk([&, kernel = kernel](Operation *op) {
        if (auto sync = dyn_cast<NamedBarrierSyncOp>(op))
          namedIds[kernel].insert(sync.getId());
        else if (auto arrive = dyn_cast<NamedBarrierArriveOp>(op))
          namedIds[kernel].insert(arrive.getId());
      });
    for (auto [kernel, count] : mbarriers) {
      // mbarriers are 8 bytes each, in the shared memory plans reserve.
      if (count * 8 > limits::kSmemReservedBytes) {
        kernel.emitOpError()
            << "needs " << count << " mbarriers (" << count * 8
            << " bytes), more than the " << limits::kSmemReservedBytes
            << " bytes of shared memory reserved for barriers";
        return signalPassFailure();
      }
      Builder b(kernel);
      kernel->setAttr("fa4.mbarriers", b.getI64IntegerAttr(count));
      kernel->setAttr("fa4.named_barriers",
                      b.getI64IntegerAttr(namedIds.lookup(kernel).size()));
    }
  }
};
} // namespace
