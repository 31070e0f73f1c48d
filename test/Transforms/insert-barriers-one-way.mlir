// RUN: fa4-opt %s --fa4-insert-barriers | FileCheck %s

// A channel whose slots are never acquired or released (the consumer's own
// later hand-offs order the reuse) gets only its full mbarrier group, and
// the kernel records its mbarrier count: 1 here, and no named barriers.

// CHECK-LABEL: gpu.func @ping
// CHECK-SAME: fa4.mbarriers = 1 : i64
// CHECK-SAME: fa4.named_barriers = 0 : i64
// CHECK: nvgpu.mbarrier.create {fa4.name = "ping.full"}
// CHECK-NOT: nvgpu.mbarrier.create
// CHECK: nvgpu.mbarrier.init
// CHECK-NOT: nvgpu.mbarrier.init
// CHECK: fa4.role "producer"
// CHECK: nvgpu.mbarrier.arrive
// CHECK: fa4.role "consumer"
// CHECK: nvgpu.mbarrier.try_wait.parity

module attributes {gpu.container_module} {
  func.func @host(%x: memref<1x128x1x64xbf16>) {
    fa4.launch @kernels::@ping(%x, %x, %x, %x) {manifest = {kernel = "ping"}} : memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>, memref<1x128x1x64xbf16>
    return
  }
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @ping(%blocks: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %ping = fa4.channel "ping" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      fa4.warp_specialize warps 8 {
        fa4.role "producer" warps [0, 4) registers 128 {
          scf.for %i = %c0 to %blocks step %c1 {
            fa4.channel.commit %ping[%i] : !fa4.channel<1>
          }
        }
        fa4.role "consumer" warps [4, 8) registers 128 {
          scf.for %i = %c0 to %blocks step %c1 {
            fa4.channel.wait %ping[%i] : !fa4.channel<1>
          }
        }
      }
      gpu.return
    }
  }
}
