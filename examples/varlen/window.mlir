// Packed sequences with an asymmetric sliding window (40 keys behind, 10
// ahead, bottom-right aligned to each sequence), head dim 64, MHA.
func.func @window(%q: memref<?x4x64xf16>, %k: memref<?x4x64xf16>,
                  %v: memref<?x4x64xf16>, %o: memref<?x4x64xf16>,
                  %cu_q: memref<?xi32>, %cu_k: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x4x64xf16>, memref<?x4x64xf16>,
                    memref<?x4x64xf16>)
                outs(%o : memref<?x4x64xf16>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                {window = array<i64: 40, 10>}
  return
}
