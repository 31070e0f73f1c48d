// RUN: fa4-opt %s | FileCheck %s
// RUN: fa4-opt %s -mlir-print-op-generic | fa4-opt | FileCheck %s

// The tile ops of level 3 round-trip through both printers.
// CHECK-LABEL: func.func @tiles
func.func @tiles(%q: memref<?x?x8x64xf16>, %k: memref<?x?x2x64xf16>,
                 %o: memref<?x?x8x64xf16>, %lse: memref<?x8x?xf32>,
                 %sinks: memref<8xf32>, %t: index, %n: index, %b: index, %sq: index, %skv: index) {
  // CHECK: %[[B:.*]], %[[H:.*]], %[[P:.*]] = fa4.tile.coords %{{.*}} of (%{{.*}}, %{{.*}}) scheduler lpt head_blocks 2 heads 4 positions 64
  %bi, %h, %pos = fa4.tile.coords %t of (%n, %b) scheduler lpt head_blocks 2 heads 4 positions 64
  // CHECK: %[[Q:.*]] = fa4.tile.load %{{.*}}[%[[B]], %[[P]], %[[H]]] heads 4 : memref<?x?x8x64xf16> -> tensor<128x64xf16>
  %qt = fa4.tile.load %q[%bi, %pos, %h] heads 4 : memref<?x?x8x64xf16> -> tensor<128x64xf16>
  %kt = fa4.tile.load %k[%bi, %pos, %h] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
  // CHECK: %[[S:.*]] = fa4.tile.matmul %[[Q]], %{{.*}} transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
  %s = fa4.tile.matmul %qt, %kt transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
  // CHECK: %[[M:.*]] = fa4.tile.mask %[[S]] rows %[[P]] keys %{{.*}} lengths (%{{.*}}, %{{.*}}) heads 4 causal : tensor<128x128xf32>
  %m = fa4.tile.mask %s rows %pos keys %n lengths (%sq, %skv) heads 4 causal : tensor<128x128xf32>
  // CHECK: %[[CAP:.*]] = fa4.tile.softcap %[[S]] cap 5.660000e+02 : tensor<128x128xf32>
  %cap = fa4.tile.softcap %s cap 566.0 : tensor<128x128xf32>
  // The default polynomial share (0) is not printed; another one is.
  // CHECK: fa4.tile.softcap %[[S]] cap 5.660000e+02 : tensor<128x128xf32>
  %cap0 = fa4.tile.softcap %s cap 566.0 polynomial 0 : tensor<128x128xf32>
  // CHECK: fa4.tile.softcap %[[S]] cap 5.660000e+02 polynomial 8 : tensor<128x128xf32>
  %cap8 = fa4.tile.softcap %s cap 566.0 polynomial 8 : tensor<128x128xf32>
  // Likewise the ceiling (0: never).
  // CHECK: fa4.tile.softcap %[[S]] cap 5.660000e+02 ceiling 48 : tensor<128x128xf32>
  %ceil = fa4.tile.softcap %s cap 566.0 ceiling 48 : tensor<128x128xf32>
  // CHECK: fa4.tile.softcap %[[S]] cap 5.660000e+02 polynomial 4 ceiling 7 : tensor<128x128xf32>
  %both = fa4.tile.softcap %s cap 566.0 polynomial 4 ceiling 7 : tensor<128x128xf32>
  // CHECK: fa4.tile.softcap %[[S]] cap 5.660000e+02 : tensor<128x128xf32>
  %ceil0 = fa4.tile.softcap %s cap 566.0 ceiling 0 : tensor<128x128xf32>
  // CHECK: fa4.tile.mask %[[CAP]] rows %[[P]] keys %{{.*}} lengths (%{{.*}}, %{{.*}}) heads 4 causal window [4095, 0] : tensor<128x128xf32>
  %w = fa4.tile.mask %cap rows %pos keys %n lengths (%sq, %skv) heads 4 causal window [4095, 0] : tensor<128x128xf32>
  // CHECK: fa4.tile.modify %[[S]] at [%[[B]], %[[H]], %[[P]], %{{.*}}] heads 4 scale 1.250000e-01 captures(%{{.*}} : memref<8xf32>) score {
  // CHECK: fa4.yield %{{.*}} : f32
  // CHECK: } mask {
  // CHECK: fa4.yield %{{.*}} : i1
  // CHECK: } : tensor<128x128xf32>
  %mod = fa4.tile.modify %s at [%bi, %h, %pos, %n] heads 4 scale 0.125 captures(%sinks : memref<8xf32>) score {
  ^bb0(%x: f32, %xb: index, %xh: index, %xi: index, %xj: index, %tab: memref<8xf32>):
    %slope = memref.load %tab[%xh] : memref<8xf32>
    %y = arith.mulf %x, %slope : f32
    fa4.yield %y : f32
  } mask {
  ^bb0(%x: f32, %xb: index, %xh: index, %xi: index, %xj: index, %tab: memref<8xf32>):
    %keep = arith.cmpi sle, %xj, %xi : index
    fa4.yield %keep : i1
  } : tensor<128x128xf32>
  // CHECK: fa4.tile.mask %[[S]] rows %[[P]] keys %{{.*}} lengths (%{{.*}}, %{{.*}}) heads 4 window [-1, 64] : tensor<128x128xf32>
  %r64 = fa4.tile.mask %s rows %pos keys %n lengths (%sq, %skv) heads 4 window [-1, 64] : tensor<128x128xf32>
  %max = arith.constant dense<0xFF800000> : tensor<128xf32>
  %sum = arith.constant dense<0.0> : tensor<128xf32>
  %acc = arith.constant dense<0.0> : tensor<128x64xf32>
  // CHECK: %{{.*}}, %[[MAX:.*]], %[[SUM:.*]], %[[C:.*]] = fa4.tile.softmax %[[M]], %{{.*}}, %{{.*}} scale_log2 1.250000e-01 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  %p, %max1, %sum1, %c = fa4.tile.softmax %m, %max, %sum scale_log2 0.125 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  // CHECK: fa4.tile.rescale %{{.*}} by %[[C]] : tensor<128x64xf32>, tensor<128xf32>
  %r = fa4.tile.rescale %acc by %c : tensor<128x64xf32>, tensor<128xf32>
  // CHECK: fa4.tile.matmul %{{.*}}, %{{.*}} acc %{{.*}} : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
  %o1 = fa4.tile.matmul %p, %kt acc %r : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fa4.tile.sink %{{.*}}[%[[H]]] to %{{.*}}, %[[MAX]], %[[SUM]] heads 4 : memref<8xf32>, tensor<128x64xf32>, tensor<128xf32>
  %o2, %max2, %sum2 = fa4.tile.sink %sinks[%h] to %o1, %max1, %sum1 heads 4 : memref<8xf32>, tensor<128x64xf32>, tensor<128xf32>
  // CHECK: fa4.tile.normalize %{{.*}} by %[[SUM]] : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
  %out = fa4.tile.normalize %o1 by %sum1 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
  // CHECK: fa4.tile.store %{{.*}}, %{{.*}}[%[[B]], %[[P]], %[[H]]] heads 4 : tensor<128x64xf16> -> memref<?x?x8x64xf16>
  fa4.tile.store %out, %o[%bi, %pos, %h] heads 4 : tensor<128x64xf16> -> memref<?x?x8x64xf16>
  // CHECK: fa4.tile.store_lse %[[MAX]], %[[SUM]], %{{.*}}[%[[B]], %[[H]], %[[P]]] heads 4 : tensor<128xf32> -> memref<?x8x?xf32>
  fa4.tile.store_lse %max1, %sum1, %lse[%bi, %h, %pos] heads 4 : tensor<128xf32> -> memref<?x8x?xf32>
  return
}

