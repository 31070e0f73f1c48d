// Decode with the query's rotary embedding fused (GPT-J pairs): a paged
// cache whose keys were rotated when written, Llama-3 8B's heads (32 query
// heads over 8 KV heads, head dim 128), each new token rotated at its
// position in the sequence (`positions`, from the [max_position, 128]
// cos | sin table) inside the kernel. Causal, aligned to each sequence's
// cache length; with LSE.
func.func @decode_rope(%q: memref<?x?x32x128xbf16>, %k: memref<?x256x8x128xbf16>,
                       %v: memref<?x256x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                       %lse: memref<?x32x?xf32>, %cache_lengths: memref<?xi32>,
                       %page_table: memref<?x?xi32>, %cos_sin: memref<?x128xf32>,
                       %positions: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x256x8x128xbf16>, memref<?x256x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>)
                seqused_k(%cache_lengths : memref<?xi32>)
                paged(%page_table : memref<?x?xi32>)
                rope(%cos_sin, %positions : memref<?x128xf32>, memref<?x?xi32>)
                {causal}
  return
}
