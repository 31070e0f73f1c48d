// RUN: fa4-opt %s | FileCheck %s
// RUN: fa4-opt %s -mlir-print-op-generic | fa4-opt | FileCheck %s

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>

// CHECK-LABEL: func @channels
func.func @channels(%d: !desc, %buf: !atom, %i: index) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[KV:.*]] = fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
  %kv = fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
  // CHECK: %[[P:.*]] = fa4.channel "p" : !fa4.channel<2> producer <threads = 256> consumer <mma>
  %p = fa4.channel "p" : !fa4.channel<2> producer <threads = 256> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "load" warps [0, 1) registers 64 {
      // CHECK: fa4.channel.acquire %[[KV]][%{{.*}}] : !fa4.channel<3>
      fa4.channel.acquire %kv[%i] : !fa4.channel<3>
      // CHECK: fa4.tma.load %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}} for %[[KV]][%{{.*}}] : !nvgpu.tensormap.descriptor
      fa4.tma.load %d[%c0, %c0] into %buf for %kv[%i] : !desc, !atom, !fa4.channel<3>
      // CHECK: fa4.channel.commit %[[KV]]
      fa4.channel.commit %kv[%i] : !fa4.channel<3>
    }
    fa4.role "mma" warps [1, 2) registers 64 {
      // CHECK: fa4.channel.wait %[[P]]
      fa4.channel.wait %p[%i] : !fa4.channel<2>
      // CHECK: fa4.channel.release %[[P]]
      fa4.channel.release %p[%i] : !fa4.channel<2>
    }
  }
  return
}

// A cluster exchange and the ops that reach other CTAs.
// CHECK-LABEL: func.func @cluster
// CHECK: fa4.channel "x" : !fa4.channel<2> producer <cluster = 4> consumer <cluster = 4>
// CHECK: fa4.mbarrier.arrive_cluster %{{.*}}[%{{.*}}], 4 ctas
// CHECK: fa4.dsmem.load %{{.*}}[%{{.*}}, %{{.*}}], rank %{{.*}} : memref<2x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: fa4.dsmem.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}], rank %{{.*}} : vector<2xbf16>, memref<2x64xbf16, #gpu.address_space<workgroup>>
!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @cluster(%g: !group, %rows: memref<2x64xf32, #gpu.address_space<workgroup>>,
                   %out: memref<2x64xbf16, #gpu.address_space<workgroup>>,
                   %w: vector<2xbf16>, %i: index) {
  %x = fa4.channel "x" : !fa4.channel<2> producer <cluster = 4> consumer <cluster = 4>
  fa4.mbarrier.arrive_cluster %g[%i], 4 ctas : !group
  %v = fa4.dsmem.load %rows[%i, %i], rank %i : memref<2x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
  fa4.dsmem.store %w, %out[%i, %i], rank %i : vector<2xbf16>, memref<2x64xbf16, #gpu.address_space<workgroup>>
  return
}
