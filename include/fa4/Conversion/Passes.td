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
    | `fa4.mma` | per K step (32 bytes of each operand row) `nvvm.tcgen05.mma`, `kind::f16` for f16/bf16 operands, `kind::f8f6f4` for e4m3 |
    | `fa4.mma.commit` | `nvvm.tcgen05.commit` on the mbarrier |
    | `fa4.wgmma` | `nvvm.wgmma.fence.aligned`, then per K step `nvvm.wgmma.mma_async` (A in shared memory) or inline PTX (A in registers: LLVM 22 has no op) |
    | `fa4.wgmma.quantize` | `nvvm.convert.f32x2.to.f8x2` (e4m3, satfinite), `nvvm.shfl.sync` in the quad, byte permutes |
    | `arith.truncf` f32 to `f8E4M3FN` | `nvvm.convert.f32x2.to.f8x2` per pair (`cvt.rn.satfinite.e4m3x2.f32`: a magnitude past 448 saturates to 448) |
    | `fa4.wgmma.wait` | `nvvm.wgmma.wait.group.sync.aligned`, or with fragments inline PTX `wgmma.wait_group` with them as tied operands |
    | `fa4.named_barrier.sync` / `arrive` | `nvvm.barrier` / `nvvm.barrier.arrive` with an id and a thread count |
    | `fa4.exp2` | `ex2.approx.ftz.f32`, or the cubic FMA polynomial for the emulated lanes |

    The pass refuses tcgen05 and Tensor Memory ops inside a `gpu.module`
    whose `#nvvm.target` names a chip without tcgen05 (anything but sm_100a
    and sm_101a), and wgmma ops where it names another chip than sm_90a. The
    semantic `fa4.attention` is left alone: the kernel pipeline compiles it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // FA4_CONVERSION_PASSES_TD
