//===- Passes.td - fa4 conversion passes -------------------*- tablegen -*-===//

#ifndef FA4_CONVERSION_PASSES_TD
#define FA4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFA4ToNVVM : Pass<"convert-fa4-to-nvvm"> {
  let summary = "Lower kernel-level fa4 ops to upstream NVVM and LLVM ops";
  let description = [{
    Rewrites the kernel-level fa4 ops (Tensor Memory, tcgen05, wgmma) into upstream
    `nvvm` and `llvm` dialect ops, leaving every other op for the upstream
    conversions that follow (`convert-gpu-to-nvvm`, `convert-nvvm-to-llvm`,
    `reconcile-unrealized-casts`). `!fa4.tmem` becomes a TMEM pointer
    (`!llvm.ptr<6>`) holding lane << 16 | column; a warpgroup load or store
    adds the lane quarter of the executing warp, since warp `w` of a
    warpgroup may only touch lanes `32 (w mod 4) ... 32 (w mod 4) + 31`.

    | fa4 op | NVVM |
    |---|---|
    | `fa4.tmem.alloc` | `nvvm.tcgen05.alloc`, `nvvm.tcgen05.relinquish_alloc_permit` |
    | `fa4.tmem.base` | `llvm.load` from the slot, `llvm.inttoptr` |
    | `fa4.tmem.dealloc` | `nvvm.tcgen05.dealloc` |
    | `fa4.tmem.view` | address arithmetic |
    | `fa4.tmem.load` / `store` | `nvvm.tcgen05.ld` / `st` (shape 32x32b) |
    | `fa4.tcgen05.wait` | `nvvm.tcgen05.wait` |
    | `fa4.wgmma` | `nvvm.wgmma.fence.aligned`, then per K step `nvvm.wgmma.mma_async` (A in shared memory) or inline PTX (A in registers: LLVM 22 has no op) |
    | `fa4.wgmma.commit` / `wait` | `nvvm.wgmma.commit.group.sync.aligned` / inline PTX `wgmma.wait_group` with the fragments as tied operands |

    The pass refuses tcgen05 and Tensor Memory ops inside a `gpu.module`
    whose `#nvvm.target` names a chip without tcgen05 (anything but sm_100a
    and sm_101a), and wgmma ops where it names another chip than sm_90a. The
    semantic `fa4.attention` is left alone: the kernel pipeline compiles it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // FA4_CONVERSION_PASSES_TD
