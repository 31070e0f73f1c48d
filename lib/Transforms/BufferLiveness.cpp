//===- BufferLiveness.cpp - when two kernel buffers may share storage -----===//

#include "fa4/Transforms/BufferLiveness.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <bitset>

using namespace mlir;
using namespace mlir::fa4;

namespace {

using Accesses = BufferLiveness::Accesses;

/// Whether an access completes behind the issuing thread's earlier and
/// before its later accesses of the same kind, as tcgen05 MMAs do: such an
/// access conflicts only with accesses of other kinds while in flight.
bool inIssueOrder(Operation *access) {
  auto async = dyn_cast<AsyncAccessOpInterface>(access);
  return async &&
         async.getAsyncCompletion() == AsyncCompletion::tensor_core_commit;
}

/// Async accesses still in flight at some point of a block, by what
/// completes them (AsyncAccessOpInterface).
struct InFlight {
  static constexpr unsigned kKinds =
      getMaxEnumValForAsyncCompletion() + 1;
  std::bitset<kKinds> pending;

  bool holds(AsyncCompletion kind) const {
    return pending.test(static_cast<unsigned>(kind));
  }
  /// In flight other than through accesses in issue order (MMAs).
  bool any() const {
    std::bitset<kKinds> others = pending;
    others.reset(static_cast<unsigned>(AsyncCompletion::tensor_core_commit));
    return others.any();
  }
  bool mma() const { return holds(AsyncCompletion::tensor_core_commit); }
  void clearMma() {
    pending.reset(static_cast<unsigned>(AsyncCompletion::tensor_core_commit));
  }
  void merge(const InFlight &other) { pending |= other.pending; }
  /// Records that `access` starts an async access.
  void start(Operation *access) {
    if (auto async = dyn_cast<AsyncAccessOpInterface>(access))
      pending.set(static_cast<unsigned>(async.getAsyncCompletion()));
  }
  /// Retires what `op` waits for (AsyncWaitOpInterface). TMA loads and MMAs
  /// complete in other roles, so nothing in this one retires them.
  void complete(Operation *op) {
    auto wait = dyn_cast<AsyncWaitOpInterface>(op);
    if (!wait)
      return;
    for (unsigned kind = 0; kind < kKinds; ++kind)
      if (wait.retires(static_cast<AsyncCompletion>(kind)))
        pending.reset(kind);
  }
};

/// Liveness of one buffer at each op of a block.
struct BlockLiveness {
  SmallVector<bool> accessed;       // the op, or an op nested in it
  SmallVector<bool> accessedNonMma; // ... through an op other than an MMA
  SmallVector<bool> inFlight;       // an earlier non-MMA access in flight
  SmallVector<bool> mmaInFlight;    // an earlier MMA access in flight
  InFlight atEnd;
};

/// `entry`: accesses still in flight when the block starts (a loop body's
/// own, from the previous iteration).
BlockLiveness scan(Block &block, const Accesses &buffer,
                   InFlight entry = InFlight()) {
  BlockLiveness result;
  InFlight pending = entry;
  for (Operation &op : block) {
    bool direct = buffer.ops.contains(&op);
    bool accessed = direct, nonMma = direct && !inIssueOrder(&op);
    result.inFlight.push_back(pending.any());
    result.mmaInFlight.push_back(pending.mma());
    if (direct)
      pending.start(&op);
    for (Region &region : op.getRegions())
      for (Block &nested : region) {
        BlockLiveness inner = scan(nested, buffer);
        accessed |= llvm::is_contained(inner.accessed, true);
        nonMma |= llvm::is_contained(inner.accessedNonMma, true);
        pending.merge(inner.atEnd);
      }
    pending.complete(&op);
    result.accessed.push_back(accessed);
    result.accessedNonMma.push_back(nonMma);
  }
  result.atEnd = pending;
  return result;
}

/// The body of a loop the analysis follows: an scf.for's, or the "after"
/// block of an scf.while whose condition region does not touch the buffer
/// (the work schedules' loops, whose conditions read only tables); null
/// for any other op.
Block *loopBody(Operation &op, const Accesses &buffer) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return loop.getBody();
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    if (!llvm::is_contained(scan(*loop.getBeforeBody(), buffer).accessed,
                            true))
      return loop.getAfterBody();
  return nullptr;
}

