//===- BufferLiveness.cpp - when two kernel buffers may share storage -----===//

#include "fa4/Transforms/BufferLiveness.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Async accesses still in flight at some point of a block.
struct InFlight {
  bool tmemLoad = false, tmemStore = false, tmaStore = false, tmaLoad = false;

  bool any() const { return tmemLoad || tmemStore || tmaStore || tmaLoad; }
  void merge(const InFlight &other) {
    tmemLoad |= other.tmemLoad;
    tmemStore |= other.tmemStore;
    tmaStore |= other.tmaStore;
    tmaLoad |= other.tmaLoad;
  }
  /// Records that `access` starts an async access.
  void start(Operation *access) {
    tmemLoad |= isa<TmemLoadOp>(access);
    tmemStore |= isa<TmemStoreOp>(access);
    tmaStore |= isa<nvgpu::TmaAsyncStoreOp>(access);
    tmaLoad |= isa<TmaLoadOp, nvgpu::TmaAsyncLoadOp>(access);
  }
  /// Retires what `op` waits for.
  void complete(Operation *op) {
    if (auto wait = dyn_cast<Tcgen05WaitOp>(op)) {
      if (wait.getKind() == Tcgen05WaitKind::load)
        tmemLoad = false;
      else
        tmemStore = false;
    }
    if (isa<TmaStoreWaitOp>(op))
      tmaStore = false;
  }
};

/// Liveness of one buffer at each op of a block.
struct BlockLiveness {
  SmallVector<bool> accessed; // the op, or an op nested in it, accesses it
  SmallVector<bool> inFlight; // an earlier async access is still in flight
  InFlight atEnd;

  bool live(size_t i) const { return accessed[i] || inFlight[i]; }
};

using Accesses = BufferLiveness::Accesses;

BlockLiveness scan(Block &block, const Accesses &buffer) {
  BlockLiveness result;
  InFlight pending;
  for (Operation &op : block) {
    bool accessed = buffer.ops.contains(&op);
    result.inFlight.push_back(pending.any());
    if (accessed)
      pending.start(&op);
    for (Region &region : op.getRegions())
      for (Block &nested : region) {
        BlockLiveness inner = scan(nested, buffer);
        accessed |= llvm::is_contained(inner.accessed, true);
        pending.merge(inner.atEnd);
      }
    pending.complete(&op);
    result.accessed.push_back(accessed);
  }
  result.atEnd = pending;
  return result;
}

/// The first and last ops of the block where the buffer is live.
std::optional<std::pair<size_t, size_t>> liveRange(const BlockLiveness &l) {
  std::optional<std::pair<size_t, size_t>> range;
  for (size_t i = 0, e = l.accessed.size(); i < e; ++i)
    if (l.live(i))
      range = range ? std::make_pair(range->first, i) : std::make_pair(i, i);
  return range;
}

/// Whether the live ranges of `a` and `b` in `block` are disjoint, up to
/// region ops that hold both in blocks where they are (recursively).
bool disjoint(Block &block, const Accesses &a, const Accesses &b) {
  BlockLiveness la = scan(block, a), lb = scan(block, b);
  auto ra = liveRange(la), rb = liveRange(lb);
  if (!ra || !rb)
    return true;
  size_t first = std::max(ra->first, rb->first);
  size_t last = std::min(ra->second, rb->second);
  if (first > last)
    return true;
  auto it = std::next(block.begin(), first);
  for (size_t i = first; i <= last; ++i, ++it) {
    Operation &op = *it;
    bool nestedBoth = op.getNumRegions() > 0 && la.accessed[i] &&
                      lb.accessed[i] && !la.inFlight[i] && !lb.inFlight[i] &&
                      !a.ops.contains(&op) && !b.ops.contains(&op);
    if (!nestedBoth)
      return false;
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        if (!disjoint(nested, a, b))
          return false;
  }
  return true;
}

/// Every op that accesses `buffer`, following views.
Accesses collectAccesses(Value buffer) {
  Accesses result;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
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
      result.ops.insert(user);
    }
  }
  for (Operation *op : result.ops) {
    if (auto role = op->getParentOfType<RoleOp>())
      result.roles.insert(role);
    else
      result.outsideRoles = true;
  }
  return result;
}

} // namespace

BufferLiveness::BufferLiveness(ArrayRef<Value> buffers) {
  for (Value buffer : buffers)
    accesses.push_back(collectAccesses(buffer));
}

bool BufferLiveness::mayShare(unsigned a, unsigned b) const {
  const Accesses &x = accesses[a], &y = accesses[b];
  if (x.ops.empty() || y.ops.empty())
    return true;
  if (x.outsideRoles || y.outsideRoles)
    return false;
  if (x.roles.size() != y.roles.size() ||
      !llvm::all_of(x.roles, [&](Operation *r) { return y.roles.contains(r); }))
    return false;
  return llvm::all_of(x.roles, [&](Operation *role) {
    return disjoint(role->getRegion(0).front(), x, y);
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
