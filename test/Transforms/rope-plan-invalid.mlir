// RUN: fa4-opt %s -split-input-file --fa4-plan -verify-diagnostics
// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_90a -verify-diagnostics

// What fa4-plan refuses of the rotary embedding, on both targets.

// Packed sequences' positions ([total_q]) within the kernel's 32-bit sizes.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %cs: memref<?x64xf32>, %pos: memref<4294967296xi32>) {
  // expected-error @+1 {{positions dimension 0 (total_q) is 4294967296, more than the kernel's 32-bit sizes and TMA coordinates hold (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%cq, %ck : memref<?xi32>, memref<?xi32>) rope(%cs, %pos : memref<?x64xf32>, memref<4294967296xi32>)
  return
}

// -----

// The kernel's 32-bit sizes hold the table.
func.func @f(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>, %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>, %cs: memref<4294967296x64xf32>, %pos: memref<?x?xi32>) {
  // expected-error @+1 {{cos_sin dimension 0 (positions) is 4294967296, more than the kernel's 32-bit sizes and TMA coordinates hold (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>) rope(%cs, %pos : memref<4294967296x64xf32>, memref<?x?xi32>)
  return
}
