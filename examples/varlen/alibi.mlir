// ALiBi over packed sequences: the region's batch is the sequence and its
// query and key indices count from that sequence's start.
func.func @alibi_varlen(%q: memref<?x8x128xbf16>, %k: memref<?x2x128xbf16>,
                        %v: memref<?x2x128xbf16>, %o: memref<?x8x128xbf16>,
                        %cu_q: memref<?xi32>, %cu_k: memref<?xi32>,
                        %slopes: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x128xbf16>, memref<?x2x128xbf16>,
                    memref<?x2x128xbf16>)
                outs(%o : memref<?x8x128xbf16>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
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
