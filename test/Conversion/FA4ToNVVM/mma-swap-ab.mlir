// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// The decode family's swap-AB MMAs: S^T = K Q^T for 128 keys against 16
// query rows (K as A, Q as B, both K-major), then O^T += V^T P^T with V
// read MN-major as A (transpose-A, bit 15 of the instruction descriptor)
// and P^T (16 rows x 128 keys) K-major as B.

// CHECK-LABEL: gpu.func @swap_ab
// S^T: bf16 x bf16 -> f32 (1168), N = 16 (2 << 17), M = 128 (8 << 24).
// CHECK-DAG: llvm.mlir.constant(134481040 : i32)
// O^T: the same with A transposed (1 << 15).
// CHECK-DAG: llvm.mlir.constant(134513808 : i32)
// A's descriptor fields: K-major K (leading byte offset unused, 16 bytes),
// MN-major V (its atoms 16384 bytes apart); both 1024-byte 8-row groups,
// version bit 46, 128-byte swizzle.
// CHECK-DAG: llvm.mlir.constant(4611756662049538048 : i64)
// CHECK-DAG: llvm.mlir.constant(4611756662116581376 : i64)
// CHECK-COUNT-2: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK: nvvm.tcgen05.commit

// Dv 256: the second O^T tile reads V's atoms 2 and 3 (32768 bytes in):
// still one atom stride (16384) as the leading byte offset.
// CHECK-LABEL: gpu.func @second_tile
// CHECK-DAG: llvm.mlir.constant(134513808 : i32)
// CHECK-DAG: llvm.mlir.constant(4611756662116581376 : i64)

// PTX: tcgen05.mma.cta_group::1.kind::f16
// PTX-NOT: tcgen05.mma.ws

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!rows16 = memref<2x16x64xbf16, #gpu.address_space<workgroup>>
!wide = memref<4x128x64xbf16, #gpu.address_space<workgroup>>
!half = memref<2x128x64xbf16, strided<[8192, 64, 1], offset: 16384>, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @swap_ab(%first: i1) workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !rows16
      %c4k = arith.constant 4096 : index
      %p = memref.view %smem[%c4k][] : memref<?xi8, #gpu.address_space<workgroup>> to !rows16
      %c32k = arith.constant 32768 : index
      %k = memref.view %smem[%c32k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c64k = arith.constant 65536 : index
      %v = memref.view %smem[%c64k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c0], %c1 : !bars
      fa4.tmem.alloc 32 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      nvvm.tcgen05.fence <before>
      gpu.barrier
      nvvm.tcgen05.fence <after>
      %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x32xf32>
      %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x32xf32> -> !fa4.tmem<128x16xf32>
      %o = fa4.tmem.view %tmem[16] : !fa4.tmem<128x32xf32> -> !fa4.tmem<128x16xf32>
      fa4.mma %k, %q, %s, %first b_major(k) : !tile, !rows16, !fa4.tmem<128x16xf32>
      fa4.mma.commit %bars[%c0] : !bars
      fa4.mma %v, %p, %o, %first a_major(mn) b_major(k) : !tile, !rows16, !fa4.tmem<128x16xf32>
      fa4.mma.commit %bars[%c1] : !bars
      gpu.return
    }

    gpu.func @second_tile(%first: i1, %v: !wide, %p: !rows16, %o: !fa4.tmem<128x16xf32>) kernel {
      %half = memref.subview %v[2, 0, 0] [2, 128, 64] [1, 1, 1] : !wide to !half
      fa4.mma %half, %p, %o, %first a_major(mn) b_major(k) : !half, !rows16, !fa4.tmem<128x16xf32>
      gpu.return
    }
  }
}
