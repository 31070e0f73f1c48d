// RUN: fa4-opt %s --fa4-plan --fa4-tile | FileCheck %s --check-prefix=TILE
// RUN: fa4-opt %s --fa4-plan --fa4-tile --fa4-specialize --canonicalize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a | FileCheck %s --check-prefix=PLAN90
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize --canonicalize | FileCheck %s --check-prefix=HOPPER

// Score and mask regions through the levels. fa4-tile writes one
// fa4.tile.modify between Q K^T and the mask, with the regions, the scale
// and the captures as kernel arguments after LSE; the softmax after it
// scales by log2(e) only. The launch keeps the regions (fa4-sim's reference)
// and passes the captures. fa4-specialize inlines them per score element:
// the coordinates go through opaque PTX moves, the capture loads become
// global loads at the row-major offset, and the mask a select to -inf. The
// manifest binds each capture's pointer, then its dynamic sizes.

// TILE-LABEL: func.func @document
// TILE: fa4.launch @document_attention::@document_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) captures(%{{.*}}, %{{.*}} : memref<8xf32>, memref<?x?xi32>) : {{.*}} score {
// TILE: } mask {
// TILE: gpu.func @document_attention(%{{.*}}: memref<?x?x8x64xbf16>, %{{.*}}: memref<?x?x2x64xbf16>, %{{.*}}: memref<?x?x2x64xbf16>, %{{.*}}: memref<?x?x8x64xbf16>, %{{.*}}: memref<?x8x?xf32>, %[[SLOPES:.*]]: memref<8xf32>, %[[DOCS:.*]]: memref<?x?xi32>)
// TILE: %[[S:.*]] = fa4.tile.matmul
// TILE: %[[MOD:.*]] = fa4.tile.modify %[[S]] at [%{{.*}}] heads 4 scale 1.250000e-01 captures(%[[SLOPES]], %[[DOCS]] : memref<8xf32>, memref<?x?xi32>) score {
// TILE: } mask {
// TILE: %[[MASKED:.*]] = fa4.tile.mask %[[MOD]] rows
// TILE: fa4.tile.softmax %[[MASKED]], %{{.*}}, %{{.*}} scale_log2 1.4426950408889634

// CHECK-LABEL: func.func @document
// CHECK: fa4.launch @document_attention::@document_attention
// CHECK-SAME: {element = "f32", name = "capture0", shape = [8]}, {element = "i32", name = "capture1", shape = [-1, -1]}]
// CHECK-SAME: {kind = "pointer", name = "lse", source = "lse.data"}, {kind = "pointer", name = "capture0", source = "capture0.data"}, {kind = "pointer", name = "capture1", source = "capture1.data"}, {kind = "i32", name = "capture1_size0", source = "capture1.shape[0]"}, {kind = "i32", name = "capture1_size1", source = "capture1.shape[1]"}]
// CHECK-SAME: regions = ["score", "mask"]
// CHECK: gpu.func @document_attention(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %[[SLOPES:[^:]*]]: !llvm.ptr<1>, %[[DOCS:[^:]*]]: !llvm.ptr<1>, %{{.*}}: index, %[[COLUMNS:[^:]*]]: index)
// CHECK: fa4.role "softmax0"
// CHECK: %[[H:.*]] = nvvm.inline_ptx "mov.b32 $0, $1;" ro(%{{.*}} : i32) -> i32
// CHECK: %[[SLOPE_AT:.*]] = llvm.getelementptr %[[SLOPES]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[SLOPE:.*]] = llvm.load %[[SLOPE_AT]] : !llvm.ptr<1> -> f32
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: %[[DOC_AT:.*]] = llvm.getelementptr %[[DOCS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: llvm.load %[[DOC_AT]] : !llvm.ptr<1> -> i32
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: arith.select %[[SAME]], %{{.*}}, %{{.*}} : f32
// CHECK: fa4.role "correction"

// sm_90a: 64-key blocks for kernels with regions (the consumer's
// registers), the regions inlined in the consumer.
// PLAN90: blockN = 64
// HOPPER: gpu.func @document_attention(
// HOPPER: fa4.role "consumer0"
// HOPPER: nvvm.inline_ptx "mov.b32 $0, $1;"
// HOPPER: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// HOPPER: fa4.role "consumer1"
func.func @document(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                    %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>,
                    %lse: memref<?x8x?xf32>, %slopes: memref<8xf32>,
                    %docs: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>)
                lse(%lse : memref<?x8x?xf32>)
                captures(%slopes, %docs : memref<8xf32>, memref<?x?xi32>)
                {causal} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %t = arith.mulf %s, %slope : f32
    fa4.yield %t : f32
  } mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %qd = memref.load %d[%b, %i] : memref<?x?xi32>
    %kd = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %qd, %kd : i32
    fa4.yield %same : i1
  }
  return
}
