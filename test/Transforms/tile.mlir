// RUN: fa4-opt %s -split-input-file --fa4-plan --fa4-tile | FileCheck %s

// Causal GQA 32/8 with LSE, bf16, head dim 128: work tiles of 2 Q tiles of
// 32 positions x 4 heads in LPT order; per Q tile the KV blocks up to its
// last row's diagonal; the program reads batch and lengths from the
// memrefs.
// CHECK-LABEL: func.func @causal
// CHECK: fa4.launch @causal_attention::@causal_attention(%arg0, %arg1, %arg2, %arg3, %arg4) :
// CHECK-NOT: manifest
// CHECK-LABEL: gpu.module @causal_attention [#nvvm.target<chip = "sm_100a"
// CHECK: gpu.func @causal_attention(%[[Q:.*]]: memref<?x?x32x128xbf16>, %[[K:.*]]: memref<?x?x8x128xbf16>, %[[V:.*]]: memref<?x?x8x128xbf16>, %[[O:.*]]: memref<?x?x32x128xbf16>, %[[LSE:.*]]: memref<?x32x?xf32>) kernel
// CHECK-SAME: fa4.plan = #fa4.plan<
// CHECK-DAG: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK-DAG: %[[SQ:.*]] = memref.dim %[[Q]], %c1
// CHECK-DAG: %[[SKV:.*]] = memref.dim %[[K]], %c1
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[BI:.*]], %[[H:.*]], %[[POS:.*]] = fa4.tile.coords %[[T]] of (%{{.*}}, %[[B]]) scheduler lpt head_blocks 8 heads 4 positions 64
// CHECK: scf.for %[[STAGE:.*]] = %c0{{.*}} to %c2
// CHECK: %[[ROW:.*]] = arith.addi %[[POS]]
// CHECK: %[[QT:.*]] = fa4.tile.load %[[Q]][%[[BI]], %[[ROW]], %[[H]]] heads 4 : memref<?x?x32x128xbf16> -> tensor<128x128xbf16>
// Blocks: ceil(min(max(row + 31 + Skv + 1 - Sq, 0), Skv) / 128).
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[R:.*]]:3 = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}) -> (tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>)
// CHECK: %[[KT:.*]] = fa4.tile.load %[[K]][%[[BI]], %[[KEY:.*]], %{{.*}}] heads 1
// CHECK: %[[VT:.*]] = fa4.tile.load %[[V]][%[[BI]], %[[KEY]], %{{.*}}] heads 1
// CHECK: %[[S:.*]] = fa4.tile.matmul %[[QT]], %[[KT]] transpose_b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
// CHECK: %[[SM:.*]] = fa4.tile.mask %[[S]] rows %[[ROW]] keys %[[KEY]] lengths (%[[SQ]], %[[SKV]]) heads 4 causal
// 1/sqrt(128) * log2(e) = 0.12751743082459868
// CHECK: %[[P:.*]], %[[M1:.*]], %[[L1:.*]], %[[C:.*]] = fa4.tile.softmax %[[SM]], %[[M]], %[[L]] scale_log2 0.12751743082459868 threshold 8 emulated 3
// CHECK: %[[OR:.*]] = fa4.tile.rescale %[[ACC]] by %[[C]]
// CHECK: %[[O1:.*]] = fa4.tile.matmul %[[P]], %[[VT]] acc %[[OR]]
// CHECK: scf.yield %[[O1]], %[[M1]], %[[L1]]
// CHECK: %[[OUT:.*]] = fa4.tile.normalize %[[R]]#0 by %[[R]]#2 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
// CHECK: fa4.tile.store %[[OUT]], %[[O]][%[[BI]], %[[ROW]], %[[H]]] heads 4
// CHECK: fa4.tile.store_lse %[[R]]#1, %[[R]]#2, %[[LSE]][%[[BI]], %[[H]], %[[ROW]]] heads 4
func.func @causal(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                  %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                  %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>) {causal}
  return
}

// -----

// Non-causal MHA, f16, head dim 64, scale 0.5: linear order, every KV block,
// no causal mask (only the Skv tail), no LSE.
// CHECK-LABEL: gpu.func @full_attention
// CHECK: fa4.tile.coords %{{.*}} scheduler linear head_blocks 16 heads 1 positions 256
// CHECK: fa4.tile.load
// CHECK-NOT: arith.minsi
// CHECK: scf.for
// CHECK-NOT: arith.minsi
// CHECK: fa4.tile.mask %{{.*}} heads 1 : tensor<128x128xf32>
// 0.5 * log2(e) = 0.72134752044448169
// CHECK: fa4.tile.softmax {{.*}} scale_log2 0.72134752044448169
// CHECK-NOT: fa4.tile.store_lse
// CHECK: gpu.return
func.func @full(%q: memref<?x?x16x64xf16>, %k: memref<?x?x16x64xf16>,
                %v: memref<?x?x16x64xf16>, %o: memref<?x?x16x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x64xf16>, memref<?x?x16x64xf16>, memref<?x?x16x64xf16>)
                outs(%o : memref<?x?x16x64xf16>) {scale = 0.5 : f32}
  return
}

// -----

