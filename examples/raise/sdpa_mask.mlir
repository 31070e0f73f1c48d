// SDPA with an additive mask as torch-mlir writes it in linalg on [B, H, S, D]
// f16 tensors (fa4-raise-attention's input). Compile with:
//   fa4-opt examples/raise/sdpa_mask.mlir --pass-pipeline='builtin.module(
//     fa4-raise-attention, canonicalize, one-shot-bufferize{
//     bufferize-function-boundaries function-boundary-type-conversion=
//     identity-layout-map}, fa4-compile{arch=sm_90a emit-dir=out})'
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p5 = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#v5 = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#o5 = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#mask = affine_map<(b, h, i, j) -> (0, 0, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i, 0)>
func.func @sdpa_mask(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %m: tensor<1x1x?x?xf16>) -> tensor<?x8x?x64xf16> {
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

