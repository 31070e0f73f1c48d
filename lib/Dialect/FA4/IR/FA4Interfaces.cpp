//===- FA4Interfaces.cpp - what passes ask of kernel ops ------------------===//
//
// The fa4 ops' answers to the interfaces of FA4Interfaces.td, and the
// external models that give the same answers for upstream ops.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Interfaces.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fa4;

#include "fa4/Dialect/FA4/IR/FA4Interfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Asynchronous accesses and the waits that complete them
//===----------------------------------------------------------------------===//

AsyncCompletion TmemLoadOp::getAsyncCompletion() {
  return AsyncCompletion::tmem_load_wait;
}

AsyncCompletion TmemStoreOp::getAsyncCompletion() {
  return AsyncCompletion::tmem_store_wait;
}

AsyncCompletion MmaOp::getAsyncCompletion() {
  return AsyncCompletion::tensor_core_commit;
}

AsyncCompletion WgmmaOp::getAsyncCompletion() {
  return AsyncCompletion::wgmma_group_wait;
}

AsyncCompletion TmaLoadOp::getAsyncCompletion() {
  return AsyncCompletion::mbarrier;
}

bool WgmmaWaitOp::retires(AsyncCompletion completion) {
  return completion == AsyncCompletion::wgmma_group_wait && getPending() == 0;
}

//===----------------------------------------------------------------------===//
// Definitions of whole buffers
//===----------------------------------------------------------------------===//

bool TmemStoreOp::overwritesAll(Value buffer) {
  return getDest() == buffer && getOffset() == 0 &&
         getValue().getType().getNumElements() ==
             getDest().getType().getElements();
}

bool MmaOp::overwritesAll(Value buffer) {
  return getD() == buffer && getA() != buffer &&
         matchPattern(getAccumulate(), m_Zero());
}

//===----------------------------------------------------------------------===//
// Memory effects
//===----------------------------------------------------------------------===//

// A and B are read, D read (when accumulating) and written. A lives in
// shared memory or, for P, in Tensor Memory.
void MmaOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  SideEffects::Resource *tmem = TensorMemoryResource::get();
  SideEffects::Resource *other = SideEffects::DefaultResource::get();
  effects.emplace_back(MemoryEffects::Read::get(), &getAMutable(),
                       isa<TmemType>(getA().getType()) ? tmem : other);
  effects.emplace_back(MemoryEffects::Read::get(), &getBMutable(), other);
  effects.emplace_back(MemoryEffects::Read::get(), &getDMutable(), tmem);
  effects.emplace_back(MemoryEffects::Write::get(), &getDMutable(), tmem);
}

//===----------------------------------------------------------------------===//
// Upstream ops
//===----------------------------------------------------------------------===//

namespace {
/// A TMA load fills shared memory and completes transaction bytes on an
/// mbarrier that its consumers wait on.
struct TmaAsyncLoadModel
    : public AsyncAccessOpInterface::ExternalModel<TmaAsyncLoadModel,
                                                   nvgpu::TmaAsyncLoadOp> {
  AsyncCompletion getAsyncCompletion(Operation *) const {
    return AsyncCompletion::mbarrier;
  }
};

/// A TMA store reads shared memory until its bulk group completes.
struct TmaAsyncStoreModel
    : public AsyncAccessOpInterface::ExternalModel<TmaAsyncStoreModel,
                                                   nvgpu::TmaAsyncStoreOp> {
  AsyncCompletion getAsyncCompletion(Operation *) const {
    return AsyncCompletion::bulk_group_wait;
  }
};

/// tcgen05.wait::ld completes the thread's TMEM loads, ::st its stores.
struct Tcgen05WaitModel
    : public AsyncWaitOpInterface::ExternalModel<Tcgen05WaitModel,
                                                 NVVM::Tcgen05WaitOp> {
  bool retires(Operation *op, AsyncCompletion completion) const {
    bool load = cast<NVVM::Tcgen05WaitOp>(op).getKind() ==
                NVVM::Tcgen05WaitKind::LOAD;
    return completion == (load ? AsyncCompletion::tmem_load_wait
                               : AsyncCompletion::tmem_store_wait);
  }
};

/// Only a wait for zero pending groups retires every earlier store group.
struct BulkWaitGroupModel
    : public AsyncWaitOpInterface::ExternalModel<BulkWaitGroupModel,
                                                 NVVM::CpAsyncBulkWaitGroupOp> {
  bool retires(Operation *op, AsyncCompletion completion) const {
    return completion == AsyncCompletion::bulk_group_wait &&
           cast<NVVM::CpAsyncBulkWaitGroupOp>(op).getGroup() == 0;
  }
};
} // namespace

void mlir::fa4::registerExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, nvgpu::NVGPUDialect *) {
    nvgpu::TmaAsyncLoadOp::attachInterface<TmaAsyncLoadModel>(*context);
    nvgpu::TmaAsyncStoreOp::attachInterface<TmaAsyncStoreModel>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, NVVM::NVVMDialect *) {
    NVVM::Tcgen05WaitOp::attachInterface<Tcgen05WaitModel>(*context);
    NVVM::CpAsyncBulkWaitGroupOp::attachInterface<BulkWaitGroupModel>(
        *context);
  });
}