// One sequence of a packed batch viewed as a batch of one: Q, K, V, O as
// [1, ?, H, D] and LSE as [1, H, ?], strides kept, start and length dynamic.
// CHECK-LABEL: func @sequence
// CHECK: fa4.tile.sequence %{{.*}} of %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32> seqused_k %{{.*}} : memref<?xi32> (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?x8x64xf16>, memref<?x2x64xf16>, memref<?x2x64xf16>, memref<?x8x64xf16>, memref<8x?xf32>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x2x64xf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x2x64xf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x8x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @sequence(%b: index, %cq: memref<?xi32>, %ck: memref<?xi32>, %u: memref<?xi32>,
                    %q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>,
                    %o: memref<?x8x64xf16>, %lse: memref<8x?xf32>) {
  %views:5 = fa4.tile.sequence %b of %cq, %ck : memref<?xi32>, memref<?xi32> seqused_k %u : memref<?xi32> (%q, %k, %v, %o, %lse : memref<?x8x64xf16>, memref<?x2x64xf16>, memref<?x2x64xf16>, memref<?x8x64xf16>, memref<8x?xf32>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x2x64xf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x2x64xf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x8x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}

// -----

// Packed sequences over a paged cache: Q and O viewed per sequence, K and V
// the cache itself; the sequence's keys counted from cu_seqlens_k.
// CHECK-LABEL: func @sequence_paged
// CHECK: fa4.tile.sequence %{{.*}} of %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32> (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?x8x64xf16>, memref<?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>
// CHECK: fa4.tile.keys %{{.*}}[%{{.*}}] seqused_k %{{.*}} : memref<?xi32> pages %{{.*}} : memref<?x?xi32> cu_seqlens_k %{{.*}} : memref<?xi32> : memref<?x64x2x64xf16>
func.func @sequence_paged(%b: index, %cq: memref<?xi32>, %ck: memref<?xi32>, %u: memref<?xi32>,
                          %t: memref<?x?xi32>, %q: memref<?x8x64xf16>,
                          %k: memref<?x64x2x64xf16>, %o: memref<?x8x64xf16>) -> index {
  %views:4 = fa4.tile.sequence %b of %cq, %ck : memref<?xi32>, memref<?xi32> (%q, %k, %k, %o : memref<?x8x64xf16>, memref<?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>
  %n = fa4.tile.keys %views#1[%b] seqused_k %u : memref<?xi32> pages %t : memref<?x?xi32> cu_seqlens_k %ck : memref<?xi32> : memref<?x64x2x64xf16>
  return %n : index
}

// -----

// A KV cache: the keys of batch %b, and K read through the page table.
// CHECK-LABEL: func @kv_cache
func.func @kv_cache(%k: memref<?x256x2x64xf16>, %u: memref<?xi32>, %t: memref<?x?xi32>, %b: index, %pos: index, %h: index) -> (index, tensor<128x64xf16>) {
  // CHECK: fa4.tile.keys %{{.*}}[%{{.*}}] seqused_k %{{.*}} : memref<?xi32> pages %{{.*}} : memref<?x?xi32> : memref<?x256x2x64xf16>
  %n = fa4.tile.keys %k[%b] seqused_k %u : memref<?xi32> pages %t : memref<?x?xi32> : memref<?x256x2x64xf16>
  // CHECK: fa4.tile.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] heads 1 pages %{{.*}} : memref<?x?xi32> : memref<?x256x2x64xf16> -> tensor<128x64xf16>
  %kt = fa4.tile.load %k[%b, %pos, %h] heads 1 pages %t : memref<?x?xi32> : memref<?x256x2x64xf16> -> tensor<128x64xf16>
  return %n, %kt : index, tensor<128x64xf16>
}
