// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s --implicit-check-not='{{nvvm.tcgen05.mma [%]}}'
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// The weight-stationary MMAs of a shared-key Q stage: S = Q K^T for 32
// query rows against 128 keys, then O += P V with P (32 rows x 128 keys)
// from shared memory, both folded over the 128 lanes (32 columns each).
// No non-ws tcgen05.mma anywhere (--implicit-check-not).

// CHECK-LABEL: gpu.func @shared_key32
// Instruction descriptor: bf16 x bf16 -> f32, M = 32 (2 << 24), N = 128
// (16 << 17), K-major B: 33554432 + 2097152 + 1168.
// CHECK-DAG: llvm.mlir.constant(35652752 : i32)
// CHECK: nvvm.tcgen05.mma.ws %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: nvvm.tcgen05.commit
// PV: the same with an MN-major V (bit 16).
// CHECK-DAG: llvm.mlir.constant(35718288 : i32)
// CHECK: nvvm.tcgen05.mma.ws %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: nvvm.tcgen05.commit

// M = 64 (4 << 24), N = 128 (64 columns): 67108864 + 2097152 + 1168; the
// 8 K steps as a loop over the two atoms, 4 steps each.
// CHECK-LABEL: gpu.func @shared_key64
// CHECK-DAG: llvm.mlir.constant(69207184 : i32)
// CHECK-COUNT-4: nvvm.tcgen05.mma.ws
// CHECK-NOT: nvvm.tcgen05.mma.ws

// PTX: tcgen05.mma.ws.cta_group::1.kind::f16
// PTX-NOT: tcgen05.mma.cta_group

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!rows32 = memref<2x32x64xbf16, #gpu.address_space<workgroup>>
!rows64 = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @shared_key32(%first: i1) workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !rows32
      %c8k = arith.constant 8192 : index
      %p = memref.view %smem[%c8k][] : memref<?xi8, #gpu.address_space<workgroup>> to !rows32
      %c32k = arith.constant 32768 : index
      %k = memref.view %smem[%c32k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c64k = arith.constant 65536 : index
      %v = memref.view %smem[%c64k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c0], %c1 : !bars
      fa4.tmem.alloc 64 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      nvvm.tcgen05.fence <before>
      gpu.barrier
      nvvm.tcgen05.fence <after>
      %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x64xf32>
      %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xf32>
      %o = fa4.tmem.view %tmem[32] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xf32>
      fa4.mma %q, %k, %s, %first b_major(k) ws(32) : !rows32, !tile, !fa4.tmem<128x32xf32>
      fa4.mma.commit %bars[%c0] : !bars
      fa4.mma %p, %v, %o, %first b_major(mn) ws(32) : !rows32, !tile, !fa4.tmem<128x32xf32>
      fa4.mma.commit %bars[%c1] : !bars
      gpu.return
    }

    gpu.func @shared_key64(%first: i1, %q: !rows64, %k: !tile, %s: !fa4.tmem<128x64xf32>) kernel {
      fa4.mma %q, %k, %s, %first b_major(k) ws(64) : !rows64, !tile, !fa4.tmem<128x64xf32>
      gpu.return
    }
  }
}
