// RUN: fa4-opt %s -split-input-file | FileCheck %s
// RUN: fa4-opt %s -split-input-file -mlir-print-op-generic | fa4-opt -split-input-file | FileCheck %s

!q = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!kv = memref<2x128x64xbf16, #gpu.address_space<workgroup>>

// CHECK-LABEL: func @qk_pv
// CHECK: %[[S:.*]] = fa4.wgmma %{{.*}}, %{{.*}} b_major(k) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[S1:.*]] = fa4.wgmma.wait 0, %[[S]] : vector<64xf32>
// CHECK: %[[O:.*]] = fa4.wgmma %{{.*}}, %{{.*}}, %{{.*}} b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// CHECK: fa4.wgmma.wait 1, %[[O]], %{{.*}} : vector<64xf32>, vector<64xbf16>
// CHECK: fa4.wgmma.wait 0{{$}}
func.func @qk_pv(%q: !q, %k: !kv, %v: !kv, %o: vector<64xf32>) -> vector<64xf32> {
  %s = fa4.wgmma %q, %k b_major(k) : !q, !kv -> vector<64xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %s1 = fa4.wgmma.wait 0, %s : vector<64xf32>
  %p = arith.truncf %s1 : vector<64xf32> to vector<64xbf16>
  %o1 = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xbf16>, !kv, vector<64xf32> -> vector<64xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %o2, %p2 = fa4.wgmma.wait 1, %o1, %p : vector<64xf32>, vector<64xbf16>
  fa4.wgmma.wait 0
  return %o2 : vector<64xf32>
}

// -----

// Head dim 96: Q and K fill their second atom in part; S = Q K^T reads
// depth 96 of K, and O (N = 96) reads V's first 96 columns of two atoms.
!q = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
!kv = memref<2x128x64xbf16, #gpu.address_space<workgroup>>

// CHECK-LABEL: func @head_dim_96
// CHECK: fa4.wgmma %{{.*}}, %{{.*}} b_major(k) depth(96) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
// CHECK: fa4.wgmma %{{.*}}, %{{.*}}, %{{.*}} b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<48xf32> -> vector<48xf32>
func.func @head_dim_96(%q: !q, %k: !kv, %v: !kv, %o: vector<48xf32>) -> vector<48xf32> {
  %s = fa4.wgmma %q, %k b_major(k) depth(96) : !q, !kv -> vector<64xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %s1 = fa4.wgmma.wait 0, %s : vector<64xf32>
  %p = arith.truncf %s1 : vector<64xf32> to vector<64xbf16>
  %o1 = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xbf16>, !kv, vector<48xf32> -> vector<48xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %o2 = fa4.wgmma.wait 0, %o1 : vector<48xf32>
  return %o2 : vector<48xf32>
}

// -----

// FP8 (e4m3), head dim 64: Q and K fill half of their one 128-column atom
// (depth 64); P rounded to an e4m3 register operand; V key-major, one atom
// of 128 keys per head-dim row.
!q8 = memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>
!k8 = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
!vt8 = memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>

// CHECK-LABEL: func @e4m3
// CHECK: fa4.wgmma %{{.*}}, %{{.*}} b_major(k) depth(64) : memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> -> vector<64xf32>
// CHECK: %[[P:.*]] = fa4.wgmma.quantize %{{.*}} : vector<64xf32> -> vector<64xf8E4M3FN>
// CHECK: fa4.wgmma %[[P]], %{{.*}}, %{{.*}} b_major(k) : vector<64xf8E4M3FN>, memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<32xf32> -> vector<32xf32>
func.func @e4m3(%q: !q8, %k: !k8, %v: !vt8, %o: vector<32xf32>) -> vector<32xf32> {
  %s = fa4.wgmma %q, %k b_major(k) depth(64) : !q8, !k8 -> vector<64xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %s1 = fa4.wgmma.wait 0, %s : vector<64xf32>
  %p = fa4.wgmma.quantize %s1 : vector<64xf32> -> vector<64xf8E4M3FN>
  %o1 = fa4.wgmma %p, %v, %o b_major(k) : vector<64xf8E4M3FN>, !vt8, vector<32xf32> -> vector<32xf32>
  nvvm.wgmma.commit.group.sync.aligned
  %o2, %p2 = fa4.wgmma.wait 0, %o1, %p : vector<32xf32>, vector<64xf8E4M3FN>
  return %o2 : vector<32xf32>
}