/// Whether `op` overwrites all of the buffer itself without reading it
/// (BufferDefinitionOpInterface: a TMEM store of every column, an MMA that
/// does not accumulate) and takes no view of it as another operand. Writes
/// of a part (a fragment, a view, an element, a TMA box) replace nothing
/// else, so they are not definitions.
bool isDefinition(Operation *op, const Accesses &buffer) {
  auto definition = dyn_cast<BufferDefinitionOpInterface>(op);
  if (!definition || !definition.overwritesAll(buffer.root))
    return false;
  return llvm::none_of(op->getOperands(), [&](Value operand) {
    return operand != buffer.root && buffer.values.contains(operand);
  });
}

/// The memory effects `op` declares on the buffer or its views; nullopt
/// when it declares none (an op that only passes the buffer on).
std::optional<SmallVector<MemoryEffects::EffectInstance>>
effectsOnBuffer(Operation *op, const llvm::SmallPtrSetImpl<Value> &values) {
  auto effecting = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effecting)
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> all, mine;
  effecting.getEffects(all);
  for (const MemoryEffects::EffectInstance &effect : all)
    if (Value value = effect.getValue(); value && values.contains(value))
      mine.push_back(effect);
  if (mine.empty())
    return std::nullopt;
  return mine;
}

/// Whether `op` only writes the buffer: it declares write effects on it and
/// no reads.
bool writesOnly(Operation *op, const Accesses &buffer) {
  auto effects = effectsOnBuffer(op, buffer.values);
  return effects && llvm::all_of(*effects, [](const auto &effect) {
           return isa<MemoryEffects::Write>(effect.getEffect());
         });
}

/// Whether `op` is a wait on a channel committed by another role that uses
/// the buffer: after it, the buffer holds data handed over anew.
bool delivers(Operation *op, const Accesses &buffer, Operation *role) {
  auto wait = dyn_cast<ChannelStepOpInterface>(op);
  if (!wait || wait.isProducerStep() || !wait.isBlocking())
    return false;
  return llvm::any_of(wait.getChannel().getUsers(), [&](Operation *user) {
    auto commit = dyn_cast<ChannelStepOpInterface>(user);
    if (!commit || !commit.isProducerStep() || !commit.concernsFull())
      return false;
    Operation *producer = user->getParentOfType<RoleOp>();
    return producer && producer != role && buffer.writers.contains(producer);
  });
}

/// What running `block` does to the value the buffer held before it.
enum class Effect { Reads, Redefines, Untouched };

Effect effectOf(Block &block, const Accesses &buffer, Operation *role);

/// What `op` (at a position where it touches the buffer, or a wait) does to
/// the buffer's value. Loops may run zero times, so they never redefine.
Effect effectOfOp(Operation &op, const Accesses &buffer, Operation *role) {
  if (delivers(&op, buffer, role))
    return Effect::Redefines;
  if (buffer.ops.contains(&op)) {
    if (isDefinition(&op, buffer))
      return Effect::Redefines;
    // A partial write neither reads the old value nor replaces all of it.
    return writesOnly(&op, buffer) ? Effect::Untouched : Effect::Reads;
  }
  if (Block *body = loopBody(op, buffer))
    return effectOf(*body, buffer, role) == Effect::Reads ? Effect::Reads
                                                          : Effect::Untouched;
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    Effect then = effectOf(ifOp.getThenRegion().front(), buffer, role);
    Effect otherwise = ifOp.getElseRegion().empty()
                           ? Effect::Untouched
                           : effectOf(ifOp.getElseRegion().front(), buffer, role);
    if (then == Effect::Reads || otherwise == Effect::Reads)
      return Effect::Reads;
    return then == Effect::Redefines && otherwise == Effect::Redefines
               ? Effect::Redefines
               : Effect::Untouched;
  }
  // Any other region op that touches the buffer: assume it reads it.
  return op.getNumRegions() > 0 ? Effect::Reads : Effect::Untouched;
}

Effect effectOf(Block &block, const Accesses &buffer, Operation *role) {
  BlockLiveness l = scan(block, buffer);
  for (auto [i, op] : llvm::enumerate(block)) {
    if (!l.accessed[i] && !delivers(&op, buffer, role))
      continue;
    Effect effect = effectOfOp(op, buffer, role);
    if (effect != Effect::Untouched)
      return effect;
  }
  return Effect::Untouched;
}

