//===- RoleSet.h - the roles of a kernel family -----------------*- C++ -*-===//
//
// The role set of a kernel family (FA4 prefill on sm_100a, FA3 prefill on
// sm_90a): the shared-memory buffers, channels and TMEM buffers it declares
// and its roles with their warps and register budgets. createRoleSet picks
// the family from the plan; a new family is a new file and a case there.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_SPECIALIZE_ROLESET_H
#define FA4_TRANSFORMS_SPECIALIZE_ROLESET_H

#include "KernelBuilder.h"

namespace mlir::fa4::specialize {

class RoleSet : protected KernelOps {
public:
  explicit RoleSet(KernelBuilder &kernel)
      : KernelOps(kernel.getBuilder(), kernel.getShape()), kernel(kernel) {}
  virtual ~RoleSet();

  /// The kernel's shared-memory buffers, in the order of its workgroup
  /// attributions. KernelBuilder::sharedBuffer finds them by name; the load
  /// and store roles use "q", "kv" and "o_staging".
  virtual SmallVector<SharedBuffer> sharedBuffers() const = 0;
  /// Declares the channels and Tensor Memory at the insertion point (before
  /// the fa4.warp_specialize), then builds one fa4.role per role into
  /// `roles`.
  virtual void build(Block &roles) = 0;

protected:
  KernelBuilder &kernel;
};

/// sm_100a: softmax per Q stage, correction, MMA, TMA load and store.
std::unique_ptr<RoleSet> createBlackwellPrefillRoles(KernelBuilder &kernel);
/// sm_100a decode (swap-AB): a softmax warpgroup that also rescales O,
/// MMA, TMA load and store.
std::unique_ptr<RoleSet> createBlackwellDecodeRoles(KernelBuilder &kernel);
/// sm_90a: TMA load and store, a wgmma consumer per Q stage.
std::unique_ptr<RoleSet> createHopperPrefillRoles(KernelBuilder &kernel);
/// The role set of the kernel's plan.
std::unique_ptr<RoleSet> createRoleSet(KernelBuilder &kernel);

} // namespace mlir::fa4::specialize

#endif // FA4_TRANSFORMS_SPECIALIZE_ROLESET_H
