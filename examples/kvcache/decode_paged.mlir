// Decode against a paged KV cache (vLLM / flash_attn_with_kvcache layout):
// a few new tokens per sequence, Llama-3 8B's heads (32 query heads over 8
// KV heads, head dim 128), K and V in pages of 256 keys shared by every
// sequence, each sequence's pages listed in its page-table row and its
// cache length in seqused_k. Causal, aligned to each sequence's own cache
// length; with LSE.
func.func @decode_paged(%q: memref<?x?x32x128xbf16>, %k: memref<?x256x8x128xbf16>,
                        %v: memref<?x256x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                        %lse: memref<?x32x?xf32>, %cache_lengths: memref<?xi32>,
                        %page_table: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x256x8x128xbf16>, memref<?x256x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>)
                seqused_k(%cache_lengths : memref<?xi32>)
                paged(%page_table : memref<?x?xi32>) {causal}
  return
}