/// Where a buffer occupies its storage in a block: at every op that touches
/// it (accesses it or has an access of it in flight), and wherever a value
/// it holds is still to be read. `liveOut`: the value at the end of the
/// block is read after it. Also returns whether the value on entry is read.
struct Occupancy {
  SmallVector<bool> live;
  SmallVector<bool> after; // the value after the op is read later
  bool liveIn = false;
};

Occupancy occupancy(Block &block, const BlockLiveness &l,
                    const Accesses &buffer, Operation *role, bool liveOut) {
  size_t n = l.accessed.size();
  Occupancy result;
  result.live.assign(n, false);
  result.after.assign(n, false);
  bool needed = liveOut; // the value after the current op is read later
  auto it = block.rbegin();
  for (size_t k = n; k-- > 0; ++it) {
    Operation &op = *it;
    result.after[k] = needed;
    bool touched = l.accessed[k] || l.inFlight[k];
    Effect effect = (l.accessed[k] || delivers(&op, buffer, role))
                        ? effectOfOp(op, buffer, role)
                        : Effect::Untouched;
    result.live[k] = touched || (needed && effect != Effect::Redefines);
    if (effect == Effect::Redefines)
      needed = false;
    else if (effect == Effect::Reads)
      needed = true;
  }
  result.liveIn = needed;
  return result;
}

/// Whether `a` and `b` never occupy their storage at once in `block` (of
/// `role`). `outA`/`outB`: their values at the end of the block are read
/// later; `mmaA`/`mmaB`: an MMA on them is in flight on entry.
bool disjoint(Block &block, const Accesses &a, const Accesses &b, bool outA,
              bool outB, bool mmaA, bool mmaB, Operation *role,
              bool inLoopBody = false) {
  // In a loop body, what an iteration leaves in flight is still in flight
  // when the next one starts.
  InFlight entryA, entryB;
  if (inLoopBody) {
    entryA = scan(block, a).atEnd;
    entryB = scan(block, b).atEnd;
    entryA.clearMma(); // MMAs: `mmaA`, `mmaB`
    entryB.clearMma();
  }
  BlockLiveness la = scan(block, a, entryA), lb = scan(block, b, entryB);
  Occupancy oa = occupancy(block, la, a, role, outA);
  Occupancy ob = occupancy(block, lb, b, role, outB);
  // An MMA reads and writes asynchronously until the end of the block;
  // only later MMAs of the thread are ordered after it.
  for (size_t i = 0, e = la.accessed.size(); i < e; ++i) {
    bool inFlightA = mmaA || la.mmaInFlight[i];
    bool inFlightB = mmaB || lb.mmaInFlight[i];
    if ((inFlightA && lb.accessedNonMma[i]) ||
        (inFlightB && la.accessedNonMma[i]))
      return false;
  }
  auto it = block.begin();
  for (size_t i = 0, e = oa.live.size(); i < e; ++i, ++it) {
    if (!oa.live[i] || !ob.live[i])
      continue;
    Operation &op = *it;
    // Both occupy storage only inside a region op that holds both, where
    // the same question is asked of its blocks.
    if (op.getNumRegions() == 0 || !la.accessed[i] || !lb.accessed[i] ||
        la.inFlight[i] || lb.inFlight[i] || a.ops.contains(&op) ||
        b.ops.contains(&op))
      return false;
    bool mmaInA = mmaA || la.mmaInFlight[i], mmaInB = mmaB || lb.mmaInFlight[i];
    if (Block *loop = loopBody(op, a); loop && loop == loopBody(op, b)) {
      // A value an iteration reads before redefining it comes from the
      // previous iteration: it must survive to the end of the body.
      Block &body = *loop;
      bool carriedA = effectOf(body, a, role) == Effect::Reads;
      bool carriedB = effectOf(body, b, role) == Effect::Reads;
      if (!disjoint(body, a, b, oa.after[i] || carriedA, ob.after[i] || carriedB,
                    mmaInA || scan(body, a).atEnd.mma(),
                    mmaInB || scan(body, b).atEnd.mma(), role,
                    /*inLoopBody=*/true))
        return false;
      continue;
    }
    if (!isa<scf::IfOp>(op))
      return false;
    for (Region &region : op.getRegions())
      if (!region.empty() && !disjoint(region.front(), a, b, oa.after[i],
                                       ob.after[i], mmaInA, mmaInB, role))
        return false;
  }
  return true;
}

