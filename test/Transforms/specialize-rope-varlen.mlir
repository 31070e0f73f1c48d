// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile | FileCheck %s --check-prefix=TILE
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan=arch=sm_100a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=SM100

// The rotary embedding over packed sequences: positions [total_q], viewed
// per sequence like Q by fa4.tile.sequence (after LSE), so that the
// sequence's row i reads positions[cu_seqlens_q[b] + i].

// TILE: %[[V:.*]]:6 = fa4.tile.sequence %{{.*}} of %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32> (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[POS:.*]] : memref<?x8x128xbf16>, memref<?x2x128xbf16>, memref<?x2x128xbf16>, memref<?x8x128xbf16>, memref<8x?xf32>, memref<?xi32>)
// TILE-SAME: memref<1x8x?xf32, strided<[?, ?, 1], offset: ?>>, memref<1x?xi32, strided<[?, 1], offset: ?>>
// TILE: fa4.tile.rope %{{.*}}, %{{.*}}, %[[V]]#5[%{{.*}}, %{{.*}}] heads 4 start 0 : tensor<64x128xbf16>, memref<?x64xf32>, memref<1x?xi32, strided<[?, 1], offset: ?>>
// TILE: fa4.tile.rope %{{.*}}, %{{.*}}, %[[V]]#5[%{{.*}}, %{{.*}}] heads 4 start 0 inverse : tensor<64x128xf32>

// The manifest: a packed kernel with the rope entry and positions [-1].
// CHECK: rule = "persistent_varlen"
// CHECK-SAME: {element = "f32", name = "cos_sin", shape = [-1, 64]}, {element = "i32", name = "positions", shape = [-1]}
// CHECK-SAME: rope = {columns = 64 : i64, output = true, start = 0 : i64}

// sm_100a's budgets for packed RoPE with rope_output (0 spills; Plan.cpp).
// SM100: {element = "i32", name = "positions", shape = [-1]}
// SM100-SAME: softmaxRegs = 192, correctionRegs = 80, producerRegs = 48

func.func @packed(%q: memref<?x8x128xbf16>, %k: memref<?x2x128xbf16>,
                  %v: memref<?x2x128xbf16>, %o: memref<?x8x128xbf16>,
                  %lse: memref<8x?xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>,
                  %cs: memref<?x64xf32>, %pos: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x128xbf16>,
                    memref<?x2x128xbf16>, memref<?x2x128xbf16>)
                outs(%o : memref<?x8x128xbf16>) lse(%lse : memref<8x?xf32>)
                varlen(%cq, %ck : memref<?xi32>, memref<?xi32>)
                rope(%cs, %pos : memref<?x64xf32>, memref<?xi32>)
                {causal, rope_output}
  return
}
