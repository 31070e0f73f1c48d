//===- RoleSet.cpp - choose the kernel family's role set ------------------===//

#include "RoleSet.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

RoleSet::~RoleSet() = default;

std::unique_ptr<RoleSet> specialize::createRoleSet(KernelBuilder &kernel) {
  switch (kernel.getShape().plan.getArch()) {
  case Arch::sm_100a:
    return kernel.getShape().plan.isDecode()
               ? createBlackwellDecodeRoles(kernel)
               : createBlackwellPrefillRoles(kernel);
  case Arch::sm_90a:
    return createHopperPrefillRoles(kernel);
  }
  llvm_unreachable("unknown architecture");
}
