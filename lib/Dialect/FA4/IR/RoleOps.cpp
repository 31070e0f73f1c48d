//===- RoleOps.cpp - verifiers of barriers, roles and channels ------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fa4;

//===----------------------------------------------------------------------===//
// Synchronization and per-thread math
//===----------------------------------------------------------------------===//

/// The (id, thread count) of a named barrier op, or none for another op.
/// I32Attr reads back unsigned; negative values must stay negative here.
static std::optional<std::pair<int64_t, int64_t>>
readNamedBarrier(Operation *op) {
  auto read = [](auto barrier) {
    return std::make_pair<int64_t, int64_t>(
        static_cast<int32_t>(barrier.getId()),
        static_cast<int32_t>(barrier.getThreads()));
  };
  if (auto sync = dyn_cast<NamedBarrierSyncOp>(op))
    return read(sync);
  if (auto arrive = dyn_cast<NamedBarrierArriveOp>(op))
    return read(arrive);
  return std::nullopt;
}

/// Barrier 0 belongs to gpu.barrier (__syncthreads); a count is whole warps.
static LogicalResult verifyNamedBarrierRange(Operation *op, int64_t id,
                                             int64_t threads) {
  if (id < 1 || id > 15)
    return op->emitOpError() << "named barrier id must be in [1, 15] (0 is "
                                "gpu.barrier's), got "
                             << id;
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return op->emitOpError() << "thread count must be a multiple of 32 in "
                                "[32, 1024], got "
                             << threads;
  return success();
}

/// A barrier op in range, and the ops on one hardware barrier agree on its
/// thread count.
static LogicalResult verifyNamedBarrier(Operation *op) {
  auto [id, threads] = *readNamedBarrier(op);
  if (failed(verifyNamedBarrierRange(op, id, threads)))
    return failure();
  Operation *scope = op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!scope)
    return success();
  // The first op on the barrier sets its count; the others are checked
  // against it.
  Operation *first = nullptr;
  int64_t firstThreads = 0;
  scope->walk([&](Operation *candidate) {
    auto barrier = readNamedBarrier(candidate);
    if (!barrier || barrier->first != id)
      return WalkResult::advance();
    first = candidate;
    firstThreads = barrier->second;
    return WalkResult::interrupt();
  });
  if (!first || first == op || firstThreads == threads)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "counts " << threads << " threads on named "
                            << "barrier " << id << ", which an earlier op "
                            << "counts with " << firstThreads
                            << "; a barrier has one thread count";
  diag.attachNote(first->getLoc()) << "the earlier op";
  return diag;
}

LogicalResult NamedBarrierSyncOp::verify() { return verifyNamedBarrier(*this); }

LogicalResult NamedBarrierArriveOp::verify() {
  return verifyNamedBarrier(*this);
}

// I32Attr reads back unsigned; a negative count must stay negative here.
LogicalResult WgmmaWaitOp::verify() {
  auto pending = static_cast<int32_t>(getPending());
  if (pending < 0)
    return emitOpError() << "pending wgmma groups must be >= 0, got "
                         << pending;
  return success();
}

LogicalResult Exp2Op::verify() {
  int64_t emulated = static_cast<int64_t>(getEmulated());
  if (emulated < 0 || emulated > 16)
    return emitOpError() << "emulated must be in [0, 16] (elements of every "
                            "16), got "
                         << emulated;
  return success();
}

//===----------------------------------------------------------------------===//
// Warp roles
//===----------------------------------------------------------------------===//

LogicalResult RoleOp::verify() {
  int64_t begin = static_cast<int64_t>(getWarpBegin()),
          end = static_cast<int64_t>(getWarpEnd()),
          registers = static_cast<int64_t>(getRegisters());
  if (begin < 0 || begin >= end)
    return emitOpError() << "warp range [" << begin << ", " << end
                         << ") is empty";
  if (registers < limits::kMinRegisters || registers > limits::kMaxRegisters ||
      registers % 8 != 0)
    return emitOpError() << "registers must be a multiple of 8 in ["
                         << limits::kMinRegisters << ", "
                         << limits::kMaxRegisters << "], got " << registers;
  return success();
}

int64_t WarpSpecializeOp::getDefaultRegisters() {
  // What a CTA of this size gets per thread without setmaxnreg.
  return limits::launchRegistersPerThread(static_cast<int64_t>(getWarps()) *
                                          32);
}

SmallVector<int64_t> WarpSpecializeOp::getWarpgroupRegisters() {
  SmallVector<int64_t> registers(static_cast<int64_t>(getWarps()) / 4,
                                 getDefaultRegisters());
  for (auto role : getBody().getOps<RoleOp>()) {
    auto end = static_cast<int64_t>(role.getWarpEnd());
    for (auto warp = static_cast<int64_t>(role.getWarpBegin()); warp < end;
         ++warp)
      registers[warp / 4] = static_cast<int64_t>(role.getRegisters());
  }
  return registers;
}

LogicalResult WarpSpecializeOp::verify() {
  int64_t warps = static_cast<int64_t>(getWarps());
  if (warps < 4 || warps > 32 || warps % 4 != 0)
    return emitOpError() << "warps must be whole warpgroups, 4 to 32, got "
                         << warps;
  return success();
}

