// RUN: fa4-opt %s -split-input-file --fa4-raise-attention --canonicalize | FileCheck %s

// Named ops on [B*H, S, D]: linalg.transpose of K, batch_matmul, a scale
// multiply, linalg.softmax, casts. The batch dimension comes before the
// sequence in Q and K, so it stays fa4's batch with one head: reshapes, no
// transposes.
// CHECK-LABEL: func.func @named_softmax(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<16x128x64xbf16>, %[[K:[^:]*]]: tensor<16x256x64xbf16>, %[[V:[^:]*]]: tensor<16x256x64xbf16>)
// CHECK-NOT: linalg.
// CHECK: %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3]] output_shape [16, 128, 1, 64]
// CHECK: %[[KE:.*]] = tensor.expand_shape %[[K]]
// CHECK: %[[VE:.*]] = tensor.expand_shape %[[V]]
// CHECK: %[[O:.*]] = fa4.attention ins(%[[QE]], %[[KE]], %[[VE]] : tensor<16x128x1x64xbf16>, tensor<16x256x1x64xbf16>, tensor<16x256x1x64xbf16>) outs(%{{.*}} : tensor<16x128x1x64xbf16>) {scale = 1.250000e-01 : f32} -> tensor<16x128x1x64xbf16>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0], [1, 2], [3]]
// CHECK-NOT: linalg.
// CHECK: return %[[R]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @named_softmax(%q: tensor<16x128x64xbf16>, %k: tensor<16x256x64xbf16>, %v: tensor<16x256x64xbf16>) -> tensor<16x128x64xbf16> {
  %kt0 = tensor.empty() : tensor<16x64x256xbf16>
  %kt = linalg.transpose ins(%k : tensor<16x256x64xbf16>) outs(%kt0 : tensor<16x64x256xbf16>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<16x128x256xf32>
  %zero = arith.constant 0.0 : f32
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<16x128x256xf32>) -> tensor<16x128x256xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<16x128x64xbf16>, tensor<16x64x256xbf16>) outs(%sf : tensor<16x128x256xf32>) -> tensor<16x128x256xf32>
  %c = arith.constant dense<0.125> : tensor<16x128x256xf32>
  %ss = linalg.mul ins(%s, %c : tensor<16x128x256xf32>, tensor<16x128x256xf32>) outs(%s0 : tensor<16x128x256xf32>) -> tensor<16x128x256xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<16x128x256xf32>) outs(%s0 : tensor<16x128x256xf32>) -> tensor<16x128x256xf32>
  %pb0 = tensor.empty() : tensor<16x128x256xbf16>
  %pb = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<16x128x256xf32>) outs(%pb0 : tensor<16x128x256xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x128x256xbf16>
  %o0 = tensor.empty() : tensor<16x128x64xf32>
  %of = linalg.fill ins(%zero : f32) outs(%o0 : tensor<16x128x64xf32>) -> tensor<16x128x64xf32>
  %o = linalg.batch_matmul ins(%pb, %v : tensor<16x128x256xbf16>, tensor<16x256x64xbf16>) outs(%of : tensor<16x128x64xf32>) -> tensor<16x128x64xf32>
  %ob0 = tensor.empty() : tensor<16x128x64xbf16>
  %ob = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o : tensor<16x128x64xf32>) outs(%ob0 : tensor<16x128x64xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x128x64xbf16>
  return %ob : tensor<16x128x64xbf16>
}

// -----

