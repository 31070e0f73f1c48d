// RUN: fa4-opt %s | FileCheck %s
// RUN: fa4-opt %s -mlir-print-op-generic | fa4-opt | FileCheck %s

// The Tensor Memory protocol of one softmax warpgroup: S at columns
// [0, 128), P as a bf16 view over its upper half, O at [256, 384).
// CHECK-LABEL: func @tmem_roundtrip
func.func @tmem_roundtrip(%slot: memref<1xi32, #gpu.address_space<workgroup>>) {
  // CHECK: fa4.tmem.alloc 512 columns into %{{.*}} : memref<1xi32, #gpu.address_space<workgroup>>
  fa4.tmem.alloc 512 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
  // CHECK: %[[T:.*]] = fa4.tmem.base %{{.*}} -> !fa4.tmem<128x512xf32>
  %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
  // CHECK: %[[S:.*]] = fa4.tmem.view %[[T]][0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  // CHECK: %[[P:.*]] = fa4.tmem.view %[[T]][64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
  %p = fa4.tmem.view %tmem[64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
  // CHECK: fa4.tmem.load %[[S]][32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  %row = fa4.tmem.load %s[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  // CHECK: nvvm.tcgen05.wait <load>
  nvvm.tcgen05.wait <load>
  %packed = arith.truncf %row : vector<32xf32> to vector<32xbf16>
  // CHECK: fa4.tmem.store %{{.*}}, %[[P]][96] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
  fa4.tmem.store %packed, %p[96] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
  // CHECK: nvvm.tcgen05.wait <store>
  nvvm.tcgen05.wait <store>
  // CHECK: fa4.tmem.dealloc %[[T]] : !fa4.tmem<128x512xf32>
  fa4.tmem.dealloc %tmem : !fa4.tmem<128x512xf32>
  return
}

// A buffer not yet placed, used like any TMEM region.
// CHECK-LABEL: func.func @buffer
func.func @buffer() {
  // CHECK: %[[B:.*]] = fa4.tmem.buffer "s0" : !fa4.tmem<128x128xf32>
  %s = fa4.tmem.buffer "s0" : !fa4.tmem<128x128xf32>
  // CHECK: fa4.tmem.load %[[B]][0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  %row = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  nvvm.tcgen05.wait <load>
  return
}

// The weight-stationary MMA: 32 rows against 128 keys, folded into 32
// columns of every lane.
// CHECK-LABEL: func.func @weight_stationary
func.func @weight_stationary(%q: memref<2x32x64xbf16, #gpu.address_space<workgroup>>,
                             %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
                             %acc: i1) {
  %s = fa4.tmem.buffer "s0" : !fa4.tmem<128x32xf32>
  // CHECK: fa4.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} b_major(k) ws(32) : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x32xf32>
  fa4.mma %q, %k, %s, %acc b_major(k) ws(32) : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x32xf32>
  return
}