// The roles are checked against each other once each role has verified
// (its attributes exist and its range is not empty): a region verifier runs
// after the ops inside.
LogicalResult WarpSpecializeOp::verifyRegions() {
  int64_t warps = static_cast<int64_t>(getWarps());
  SmallVector<RoleOp> owner(warps);
  SmallVector<std::optional<int64_t>> groupRegisters(warps / 4);
  for (Operation &op : getBody().front()) {
    auto role = dyn_cast<RoleOp>(op);
    if (!role)
      return op.emitOpError() << "is not a role; fa4.warp_specialize holds "
                                 "fa4.role ops only";
    int64_t begin = static_cast<int64_t>(role.getWarpBegin());
    int64_t end = static_cast<int64_t>(role.getWarpEnd());
    if (end > warps)
      return role.emitOpError() << "warps up to " << end
                                << " exceed the CTA's " << warps;
    for (int64_t w = begin; w < end; ++w) {
      if (owner[w])
        return role.emitOpError() << "warp " << w << " already runs role '"
                                  << owner[w].getRole() << "'";
      owner[w] = role;
      std::optional<int64_t> &group = groupRegisters[w / 4];
      if (group && *group != static_cast<int64_t>(role.getRegisters()))
        return role.emitOpError()
               << "asks for " << role.getRegisters()
               << " registers but warpgroup " << w / 4 << " already has "
               << *group << "; a warpgroup has one budget";
      group = role.getRegisters();
    }
  }
  int64_t total = 0;
  for (int64_t registers : getWarpgroupRegisters())
    total += registers * limits::kThreadsPerWarpgroup;
  int64_t pool = limits::registerPool(warps / 4);
  if (total > pool)
    return emitOpError() << "register budgets need " << total
                         << " registers, more than the " << pool
                         << " a CTA of " << warps
                         << " warps is launched with ("
                         << getDefaultRegisters()
                         << " per thread; setmaxnreg only moves them between "
                            "warpgroups)";
  return success();
}

//===----------------------------------------------------------------------===//
// Channels
//===----------------------------------------------------------------------===//

LogicalResult ChannelOp::verify() {
  if (getConsumer().getKind() == EndpointKind::tma)
    return emitOpError() << "a TMA endpoint can only produce";
  // A cluster exchange: every CTA of the cluster produces and consumes.
  bool producerCluster = getProducer().getKind() == EndpointKind::cluster;
  bool consumerCluster = getConsumer().getKind() == EndpointKind::cluster;
  if (producerCluster != consumerCluster ||
      (producerCluster &&
       getProducer().getThreads() != getConsumer().getThreads()))
    return emitOpError() << "a cluster endpoint pairs with a cluster endpoint "
                            "of the same CTAs, got producer "
                         << getProducer() << " and consumer " << getConsumer();
  if (std::optional<uint32_t> id = getNamedBarrier()) {
    if (getProducer().getKind() != EndpointKind::threads ||
        getConsumer().getKind() != EndpointKind::threads)
      return emitOpError() << "a named barrier connects two threads "
                              "endpoints";
    if (getType().getStages() != 1)
      return emitOpError() << "a named barrier has no phase: the channel "
                              "needs exactly one stage, got "
                           << getType().getStages();
    if (failed(verifyNamedBarrierRange(
            *this, static_cast<int32_t>(*id),
            getProducer().getThreads() + getConsumer().getThreads())))
      return failure();
    // A hardware barrier serves one channel: two would mix their arrivals.
    if (Operation *scope =
            (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>()) {
      ChannelOp first;
      scope->walk([&](ChannelOp other) {
        if (other.getNamedBarrier() != id)
          return WalkResult::advance();
        first = other;
        return WalkResult::interrupt();
      });
      if (first && first != *this) {
        InFlightDiagnostic diag = emitOpError()
                                  << "uses named barrier " << *id
                                  << ", which channel '" << first.getName()
                                  << "' already uses";
        diag.attachNote(first.getLoc()) << "channel '" << first.getName()
                                        << "'";
        return diag;
      }
    }
  }
  if ((*this)->getParentOfType<RoleOp>())
    return emitOpError() << "must be declared outside the roles that use it";
  return success();
}

/// A channel step runs inside the role of its side.
static LogicalResult verifyChannelStep(Operation *op) {
  if (!op->getParentOfType<RoleOp>())
    return op->emitOpError() << "must run inside a fa4.role";
  return success();
}

LogicalResult ChannelAcquireOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelCommitOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelWaitOp::verify() { return verifyChannelStep(*this); }
LogicalResult ChannelReleaseOp::verify() { return verifyChannelStep(*this); }

LogicalResult TmaLoadOp::verify() {
  auto channel = getChannel().getDefiningOp<ChannelOp>();
  if (channel && channel.getProducer().getKind() != EndpointKind::tma)
    return emitOpError() << "fills a slot of channel '" << channel.getName()
                         << "', whose producer is not #fa4.endpoint<tma>";
  auto buffer = cast<MemRefType>(getBuffer().getType());
  if (!isWorkgroupMemRef(buffer) || !buffer.hasStaticShape())
    return emitOpError() << "loads into a static shared-memory buffer, got "
                         << buffer;
  std::optional<int64_t> bytes = getStaticSizeInBytes(buffer);
  if (!bytes || *bytes <= 0 || *bytes > limits::kSmemBytes)
    return emitOpError() << "loads into a buffer of "
                         << (bytes ? std::to_string(*bytes) : "more than 2^63")
                         << " bytes; a TMA load fills 1 to "
                         << limits::kSmemBytes << " bytes of shared memory";
  return verifyChannelStep(*this);
}
