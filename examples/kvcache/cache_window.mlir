// A contiguous KV cache [B, capacity, Hkv, D] with each batch's length in
// seqused_k: Mistral-style sliding window (4095 keys back), f16, head dim
// 64, GQA 4 with attention sinks.
func.func @cache_window(%q: memref<?x?x16x64xf16>, %k: memref<?x?x4x64xf16>,
                        %v: memref<?x?x4x64xf16>, %o: memref<?x?x16x64xf16>,
                        %sink: memref<16xf32>, %cache_lengths: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x64xf16>, memref<?x?x4x64xf16>,
                    memref<?x?x4x64xf16>)
                outs(%o : memref<?x?x16x64xf16>) sink(%sink : memref<16xf32>)
                seqused_k(%cache_lengths : memref<?xi32>)
                {causal, window = array<i64: 4095, 0>}
  return
}
