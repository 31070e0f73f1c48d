// RUN: fa4-opt %s -split-input-file --fa4-lower-warp-specialize | FileCheck %s
// RUN: fa4-opt %s -split-input-file --pass-pipeline="builtin.module(fa4-lower-warp-specialize, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" 2>&1 | FileCheck %s --check-prefix=PTX

// The FA4 budgets 200/200/64/48 on 16 warps: the default is 128, so the
// softmax warpgroups grow and the other two shrink. Each warpgroup gets one
// branch that reallocates and then dispatches its roles on the warp index;
// the kernel gets the launch bounds setmaxnreg needs and records the roles
// for its launch manifest.

// CHECK-LABEL: gpu.func @fa4_roles
// CHECK-SAME: fa4.roles = [{name = "softmax0", registers = 200 : i64, warps = [0, 4]}, {name = "softmax1", registers = 200 : i64, warps = [4, 8]}, {name = "correction", registers = 64 : i64, warps = [8, 12]}, {name = "mma", registers = 48 : i64, warps = [12, 13]}]
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK-SAME: nvvm.minctasm = 1 : i32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[WG:.*]] = arith.divui %[[WARP]], %c4
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[WG]], %c0
// CHECK: scf.if %[[IS0]] {
// CHECK-NEXT: nvvm.setmaxregister increase 200
// CHECK: scf.if
// CHECK-NEXT: fa4.named_barrier.arrive 1, 256 threads
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[WG]], %c1
// CHECK: scf.if %[[IS1]] {
// CHECK-NEXT: nvvm.setmaxregister increase 200
// CHECK: %[[IS2:.*]] = arith.cmpi eq, %[[WG]], %c2
// CHECK: scf.if %[[IS2]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 64
// CHECK: scf.if
// CHECK-NEXT: fa4.named_barrier.sync 1, 256 threads
// CHECK: %[[IS3:.*]] = arith.cmpi eq, %[[WG]], %c3
// CHECK: scf.if %[[IS3]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 48
// Role "mma": warps [12, 13), inside warpgroup 3's branch.
// CHECK: %[[GE:.*]] = arith.cmpi uge, %[[WARP]], %c12
// CHECK: %[[LT:.*]] = arith.cmpi ult, %[[WARP]], %c13
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: nvvm.elect.sync
// CHECK-NOT: setmaxregister
// CHECK-NOT: fa4.warp_specialize
// CHECK-NOT: fa4.role

// PTX: .maxntid 512, 1, 1
// PTX: .minnctapersm 1
// (The PTX is an escaped string: \09 is a tab.)
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 \09200;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 \0964;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 \0948;
// PTX-DAG: bar.sync \091, 256;
// PTX-DAG: bar.arrive 1, 256;

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @fa4_roles() kernel {
      fa4.warp_specialize warps 16 {
        fa4.role "softmax0" warps [0, 4) registers 200 {
          fa4.named_barrier.arrive 1, 256 threads
        }
        fa4.role "softmax1" warps [4, 8) registers 200 {
        }
        fa4.role "correction" warps [8, 12) registers 64 {
          fa4.named_barrier.sync 1, 256 threads
        }
        fa4.role "mma" warps [12, 13) registers 48 {
          %leader = nvvm.elect.sync -> i1
        }
      }
      gpu.return
    }
  }
}

// -----

// A role spanning two warpgroups is run by both, each reallocating; the
// warpgroups without roles and with the default budget are left alone.
// CHECK-LABEL: gpu.func @default_budget
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: nvvm.setmaxregister decrease 64
// CHECK: nvvm.elect.sync
// CHECK: nvvm.setmaxregister decrease 64
// CHECK: nvvm.elect.sync
// CHECK-NOT: nvvm.setmaxregister
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @default_budget() kernel {
      fa4.warp_specialize warps 16 {
        fa4.role "a" warps [2, 6) registers 64 {
          %leader = nvvm.elect.sync -> i1
        }
      }
      gpu.return
    }
  }
}
