// The example attention op of the README: grouped-query causal attention with
// dynamic batch and sequence lengths, head dim 128, bf16, with LSE.
//
//   make run      # builds fa4-opt and compiles this file

func.func @gqa_causal(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                      %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                      %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>)
                lse(%lse : memref<?x32x?xf32>) {causal}
  return
}
