//===- AllocateTmem.cpp - place the Tensor Memory buffers of kernels ------===//
//
// Gives every fa4.tmem.buffer of a kernel its columns, sharing columns
// between buffers that are never live together, and makes the kernel
// allocate and free its Tensor Memory.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/BufferLiveness.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4ALLOCATETMEM
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// Where each buffer goes: its first column. Buffers that share columns form
/// a group led by the largest, which owns [column, column + width).
struct TmemLayout {
  SmallVector<int64_t> columns;
  SmallVector<unsigned> owners; // buffers that own their columns
  int64_t end = 0;
};

int64_t widthOf(TmemBufferOp buffer) {
  return buffer.getBuffer().getType().getNumColumns();
}

TmemLayout layOut(ArrayRef<TmemBufferOp> buffers, bool alias) {
  SmallVector<Value> values;
  for (TmemBufferOp buffer : buffers)
    values.push_back(buffer.getBuffer());
  BufferLiveness liveness(values, /*laneLocal=*/true);

  // Largest first, so that smaller buffers can fit into larger ones.
  auto order = llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return widthOf(buffers[a]) > widthOf(buffers[b]);
  });

  TmemLayout layout;
  layout.columns.resize(buffers.size());
  SmallVector<SmallVector<unsigned>> groups; // parallel to layout.owners
  for (unsigned index : order) {
    int64_t width = widthOf(buffers[index]);
    bool placed = false;
    for (auto [owner, group] : llvm::zip(layout.owners, groups)) {
      if (!alias || width > widthOf(buffers[owner]) ||
          !llvm::all_of(group, [&](unsigned member) {
            return liveness.mayShare(index, member);
          }))
        continue;
      // The top of the owner's columns (P over the upper half of S).
      layout.columns[index] =
          layout.columns[owner] + widthOf(buffers[owner]) - width;
      group.push_back(index);
      placed = true;
      break;
    }
    if (placed)
      continue;
    layout.columns[index] = layout.end;
    layout.end += width;
    layout.owners.push_back(index);
    groups.push_back({index});
  }
  return layout;
}

/// tcgen05 fences around a CTA barrier: orders TMEM allocation and accesses
/// of all threads across it.
void threadSync(OpBuilder &b, Location loc) {
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b, loc);
  NVVM::Tcgen05FenceOp::create(b, loc,
                               NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

/// Builds `if (warp 0) { body }` at b's insertion point.
void inFirstWarp(OpBuilder &b, Location loc, function_ref<void()> body) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, tid,
      arith::ConstantIndexOp::create(b, loc, 32));
  auto ifOp = scf::IfOp::create(b, loc, first);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

/// Places the buffers of `kernel`; returns the columns allocated.
FailureOr<int64_t> allocate(gpu::GPUFuncOp kernel,
                            MutableArrayRef<TmemBufferOp> buffers, bool alias) {
  if (!kernel.isKernel())
    return kernel.emitOpError()
           << "declares Tensor Memory buffers but is not a kernel";
  WalkResult owned = kernel.walk([](TmemAllocOp op) {
    op.emitOpError() << "allocates Tensor Memory in a kernel whose buffers "
                        "fa4-allocate-tmem places";
    return WalkResult::interrupt();
  });
  if (owned.wasInterrupted())
    return failure();

  TmemLayout layout = layOut(buffers, alias);
  if (layout.end > limits::kTmemColumns) {
    InFlightDiagnostic diag =
        kernel.emitOpError()
        << "needs " << layout.end << " Tensor Memory columns, more than the "
        << limits::kTmemColumns << " of an SM";
    for (unsigned owner : layout.owners)
      diag.attachNote(buffers[owner].getLoc())
          << "buffer '" << buffers[owner].getName() << "' takes columns ["
          << layout.columns[owner] << ", "
          << layout.columns[owner] + widthOf(buffers[owner]) << ")";
    return failure();
  }
  int64_t allocated =
      std::max<int64_t>(32, llvm::PowerOf2Ceil(std::max<int64_t>(layout.end, 1)));

  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  auto slotType = MemRefType::get(
      {1}, IntegerType::get(ctx, 32), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  Value slot = kernel.addWorkgroupAttribution(slotType, loc);
  kernel.setWorkgroupAttributionAttr(kernel.getNumWorkgroupAttributions() - 1,
                                     "fa4.name",
                                     StringAttr::get(ctx, "tmem_address"));

  // Allocate right before the first op that uses Tensor Memory.
  Block &entry = kernel.getBody().front();
  Operation *firstUse = nullptr;
  for (TmemBufferOp buffer : buffers)
    for (Operation *user : buffer->getUsers()) {
      Operation *ancestor = entry.findAncestorOpInBlock(*user);
      if (ancestor && (!firstUse || ancestor->isBeforeInBlock(firstUse)))
        firstUse = ancestor;
    }
  OpBuilder b(ctx);
  if (firstUse)
    b.setInsertionPoint(firstUse);
  else
    b.setInsertionPointToStart(&entry);
  inFirstWarp(b, loc, [&] { TmemAllocOp::create(b, loc, slot, allocated); });
  threadSync(b, loc);
  auto allocationType =
      TmemType::get(ctx, limits::kTmemLanes, allocated, b.getF32Type());

  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    int64_t column = layout.columns[index];
    materializeAtUses(buffer.getBuffer(), [&](OpBuilder &at) {
      Value base = TmemBaseOp::create(at, buffer.getLoc(), allocationType, slot);
      auto view = TmemViewOp::create(at, buffer.getLoc(), buffer.getType(), base,
                                     column);
      view->setAttr("fa4.name", buffer.getNameAttr());
      return view.getResult();
    });
    buffer.erase();
  }

  SmallVector<gpu::ReturnOp> returns;
  kernel.walk([&](gpu::ReturnOp op) { returns.push_back(op); });
  for (gpu::ReturnOp ret : returns) {
    b.setInsertionPoint(ret);
    threadSync(b, ret.getLoc());
    inFirstWarp(b, ret.getLoc(),
                [&] {
                  TmemDeallocOp::create(
                      b, ret.getLoc(),
                      TmemBaseOp::create(b, ret.getLoc(), allocationType, slot));
                });
  }
  return allocated;
}

struct FA4AllocateTmemPass
    : public fa4::impl::FA4AllocateTmemBase<FA4AllocateTmemPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::MapVector<Operation *, SmallVector<TmemBufferOp>> buffersByFunction;
    WalkResult result = module.walk([&](TmemBufferOp buffer) {
      auto function = buffer->getParentOfType<gpu::GPUFuncOp>();
      if (!function) {
        buffer.emitOpError() << "must be declared in a gpu.func kernel";
        return WalkResult::interrupt();
      }
      buffersByFunction[function].push_back(buffer);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    // Kernels without Tensor Memory (sm_90a) use none of it.
    module.walk([&](gpu::GPUFuncOp kernel) {
      if (kernel.isKernel() && !buffersByFunction.count(kernel))
        kernel->setAttr("fa4.tmem_columns",
                        Builder(kernel).getI64IntegerAttr(0));
    });
    for (auto &[function, buffers] : buffersByFunction) {
      auto kernel = cast<gpu::GPUFuncOp>(function);
      FailureOr<int64_t> columns = allocate(kernel, buffers, alias);
      if (failed(columns))
        return signalPassFailure();
      kernel->setAttr("fa4.tmem_columns",
                      Builder(kernel).getI64IntegerAttr(*columns));
    }
  }
};

} // namespace
