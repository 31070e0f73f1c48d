// The example attention op of the README: causal grouped-query attention
// (32 query heads over 8 key/value heads, bottom-right aligned) with dynamic
// batch and sequence lengths, head dim 128, bf16, with the log-sum-exp.
//
//   make run      # builds fa4-opt and compiles this file for sm_100a and sm_90a

func.func @gqa_causal(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                      %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                      %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>)
                lse(%lse : memref<?x32x?xf32>) {causal}
  return
}
