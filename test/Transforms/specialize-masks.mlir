// RUN: fa4-opt %s --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER

// A sliding window with softcap and LSE. The manifest records the window,
// the softcap in the op's units and in the raw-score units the kernel takes
// (30 / 0.125 = 240), and binds that value to the kernel argument after the
// scale; the softmax caps with tanh.approx (the afn LLVM intrinsic), masks
// keys outside the window (one unsigned compare per element where both
// bounds apply) in the leading blocks, and loops over
// leading masked, unmasked and trailing masked blocks.
// CHECK: fa4.launch @masked_attention::@masked_attention
// CHECK-SAME: {kind = "f32", name = "scale_log2", source = "scale_log2"}, {kind = "f32", name = "score_cap", source = "score_cap"}, {kind = "pointer", name = "lse", source = "lse.data"}]
// CHECK-SAME: score_cap = 2.400000e+02 : f64, softcap = 3.000000e+01 : f64
// CHECK-SAME: window = [255, 16]
// CHECK: gpu.func @masked_attention(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[SCALE:.*]]: f32, %[[CAP:.*]]: f32, %{{.*}}: !llvm.ptr<1>)
// CHECK: fa4.role "softmax0"
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: arith.divf %{{.*}}, %[[CAP]] : f32
// CHECK: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<32xf32>) -> vector<32xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK: scf.yield {{.*}} : f32, f32
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK: scf.yield {{.*}} : f32, f32
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK: fa4.role "softmax1"
// The other roles visit the same blocks: the load role's keys start at the
// tile's first block.
// CHECK: fa4.role "load"
// HOPPER: gpu.func @masked_attention(
// HOPPER-SAME: %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: !llvm.ptr<1>)
// HOPPER: fa4.role "consumer0"
// HOPPER: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<64xf32>) -> vector<64xf32>
// HOPPER: arith.cmpi ult, %{{.*}}, %{{.*}} : vector<64xi32>
func.func @masked(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x4x64xbf16>, %v: memref<?x?x4x64xbf16>,
                  %o: memref<?x?x4x64xbf16>, %lse: memref<?x4x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) lse(%lse : memref<?x4x?xf32>)
                {window = array<i64: 255, 16>, softcap = 30.0 : f32}
  return
}
