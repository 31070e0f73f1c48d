//===- LowerWarpSpecialize.cpp - roles to setmaxnreg and branches ---------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4LOWERWARPSPECIALIZE
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Declares the launch bounds setmaxnreg needs on `kernel`, or reports a
/// conflicting declaration.
LogicalResult setLaunchBounds(WarpSpecializeOp op, gpu::GPUFuncOp kernel) {
  int32_t threads = static_cast<int32_t>(op.getWarps()) * 32;
  Builder b(op.getContext());
  auto maxntid = b.getDenseI32ArrayAttr({threads, 1, 1});
  if (Attribute existing = kernel->getAttr("nvvm.maxntid")) {
    if (existing != maxntid)
      return op.emitOpError()
             << "needs nvvm.maxntid = " << maxntid << " on @"
             << kernel.getName() << ", which declares " << existing;
  }
  kernel->setAttr("nvvm.maxntid", maxntid);
  kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  return success();
}

/// Records the roles about to be lowered on the kernel (`fa4.roles`, for its
/// launch manifest): name, warp range and register budget of each.
void recordRoles(WarpSpecializeOp op, gpu::GPUFuncOp kernel) {
  Builder b(op.getContext());
  SmallVector<Attribute> roles;
  for (RoleOp role : op.getBody().getOps<RoleOp>())
    roles.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", role.getRoleAttr()),
         b.getNamedAttr("warps", b.getI64ArrayAttr(
                                     {static_cast<int64_t>(role.getWarpBegin()),
                                      static_cast<int64_t>(role.getWarpEnd())})),
         b.getNamedAttr("registers", b.getI64IntegerAttr(role.getRegisters()))}));
  kernel->setAttr("fa4.roles", b.getArrayAttr(roles));
}

/// One branch per warpgroup, entered by its 4 warps: the warpgroup first
/// moves its register file to its budget, then each role it hosts runs under
/// a branch on the warp index. Keeping setmaxnreg and the role code in the
/// same branch lets ptxas allocate the role with the new budget. A role that
/// spans several warpgroups is copied into each of them.
void lower(WarpSpecializeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto indexConstant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, int64_t rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, indexConstant(rhs));
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, tid, indexConstant(32));
  Value warpgroup = arith::DivUIOp::create(b, loc, warp, indexConstant(4));

  SmallVector<RoleOp> roles(op.getBody().getOps<RoleOp>());
  int64_t defaultRegisters = op.getDefaultRegisters();
  for (auto [group, registers] : llvm::enumerate(op.getWarpgroupRegisters())) {
    int64_t first = group * 4, last = first + 4;
    SmallVector<RoleOp> hosted;
    for (RoleOp role : roles)
      if (static_cast<int64_t>(role.getWarpBegin()) < last &&
          static_cast<int64_t>(role.getWarpEnd()) > first)
        hosted.push_back(role);
    if (hosted.empty() && registers == defaultRegisters)
      continue;

    OpBuilder::InsertionGuard guard(b);
    auto groupIf = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, warpgroup, group));
    b.setInsertionPointToStart(groupIf.thenBlock());
    if (registers != defaultRegisters)
      NVVM::SetMaxRegisterOp::create(
          b, loc, static_cast<uint32_t>(registers),
          registers > defaultRegisters ? NVVM::SetMaxRegisterAction::increase
                                       : NVVM::SetMaxRegisterAction::decrease);
    for (RoleOp role : hosted) {
      int64_t begin = std::max<int64_t>(role.getWarpBegin(), first);
      int64_t end = std::min<int64_t>(role.getWarpEnd(), last);
      // Separate statements: argument evaluation order would make the IR
      // order compiler-dependent.
      Value atLeastBegin = cmp(arith::CmpIPredicate::uge, warp, begin);
      Value belowEnd = cmp(arith::CmpIPredicate::ult, warp, end);
      Value inRange = arith::AndIOp::create(b, loc, atLeastBegin, belowEnd);
      auto roleIf = scf::IfOp::create(b, loc, inRange);
      OpBuilder::InsertionGuard roleGuard(b);
      b.setInsertionPointToStart(roleIf.thenBlock());
      IRMapping mapping;
      for (Operation &inner : role.getBody().front())
        b.clone(inner, mapping);
    }
  }
  op.erase();
}

struct FA4LowerWarpSpecializePass
    : public fa4::impl::FA4LowerWarpSpecializeBase<FA4LowerWarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<WarpSpecializeOp> ops;
    getOperation()->walk([&](WarpSpecializeOp op) { ops.push_back(op); });
    for (WarpSpecializeOp op : ops) {
      auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
      if (!kernel) {
        op.emitOpError() << "must be inside a gpu.func kernel";
        return signalPassFailure();
      }
      if (failed(setLaunchBounds(op, kernel)))
        return signalPassFailure();
      recordRoles(op, kernel);
      lower(op);
    }
  }
};
} // namespace
