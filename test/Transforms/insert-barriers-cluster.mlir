// RUN: fa4-opt %s --fa4-insert-barriers | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(fa4-insert-barriers, fa4-lower-warp-specialize, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" -o %t.mlir
// RUN: FileCheck %s --check-prefix=PTX < %t.mlir
// RUN: grep -o "mbarrier.arrive.release.cluster.shared::cluster.b64" %t.mlir | wc -l | FileCheck %s --check-prefix=ARRIVES
// RUN: grep -o "barrier.cluster.wait" %t.mlir | wc -l | FileCheck %s --check-prefix=SYNCS

// A cluster exchange between the store warps of 4 CTAs: each publishes a
// row of its buffer, reads its neighbour's over distributed shared memory,
// writes the sum into CTA 0's buffer and releases.

!rows = memref<2x64xf32, #gpu.address_space<workgroup>>

// CHECK-LABEL: gpu.func @exchange
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create {fa4.name = "x.full"}
// CHECK: %[[EMPTY:.*]] = nvgpu.mbarrier.create {fa4.name = "x.empty"}
// CHECK: scf.if
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %[[C4]]
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %[[C4]]
// CHECK: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %[[C4]]
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %[[C4]]
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NOT: gpu.barrier
// CHECK: fa4.warp_specialize
// CHECK: fa4.mbarrier.arrive_cluster %[[FULL]][%{{.*}}], 4 ctas
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK-NEXT: llvm.fence syncscope("cluster") acq_rel
// CHECK: fa4.dsmem.load
// CHECK: fa4.dsmem.store
// CHECK: fa4.mbarrier.arrive_cluster %[[EMPTY]][%{{.*}}], 4 ctas
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]]
// CHECK-NEXT: llvm.fence syncscope("cluster") acq_rel
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return

// In the assembly, one remote arrival per CTA of the cluster (4 for the commit, 4 for
// the release), DSMEM through mapa, two cluster barriers.
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: barrier.cluster.arrive
// PTX-DAG: mapa.shared::cluster
// PTX-DAG: fence.acq_rel.cluster
// PTX-DAG: ld.shared::cluster.v4.b32
// PTX-DAG: st.shared::cluster.v4.b32
// ARRIVES: {{^}}8{{$}}
// SYNCS: {{^}}2{{$}}

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    gpu.func @exchange() workgroup(%buffer : !rows) kernel
        attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %x = fa4.channel "x" : !fa4.channel<2> producer <cluster = 4> consumer <cluster = 4>
      fa4.warp_specialize warps 4 {
        fa4.role "store" warps [0, 4) registers 128 {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c2 = arith.constant 2 : index
          %c4 = arith.constant 4 : index
          %rank = gpu.cluster_block_id x
          %next = arith.remui %rank, %c4 : index
          fa4.channel.commit %x[%c0] : !fa4.channel<2>
          fa4.channel.wait %x[%c0] : !fa4.channel<2>
          %v = fa4.dsmem.load %buffer[%c0, %c4], rank %next : !rows, vector<4xf32>
          fa4.dsmem.store %v, %buffer[%c1, %c4], rank %c0 : vector<4xf32>, !rows
          fa4.channel.release %x[%c0] : !fa4.channel<2>
          fa4.channel.acquire %x[%c2] : !fa4.channel<2>
        }
      }
      gpu.return
    }
  }
}
