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
      // CHECK: fa4.warp_any %{{.*}}
      %any = fa4.warp_any %p
      // CHECK: fa4.named_barrier.arrive 2, 256 threads
      fa4.named_barrier.arrive 2, 256 threads
    }
    fa4.role "softmax1" warps [4, 8) registers 200 {
    }
    // CHECK: fa4.role "correction" warps [8, 12) registers 64 {
    fa4.role "correction" warps [8, 12) registers 64 {
      // CHECK: fa4.named_barrier.sync 2, 256 threads
      fa4.named_barrier.sync 2, 256 threads
      // CHECK: fa4.fence_proxy_async
      fa4.fence_proxy_async
    }
    // CHECK: fa4.role "mma" warps [12, 13) registers 48 {
    fa4.role "mma" warps [12, 13) registers 48 {
      // CHECK: fa4.elect
      %leader = fa4.elect
    }
    // CHECK: fa4.role "store" warps [14, 15) registers 48 {
    fa4.role "store" warps [14, 15) registers 48 {
      // CHECK: fa4.tma.store_commit
      fa4.tma.store_commit
      // CHECK: fa4.tma.store_wait 0 read
      fa4.tma.store_wait 0 read
      // CHECK: fa4.tma.store_wait 1{{$}}
      fa4.tma.store_wait 1
    }
  }
  return
}
