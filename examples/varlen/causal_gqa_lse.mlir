// Packed sequences of variable lengths, causal within each, 8 query heads
// over 2 KV heads, head dim 64, with the log-sum-exp ([Hq, total_q]).
func.func @causal_gqa_lse(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
                          %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>,
                          %lse: memref<8x?xf32>, %cu_q: memref<?xi32>,
                          %cu_k: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>,
                    memref<?x2x64xbf16>)
                outs(%o : memref<?x8x64xbf16>) lse(%lse : memref<8x?xf32>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) {causal}
  return
}
