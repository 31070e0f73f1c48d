// RUN: fa4-opt %s --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER

// Attention sinks with LSE and GQA (4 packed heads): the manifest names the
// sinks operand and binds its pointer after LSE's. The epilogue loads each
// row's sink (head = first head + row mod 4; sm_100a: in the correction
// warpgroup at the tile's start; sm_90a: one load for both of a thread's
// rows, 8 apart), converts it to log2 units, joins it against the larger
// of it and the row's reference, and normalizes O by the joined sum; the
// LSE reads the joined max and sum.
// CHECK: fa4.launch @sinks_attention::@sinks_attention
// CHECK-SAME: {element = "f32", name = "lse", shape = [-1, 8, -1]}, {element = "f32", name = "sink", shape = [8]}]
// CHECK-SAME: {kind = "pointer", name = "lse", source = "lse.data"}, {kind = "pointer", name = "sink", source = "sink.data"}]
// CHECK: gpu.func @sinks_attention(
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: !llvm.ptr<1>, %[[SINKS:.*]]: !llvm.ptr<1>)
// CHECK: fa4.role "correction"
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[SINKS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[RAW:.*]] = llvm.load %[[ADDR]] : !llvm.ptr<1> -> f32
// CHECK: %[[SINK:.*]] = arith.mulf %[[RAW]], %{{.*}} : f32
// CHECK: %[[NEWMAX:.*]] = arith.maximumf %[[MAX:.*]], %[[SINK]] : f32
// CHECK: %[[REF:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEWMAX]] : f32
// CHECK: %[[D1:.*]] = arith.subf %[[MAX]], %[[REF]] : f32
// CHECK: fa4.exp2 %{{.*}} emulated 0 : vector<1xf32>
// CHECK: %[[D2:.*]] = arith.subf %[[SINK]], %[[REF]] : f32
// CHECK: fa4.exp2 %{{.*}} emulated 0 : vector<1xf32>
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[C:.*]] : f32
// CHECK: %[[TOTAL:.*]] = arith.addf %[[SCALED]], %{{.*}} : f32
// CHECK: arith.divf %[[C]], %[[TOTAL]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[TOTAL]])
// CHECK: arith.addf %[[NEWMAX]], %{{.*}} : f32
// HOPPER: gpu.func @sinks_attention(
// HOPPER-SAME: %{{.*}}: !llvm.ptr<1>, %[[SINKS:.*]]: !llvm.ptr<1>)
// HOPPER: fa4.role "consumer0"
// HOPPER: llvm.getelementptr %[[SINKS]]
// HOPPER-NOT: llvm.getelementptr %[[SINKS]]
// HOPPER: arith.maximumf %{{.*}}, %[[SINK:.*]] : f32
// HOPPER: arith.maximumf %{{.*}}, %[[SINK]] : f32
// HOPPER: fa4.role "consumer1"
func.func @sinks(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>, %v: memref<?x?x2x64xbf16>,
                 %o: memref<?x?x8x64xbf16>, %lse: memref<?x8x?xf32>, %s: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) lse(%lse : memref<?x8x?xf32>) sink(%s : memref<8xf32>) {causal}
  return
}
