// RUN: fa4-opt %s -split-input-file -cse -canonicalize | FileCheck %s

// Kernel ops declare their memory effects (Tensor Memory for TMEM, shared
// memory for the MMA's tile operands), so upstream CSE and canonicalization
// may clean up around them and never move a read across a write.

// Two TMEM loads with no write between them read the same values.
// CHECK-LABEL: func.func @loads_merge
// CHECK-COUNT-1: fa4.tmem.load
// CHECK-NOT: fa4.tmem.load
func.func @loads_merge(%s: !fa4.tmem<128x128xf32>) -> (vector<32xf32>, vector<32xf32>) {
  %a = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  %b = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  nvvm.tcgen05.wait <load>
  return %a, %b : vector<32xf32>, vector<32xf32>
}

// -----

// A TMEM store between them writes Tensor Memory: both loads stay.
// CHECK-LABEL: func.func @store_between
// CHECK: fa4.tmem.load
// CHECK-NEXT: fa4.tmem.store
// CHECK-NEXT: fa4.tmem.load
func.func @store_between(%s: !fa4.tmem<128x128xf32>, %v: vector<32xf32>) -> (vector<32xf32>, vector<32xf32>) {
  %a = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  fa4.tmem.store %v, %s[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
  %b = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  nvvm.tcgen05.wait <load>
  return %a, %b : vector<32xf32>, vector<32xf32>
}

// -----

// An MMA writes its TMEM accumulator: a load after it is a new value.
// CHECK-LABEL: func.func @mma_between
// CHECK: fa4.tmem.load
// CHECK-NEXT: fa4.mma
// CHECK-NEXT: fa4.tmem.load
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @mma_between(%q: !tile, %k: !tile, %s: !fa4.tmem<128x128xf32>, %acc: i1) -> (vector<32xf32>, vector<32xf32>) {
  %a = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  fa4.mma %q, %k, %s, %acc b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
  %b = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  nvvm.tcgen05.wait <load>
  return %a, %b : vector<32xf32>, vector<32xf32>
}

// -----

// An unused buffer only allocates, so it is dead; allocation, deallocation
// and stores are kept.
// CHECK-LABEL: func.func @dead_buffer
// CHECK-NOT: fa4.tmem.buffer
// CHECK: fa4.tmem.alloc 512 columns
// CHECK: fa4.tmem.store
// CHECK: fa4.tmem.dealloc
func.func @dead_buffer(%slot: memref<1xi32, #gpu.address_space<workgroup>>, %v: vector<32xf32>) {
  %unused = fa4.tmem.buffer "s0" : !fa4.tmem<128x128xf32>
  fa4.tmem.alloc 512 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
  %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
  fa4.tmem.store %v, %tmem[0] : vector<32xf32>, !fa4.tmem<128x512xf32>
  nvvm.tcgen05.wait <store>
  fa4.tmem.dealloc %tmem : !fa4.tmem<128x512xf32>
  return
}
