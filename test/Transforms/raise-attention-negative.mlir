// Near misses that must stay as written, each with the remark saying why.
// RUN: fa4-opt %s -split-input-file --fa4-raise-attention -verify-diagnostics | FileCheck %s


// The softmax's max and sum reduce the query dimension, not the keys.
// CHECK-LABEL: func.func @wrong_reduction_dim(
// CHECK-NOT: fa4.attention
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
func.func @wrong_reduction_dim(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x8x?x64xf16>
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xf16>
  %skv = tensor.dim %v, %c2 : tensor<?x8x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e4 = tensor.empty(%b, %sq, %skv) : tensor<?x8x?x?xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%e4 : tensor<?x8x?x?xf16>) -> tensor<?x8x?x?xf16>
  %s = linalg.generic {indexing_maps = [#q4, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>) outs(%sf : tensor<?x8x?x?xf16>) {
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
  %e1 = tensor.empty(%b, %sq) : tensor<?x8x1x?xf16>
  %mf = linalg.fill ins(%ninf : f16) outs(%e1 : tensor<?x8x1x?xf16>) -> tensor<?x8x1x?xf16>
  %max = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, 0, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<?x8x?x?xf16>) outs(%mf : tensor<?x8x1x?xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.maximumf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x1x?xf16>
  %exp = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, 0, j)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %max : tensor<?x8x?x?xf16>, tensor<?x8x1x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.subf %x, %y : f16
    %w = math.exp %z : f16
    linalg.yield %w : f16
  } -> tensor<?x8x?x?xf16>
  %zf = linalg.fill ins(%zero : f16) outs(%e1 : tensor<?x8x1x?xf16>) -> tensor<?x8x1x?xf16>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, 0, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<?x8x?x?xf16>) outs(%zf : tensor<?x8x1x?xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.addf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x1x?xf16>
  %p = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, 0, j)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<?x8x?x?xf16>, tensor<?x8x1x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.divf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %eo = tensor.empty(%b, %sq) : tensor<?x8x?x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  // expected-remark @+1 {{not raised to fa4.attention: P is a quotient, but not of exponentials by their sum}}
  %o = linalg.generic {indexing_maps = [#p5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x8x?x?xf16>, tensor<?x8x?x64xf16>) outs(%of : tensor<?x8x?x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// exp(S) / sum(exp(S)) without subtracting the row max: in f16 it overflows at
// scores past 11, where fa4's stable softmax does not.
// CHECK-LABEL: func.func @unstabilized(
// CHECK-NOT: fa4.attention
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
func.func @unstabilized(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x8x?x64xf16>
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xf16>
  %skv = tensor.dim %v, %c2 : tensor<?x8x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e4 = tensor.empty(%b, %sq, %skv) : tensor<?x8x?x?xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%e4 : tensor<?x8x?x?xf16>) -> tensor<?x8x?x?xf16>
  %s = linalg.generic {indexing_maps = [#q4, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>) outs(%sf : tensor<?x8x?x?xf16>) {
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
  %e1 = tensor.empty(%b, %sq) : tensor<?x8x?x1xf16>
  %exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled : tensor<?x8x?x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %o: f16):
    %w = math.exp %x : f16
    linalg.yield %w : f16
  } -> tensor<?x8x?x?xf16>
  %zf = linalg.fill ins(%zero : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<?x8x?x?xf16>) outs(%zf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.addf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %p = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.divf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %eo = tensor.empty(%b, %sq) : tensor<?x8x?x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  // expected-remark @+1 {{not raised to fa4.attention: the softmax does not subtract the row maximum before the exponential (unstabilized: it overflows where fa4 does not)}}
  %o = linalg.generic {indexing_maps = [#p5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x8x?x?xf16>, tensor<?x8x?x64xf16>) outs(%of : tensor<?x8x?x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// A mask that multiplies the scores is not an additive mask.
// CHECK-LABEL: func.func @multiplied_mask(
// CHECK-NOT: fa4.attention
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
func.func @multiplied_mask(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %m: tensor<?x8x?x?xf16>) -> tensor<?x8x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x8x?x64xf16>
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xf16>
  %skv = tensor.dim %v, %c2 : tensor<?x8x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e4 = tensor.empty(%b, %sq, %skv) : tensor<?x8x?x?xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%e4 : tensor<?x8x?x?xf16>) -> tensor<?x8x?x?xf16>
  %s = linalg.generic {indexing_maps = [#q4, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>) outs(%sf : tensor<?x8x?x?xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x?xf16>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %m : tensor<?x8x?x?xf16>, tensor<?x8x?x?xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %mm: f16, %o: f16):
    %c8 = arith.constant 8.0 : f16
    %z = arith.divf %x, %c8 : f16
    %y = arith.mulf %z, %mm : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x?xf16>
  %e1 = tensor.empty(%b, %sq) : tensor<?x8x?x1xf16>
  %mf = linalg.fill ins(%ninf : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %max = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<?x8x?x?xf16>) outs(%mf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.maximumf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %exp = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %max : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.subf %x, %y : f16
    %w = math.exp %z : f16
    linalg.yield %w : f16
  } -> tensor<?x8x?x?xf16>
  %zf = linalg.fill ins(%zero : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<?x8x?x?xf16>) outs(%zf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.addf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %p = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.divf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %eo = tensor.empty(%b, %sq) : tensor<?x8x?x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  // expected-remark @+1 {{not raised to fa4.attention: the scores are not a scale of Q K^T plus additive biases}}
  %o = linalg.generic {indexing_maps = [#p5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x8x?x?xf16>, tensor<?x8x?x64xf16>) outs(%of : tensor<?x8x?x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// Q K with K [B, H, S, D] read as [B, H, D, S]: the keys' positions are
// contracted against Q's head dim (square shapes make it type-check).
// CHECK-LABEL: func.func @k_not_transposed(
// CHECK-NOT: fa4.attention
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
func.func @k_not_transposed(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x64x?xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x8x?x64xf16>
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x64xf16>
  %skv = tensor.dim %v, %c2 : tensor<?x8x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e4 = tensor.empty(%b, %sq, %skv) : tensor<?x8x?x?xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%e4 : tensor<?x8x?x?xf16>) -> tensor<?x8x?x?xf16>
  %s = linalg.generic {indexing_maps = [#q4, affine_map<(b, h, i, j, d) -> (b, h, d, j)>, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x8x?x64xf16>, tensor<?x8x64x?xf16>) outs(%sf : tensor<?x8x?x?xf16>) {
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
  %e1 = tensor.empty(%b, %sq) : tensor<?x8x?x1xf16>
  %mf = linalg.fill ins(%ninf : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %max = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<?x8x?x?xf16>) outs(%mf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.maximumf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %exp = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %max : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.subf %x, %y : f16
    %w = math.exp %z : f16
    linalg.yield %w : f16
  } -> tensor<?x8x?x?xf16>
  %zf = linalg.fill ins(%zero : f16) outs(%e1 : tensor<?x8x?x1xf16>) -> tensor<?x8x?x1xf16>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<?x8x?x?xf16>) outs(%zf : tensor<?x8x?x1xf16>) {
  ^bb0(%x: f16, %acc: f16):
    %y = arith.addf %x, %acc : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x1xf16>
  %p = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, i, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<?x8x?x?xf16>, tensor<?x8x?x1xf16>) outs(%e4 : tensor<?x8x?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %z = arith.divf %x, %y : f16
    linalg.yield %z : f16
  } -> tensor<?x8x?x?xf16>
  %eo = tensor.empty(%b, %sq) : tensor<?x8x?x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  // expected-remark @+1 {{not raised to fa4.attention: K and V are not stored in the same layout (is K transposed for Q K^T?)}}
  %o = linalg.generic {indexing_maps = [#p5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x8x?x?xf16>, tensor<?x8x?x64xf16>) outs(%of : tensor<?x8x?x64xf16>) {
  ^bb0(%a: f16, %bb: f16, %acc: f16):
    %x = arith.mulf %a, %bb : f16
    %y = arith.addf %acc, %x : f16
    linalg.yield %y : f16
  } -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// P V divided, IREE-style, by the sum of another row: the divisor reads the
// two batch dimensions swapped.
// CHECK-LABEL: func.func @iree_div_swap(
// CHECK-NOT: fa4.attention
// IREE-style: P = exp(S - max) unnormalized, O = (P V) / sum, but the sum
// [B, X, S] is read at (x, b, i) instead of (b, x, i).
#q = affine_map<(b, x, i, j, d) -> (b, x, i, d)>
#k = affine_map<(b, x, i, j, d) -> (b, x, j, d)>
#s = affine_map<(b, x, i, j, d) -> (b, x, i, j)>
#p = affine_map<(b, x, i, e, j) -> (b, x, i, j)>
#v = affine_map<(b, x, i, e, j) -> (b, x, j, e)>
#o = affine_map<(b, x, i, e, j) -> (b, x, i, e)>
#id4 = affine_map<(b, x, i, j) -> (b, x, i, j)>
#row = affine_map<(b, x, i, j) -> (b, x, i)>
#oid = affine_map<(b, x, i, e) -> (b, x, i, e)>
#swapped = affine_map<(b, x, i, e) -> (x, b, i)>
func.func @iree_div_swap(%q: tensor<2x2x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>) -> tensor<2x2x16x64xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x2x16x32xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%es : tensor<2x2x16x32xf32>) -> tensor<2x2x16x32xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x2x16x64xf16>, tensor<2x2x32x64xf16>) outs(%sf : tensor<2x2x16x32xf32>) {
  ^bb0(%a: f16, %bb: f16, %acc: f32):
    %x = arith.extf %a : f16 to f32
    %y = arith.extf %bb : f16 to f32
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x2x16x32xf32>
  %er = tensor.empty() : tensor<2x2x16xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %max = linalg.reduce ins(%s : tensor<2x2x16x32xf32>) outs(%mf : tensor<2x2x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %y = arith.maximumf %in, %acc : f32
      linalg.yield %y : f32
    }
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %max : tensor<2x2x16x32xf32>, tensor<2x2x16xf32>) outs(%es : tensor<2x2x16x32xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x2x16x32xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%er : tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %sum = linalg.reduce ins(%p : tensor<2x2x16x32xf32>) outs(%zf : tensor<2x2x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %y = arith.addf %in, %acc : f32
      linalg.yield %y : f32
    }
  %eo = tensor.empty() : tensor<2x2x16x64xf32>
  %of = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x2x16x64xf32>) -> tensor<2x2x16x64xf32>
  // expected-remark @+1 {{not raised to fa4.attention: the sum divides P V along the wrong dimensions}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x2x16x32xf32>, tensor<2x2x32x64xf16>) outs(%of : tensor<2x2x16x64xf32>) {
  ^bb0(%a: f32, %bb: f16, %acc: f32):
    %y = arith.extf %bb : f16 to f32
    %m = arith.mulf %a, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x2x16x64xf32>
  %eh = tensor.empty() : tensor<2x2x16x64xf16>
  %n = linalg.generic {indexing_maps = [#oid, #swapped, #oid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o, %sum : tensor<2x2x16x64xf32>, tensor<2x2x16xf32>) outs(%eh : tensor<2x2x16x64xf16>) {
  ^bb0(%x: f32, %l: f32, %out: f16):
    %d = arith.divf %x, %l : f32
    %t = arith.truncf %d : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x2x16x64xf16>
  return %n : tensor<2x2x16x64xf16>
}

// -----

// K's type leaves its head dim dynamic: the kernel needs it static.
// CHECK-LABEL: func.func @kdyn(
// CHECK-NOT: fa4.attention
// K typed tensor<?x?xf16> (its head dim dynamic in the type); Q and V static.
func.func @kdyn(%q: tensor<4x64xf16>, %k: tensor<?x?xf16>, %v: tensor<8x64xf16>) -> tensor<4x64xf16> {
  %zero = arith.constant 0.0 : f16
  %es = tensor.empty() : tensor<4x8xf16>
  %sf = linalg.fill ins(%zero : f16) outs(%es : tensor<4x8xf16>) -> tensor<4x8xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x64xf16>, tensor<?x?xf16>) outs(%sf : tensor<4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %x = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %x : f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x8xf16>) outs(%es : tensor<4x8xf16>) -> tensor<4x8xf16>
  %eo = tensor.empty() : tensor<4x64xf16>
  %of = linalg.fill ins(%zero : f16) outs(%eo : tensor<4x64xf16>) -> tensor<4x64xf16>
  // expected-remark @+1 {{not raised to fa4.attention: K has a dynamic head count or head dim (dimension 1)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x8xf16>, tensor<8x64xf16>) outs(%of : tensor<4x64xf16>) -> tensor<4x64xf16>
  return %o : tensor<4x64xf16>
}

// -----

// Linalg on memrefs is left alone (the pass reads tensors).
// CHECK-LABEL: func.func @memrefs(
// CHECK: linalg.batch_matmul
func.func @memrefs(%q: memref<2x16x64xf16>, %k: memref<2x64x32xf16>, %s: memref<2x16x32xf16>) {
  linalg.batch_matmul ins(%q, %k : memref<2x16x64xf16>, memref<2x64x32xf16>) outs(%s : memref<2x16x32xf16>)
  return
}
