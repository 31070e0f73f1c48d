// RUN: fa4-opt %s | FileCheck %s
// RUN: fa4-opt %s -mlir-print-op-generic | fa4-opt | FileCheck %s

// The FA4 role layout: two softmax warpgroups, the correction warpgroup and
// the load/MMA/store warps of the fourth warpgroup, plus the thread-level
// synchronization ops the roles use.
// CHECK-LABEL: func @roles
func.func @roles(%x: vector<32xf32>, %p: i1) {
  // CHECK: fa4.warp_specialize warps 16 {
  fa4.warp_specialize warps 16 {
    // CHECK: fa4.role "softmax0" warps [0, 4) registers 200 {
    fa4.role "softmax0" warps [0, 4) registers 200 {
      // CHECK: fa4.exp2 %{{.*}} emulated 3 : vector<32xf32>
      %e = fa4.exp2 %x emulated 3 : vector<32xf32>
      // CHECK: nvvm.vote.sync any %{{.*}}, %{{.*}} -> i1
      %all = arith.constant -1 : i32
      %any = nvvm.vote.sync any %all, %p -> i1
      // CHECK: fa4.named_barrier.arrive 2, 256 threads
      fa4.named_barrier.arrive 2, 256 threads
    }
    fa4.role "softmax1" warps [4, 8) registers 200 {
    }
    // CHECK: fa4.role "correction" warps [8, 12) registers 64 {
    fa4.role "correction" warps [8, 12) registers 64 {
      // CHECK: fa4.named_barrier.sync 2, 256 threads
      fa4.named_barrier.sync 2, 256 threads
      // CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    }
    // CHECK: fa4.role "mma" warps [12, 13) registers 48 {
    fa4.role "mma" warps [12, 13) registers 48 {
      // CHECK: nvvm.elect.sync -> i1
      %leader = nvvm.elect.sync -> i1
    }
    // CHECK: fa4.role "store" warps [14, 15) registers 48 {
    fa4.role "store" warps [14, 15) registers 48 {
      // CHECK: nvvm.cp.async.bulk.commit.group
      nvvm.cp.async.bulk.commit.group
      // CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
      nvvm.cp.async.bulk.wait_group 0 {read}
      // CHECK: nvvm.cp.async.bulk.wait_group 1{{$}}
      nvvm.cp.async.bulk.wait_group 1
    }
  }
  return
}
