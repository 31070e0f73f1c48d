// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" -verify-diagnostics
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_100a" 2>&1 >/dev/null | FileCheck %s --check-prefix=SM100

// What fa4-plan refuses of FP8 operands, each at the op.

// sm_90a reads V K-major: a V with a unit-stride head dim is refused.
func.func @head_major_value(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{FP8 reads V K-major (the PV MMA takes 8-bit B operands K-major only): value must have unit stride in its seq_kv dimension (keys contiguous, e.g. a [B, Hkv, Dv, Skv] buffer viewed as [B, Skv, Hkv, Dv]), got 'memref<2x256x2x64xf8E4M3FN>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// A key-major V's other strides are TMA strides: 16-byte multiples.
func.func @unaligned(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN, strided<[32896, 1, 16448, 257]>>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{value stride 257 of dimension 3 (head_dim_v) is 257 bytes, which a TMA descriptor cannot describe (a multiple of 16 bytes below 2^40)}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN, strided<[32896, 1, 16448, 257]>>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// A paged cache's pages hold whole 128-key blocks: a key-major V block is
// one TMA box.
func.func @small_pages(%q: memref<?x1x8x128xf8E4M3FN>, %k: memref<?x64x2x128xf8E4M3FN>, %v: memref<?x64x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x1x8x128xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{FP8 reads V key-major in 128-key TMA boxes, each within one page: a paged KV cache needs pages of at least 128 keys, got pages of 64 keys}}
  fa4.attention ins(%q, %k, %v : memref<?x1x8x128xf8E4M3FN>, memref<?x64x2x128xf8E4M3FN>, memref<?x64x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x1x8x128xbf16>) paged(%t : memref<?x?xi32>)
  return
}

// sm_100a refuses the three alike. (FP8 head dims past 128 plan on both
// targets: fp8.mlir, fp8-sm100a.mlir.)
// SM100: error: 'fa4.attention' op FP8 reads V K-major (the PV MMA takes 8-bit B operands K-major only)
// SM100: error: 'fa4.attention' op value stride 257 of dimension 3 (head_dim_v) is 257 bytes
// SM100: error: 'fa4.attention' op FP8 reads V key-major in 128-key TMA boxes, each within one page: a paged KV cache needs pages of at least 128 keys, got pages of 64 keys
// SM100-NOT: error: 'fa4.attention' op
