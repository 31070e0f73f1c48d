// Every stage at once: a softcap, a score region (halving the capped
// score), a mask region that reads the capped score (keys below a per-head
// floor are dropped), a window, attention sinks, GQA 4 and LSE.
func.func @capped_score_mask(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x1x64xbf16>,
                             %v: memref<?x?x1x64xbf16>, %o: memref<?x?x4x64xbf16>,
                             %lse: memref<?x4x?xf32>, %sink: memref<4xf32>,
                             %floor: memref<4xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>,
                    memref<?x?x1x64xbf16>, memref<?x?x1x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>)
                lse(%lse : memref<?x4x?xf32>) sink(%sink : memref<4xf32>)
                captures(%floor : memref<4xf32>)
                {softcap = 3.0 : f32, window = array<i64: 100, 40>} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %f: memref<4xf32>):
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    fa4.yield %t : f32
  } mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %f: memref<4xf32>):
    %limit = memref.load %f[%h] : memref<4xf32>
    %keep = arith.cmpf oge, %s, %limit : f32
    fa4.yield %keep : i1
  }
  return
}
