// ALiBi (Press et al.): each query head adds its slope times the key's
// distance behind the query to the score. The slopes are a captured operand.
func.func @alibi(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                 %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>,
                 %slopes: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>,
                    memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
                captures(%slopes : memref<8xf32>) {causal} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %slope_table: memref<8xf32>):
    %slope = memref.load %slope_table[%h] : memref<8xf32>
    %distance = arith.subi %j, %i : index
    %d32 = arith.index_cast %distance : index to i32
    %df = arith.sitofp %d32 : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa4.yield %t : f32
  }
  return
}
