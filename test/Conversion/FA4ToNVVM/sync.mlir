// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// Named barriers and the split exp2 among the upstream NVVM ops that kernels
// use for single instructions (elect, vote, the proxy fence, bulk groups),
// through to PTX. The second RUN line lowers fa4 through
// convert-gpu-to-nvvm alone (the ConvertToLLVM interface fa4 registers).

// CHECK-LABEL: gpu.func @sync_and_exp2
// CHECK: nvvm.elect.sync -> i1
// CHECK: nvvm.vote.sync any %{{.*}}, %{{.*}} -> i1
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// 16 elements, 4 emulated: 12 MUFU exponentials; 4 polynomials, each
// floored by a round-down add (no conversion) and 3 FMAs.
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.add.rm.f"
// CHECK-NOT: llvm.call_intrinsic "llvm.nvvm.floor
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.fma.rn.f"
// CHECK-COUNT-12: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.call_intrinsic "llvm.nvvm.ex2
// CHECK-NOT: fa4.

// PTX-DAG: elect.sync
// PTX-DAG: vote.sync.any.pred
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: cp.async.bulk.commit_group
// PTX-DAG: cp.async.bulk.wait_group.read
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: fma.rn.f32
// PTX-DAG: add.rm.f32
// PTX-DAG: max.f32
// PTX-NOT: __nv_
// PTX-NOT: cvt.rmi.f32.f32
// PTX-NOT: cvt.rzi.s32.f32

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @sync_and_exp2(%x: vector<16xf32>, %pred: i1, %out: memref<16xf32>, %flag: memref<2xi1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %leader = nvvm.elect.sync -> i1
      %all = arith.constant -1 : i32
      %any = nvvm.vote.sync any %all, %pred -> i1
      memref.store %leader, %flag[%c0] : memref<2xi1>
      memref.store %any, %flag[%c1] : memref<2xi1>
      fa4.named_barrier.arrive 3, 256 threads
      fa4.named_barrier.sync 3, 256 threads
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.cp.async.bulk.commit.group
      nvvm.cp.async.bulk.wait_group 0 {read}
      %e = fa4.exp2 %x emulated 4 : vector<16xf32>
      vector.store %e, %out[%c0] : memref<16xf32>, vector<16xf32>
      gpu.return
    }
  }
}
