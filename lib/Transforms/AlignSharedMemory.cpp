//===- AlignSharedMemory.cpp - align the lowered dynamic shared memory ----===//
//
// Raises the alignment of the dynamic shared memory global that GPU-to-NVVM
// creates to what fa4-allocate-smem's layout assumes.
//
//===----------------------------------------------------------------------===//

#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4ALIGNSHAREDMEMORY
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;

namespace {

struct FA4AlignSharedMemoryPass
    : public fa4::impl::FA4AlignSharedMemoryBase<FA4AlignSharedMemoryPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    auto required =
        module->getAttrOfType<IntegerAttr>("fa4.shared_alignment");
    if (!required)
      return;
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      // The symbol GPU-to-NVVM declares for gpu.dynamic_shared_memory.
      if (global.getAddrSpace() != 3 ||
          !global.getSymName().starts_with("__dynamic_shmem__"))
        continue;
      uint64_t alignment = global.getAlignment().value_or(1);
      if (alignment < required.getValue().getZExtValue())
        global.setAlignment(required.getValue().getZExtValue());
      // An internal zero-size array becomes a one-byte static variable in
      // PTX, laid out among the mbarriers; only an external declaration is
      // the dynamic region, which ptxas places after the static one at the
      // symbol's alignment.
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};

} // namespace
