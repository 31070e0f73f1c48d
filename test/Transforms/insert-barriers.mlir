// RUN: fa4-opt %s --fa4-insert-barriers | FileCheck %s
// RUN: fa4-opt %s --fa4-insert-barriers | FileCheck %s --check-prefix=NAMED
// RUN: fa4-opt %s --pass-pipeline="builtin.module(fa4-insert-barriers, fa4-lower-warp-specialize, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(fa4-insert-barriers, fa4-lower-warp-specialize, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// A load -> MMA -> softmax pipeline over KV blocks, written with channels:
// K tiles arrive by TMA into a 3-stage ring, the MMA warp computes S into
// one of 2 TMEM stages, a softmax warpgroup reads S and hands back P.

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>

// Barriers and their arrival counts, initialized by thread 0 and made
// visible by one CTA barrier.
// CHECK-LABEL: gpu.func @pipeline
// CHECK: %[[KV_FULL:.*]] = nvgpu.mbarrier.create {fa4.name = "kv.full"} -> {{.*}}num_barriers = 3>
// CHECK: %[[KV_EMPTY:.*]] = nvgpu.mbarrier.create {fa4.name = "kv.empty"} -> {{.*}}num_barriers = 3>
// CHECK: scf.if
// CHECK-COUNT-6: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %c1
// CHECK: %[[S_FULL:.*]] = nvgpu.mbarrier.create {fa4.name = "s.full"} -> {{.*}}num_barriers = 2>
// CHECK: %[[S_EMPTY:.*]] = nvgpu.mbarrier.create {fa4.name = "s.empty"} -> {{.*}}num_barriers = 2>
// CHECK: scf.if
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: nvgpu.mbarrier.init %[[S_FULL]][%{{.*}}], %c1
// CHECK: nvgpu.mbarrier.init %[[S_EMPTY]][%{{.*}}], %[[C128]]
// CHECK: nvgpu.mbarrier.init %[[S_FULL]][%{{.*}}], %c1
// CHECK: nvgpu.mbarrier.init %[[S_EMPTY]][%{{.*}}], %[[C128]]
// CHECK: gpu.barrier
// CHECK: fa4.warp_specialize

// Softmax warpgroup: waits for S, fences before arriving on S empty.
// CHECK: fa4.role "softmax"
// CHECK: nvgpu.mbarrier.try_wait.parity %[[S_FULL]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: fa4.tmem.load
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[S_EMPTY]]

// MMA warp: waits with tcgen05 fences after, signals with tcgen05.commit.
// CHECK: fa4.role "mma"
// CHECK: nvgpu.mbarrier.try_wait.parity %[[KV_FULL]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvgpu.mbarrier.try_wait.parity %[[S_EMPTY]]
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: fa4.mma
// CHECK: fa4.mma.commit %[[S_FULL]]
// CHECK: fa4.mma.commit %[[KV_EMPTY]]

// Load warp: acquire = wait on empty for the previous round's parity (no
// tcgen05 fence: TMA is not tcgen05 work), then 2 x 16 KB announced before
// the two TMA loads.
// CHECK: fa4.role "load"
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c3
// CHECK: arith.divui
// CHECK: %[[PAR:.*]] = arith.trunci
// CHECK: %[[PREV:.*]] = arith.xori %[[PAR]], %true
// CHECK: nvgpu.mbarrier.try_wait.parity %[[KV_EMPTY]][%[[SLOT]]], %[[PREV]]
// CHECK-NOT: nvvm.tcgen05.fence
// CHECK: %[[BYTES:.*]] = arith.constant 32768 : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[KV_FULL]][%{{.*}}], %[[BYTES]]
// CHECK: nvgpu.tma.async.load {{.*}}, %[[KV_FULL]][%{{.*}}] to
// CHECK: nvgpu.tma.async.load {{.*}}, %[[KV_FULL]][%{{.*}}] to
// CHECK-NOT: fa4.tma.load
// CHECK-NOT: fa4.channel

