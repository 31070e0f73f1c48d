// Prefix-LM: every query sees the first prefix[b] keys (the prompt,
// bidirectional) and causally the keys up to itself. Not `causal`: the mask
// region is the whole mask, so every visited block masks per element.
func.func @prefix_lm(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x16x128xbf16>,
                     %v: memref<?x?x16x128xbf16>, %o: memref<?x?x16x128xbf16>,
                     %lse: memref<?x16x?xf32>, %prefix: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>,
                    memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>)
                lse(%lse : memref<?x16x?xf32>)
                captures(%prefix : memref<?xi32>) mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %p: memref<?xi32>):
    %length = memref.load %p[%b] : memref<?xi32>
    %j32 = arith.index_cast %j : index to i32
    %in_prefix = arith.cmpi slt, %j32, %length : i32
    %not_after = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %in_prefix, %not_after : i1
    fa4.yield %keep : i1
  }
  return
}
