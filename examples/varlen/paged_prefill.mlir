// A KV cache laid out per sequence with room to spare: cu_seqlens_k gives
// each sequence's slot range and seqused_k the keys it holds. Causal,
// softcapped (Gemma-2 style) with an attention sink per query head and 8
// query heads per KV head, head dim 128.
func.func @cached_prefill(%q: memref<?x16x128xf16>, %k: memref<?x2x128xf16>,
                          %v: memref<?x2x128xf16>, %o: memref<?x16x128xf16>,
                          %sink: memref<16xf32>, %cu_q: memref<?xi32>,
                          %cu_k: memref<?xi32>, %used_k: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x16x128xf16>, memref<?x2x128xf16>,
                    memref<?x2x128xf16>)
                outs(%o : memref<?x16x128xf16>) sink(%sink : memref<16xf32>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                seqused_k(%used_k : memref<?xi32>)
                {causal, softcap = 20.0 : f32}
  return
}
