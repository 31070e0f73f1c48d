//===- Targets.cpp - which chips a kernel is compiled for -----------------===//

#include "fa4/Dialect/FA4/IR/Targets.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

SmallVector<StringRef> mlir::fa4::enclosingNvvmChips(Operation *op) {
  SmallVector<StringRef> chips;
  auto module = op->getParentOfType<gpu::GPUModuleOp>();
  std::optional<ArrayAttr> targets =
      module ? module.getTargets() : std::nullopt;
  if (!targets || !*targets)
    return chips;
  for (Attribute target : *targets)
    if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
      chips.push_back(nvvm.getChip());
  return chips;
}
