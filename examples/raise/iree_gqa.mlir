// Attention as IREE decomposes it, with grouped-query attention in the
// indexing maps (Q [B, Hkv, G, S, D], K and V [B, Hkv, S, D], bf16): Q
// scaled by scale * log2(e), exp2, the division by the sum after P V.
// Compiled like sdpa_mask.mlir.
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
