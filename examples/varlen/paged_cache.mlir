// Packed sequences over a paged KV cache (chunked prefill against vLLM's
// cache, flash_attn_varlen_func with a block_table): each sequence's new
// query rows are packed in Q [total_q, 32, 128]; its keys are the first
// cu_seqlens_k[b + 1] - cu_seqlens_k[b] of the cache, read through its row
// of the page table (pages of 64 keys). Causal, aligned to each sequence's
// own lengths; Llama-3 8B's heads (GQA 4), LSE [32, total_q].
func.func @paged_cache(%q: memref<?x32x128xbf16>, %k: memref<?x64x8x128xbf16>,
                       %v: memref<?x64x8x128xbf16>, %o: memref<?x32x128xbf16>,
                       %lse: memref<32x?xf32>, %cu_q: memref<?xi32>,
                       %cu_k: memref<?xi32>, %page_table: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x32x128xbf16>,
                    memref<?x64x8x128xbf16>, memref<?x64x8x128xbf16>)
                outs(%o : memref<?x32x128xbf16>) lse(%lse : memref<32x?xf32>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                paged(%page_table : memref<?x?xi32>) {causal}
  return
}
