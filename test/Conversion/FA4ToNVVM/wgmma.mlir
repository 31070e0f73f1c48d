// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// One KV block of a sm_90a consumer warpgroup: S = Q K^T from shared
// memory, then O += P V with P, S truncated to bf16, from registers.

// CHECK-LABEL: gpu.func @qk_pv
// QK^T: a fence, then 8 K steps (D = 128) without accumulator at the first.
// The sm_90 descriptor of the K-major operands: LBO 16, SBO 1024, 128-byte
// swizzle = 1 << 62, no version bit.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-DAG: llvm.mlir.constant(4611686293305360384 : i64)
// CHECK: nvvm.wgmma.mma_async %[[A0:.*]], %[[B0:.*]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// Each later step's descriptors are step 0's plus its offset in 16-byte
// units, an add pinned to the step (LLVM may not hoist it out of a loop):
// 32 bytes per step within an atom, then the atom stride (K: 128 rows x
// 128 B = 1024 units; Q: 64 rows, 512).
// CHECK: llvm.inline_asm has_side_effects "add.s64 $0, $1, 2;", "=l,l" %[[B0]] : (i64) -> i64
// CHECK: llvm.inline_asm has_side_effects "add.s64 $0, $1, 2;", "=l,l" %[[A0]] : (i64) -> i64
// CHECK: llvm.inline_asm has_side_effects "add.s64 $0, $1, 1024;", "=l,l" %[[B0]] : (i64) -> i64
// CHECK: llvm.inline_asm has_side_effects "add.s64 $0, $1, 512;", "=l,l" %[[A0]] : (i64) -> i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// The wait carries S's 64 registers through.
// CHECK: llvm.inline_asm has_side_effects {{.*}}"wgmma.wait_group.sync.aligned 0;"
// PV: A from registers (the RS form, inline PTX), V MN-major with its atoms
// 16384 bytes apart (the LBO), 16 rows (2048 bytes) per K step.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-DAG: llvm.mlir.constant(4611686293372403712 : i64)
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
// CHECK-SAME: "=f,{{.*}},0,1,{{.*}},63,r,r,r,r,l,n"
// CHECK-COUNT-7: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: "wgmma.wait_group.sync.aligned 1;"
// CHECK-NOT: fa4.

// PTX: wgmma.fence.sync.aligned
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: wgmma.commit_group.sync.aligned
// PTX: wgmma.wait_group.sync.aligned 0
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!q = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
    gpu.func @qk_pv(%out: !llvm.ptr<1>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !q
      %c16k = arith.constant 16384 : index
      %k = memref.view %smem[%c16k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c48k = arith.constant 49152 : index
      %v = memref.view %smem[%c48k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %zero = arith.constant dense<0.0> : vector<64xf32>
      %s0 = fa4.wgmma %q, %k b_major(k) : !q, !tile -> vector<64xf32>
      nvvm.wgmma.commit.group.sync.aligned
      %s = fa4.wgmma.wait 0, %s0 : vector<64xf32>
      %p = arith.truncf %s : vector<64xf32> to vector<64xbf16>
      %o0 = fa4.wgmma %p, %v, %zero b_major(mn) : vector<64xbf16>, !tile, vector<64xf32> -> vector<64xf32>
      nvvm.wgmma.commit.group.sync.aligned
      %o = fa4.wgmma.wait 1, %o0 : vector<64xf32>
      %sum = vector.reduction <add>, %o : vector<64xf32> into f32
      llvm.store %sum, %out : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
