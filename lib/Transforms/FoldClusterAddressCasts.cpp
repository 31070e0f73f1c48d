//===- FoldClusterAddressCasts.cpp - shared addresses as cluster ones -----===//
//
// A `.shared::cta` address is also the `.shared::cluster` address of the
// same byte in the executing CTA (the CTA's window lies inside the
// cluster's), so a cast between the two is the identity. The NVPTX backend
// lowers `addrspacecast` from shared (3) to shared::cluster (7) through the
// generic space instead (`cvta.shared` then `cvta.to.shared::cluster`),
// which keeps the 64-bit generic window base live across the kernel.
//
//===----------------------------------------------------------------------===//

#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4FOLDCLUSTERADDRESSCASTS
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;

namespace {

bool isSharedToCluster(LLVM::AddrSpaceCastOp cast) {
  auto from = dyn_cast<LLVM::LLVMPointerType>(cast.getArg().getType());
  auto to = dyn_cast<LLVM::LLVMPointerType>(cast.getType());
  return from && to && !isa<VectorType>(cast.getType()) &&
         from.getAddressSpace() ==
             static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) &&
         to.getAddressSpace() ==
             static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster);
}

struct FA4FoldClusterAddressCastsPass
    : public fa4::impl::FA4FoldClusterAddressCastsBase<
          FA4FoldClusterAddressCastsPass> {
  void runOnOperation() override {
    SmallVector<LLVM::AddrSpaceCastOp> casts;
    getOperation().walk([&](LLVM::AddrSpaceCastOp cast) {
      if (isSharedToCluster(cast))
        casts.push_back(cast);
    });
    for (LLVM::AddrSpaceCastOp cast : casts) {
      OpBuilder b(cast);
      // The address as an integer of the pointers' width (both are the
      // same size in the NVPTX data layout), reinterpreted.
      auto address = LLVM::PtrToIntOp::create(b, cast.getLoc(), b.getI64Type(),
                                              cast.getArg());
      auto cluster = LLVM::IntToPtrOp::create(b, cast.getLoc(), cast.getType(),
                                              address.getResult());
      cast.replaceAllUsesWith(cluster.getResult());
      cast.erase();
    }
  }
};

} // namespace