// A named-barrier channel: only its empty mbarrier is created; the producer
// arrives on barrier 3, the consumer syncs on it, both counting 128 + 32.
// NAMED-LABEL: gpu.func @pipeline
// NAMED-COUNT-5: nvgpu.mbarrier.create
// NAMED-NOT: nvgpu.mbarrier.create
// NAMED: fa4.role "softmax"
// NAMED: nvgpu.mbarrier.arrive
// NAMED: nvgpu.mbarrier.try_wait.parity
// NAMED: nvvm.tcgen05.fence <before>
// NAMED-NEXT: fa4.named_barrier.arrive 3, 160 threads
// NAMED: fa4.role "reader"
// NAMED: fa4.named_barrier.sync 3, 160 threads
// NAMED-NEXT: nvvm.tcgen05.fence <after>
// NAMED: nvgpu.mbarrier.arrive

// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: tcgen05.mma.cta_group::1.kind::f16
// PTX-DAG: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX-DAG: tcgen05.ld.sync.aligned.32x32b.x32.b32
// PTX-DAG: tcgen05.fence::before_thread_sync
// PTX-DAG: mbarrier.arrive.shared.b64

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @pipeline(%k_desc: !desc, %blocks: index, %out: memref<32xf32>)
        workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
      %kv = fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
      %s_ready = fa4.channel "s" : !fa4.channel<2> producer <mma> consumer <threads = 128>
      %row_max = fa4.channel "max" : !fa4.channel<1> producer <threads = 128> consumer <threads = 32> {named_barrier = 3 : i32}
      fa4.warp_specialize warps 8 {
        fa4.role "softmax" warps [0, 4) registers 192 {
          %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x256xf32>
          scf.for %i = %c0 to %blocks step %c1 {
            fa4.channel.wait %s_ready[%i] : !fa4.channel<2>
            %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
            %row = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            nvvm.tcgen05.wait <load>
            vector.store %row, %out[%c0] : memref<32xf32>, vector<32xf32>
            fa4.channel.release %s_ready[%i] : !fa4.channel<2>
            fa4.channel.acquire %row_max[%i] : !fa4.channel<1>
            fa4.channel.commit %row_max[%i] : !fa4.channel<1>
          }
        }
        fa4.role "mma" warps [4, 5) registers 48 {
          %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x256xf32>
          %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
            scf.for %i = %c0 to %blocks step %c1 {
              fa4.channel.wait %kv[%i] : !fa4.channel<3>
              fa4.channel.acquire %s_ready[%i] : !fa4.channel<2>
              %stage = arith.remui %i, %c1 : index
              %k = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !tile
              %false = arith.constant false
              fa4.mma %q, %k, %s, %false b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
              fa4.channel.commit %s_ready[%i] : !fa4.channel<2>
              fa4.channel.release %kv[%i] : !fa4.channel<3>
            }
          }
        }
        fa4.role "reader" warps [6, 7) registers 48 {
          scf.for %i = %c0 to %blocks step %c1 {
            fa4.channel.wait %row_max[%i] : !fa4.channel<1>
            fa4.channel.release %row_max[%i] : !fa4.channel<1>
          }
        }
        fa4.role "load" warps [5, 6) registers 48 {
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
            scf.for %i = %c0 to %blocks step %c1 {
              fa4.channel.acquire %kv[%i] : !fa4.channel<3>
              %row = arith.muli %i, %c128 : index
              %k0 = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !atom
              %k1 = memref.view %smem[%c64][] : memref<?xi8, #gpu.address_space<workgroup>> to !atom
              fa4.tma.load %k_desc[%c0, %row] into %k0 for %kv[%i] : !desc, !atom, !fa4.channel<3>
              fa4.tma.load %k_desc[%c64, %row] into %k1 for %kv[%i] : !desc, !atom, !fa4.channel<3>
              fa4.channel.commit %kv[%i] : !fa4.channel<3>
            }
          }
        }
      }
      gpu.return
    }
  }
}