/// Whether `op` runs in one thread: in the elected branch of an
/// `fa4.elect` conditional, in a role of one warp.
bool inOneThread(Operation *op) {
  auto role = op->getParentOfType<RoleOp>();
  if (!role || role.getWarpEnd() - role.getWarpBegin() != 1)
    return false;
  for (Operation *parent = op; parent != role; parent = parent->getParentOp())
    if (auto ifOp = dyn_cast<scf::IfOp>(parent->getParentOp()))
      if (ifOp.getCondition().getDefiningOp<NVVM::ElectSyncOp>() &&
          parent->getParentRegion() == &ifOp.getThenRegion())
        return true;
  return false;
}

/// Whether `op` writes the buffer (`values` holds it and its views).
bool writes(Operation *op, const llvm::SmallPtrSetImpl<Value> &values) {
  auto effects = effectsOnBuffer(op, values);
  return effects && llvm::any_of(*effects, [](const auto &effect) {
           return isa<MemoryEffects::Write>(effect.getEffect());
         });
}

/// Every op that accesses `buffer`, following views.
Accesses collectAccesses(Value buffer) {
  Accesses result;
  result.root = buffer;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    result.values.insert(value);
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<TmemViewOp>(user)) {
        worklist.push_back(view.getResult());
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      // An op that declares no memory effect on the buffer could pass it on
      // (a select, a yield, a call): its accesses could not be followed.
      if (!effectsOnBuffer(user, result.values))
        result.escapes = true;
      result.ops.insert(user);
    }
  }
  for (Operation *op : result.ops) {
    auto role = op->getParentOfType<RoleOp>();
    if (role) {
      result.roles.insert(role);
      // Lanes are per warp within a warpgroup: a role of more than four
      // warps has two warps on the same lanes.
      result.wideRole |= role.getWarpEnd() - role.getWarpBegin() > 4;
      if (writes(op, result.values))
        result.writers.insert(role);
    } else {
      result.outsideRoles = true;
    }
    result.multiThreaded |= !inOneThread(op);
  }
  return result;
}

} // namespace

BufferLiveness::BufferLiveness(ArrayRef<Value> buffers, bool laneLocal)
    : laneLocal(laneLocal) {
  for (Value buffer : buffers)
    accesses.push_back(collectAccesses(buffer));
}

bool BufferLiveness::mayShare(unsigned a, unsigned b) const {
  const Accesses &x = accesses[a], &y = accesses[b];
  if (x.ops.empty() || y.ops.empty())
    return true;
  if (x.outsideRoles || y.outsideRoles || x.escapes || y.escapes)
    return false;
  // Program order orders a role's threads only where each touches its own
  // part of the buffer (TMEM lanes) or one thread does all the work.
  if (laneLocal ? (x.wideRole || y.wideRole)
                : (x.multiThreaded || y.multiThreaded))
    return false;
  if (x.roles.size() != y.roles.size() ||
      !llvm::all_of(x.roles, [&](Operation *r) { return y.roles.contains(r); }))
    return false;
  return llvm::all_of(x.roles, [&](Operation *role) {
    return disjoint(role->getRegion(0).front(), x, y, false, false, false,
                    false, role);
  });
}

void mlir::fa4::materializeAtUses(Value buffer,
                                  function_ref<Value(OpBuilder &)> materialize) {
  // Where each use gets its placed buffer: the start of its role, or the
  // first user of its block outside roles.
  llvm::MapVector<Block *, Operation *> firstUser;
  auto homeOf = [](Operation *user) {
    if (auto role = user->getParentOfType<RoleOp>())
      return &role.getBody().front();
    return user->getBlock();
  };
  for (Operation *user : buffer.getUsers()) {
    Block *home = homeOf(user);
    Operation *&first = firstUser[home];
    Operation *ancestor = home->findAncestorOpInBlock(*user);
    if (!first || ancestor->isBeforeInBlock(first))
      first = ancestor;
  }
  OpBuilder b(buffer.getContext());
  llvm::SmallDenseMap<Block *, Value> placed;
  for (auto [home, first] : firstUser) {
    if (home->getParentOp() && isa<RoleOp>(home->getParentOp()))
      b.setInsertionPointToStart(home);
    else
      b.setInsertionPoint(first);
    placed[home] = materialize(b);
  }
  for (OpOperand &use : llvm::make_early_inc_range(buffer.getUses()))
    use.set(placed.lookup(homeOf(use.getOwner())));
}
