//===- ClusterToNVVM.cpp - thread-block cluster ops to NVVM ---------------===//
//
// Another CTA's copy of a shared-memory address is `mapa` of the local one
// (a `.shared::cluster` pointer, LLVM address space 7); loads, stores and
// mbarrier arrivals through it reach that CTA.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fa4;

namespace {

/// The `.shared::cluster` address of `local` (a `.shared` pointer) in CTA
/// `rank` of the cluster.
Value mapToCta(OpBuilder &b, Location loc, Value local, Value rank) {
  if (rank.getType() != b.getI32Type())
    rank = LLVM::TruncOp::create(b, loc, b.getI32Type(), rank);
  auto clusterPointer = LLVM::LLVMPointerType::get(
      b.getContext(),
      static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  return NVVM::MapaOp::create(b, loc, clusterPointer, local, rank);
}

struct ClusterArriveLowering : ConvertOpToLLVMPattern<ClusterArriveOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ClusterArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType barriersType =
        nvgpu::getMBarrierMemrefType(getContext(), op.getBarriers().getType());
    Value barrier = LLVM::getStridedElementPtr(
        rewriter, loc, *getTypeConverter(), barriersType, adaptor.getBarriers(),
        {adaptor.getIndex()});
    for (int64_t rank = 0; rank < static_cast<int64_t>(op.getCtas()); ++rank) {
      Value remote = mapToCta(
          rewriter, loc, barrier,
          LLVM::ConstantOp::create(rewriter, loc, rewriter.getI32Type(),
                                   rewriter.getI32IntegerAttr(rank)));
      NVVM::MBarrierArriveOp::create(rewriter, loc, /*res=*/Type(), remote,
                                     /*count=*/Value(),
                                     NVVM::MemScopeKind::CLUSTER);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The `.shared::cluster` address of element `indices` of a dsmem op's
/// buffer in CTA `rank`.
template <typename Op>
Value remoteElement(const LLVMTypeConverter &converter, Op op,
                    typename Op::Adaptor adaptor,
                    ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value local = LLVM::getStridedElementPtr(
      rewriter, loc, converter, op.getBuffer().getType(), adaptor.getBuffer(),
      adaptor.getIndices());
  return mapToCta(rewriter, loc, local, adaptor.getRank());
}

/// The natural alignment of an access of `type` (a vector of 4 to 16
/// bytes, as the verifier requires).
unsigned alignmentOf(VectorType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

struct DsmemLoadLowering : ConvertOpToLLVMPattern<DsmemLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(DsmemLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value address = remoteElement(*getTypeConverter(), op, adaptor, rewriter);
    VectorType type = op.getResult().getType();
    rewriter.replaceOpWithNewOp<LLVM::LoadOp>(op, type, address,
                                              alignmentOf(type));
    return success();
  }
};

struct DsmemStoreLowering : ConvertOpToLLVMPattern<DsmemStoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(DsmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value address = remoteElement(*getTypeConverter(), op, adaptor, rewriter);
    rewriter.replaceOpWithNewOp<LLVM::StoreOp>(
        op, adaptor.getValue(), address, alignmentOf(op.getValue().getType()));
    return success();
  }
};
} // namespace

void mlir::fa4::lowering::populateClusterToNVVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ClusterArriveLowering, DsmemLoadLowering, DsmemStoreLowering>(
      converter);
}
