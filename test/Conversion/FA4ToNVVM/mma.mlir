// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// The MMA warp's work for one KV block: S = Q K^T from shared memory, then
// the first PV part, O += P[:, 0:96] V[0:96, :] with P read from TMEM.

// CHECK-LABEL: gpu.func @qk_pv
// Instruction descriptor: bf16 x bf16 -> f32, M = 128, N = 128, both
// K-major. Shared-memory descriptor: LBO 16, SBO 1024, version bit 46,
// 128-byte swizzle.
// CHECK-DAG: llvm.mlir.constant(136316048 : i32)
// QK^T in a function body: the 8 K steps of 16 as a loop over the two
// 128-byte swizzle atoms, 4 steps each, so that only the two operand
// descriptors stay live; each step adds 32 bytes (2 units of 16) to both,
// each atom the atom stride (128 rows x 128 B = 1024 units). LLVM must not
// unroll the loop.
// CHECK: llvm.mlir.constant(4611756662049538048 : i64)
// CHECK: llvm.br ^[[QK:.*]](%{{.*}}, %{{.*}}, %{{.*}} : i32, i64, i64)
// CHECK: ^[[QK]](%[[GROUP:.*]]: i32, %[[A:.*]]: i64, %[[B:.*]]: i64):
// CHECK: %[[LATER:.*]] = llvm.icmp "ne" %[[GROUP]]
// CHECK: %[[ACC:.*]] = llvm.or %arg0, %[[LATER]]
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-NEXT: %[[A2:.*]] = llvm.add %[[A]], %[[TWO]] : i64
// CHECK: %[[B2:.*]] = llvm.add %[[B]], %{{.*}} : i64
// CHECK-NEXT: nvvm.tcgen05.mma %{{.*}}, %[[A2]], %[[B2]], %{{.*}}, %[[TRUE:.*]] {
// CHECK: llvm.mlir.constant(4 : i64)
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TRUE]] {
// CHECK: llvm.mlir.constant(6 : i64)
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TRUE]] {
// CHECK: %[[NEXT:.*]] = llvm.add %[[GROUP]]
// CHECK: %[[STRIDE:.*]] = llvm.mlir.constant(1024 : i64)
// CHECK-NEXT: %[[NEXTA:.*]] = llvm.add %[[A]], %[[STRIDE]] : i64
// CHECK: %[[NEXTB:.*]] = llvm.add %[[B]], %{{.*}} : i64
// CHECK: %[[GROUPS:.*]] = llvm.mlir.constant(2 : i32)
// CHECK: %[[MORE:.*]] = llvm.icmp "ult" %[[NEXT]], %[[GROUPS]]
// CHECK: llvm.cond_br %[[MORE]], ^[[QK]](%[[NEXT]], %[[NEXTA]], %[[NEXTB]] : i32, i64, i64), ^{{.*}} {loop_annotation = #[[NOUNROLL:.*]]}
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// PV: B (V) is MN-major (bit 16 of the instruction descriptor) and its
// atoms along N are 16384 bytes apart (128 keys x 128 B: the LBO); A comes
// from TMEM; K = 96 in 6 steps: 2 groups of 3, each step 8 TMEM columns
// and 16 rows of V (2048 bytes, 128 units) further.
// CHECK-DAG: llvm.mlir.constant(136381584 : i32)
// CHECK-DAG: llvm.mlir.constant(4611756662116581376 : i64)
// CHECK: llvm.br ^[[PV:.*]](%{{.*}}, %{{.*}}, %{{.*}} : i32, !llvm.ptr<6>, i64)
// CHECK: ^[[PV]](%{{.*}}: i32, %{{.*}}: !llvm.ptr<6>, %{{.*}}: i64):
// CHECK: nvvm.tcgen05.mma {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: llvm.mlir.constant(8 : i32)
// CHECK: llvm.mlir.constant(128 : i64)
// CHECK: nvvm.tcgen05.mma {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: llvm.mlir.constant(16 : i32)
// CHECK: llvm.mlir.constant(256 : i64)
// CHECK: nvvm.tcgen05.mma {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: llvm.mlir.constant(24 : i32)
// CHECK: llvm.mlir.constant(384 : i64)
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: llvm.cond_br {{.*}}, ^[[PV]]({{.*}}), ^{{.*}} {loop_annotation = #[[NOUNROLL]]}
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>

// Head dim 96 (depth 96 over two atoms, the second half filled): 6 steps
// as 3 groups of 2 that do not straddle an atom. A group advances both
// operands by 64 bytes (4 units) within the atom; after the atom's second
// group (the next group even) to the next atom: 1024 - 4 = 1020 units.
// CHECK-LABEL: gpu.func @qk_depth96
// CHECK: ^[[D96:.*]](%[[G:.*]]: i32, %[[DA:.*]]: i64, %[[DB:.*]]: i64):
// CHECK-COUNT-2: nvvm.tcgen05.mma
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: %[[DNEXT:.*]] = llvm.add %[[G]], %{{.*}} : i32
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[ODD:.*]] = llvm.and %[[DNEXT]], %[[ONE]] : i32
// CHECK: %[[END:.*]] = llvm.icmp "eq" %[[ODD]], %{{.*}} : i32
// CHECK-DAG: %[[WITHIN:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-DAG: %[[ACROSS:.*]] = llvm.mlir.constant(1020 : i64)
// CHECK: %[[STEPA:.*]] = llvm.select %[[END]], %[[ACROSS]], %[[WITHIN]] : i1, i64
// CHECK: llvm.add %[[DA]], %[[STEPA]] : i64
// CHECK: llvm.select %[[END]], %{{.*}}, %{{.*}} : i1, i64
// CHECK: %[[DGROUPS:.*]] = llvm.mlir.constant(3 : i32)
// CHECK: llvm.icmp "ult" %[[DNEXT]], %[[DGROUPS]]
// CHECK: llvm.cond_br {{.*}}, ^[[D96]]({{.*}}), ^{{.*}} {loop_annotation = #[[NOUNROLL]]}

// Inside a structured region (before scf-to-cf) the steps are unrolled.
// CHECK-LABEL: gpu.func @unrolled
// CHECK-COUNT-8: nvvm.tcgen05.mma {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK-NOT: fa4.

// PTX: tcgen05.fence::before_thread_sync
// PTX-SAME: tcgen05.fence::after_thread_sync
// PTX-SAME: tcgen05.mma.cta_group::1.kind::f16
// PTX-SAME: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX-SAME: tcgen05.mma.cta_group::1.kind::f16
// PTX-SAME: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @qk_pv(%first: i1) workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1i = arith.constant 1 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c32k = arith.constant 32768 : index
      %k = memref.view %smem[%c32k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c64k = arith.constant 65536 : index
      %v = memref.view %smem[%c64k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c0], %c1i : !bars
      fa4.tmem.alloc 256 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      nvvm.tcgen05.fence <before>
      gpu.barrier
      nvvm.tcgen05.fence <after>
      %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x256xf32>
      %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
      %p = fa4.tmem.view %tmem[64] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xbf16>
      %o = fa4.tmem.view %tmem[128] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
      fa4.mma %q, %k, %s, %first b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
      fa4.mma.commit %bars[%c0] : !bars
      %vlo = memref.subview %v[0, 0, 0] [2, 96, 64] [1, 1, 1] : !tile to memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>
      %p96 = fa4.tmem.view %p[0] : !fa4.tmem<128x128xbf16> -> !fa4.tmem<128x96xbf16>
      fa4.mma %p96, %vlo, %o, %first b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
      fa4.mma.commit %bars[%c1] : !bars
      gpu.return
    }

    gpu.func @qk_depth96(%first: i1, %q: !tile, %k: !tile, %s: !fa4.tmem<128x128xf32>) kernel {
      fa4.mma %q, %k, %s, %first b_major(k) depth(96) : !tile, !tile, !fa4.tmem<128x128xf32>
      gpu.return
    }

    gpu.func @unrolled(%first: i1, %q: !tile, %k: !tile, %s: !fa4.tmem<128x128xf32>) kernel {
      scf.if %first {
        fa4.mma %q, %k, %s, %first b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
      }
      gpu.return
    }
  }
}
