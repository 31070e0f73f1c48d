//===- AllocateSmem.cpp - place the shared-memory buffers of kernels ------===//
//
// Lays the workgroup attributions of an fa4 kernel out in its dynamic shared
// memory, so that a kernel may use more than the 48 KB of static shared
// memory, and records the size in its launch manifest.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Transforms/BufferLiveness.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4ALLOCATESMEM
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

namespace {

constexpr int64_t kDefaultAlignment = 16;

struct SmemBuffer {
  BlockArgument value;
  std::string name;
  int64_t bytes, alignment;
  int64_t offset = 0;
};

/// The buffers of `kernel`, or failure after a diagnostic.
FailureOr<SmallVector<SmemBuffer>> collectBuffers(gpu::GPUFuncOp kernel) {
  SmallVector<SmemBuffer> buffers;
  for (auto [index, value] : llvm::enumerate(kernel.getWorkgroupAttributions())) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat())
      return kernel.emitOpError()
             << "workgroup attribution #" << index
             << " must be a static, contiguous memref of integers or floats "
                "to be placed in dynamic shared memory, got "
             << value.getType();
    // The fa4.plan verifier bounds the size; checked again without overflow.
    std::optional<int64_t> bytes = getStaticSizeInBytes(type);
    if (!bytes || *bytes <= 0 || *bytes > limits::kSmemBytes)
      return kernel.emitOpError()
             << "workgroup attribution #" << index << " of type "
             << value.getType() << " must hold 1 to " << limits::kSmemBytes
             << " bytes";
    SmemBuffer buffer{value, "#" + std::to_string(index), *bytes,
                      kDefaultAlignment};
    if (auto name = dyn_cast_or_null<StringAttr>(
            kernel.getWorkgroupAttributionAttr(index, "fa4.name")))
      buffer.name = name.str();
    if (Attribute attr =
            kernel.getWorkgroupAttributionAttr(index, "fa4.alignment")) {
      auto alignment = dyn_cast<IntegerAttr>(attr);
      if (!alignment || alignment.getInt() <= 0 ||
          alignment.getInt() > 1024 ||
          !llvm::isPowerOf2_64(alignment.getInt()))
        return kernel.emitOpError()
               << "workgroup attribution '" << buffer.name
               << "' has fa4.alignment " << attr
               << "; expected a power of two in [1, 1024]";
      buffer.alignment = alignment.getInt();
    }
    buffers.push_back(buffer);
  }
  return buffers;
}

/// Chooses offsets: largest first; a buffer shares the bytes of a placed one
/// it fits in when it may share with everything already there.
int64_t layOut(MutableArrayRef<SmemBuffer> buffers, bool alias) {
  SmallVector<Value> values;
  for (const SmemBuffer &buffer : buffers)
    values.push_back(buffer.value);
  BufferLiveness liveness(values, /*laneLocal=*/false);

  auto order = llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  SmallVector<SmallVector<unsigned>> groups; // the first member owns bytes
  int64_t end = 0;
  for (unsigned index : order) {
    SmemBuffer &buffer = buffers[index];
    auto fits = [&](ArrayRef<unsigned> group) {
      const SmemBuffer &owner = buffers[group.front()];
      return alias && buffer.bytes <= owner.bytes &&
             owner.offset % buffer.alignment == 0 &&
             llvm::all_of(group, [&](unsigned member) {
               return liveness.mayShare(index, member);
             });
    };
    auto *group = llvm::find_if(groups, fits);
    if (group != groups.end()) {
      buffer.offset = buffers[group->front()].offset;
      group->push_back(index);
      continue;
    }
    buffer.offset = llvm::alignTo(end, buffer.alignment);
    end = buffer.offset + buffer.bytes;
    groups.push_back({index});
  }
  return end;
}

FailureOr<int64_t> allocate(gpu::GPUFuncOp kernel, bool alias) {
  FailureOr<SmallVector<SmemBuffer>> collected = collectBuffers(kernel);
  if (failed(collected))
    return failure();
  SmallVector<SmemBuffer> &buffers = *collected;
  int64_t bytes = layOut(buffers, alias);
  if (bytes > limits::kSmemBytes) {
    InFlightDiagnostic diag = kernel.emitOpError()
                              << "needs " << bytes
                              << " bytes of shared memory, more than the "
                              << limits::kSmemBytes << " a CTA can use";
    for (const SmemBuffer &buffer : buffers)
      diag.attachNote(buffer.value.getLoc())
          << "buffer '" << buffer.name << "' takes bytes [" << buffer.offset
          << ", " << buffer.offset + buffer.bytes << ")";
    return failure();
  }

  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  auto smemType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                  MemRefLayoutAttrInterface(), workgroup);
  for (SmemBuffer &buffer : buffers) {
    materializeAtUses(buffer.value, [&](OpBuilder &at) {
      Value smem = gpu::DynamicSharedMemoryOp::create(at, loc, smemType);
      Value offset = arith::ConstantIndexOp::create(at, loc, buffer.offset);
      auto view = memref::ViewOp::create(at, loc, buffer.value.getType(), smem,
                                         offset, ValueRange{});
      view->setAttr("fa4.name", at.getStringAttr(buffer.name));
      return view.getResult();
    });
  }

  // The layout holds only from a base with the largest alignment; the
  // lowered dynamic shared memory gets it from fa4-align-shared-memory.
  int64_t alignment = 1;
  for (const SmemBuffer &buffer : buffers)
    alignment = std::max(alignment, buffer.alignment);
  auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();
  if (auto existing =
          gpuModule->getAttrOfType<IntegerAttr>("fa4.shared_alignment"))
    alignment = std::max(alignment, existing.getInt());
  gpuModule->setAttr("fa4.shared_alignment", b.getI64IntegerAttr(alignment));

  // Drop the attributions, now unused, and their attributes.
  unsigned first = kernel.getFirstWorkgroupAttributionIndex();
  kernel.getBody().front().eraseArguments(first, buffers.size());
  kernel->setAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(),
                  b.getI64IntegerAttr(0));
  kernel->removeAttr(kernel.getWorkgroupAttribAttrsAttrName());
  return bytes;
}

struct FA4AllocateSmemPass
    : public fa4::impl::FA4AllocateSmemBase<FA4AllocateSmemPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    module.walk([&](gpu::GPUFuncOp kernel) {
      if (kernel.isKernel() && kernel->hasAttr("fa4.plan") &&
          kernel.getNumWorkgroupAttributions() > 0)
        kernels.push_back(kernel);
    });
    for (gpu::GPUFuncOp kernel : kernels) {
      FailureOr<int64_t> bytes = allocate(kernel, alias);
      if (failed(bytes))
        return signalPassFailure();
      kernel->setAttr("fa4.dynamic_smem_bytes",
                      Builder(kernel).getI64IntegerAttr(*bytes));
    }
  }
};

} // namespace
