// Document masking of packed sequences: each batch row packs several
// documents; a query sees only keys of its own document (and, causal,
// not after itself). The document of every query and key position is a
// captured [B, S] table (they differ when Sq != Skv).
func.func @document_mask(%q: memref<?x?x8x64xf16>, %k: memref<?x?x8x64xf16>,
                         %v: memref<?x?x8x64xf16>, %o: memref<?x?x8x64xf16>,
                         %q_docs: memref<?x?xi32>, %kv_docs: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>,
                    memref<?x?x8x64xf16>, memref<?x?x8x64xf16>)
                outs(%o : memref<?x?x8x64xf16>)
                captures(%q_docs, %kv_docs : memref<?x?xi32>, memref<?x?xi32>)
                {causal} mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %qd: memref<?x?xi32>, %kd: memref<?x?xi32>):
    %query_doc = memref.load %qd[%b, %i] : memref<?x?xi32>
    %key_doc = memref.load %kd[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %query_doc, %key_doc : i32
    fa4.yield %same : i1
  }
  return
}
