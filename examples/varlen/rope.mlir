// Packed prefill with the rotary embedding fused: sequences of variable
// lengths, causal within each, 32 query heads over 8 KV heads, head dim
// 128, every dim of Q rotated (GPT-J pairs) at its token's position:
// positions[t] for packed query row t (each sequence numbers its own
// tokens, from its cached length on), angles from the [P, 128] cos | sin
// table. K is taken as already rotated.
func.func @varlen_rope(%q: memref<?x32x128xbf16>, %k: memref<?x8x128xbf16>,
                       %v: memref<?x8x128xbf16>, %o: memref<?x32x128xbf16>,
                       %lse: memref<32x?xf32>, %cu_q: memref<?xi32>,
                       %cu_k: memref<?xi32>, %cos_sin: memref<?x128xf32>,
                       %positions: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x32x128xbf16>, memref<?x8x128xbf16>,
                    memref<?x8x128xbf16>)
                outs(%o : memref<?x32x128xbf16>) lse(%lse : memref<32x?xf32>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                rope(%cos_sin, %positions : memref<?x128xf32>, memref<?xi32>)
                {causal}
  return
}
