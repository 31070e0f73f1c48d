// A learned relative-position bias (T5-style, clipped): a table of 2R + 1
// biases per head, indexed by the key's offset from the query clipped to
// [-R, R] (R = 64). The table is bf16, widened in the region.
func.func @relative_bias(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x4x64xbf16>,
                         %v: memref<?x?x4x64xbf16>, %o: memref<?x?x4x64xbf16>,
                         %table: memref<4x129xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>,
                    memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>)
                captures(%table : memref<4x129xbf16>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %t: memref<4x129xbf16>):
    %c64 = arith.constant 64 : index
    %cm64 = arith.constant -64 : index
    %offset = arith.subi %j, %i : index
    %low = arith.maxsi %offset, %cm64 : index
    %clipped = arith.minsi %low, %c64 : index
    %bucket = arith.addi %clipped, %c64 : index
    %bias16 = memref.load %t[%h, %bucket] : memref<4x129xbf16>
    %bias = arith.extf %bias16 : bf16 to f32
    %r = arith.addf %s, %bias : f32
    fa4.yield %r : f32
  }
  return
}
