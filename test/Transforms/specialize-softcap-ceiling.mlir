// RUN: split-file %s %t
// RUN: fa4-opt %t/bf16.mlir --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %t/f16.mlir --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER
// RUN: fa4-opt %t/mask.mlir --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=MASK
// RUN: fa4-opt %t/mask.mlir --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %t/score.mlir --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %t/score.mlir --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %t/fp8.mlir --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %t/fp8.mlir --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE

// A softcap bounds every score by B = scale_log2 * score_cap (the cap in
// log2 units). Where B is at most the plan's softcapCeiling (by default
// bf16 48, f16 7, on sm_90a from Dv 128; tested at run time: both are
// launch arguments), the softmax keeps B as
// every row's reference: no row maximum per KV block, no rescale of O.
// The KV loops are built once for each side of the test; the other side
// runs the online maximum as without a softcap.

// sm_100a, bf16: the softmax warpgroup's row, the test once per role.
// CHECK-LABEL: fa4.role "softmax0"
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BOUND:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[LIMIT:.*]] = arith.constant 4.800000e+01 : f32
// CHECK-NEXT: %[[USABLE:.*]] = arith.cmpf ole, %[[BOUND]], %[[LIMIT]] : f32
// CHECK: scf.if %[[USABLE]] -> (f32, f32) {
// The interior and trailing blocks under the ceiling: from B, no maximum.
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[BOUND]], %{{.*}} = %{{.*}}) -> (f32, f32) {
// CHECK-NOT: arith.maximumf
// CHECK: } else {
// CHECK-NOT: arith.maximumf
// Past it: from -inf, the block's maximum over the row's four chunks.
// CHECK: scf.for %{{.*}} iter_args(%[[MAX:.*]] = %[[NEGINF]], %{{.*}} = %{{.*}}) -> (f32, f32) {
// CHECK: vector.reduction <maximumf>, %{{.*}}, %[[NEGINF]] : vector<32xf32> into f32
// CHECK-NEXT: vector.reduction <maximumf>
// CHECK-NEXT: vector.reduction <maximumf>
// CHECK-NEXT: %[[ROW:.*]] = vector.reduction <maximumf>
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[ROW]], %{{.*}} : f32
// CHECK-NEXT: arith.maximumf %[[MAX]], %[[SCALED]] : f32
// CHECK-LABEL: fa4.role "softmax1"
// CHECK: arith.cmpf ole

// sm_90a, f16: each consumer's two rows; under the ceiling, the first block
// and the loop start from B, with no quad shuffle and no warp vote whether
// to rescale O.
// HOPPER-LABEL: fa4.role "consumer0"
// HOPPER: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// HOPPER: %[[BOUND:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// HOPPER-NEXT: %[[LIMIT:.*]] = arith.constant 7.000000e+00 : f32
// HOPPER-NEXT: %[[USABLE:.*]] = arith.cmpf ole, %[[BOUND]], %[[LIMIT]] : f32
// HOPPER: scf.if %[[USABLE]] -> (f32, f32, f32, f32, vector<64xf32>) {
// HOPPER-NOT: gpu.shuffle
// HOPPER: scf.for %{{.*}} iter_args(%{{.*}} = %[[BOUND]], %{{.*}} = %[[BOUND]], {{.*}}) -> (f32, f32, f32, f32, vector<64xf32>, vector<64xf16>) {
// HOPPER-NOT: gpu.shuffle
// HOPPER-NOT: nvvm.vote.sync
// HOPPER-NOT: arith.maximumf
// Past it: block 0 against -inf, the quads' maxima, the vote in the loop.
// HOPPER: gpu.shuffle  xor
// HOPPER: arith.maximumf %[[NEGINF]], %{{.*}} : f32
// HOPPER: scf.for
// HOPPER: nvvm.vote.sync  any
// HOPPER-LABEL: fa4.role "consumer1"
// HOPPER: arith.cmpf ole

// A mask region only sets scores to -inf: the ceiling stays (sm_100a; on
// sm_90a, head dim 64 keeps the running maximum).
// MASK: fa4.role "softmax0"
// MASK: %[[USABLE:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// MASK: scf.if %[[USABLE]] -> (f32, f32) {

// A score region may yield any score; FP8 P's normals end at 2^-6: the
// running maximum only, as on sm_90a below Dv 128.
// NONE-NOT: arith.cmpf ole
// NONE-NOT: = scf.if {{.*}} -> (f32, f32) {

//--- bf16.mlir
func.func @capped(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>, %v: memref<?x?x2x128xbf16>,
                  %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal, softcap = 30.0 : f32}
  return
}
//--- f16.mlir
func.func @capped(%q: memref<?x?x8x128xf16>, %k: memref<?x?x2x128xf16>, %v: memref<?x?x2x128xf16>,
                  %o: memref<?x?x8x128xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xf16>, memref<?x?x2x128xf16>, memref<?x?x2x128xf16>)
                outs(%o : memref<?x?x8x128xf16>) {causal, softcap = 4.0 : f32}
  return
}
//--- mask.mlir
func.func @masked(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x1x64xbf16>, %v: memref<?x?x1x64xbf16>,
                  %o: memref<?x?x4x64xbf16>, %floor: memref<4xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>, memref<?x?x1x64xbf16>, memref<?x?x1x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) captures(%floor : memref<4xf32>)
                {softcap = 3.0 : f32} mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %f: memref<4xf32>):
    %limit = memref.load %f[%h] : memref<4xf32>
    %keep = arith.cmpf oge, %s, %limit : f32
    fa4.yield %keep : i1
  }
  return
}
//--- score.mlir
func.func @scored(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x1x64xbf16>, %v: memref<?x?x1x64xbf16>,
                  %o: memref<?x?x4x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>, memref<?x?x1x64xbf16>, memref<?x?x1x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) {softcap = 3.0 : f32} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    fa4.yield %t : f32
  }
  return
}
//--- fp8.mlir
func.func @fp8(%q: memref<?x?x8x128xf8E4M3FN>, %k: memref<?x?x2x128xf8E4M3FN>,
               %v: memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x8x128xbf16>,
               %qd: memref<?x2xf32>, %kd: memref<?x2xf32>, %vd: memref<?x2xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xf8E4M3FN>, memref<?x?x2x128xf8E4M3FN>,
                    memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x8x128xbf16>)
                descale(%qd, %kd, %vd : memref<?x2xf32>, memref<?x2xf32>, memref<?x2xf32>) {causal, softcap = 3.0 : f32}
  return
}