// As torch-mlir writes SDPA with an additive mask on [B, H, S, D]: generic
// contractions (K transposed by the map), a division by sqrt(D), a
// broadcast [1, 1, Sq, Skv] mask, and the softmax as keepdim max, sub, exp,
// keepdim sum and div, all in f16. The mask becomes a score region reading
// it, B and H collapse into fa4's batch.
// CHECK-LABEL: func.func @torch_mask(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<?x8x?x64xf16>, %[[K:[^:]*]]: tensor<?x8x?x64xf16>, %[[V:[^:]*]]: tensor<?x8x?x64xf16>, %[[M:[^:]*]]: tensor<1x1x?x?xf16>)
// CHECK-NOT: linalg.generic
// CHECK: %[[QC:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] : tensor<?x8x?x1x64xf16> into tensor<?x?x1x64xf16>
// CHECK: fa4.attention ins(%[[QC]], %{{.*}}, %{{.*}} : tensor<?x?x1x64xf16>, tensor<?x?x1x64xf16>, tensor<?x?x1x64xf16>) outs(%{{.*}} : tensor<?x?x1x64xf16>) captures(%[[M]] : tensor<1x1x?x?xf16>) {scale = 1.250000e-01 : f32} -> tensor<?x?x1x64xf16> score {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[T:[^:]*]]: tensor<1x1x?x?xf16>):
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%[[C0:.*]], %[[C0]], %[[I]], %[[J]]] : tensor<1x1x?x?xf16>
// CHECK: %[[F:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[S]], %[[F]] : f32
// CHECK: fa4.yield %[[SUM]] : f32
// CHECK-NOT: linalg.generic
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#mask = affine_map<(b, h, i, j) -> (0, 0, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i, 0)>
func.func @torch_mask(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %m: tensor<1x1x?x?xf16>) -> tensor<?x8x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x8x?x64xf16>
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xf16>
  %skv = tensor.dim %k, %c2 : tensor<?x8x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e4 = tensor.empty(%b, %sq, %skv) : tensor<?x8x?x?xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%e4 : tensor<?x8x?x?xf16>) -> tensor<?x8x?x?xf16>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>) outs(%sf : tensor<?x8x?x?xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x?xf16>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<?x8x?x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %o: f16):
    %c8 = arith.constant 8.0 : f16
    %y = arith.divf %x, %c8 : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x?xf16>
  %masked = linalg.generic {indexing_maps = [#id4, #mask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<?x8x?x?xf16>, tensor<1x1x?x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.addf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %e1 = tensor.empty(%b, %sq) : tensor<?x8x?x1xf16>
  %mf = linalg.fill ins(%ninf : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %max = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<?x8x?x?xf16>) outs(%mf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.maximumf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %sub = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.subf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<?x8x?x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %o: f16):
    %z = math.exp %x : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %zf = linalg.fill ins(%zero : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<?x8x?x?xf16>) outs(%zf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.addf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.divf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %eo = tensor.empty(%b, %sq) : tensor<?x8x?x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  %o = linalg.generic {indexing_maps = [#p5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x8x?x?xf16>, tensor<?x8x?x64xf16>) outs(%of : tensor<?x8x?x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// As IREE decomposes attention: Q scaled by scale * log2(e) before the
// contraction, exp2, and the division by the sum after P V; grouped-query
// attention in the indexing maps (Q [B, Hkv, G, S, D] against K and V
// [B, Hkv, S, D]). The scale returns to natural units: the bf16 constant
// 0.18066 (0.125 log2(e) rounded) times ln 2. Hkv and G become fa4's heads:
// 8 x 4 = 32 over 8.
// CHECK-LABEL: func.func @iree_gqa(
// CHECK: %[[QT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x8x4x128x64xbf16>) outs(%{{.*}} : tensor<2x128x8x4x64xbf16>) permutation = [0, 3, 1, 2, 4]
// CHECK: %[[QC:.*]] = tensor.collapse_shape %[[QT]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x128x8x4x64xbf16> into tensor<2x128x32x64xbf16>
// CHECK: %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x8x256x64xbf16>) outs(%{{.*}} : tensor<2x256x8x64xbf16>) permutation = [0, 2, 1, 3]
// CHECK: fa4.attention ins(%[[QC]], %[[KT]], %{{.*}} : tensor<2x128x32x64xbf16>, tensor<2x256x8x64xbf16>, tensor<2x256x8x64xbf16>) outs(%{{.*}} : tensor<2x128x32x64xbf16>) {scale = 0.125226781 : f32}
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x128x8x4x64xbf16>) outs(%{{.*}} : tensor<2x8x4x128x64xbf16>) permutation = [0, 2, 3, 1, 4]
// CHECK-NOT: math.exp2
#gq = affine_map<(b, g, r, i, j, d) -> (b, g, r, i, d)>
#gk = affine_map<(b, g, r, i, j, d) -> (b, g, j, d)>
#gs = affine_map<(b, g, r, i, j, d) -> (b, g, r, i, j)>
#gp = affine_map<(b, g, r, i, e, j) -> (b, g, r, i, j)>
#gv = affine_map<(b, g, r, i, e, j) -> (b, g, j, e)>
#go = affine_map<(b, g, r, i, e, j) -> (b, g, r, i, e)>
#id5 = affine_map<(b, g, r, i, j) -> (b, g, r, i, j)>
#row5 = affine_map<(b, g, r, i, j) -> (b, g, r, i)>
#oid5 = affine_map<(b, g, r, i, e) -> (b, g, r, i, e)>
#orow5 = affine_map<(b, g, r, i, e) -> (b, g, r, i)>
func.func @iree_gqa(%q: tensor<2x8x4x128x64xbf16>, %k: tensor<2x8x256x64xbf16>, %v: tensor<2x8x256x64xbf16>) -> tensor<2x8x4x128x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %eq = tensor.empty() : tensor<2x8x4x128x64xbf16>
  %qs = linalg.generic {indexing_maps = [#oid5, #oid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4x128x64xbf16>) outs(%eq : tensor<2x8x4x128x64xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %c = arith.constant 0.180336878 : bf16
    %y = arith.mulf %x, %c : bf16
    linalg.yield %y : bf16
  } -> tensor<2x8x4x128x64xbf16>
  %es = tensor.empty() : tensor<2x8x4x128x256xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x4x128x256xf32>) -> tensor<2x8x4x128x256xf32>
  %s = linalg.generic {indexing_maps = [#gq, #gk, #gs], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %k : tensor<2x8x4x128x64xbf16>, tensor<2x8x256x64xbf16>) outs(%sf : tensor<2x8x4x128x256xf32>) {
  ^bb0(%a: bf16, %bb: bf16, %acc: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.extf %bb : bf16 to f32
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4x128x256xf32>
  %er = tensor.empty() : tensor<2x8x4x128xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x8x4x128xf32>) -> tensor<2x8x4x128xf32>
  %max = linalg.reduce ins(%s : tensor<2x8x4x128x256xf32>) outs(%mf : tensor<2x8x4x128xf32>) dimensions = [4]
    (%x: f32, %acc: f32) {
      %y = arith.maxnumf %x, %acc : f32
      linalg.yield %y : f32
    }
  %p = linalg.generic {indexing_maps = [#id5, #row5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s, %max : tensor<2x8x4x128x256xf32>, tensor<2x8x4x128xf32>) outs(%es : tensor<2x8x4x128x256xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp2 %d : f32
    linalg.yield %e : f32
  } -> tensor<2x8x4x128x256xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%er : tensor<2x8x4x128xf32>) -> tensor<2x8x4x128xf32>
  %sum = linalg.reduce ins(%p : tensor<2x8x4x128x256xf32>) outs(%zf : tensor<2x8x4x128xf32>) dimensions = [4]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %ebf = tensor.empty() : tensor<2x8x4x128x256xbf16>
  %pb = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<2x8x4x128x256xf32>) outs(%ebf : tensor<2x8x4x128x256xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x8x4x128x256xbf16>
  %eo = tensor.empty() : tensor<2x8x4x128x64xf32>
  %of = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x4x128x64xf32>) -> tensor<2x8x4x128x64xf32>
  %o = linalg.generic {indexing_maps = [#gp, #gv, #go], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pb, %v : tensor<2x8x4x128x256xbf16>, tensor<2x8x256x64xbf16>) outs(%of : tensor<2x8x4x128x64xf32>) {
  ^bb0(%a: bf16, %bb: bf16, %acc: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.extf %bb : bf16 to f32
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4x128x64xf32>
  %n = linalg.generic {indexing_maps = [#oid5, #orow5, #oid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%o, %sum : tensor<2x8x4x128x64xf32>, tensor<2x8x4x128xf32>) outs(%eq : tensor<2x8x4x128x64xbf16>) {
  ^bb0(%x: f32, %l: f32, %out: bf16):
    %d = arith.divf %x, %l : f32
    %t = arith.truncf %d : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x8x4x128x64xbf16>
  return %n : tensor<2x8x4x128x64xbf16>
}

// -----

// A scale on Q scales Q K^T only: the mask added after it keeps its own
// weight (the region adds it unscaled).
// CHECK-LABEL: func.func @qkscale_mask(
// CHECK: fa4.attention {{.*}} {scale = 1.250000e-01 : f32} {{.*}} score {
// CHECK-NOT: arith.mulf
// CHECK: fa4.yield
// Q pre-scaled by 0.125, additive mask: the raiser also scales the mask by 0.125.
func.func @qkscale_mask(%q: tensor<1x4x64xf16>, %k: tensor<1x8x64xf16>, %v: tensor<1x8x64xf16>, %m: tensor<1x4x8xf16>) -> tensor<1x4x64xf16> {
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<1x4x64xf16>
  %qs = linalg.generic {indexing_maps = [affine_map<(b, i, d) -> (b, i, d)>, affine_map<(b, i, d) -> (b, i, d)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<1x4x64xf16>) outs(%eq : tensor<1x4x64xf16>) {
  ^bb0(%a: f16, %o: f16):
    %c = arith.constant 0.125 : f16
    %r = arith.mulf %a, %c : f16
    linalg.yield %r : f16
  } -> tensor<1x4x64xf16>
  %es = tensor.empty() : tensor<1x4x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qs, %k : tensor<1x4x64xf16>, tensor<1x8x64xf16>) outs(%sf : tensor<1x4x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %x = arith.extf %a : f16 to f32
    %y = arith.extf %b : f16 to f32
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<1x4x8xf32>, tensor<1x4x8xf16>) outs(%es : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %b: f16, %o: f32):
    %y = arith.extf %b : f16 to f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<1x4x8xf32>) outs(%es : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %pb0 = tensor.empty() : tensor<1x4x8xf16>
  %pb = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x8xf32>) outs(%pb0 : tensor<1x4x8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x4x8xf16>
  %eo = tensor.empty() : tensor<1x4x64xf16>
  %zh = arith.constant 0.0 : f16
  %of = linalg.fill ins(%zh : f16) outs(%eo : tensor<1x4x64xf16>) -> tensor<1x4x64xf16>
  %o = linalg.batch_matmul ins(%pb, %v : tensor<1x4x8xf16>, tensor<1x8x64xf16>) outs(%of : tensor<1x4x64xf16>) -> tensor<1x4x64xf16>
  return %o : tensor<1x4x64xf16>
}

// -----

// GQA with a mask over the key/value heads: the group size is the loop's
// static size (2), though the scores' type leaves it dynamic, and the region
// reads the mask at head / 2.
// CHECK-LABEL: func.func @gqa_dyn_group_mask(
// CHECK: fa4.attention {{.*}} -> tensor<1x4x4x64xf16> score {
// CHECK: %[[H:.*]] = arith.divui %{{.*}}, %c2 : index
// CHECK: tensor.extract %{{.*}}[%[[H]], %{{.*}}, %{{.*}}] : tensor<2x4x8xf16>
// GQA: Q [B=1, H=2, G=2, S, D], K/V [B, H, T, D]; the scores' type has the
// group dimension dynamic; an additive mask [H, S, T] read at (h, i, j).
#q = affine_map<(b, h, g, i, j, d) -> (b, h, g, i, d)>
#k = affine_map<(b, h, g, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, g, i, j, d) -> (b, h, g, i, j)>
#p = affine_map<(b, h, g, i, e, j) -> (b, h, g, i, j)>
#v = affine_map<(b, h, g, i, e, j) -> (b, h, j, e)>
#o = affine_map<(b, h, g, i, e, j) -> (b, h, g, i, e)>
#id = affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>
#m = affine_map<(b, h, g, i, j) -> (h, i, j)>
func.func @gqa_dyn_group_mask(%q: tensor<1x2x2x4x64xf16>, %k: tensor<1x2x8x64xf16>, %v: tensor<1x2x8x64xf16>, %mask: tensor<2x4x8xf16>) -> tensor<1x2x2x4x64xf16> {
  %zero = arith.constant 0.0 : f16
  %c2 = arith.constant 2 : index
  %es = tensor.empty(%c2) : tensor<1x2x?x4x8xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%es : tensor<1x2x?x4x8xf16>) -> tensor<1x2x?x4x8xf16>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x2x4x64xf16>, tensor<1x2x8x64xf16>) outs(%sf : tensor<1x2x?x4x8xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %r = arith.addf %acc, %x : f16
    linalg.yield %r : f16
  } -> tensor<1x2x?x4x8xf16>
  %sm = linalg.generic {indexing_maps = [#id, #m, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x2x?x4x8xf16>, tensor<2x4x8xf16>) outs(%es : tensor<1x2x?x4x8xf16>) {
  ^bb0(%a: f16, %bb: f16, %o: f16):
    %r = arith.addf %a, %bb : f16
    linalg.yield %r : f16
  } -> tensor<1x2x?x4x8xf16>
  %p = linalg.softmax dimension(4) ins(%sm : tensor<1x2x?x4x8xf16>) outs(%es : tensor<1x2x?x4x8xf16>) -> tensor<1x2x?x4x8xf16>
  %eo = tensor.empty() : tensor<1x2x2x4x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<1x2x2x4x64xf16>) -> tensor<1x2x2x4x64xf16>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x?x4x8xf16>, tensor<1x2x8x64xf16>) outs(%of : tensor<1x2x2x4x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %r = arith.addf %acc, %x : f16
    linalg.yield %r : f16
  } -> tensor<1x2x2x4x64xf16>
  return %o : tensor<1x2x2x4x64xf16>
}

// -----

// A single [S, D] attention with a mask: unit batch and heads.
// CHECK-LABEL: func.func @mask2d(
// CHECK: fa4.attention {{.*}} captures(%{{.*}} : tensor<4x8xf16>) {scale = 1.250000e-01 : f32} -> tensor<1x4x1x64xf16> score {
// CHECK-NEXT: ^bb0(%{{[^:]*}}: f32, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[T:[^:]*]]: tensor<4x8xf16>):
// CHECK: tensor.extract %[[T]][%[[I]], %[[J]]] : tensor<4x8xf16>
func.func @mask2d(%q: tensor<4x64xf16>, %k: tensor<8x64xf16>, %v: tensor<8x64xf16>, %m: tensor<4x8xf16>) -> tensor<4x64xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<4x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%es : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x64xf16>, tensor<8x64xf16>) outs(%sf : tensor<4x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %x = arith.extf %a : f16 to f32
    %y = arith.extf %b : f16 to f32
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x8xf32>, tensor<4x8xf16>) outs(%es : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f16, %o: f32):
    %c = arith.constant 0.125 : f32
    %x = arith.mulf %a, %c : f32
    %y = arith.extf %b : f16 to f32
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%sm : tensor<4x8xf32>) outs(%es : tensor<4x8xf32>) -> tensor<4x8xf32>
  %pb0 = tensor.empty() : tensor<4x8xf16>
  %pb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x8xf32>) outs(%pb0 : tensor<4x8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x8xf16>
  %eo = tensor.empty() : tensor<4x64xf16>
  %zh = arith.constant 0.0 : f16
  %of = linalg.fill ins(%zh : f16) outs(%eo : tensor<4x64xf16>) -> tensor<4x64xf16>
  %o = linalg.matmul ins(%pb, %v : tensor<4x8xf16>, tensor<8x64xf16>) outs(%of : tensor<4x64xf16>) -> tensor<4x64xf16>
  return %o : tensor<4x64xf16>
}

// -----

// The output's type leaves a static size dynamic: the result is cast to it.
// CHECK-LABEL: func.func @odyn(
// CHECK: %[[C:.*]] = tensor.cast %{{.*}} : tensor<4x64xf16> to tensor<4x?xf16>
// CHECK: return %[[C]]
// The P V result typed tensor<4x?xf16> though V's value dim is static 64.
func.func @odyn(%q: tensor<4x64xf16>, %k: tensor<8x64xf16>, %v: tensor<8x64xf16>) -> tensor<4x?xf16> {
  %zero = arith.constant 0.0 : f16
  %c64 = arith.constant 64 : index
  %es = tensor.empty() : tensor<4x8xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%es : tensor<4x8xf16>) -> tensor<4x8xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x64xf16>, tensor<8x64xf16>) outs(%sf : tensor<4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %x = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %x : f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x8xf16>) outs(%es : tensor<4x8xf16>) -> tensor<4x8xf16>
  %eo = tensor.empty(%c64) : tensor<4x?xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<4x?xf16>) -> tensor<4x?xf16>
  %o = linalg.matmul ins(%p, %v : tensor<4x8xf16>, tensor<8x64xf16>) outs(%of : tensor<4x?xf16>) -> tensor<4x?xf16>
  return %o : tensor<4x?xf16>
}
