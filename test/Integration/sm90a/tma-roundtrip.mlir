// The runtime probe: one CTA per 32-row box TMA-loads a 128-byte-swizzled box
// of a [B, S, H, D] bf16 tensor into dynamic shared memory and TMA-stores it
// back to another tensor at the same coordinates. Loading and storing through
// the same swizzle is the identity, so on a GPU the output equals the input
// inside the boxes: scripts/device/runtime-check.py launches it with
// python/fa4/runtime.py to prove tensor-map encoding, parameter passing and
// launch on the H200. Here it must compile for sm_90a through the upstream
// passes fa4 uses and, with ptxas, assemble.
//
// RUN: fa4-opt %s --pass-pipeline='builtin.module(gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{index-bitwidth=32},fa4-align-shared-memory),convert-nvvm-to-llvm,reconcile-unrealized-casts,gpu-module-to-binary{format=isa})' -o %t.mlir
// RUN: %python %fa4_src_root/scripts/extract-ptx.py %t.mlir %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}

// CHECK: .target sm_90a
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK: .entry tma_roundtrip(
// CHECK-NEXT: .param .u64 .ptr .align 1 tma_roundtrip_param_0,
// CHECK-NEXT: .param .u64 .ptr .align 1 tma_roundtrip_param_1,
// CHECK-NEXT: .param .u32 tma_roundtrip_param_2
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity
// CHECK: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// CHECK: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group{{[[:space:]]+}}0;

!map = !nvgpu.tensormap.descriptor<tensor = memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @probe [#nvvm.target<chip = "sm_90a", features = "+ptx80">] attributes {fa4.shared_alignment = 1024 : i64} {
    // CTA b copies rows [32b, 32b + 32) of heads 0-3, columns 64-127, of
    // batch %batch (a scalar parameter).
    gpu.func @tma_roundtrip(%in: !map, %out: !map, %batch: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %bytes = arith.constant 16384 : index
      %tid = gpu.thread_id x
      %block = gpu.block_id x
      %first = arith.cmpi eq, %tid, %c0 : index
      %bar = nvgpu.mbarrier.create -> !bars
      scf.if %first {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !bars
      }
      gpu.barrier
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>
      %row = arith.muli %block, %c32 : index
      scf.if %first {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !bars
        nvgpu.tma.async.load %in[%c64, %c0, %row, %batch], %bar[%c0] to %tile : !map, !bars -> memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>
      }
      %false = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %false, %ticks : !bars
      scf.if %first {
        nvgpu.tma.async.store %tile to %out[%c64, %c0, %row, %batch] : memref<1x32x4x64xbf16, #gpu.address_space<workgroup>> -> !map
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0
      }
      gpu.return
    }
  }
}