// Softcap and a causal sliding window: Q K^T capped at 50 over the scale
// 0.125 (400 in raw-score units; sm_100a's plan takes 8 of 16 tanh from
// the polynomial and the cap as the softmax's reference up to 48 in log2
// units), then masked; the window's right bound is causal's 0.
// CHECK-LABEL: gpu.func @capped_attention
// CHECK: %[[S:.*]] = fa4.tile.matmul
// CHECK-NEXT: %[[C:.*]] = fa4.tile.softcap %[[S]] cap 4.000000e+02 polynomial 8 ceiling 48 : tensor<128x128xf32>
// CHECK-NEXT: %[[M:.*]] = fa4.tile.mask %[[C]] rows %{{.*}} keys %{{.*}} lengths (%{{.*}}, %{{.*}}) heads 1 causal window [4095, 0] : tensor<128x128xf32>
// CHECK-NEXT: fa4.tile.softmax %[[M]], {{.*}} scale_log2 0.18033688011112042
func.func @capped(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x4x64xbf16>,
                  %v: memref<?x?x4x64xbf16>, %o: memref<?x?x4x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) {causal, window = array<i64: 4095, 0>, softcap = 50.0 : f32, scale = 0.125 : f32}
  return
}

// -----

// Window sides that no 32-bit sequence reaches are unbounded: a left bound
// of 2^40 is -1, and [-1, 2^31] with nothing else masks only the key tail.
// CHECK-LABEL: gpu.func @wide_attention
// CHECK: fa4.tile.mask %{{.*}} heads 1 window [-1, 7] : tensor<128x128xf32>
// CHECK-LABEL: gpu.func @unbounded_attention
// CHECK: fa4.tile.mask %{{.*}} heads 1 : tensor<128x128xf32>
func.func @wide(%q: memref<?x?x4x64xbf16>, %o: memref<?x?x4x64xbf16>) {
  fa4.attention ins(%q, %q, %q : memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) {window = array<i64: 1099511627776, 7>}
  return
}
func.func @unbounded(%q: memref<?x?x4x64xbf16>, %o: memref<?x?x4x64xbf16>) {
  fa4.attention ins(%q, %q, %q : memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) {window = array<i64: -1, 2147483648>}
  return
}

// -----

// Attention sinks with LSE: after the KV loop, the sinks of the tile's
// heads join the final O, maxima and sums, which normalization and the LSE
// then read.
// CHECK-LABEL: gpu.func @sinks_attention
// CHECK-SAME: %[[LSE:[a-z0-9]+]]: memref<?x8x?xf32>, %[[SINKS:[a-z0-9]+]]: memref<8xf32>) kernel
// CHECK: %{{.*}}, %[[H:.*]], %{{.*}} = fa4.tile.coords
// CHECK: %[[LOOP:.*]]:3 = scf.for
// CHECK: %[[O:.*]], %[[MAX:.*]], %[[SUM:.*]] = fa4.tile.sink %[[SINKS]][%[[H]]] to %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2 heads 4 : memref<8xf32>, tensor<128x64xf32>, tensor<128xf32>
// CHECK-NEXT: %[[N:.*]] = fa4.tile.normalize %[[O]] by %[[SUM]]
// CHECK-NEXT: fa4.tile.store %[[N]]
// CHECK-NEXT: fa4.tile.store_lse %[[MAX]], %[[SUM]], %[[LSE]]
func.func @sinks(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>, %v: memref<?x?x2x64xbf16>,
                 %o: memref<?x?x8x64xbf16>, %lse: memref<?x8x?xf32>, %s: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) lse(%lse : memref<?x8x?xf32>) sink(%s : memref<8xf32>) {causal}
  return
}

// -----

// Packed sequences: a loop over the B = dim(cu_seqlens_q) - 1 sequences,
// each viewing its rows of Q, K, V, O and its columns of LSE as a batch of
// one; inside, the dense program over those views (lengths from the views,
// causal aligned to each sequence's corner).
// CHECK-LABEL: gpu.module @packed_attention
// CHECK: gpu.func @packed_attention(%[[Q:[^:]*]]: memref<?x8x64xbf16>, %[[K:[^:]*]]: memref<?x2x64xbf16>, %[[V:[^:]*]]: memref<?x2x64xbf16>, %[[O:[^:]*]]: memref<?x8x64xbf16>, %[[LSE:[^:]*]]: memref<8x?xf32>, %[[CUQ:[^:]*]]: memref<?xi32>, %[[CUK:[^:]*]]: memref<?xi32>)
// CHECK: %[[BOUNDS:.*]] = memref.dim %[[CUQ]], %c0
// CHECK: %[[COUNT:.*]] = arith.addi %[[BOUNDS]], %c-1
// CHECK: scf.for %[[SEQ:.*]] = %{{.*}} to %[[COUNT]] step
// CHECK-NEXT: %[[VIEWS:.*]]:5 = fa4.tile.sequence %[[SEQ]] of %[[CUQ]], %[[CUK]] : memref<?xi32>, memref<?xi32> (%[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] : {{.*}}) -> memref<1x?x8x64xbf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x2x64xbf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x2x64xbf16, strided<[?, 128, 64, 1], offset: ?>>, memref<1x?x8x64xbf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x8x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK-DAG: %[[SQ:.*]] = memref.dim %[[VIEWS]]#0, %c1
// CHECK-DAG: %[[SKV:.*]] = memref.dim %[[VIEWS]]#1, %c1
// CHECK: fa4.tile.coords
// CHECK: fa4.tile.load %[[VIEWS]]#0
// CHECK: fa4.tile.mask %{{.*}} rows %{{.*}} keys %{{.*}} lengths (%[[SQ]], %[[SKV]]) heads 4 causal
// CHECK: fa4.tile.store %{{.*}}, %[[VIEWS]]#3
// CHECK: fa4.tile.store_lse %{{.*}}, %{{.*}}, %[[VIEWS]]#4
func.func @packed(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
                  %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>,
                  %lse: memref<8x?xf32>, %cu_q: memref<?xi32>,
                  %cu_k: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>,
                    memref<?x2x64xbf16>)
                outs(%o : memref<?x8x64xbf16>) lse(%lse : memref<8x?xf32>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) {causal}
  return
}
