// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// One KV block of the sm_100a FP8 (e4m3) kernel: S = Q K^T from shared
// memory (head dim 128: one atom of 128 one-byte columns), 32 columns of P
// rounded to e4m3 and stored into Tensor Memory four to a column, then the
// split PV: P[:, 0:96] and P[:, 96:128] from TMEM against the key windows
// [0, 96) and [96, 128) of a key-major V (Dv rows of 128 keys).

// CHECK-LABEL: gpu.func @qk_p_pv
// Instruction descriptor: e4m3 x e4m3 (format 0) -> f32, M = N = 128, B
// K-major; every operand K-major: LBO 16, SBO 1024, 128-byte swizzle.
// CHECK-DAG: %[[IDESC:.*]] = llvm.mlir.constant(136314896 : i32)
// CHECK-DAG: llvm.mlir.constant(4611756662049538048 : i64)
// QK^T: K = 128 in 4 steps of 32 (32 bytes, 2 units each), as 2 groups of
// 2 inside the atom.
// CHECK: ^[[QK:.*]](%[[G:.*]]: i32, %[[A:.*]]: i64, %[[B:.*]]: i64):
// CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDESC]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f8f6f4>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-NEXT: llvm.add %[[A]], %[[TWO]] : i64
// CHECK: nvvm.tcgen05.mma {{.*}}kind = #nvvm.tcgen05_mma_kind<f8f6f4>
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: %[[ADVANCE:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-NEXT: llvm.add %[[A]], %[[ADVANCE]] : i64
// CHECK: %[[GROUPS:.*]] = llvm.mlir.constant(2 : i32)
// CHECK: llvm.cond_br %{{.*}}, ^[[QK]]
// CHECK: nvvm.tcgen05.commit
// P: 32 f32 to e4m3 in 16 pairs (to nearest, saturating), the bytes as 8
// registers into 8 TMEM columns.
// CHECK-COUNT-16: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
// CHECK: %[[BYTES:.*]] = llvm.bitcast %{{.*}} : vector<16xi16> to vector<32xi8>
// CHECK: %[[REGS:.*]] = llvm.bitcast %[[BYTES]] : vector<32xi8> to vector<8xi32>
// CHECK: nvvm.tcgen05.st %{{.*}}, %[[REGS]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// PV, first part: K = 96 from TMEM in 3 steps of 8 columns (one group
// each), V's window from its first key.
// CHECK: ^[[PV:.*]](%{{.*}}: i32, %[[PA:.*]]: !llvm.ptr<6>, %[[PB:.*]]: i64):
// CHECK: nvvm.tcgen05.mma {{.*}}kind = #nvvm.tcgen05_mma_kind<f8f6f4>{{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: llvm.mlir.constant(8 : i32)
// CHECK: llvm.mlir.constant(2 : i64)
// CHECK: %[[PVGROUPS:.*]] = llvm.mlir.constant(3 : i32)
// CHECK: llvm.cond_br %{{.*}}, ^[[PV]]
// Second part: one step (unrolled): P from column 24 (96 e4m3), V's
// window 96 bytes into the atom.
// CHECK: %[[COL:.*]] = llvm.mlir.constant(24 : i32)
// CHECK: nvvm.tcgen05.mma {{.*}}kind = #nvvm.tcgen05_mma_kind<f8f6f4>{{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: nvvm.tcgen05.commit

// PTX: tcgen05.mma.cta_group::1.kind::f8f6f4
// PTX-SAME: cvt.rn.satfinite.e4m3x2.f32
// PTX-SAME: tcgen05.st.sync.aligned.32x32b.x8.b32
// PTX-SAME: tcgen05.mma.cta_group::1.kind::f8f6f4

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!tile = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @qk_p_pv(%first: i1, %scores: vector<32xf32>) workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %true = arith.constant true
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c16k = arith.constant 16384 : index
      %k = memref.view %smem[%c16k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %c32k = arith.constant 32768 : index
      %v = memref.view %smem[%c32k][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c0], %c1 : !bars
      fa4.tmem.alloc 256 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      nvvm.tcgen05.fence <before>
      gpu.barrier
      nvvm.tcgen05.fence <after>
      %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x256xf32>
      %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
      %p = fa4.tmem.view %tmem[96] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf8E4M3FN>
      %o = fa4.tmem.view %tmem[128] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
      fa4.mma %q, %k, %s, %first b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
      fa4.mma.commit %bars[%c0] : !bars
      %p8 = arith.truncf %scores : vector<32xf32> to vector<32xf8E4M3FN>
      fa4.tmem.store %p8, %p[32] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
      nvvm.tcgen05.wait <store>
      %ptop = fa4.tmem.view %p[0] : !fa4.tmem<128x128xf8E4M3FN> -> !fa4.tmem<128x96xf8E4M3FN>
      %vtop = memref.subview %v[0, 0, 0] [1, 128, 96] [1, 1, 1] : !tile to memref<1x128x96xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>
      fa4.mma %ptop, %vtop, %o, %first b_major(k) : !fa4.tmem<128x96xf8E4M3FN>, memref<1x128x96xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
      %pbottom = fa4.tmem.view %p[24] : !fa4.tmem<128x128xf8E4M3FN> -> !fa4.tmem<128x32xf8E4M3FN>
      %vbottom = memref.subview %v[0, 0, 96] [1, 128, 32] [1, 1, 1] : !tile to memref<1x128x32xf8E4M3FN, strided<[16384, 128, 1], offset: 96>, #gpu.address_space<workgroup>>
      fa4.mma %pbottom, %vbottom, %o, %true b_major(k) : !fa4.tmem<128x32xf8E4M3FN>, memref<1x128x32xf8E4M3FN, strided<[16384, 128, 1], offset: 96>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
      fa4.mma.commit %bars[%c1] : !bars
      gpu.return
    }
  }
}
