// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// One KV block of an FP8 (e4m3) sm_90a consumer: S = Q K^T from shared
// memory (head dim 128: one atom of 128 one-byte columns), P rounded to
// an e4m3 register operand, then O += P V^T with V key-major.

// CHECK-LABEL: gpu.func @qk_pv_e4m3
// QK^T: 4 steps of k32, the same 32 bytes per step as 16-bit k16.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async %[[A0:.*]], %[[B0:.*]], %{{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: llvm.inline_asm has_side_effects "add.s64 $0, $1, 2;", "=l,l" %[[B0]] : (i64) -> i64
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// The quantize: per 32 columns and row, four conversions (to nearest,
// saturating), two index shuffles within the quad; 4 steps x 2 rows.
// CHECK: nvvm.read.ptx.sreg.laneid
// CHECK-COUNT-4: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-COUNT-2: nvvm.shfl.sync  idx
// CHECK-COUNT-28: nvvm.convert.f32x2.to.f8x2
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// PV: the RS form with k32 e4m3 and no transpose operand; V K-major (LBO
// 16, SBO 1024) stepping 32 bytes.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1;
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// CHECK-NOT: wgmma.mma_async.sync.aligned
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT: fa4.

// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: shfl.sync.idx.b32
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1;

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!q = memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
!k = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
    gpu.func @qk_pv_e4m3(%out: !llvm.ptr<1>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !q
      %c8k = arith.constant 8192 : index
      %k = memref.view %smem[%c8k][] : memref<?xi8, #gpu.address_space<workgroup>> to !k
      %c24k = arith.constant 24576 : index
      %v = memref.view %smem[%c24k][] : memref<?xi8, #gpu.address_space<workgroup>> to !k
      %zero = arith.constant dense<0.0> : vector<64xf32>
      %s0 = fa4.wgmma %q, %k b_major(k) : !q, !k -> vector<64xf32>
      nvvm.wgmma.commit.group.sync.aligned
      %s = fa4.wgmma.wait 0, %s0 : vector<64xf32>
      %p = fa4.wgmma.quantize %s : vector<64xf32> -> vector<64xf8E4M3FN>
      %o0 = fa4.wgmma %p, %v, %zero b_major(k) : vector<64xf8E4M3FN>, !k, vector<64xf32> -> vector<64xf32>
      nvvm.wgmma.commit.group.sync.aligned
      %o, %p1 = fa4.wgmma.wait 0, %o0, %p : vector<64xf32>, vector<64xf8E4M3FN>
      %sum = vector.reduction <add>, %o : vector<64xf32> into f32
      llvm.store %sum, %out : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
