// RUN: fa4-opt %s -split-input-file -verify-diagnostics

// One case per rule of the fa4.attention verifier.

// Inputs must be f16, bf16 or (Q, K, V) FP8 e4m3.
func.func @f(%q: memref<2x128x8x64xf32>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{operand #0 must be 3D/4D memref or tensor of f16, bf16 or f8E4M3FN, but got 'memref<2x128x8x64xf32>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf32>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Without sequence tables every activation operand has rank 4.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{key must be [batch, seq, heads, head_dim], got 'memref<2x256x64xbf16>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// LSE is f32.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<2x8x128xf16>) {
  // expected-error @+1 {{operand #4 must be 2D/3D memref or tensor of f32, but got 'memref<2x8x128xf16>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<2x8x128xf16>)
  return
}

// -----

// Static sizes are positive.
func.func @f(%q: memref<2x0x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x0x8x64xbf16>) {
  // expected-error @+1 {{query dimension 1 (seq_q) must be positive, got 0}}
  fa4.attention ins(%q, %k, %v : memref<2x0x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x0x8x64xbf16>)
  return
}

// -----

// Head counts are static.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x?x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{key dimension 2 (heads_kv) must be static}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x?x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Head dims are static.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x?xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{value dimension 3 (head_dim_v) must be static}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x?xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// The head dimension has unit stride.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16, strided<[131072, 1024, 128, 2]>>) {
  // expected-error @+1 {{output must have unit stride in its innermost (head_dim_v) dimension, got 'memref<2x128x8x64xbf16, strided<[131072, 1024, 128, 2]>>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16, strided<[131072, 1024, 128, 2]>>)
  return
}

// -----

// K, V and O share the element type of Q.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{key element type 'f16' must match query element type 'bf16'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// O shares the element type of Q.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xf16>) {
  // expected-error @+1 {{output element type 'f16' must match query element type 'bf16'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xf16>)
  return
}

// -----

// Batch sizes agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<3x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but key dimension 0 is 3}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<3x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Batch sizes agree (value).
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<3x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but value dimension 0 is 3}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<3x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Batch sizes agree (output).
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<1x128x8x64xbf16>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but output dimension 0 is 1}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<1x128x8x64xbf16>)
  return
}

// -----

// Query and output sequence lengths agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x64x8x64xbf16>) {
  // expected-error @+1 {{seq_q mismatch: query dimension 1 is 128 but output dimension 1 is 64}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x64x8x64xbf16>)
  return
}

// -----

// Key and value sequence lengths agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x255x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{seq_kv mismatch: key dimension 1 is 256 but value dimension 1 is 255}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x255x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Query and output head counts agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x4x64xbf16>) {
  // expected-error @+1 {{heads_q mismatch: query dimension 2 is 8 but output dimension 2 is 4}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x4x64xbf16>)
  return
}

// -----

// Key and value head counts agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x4x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{heads_kv mismatch: key dimension 2 is 2 but value dimension 2 is 4}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x4x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Query and key head dims agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x128xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{head_dim_qk mismatch: query dimension 3 is 64 but key dimension 3 is 128}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x128xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Value and output head dims agree.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x128xbf16>) {
  // expected-error @+1 {{head_dim_v mismatch: value dimension 3 is 64 but output dimension 3 is 128}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x128xbf16>)
  return
}

// -----

// Query heads are a multiple of key/value heads.
func.func @f(%q: memref<2x128x6x64xbf16>, %k: memref<2x256x4x64xbf16>, %v: memref<2x256x4x64xbf16>, %o: memref<2x128x6x64xbf16>) {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  fa4.attention ins(%q, %k, %v : memref<2x128x6x64xbf16>, memref<2x256x4x64xbf16>, memref<2x256x4x64xbf16>) outs(%o : memref<2x128x6x64xbf16>)
  return
}

// -----

// LSE head count is static.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<2x?x128xf32>) {
  // expected-error @+1 {{lse dimension 1 (heads_q) must be static}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<2x?x128xf32>)
  return
}

// -----

// LSE batch matches.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<4x8x128xf32>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but lse dimension 0 is 4}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<4x8x128xf32>)
  return
}

// -----

// LSE heads match.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<2x16x128xf32>) {
  // expected-error @+1 {{heads_q mismatch: query dimension 2 is 8 but lse dimension 1 is 16}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<2x16x128xf32>)
  return
}

// -----

// LSE is [B, Hq, Sq], not [B, Sq, Hq].
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<2x128x8xf32>) {
  // expected-error @+1 {{heads_q mismatch: query dimension 2 is 8 but lse dimension 1 is 128}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<2x128x8xf32>)
  return
}

// -----

// LSE sequence length matches.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %lse: memref<2x8x64xf32>) {
  // expected-error @+1 {{seq_q mismatch: query dimension 1 is 128 but lse dimension 2 is 64}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) lse(%lse : memref<2x8x64xf32>)
  return
}

// -----

// A window has exactly two bounds.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {window = array<i64: 1, 2, 3>}
  return
}

// -----

// Window bounds are >= -1.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{window left bound must be >= 0, or -1 for unbounded, got -5}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {window = array<i64: -5, 0>}
  return
}

// -----

// Window bounds are >= -1 (right).
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{window right bound must be >= 0, or -1 for unbounded, got -2}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {window = array<i64: 8, -2>}
  return
}

// -----

// A window unbounded on both sides is no window.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{window [-1, -1] masks nothing; omit the attribute instead}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {window = array<i64: -1, -1>}
  return
}

// -----

// Causal masks every key after the diagonal.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{causal attention requires window right bound 0, got 4}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {causal, window = array<i64: 128, 4>}
  return
}

// -----

// The scale is positive.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{scale must be positive and finite, got -5.000000e-01}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {scale = -0.5 : f32}
  return
}

// -----

// The scale is finite.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{scale must be positive and finite, got INF}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {scale = 0x7F800000 : f32}
  return
}

// -----

// The softcap is positive.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{softcap must be positive and finite, got 0}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {softcap = 0.0 : f32}
  return
}

// -----

// The plan's head dim is the operands'.
func.func @f(%q: memref<1x128x2x64xbf16>, %k: memref<1x128x2x64xbf16>, %v: memref<1x128x2x64xbf16>, %o: memref<1x128x2x64xbf16>) {
  // expected-error @+1 {{plan head dims (qk 128, v 128) do not match the operands' (qk 64, v 64)}}
  fa4.attention ins(%q, %k, %v : memref<1x128x2x64xbf16>, memref<1x128x2x64xbf16>, memref<1x128x2x64xbf16>) outs(%o : memref<1x128x2x64xbf16>) {plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>}
  return
}

// -----

// Packed query heads come from one key/value head.
func.func @f(%q: memref<1x128x4x64xbf16>, %k: memref<1x128x2x64xbf16>, %v: memref<1x128x2x64xbf16>, %o: memref<1x128x4x64xbf16>) {
  // expected-error @+1 {{plan gqaPack 4 must divide the query heads per key/value head (2)}}
  fa4.attention ins(%q, %k, %v : memref<1x128x4x64xbf16>, memref<1x128x2x64xbf16>, memref<1x128x2x64xbf16>) outs(%o : memref<1x128x4x64xbf16>) {plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>}
  return
}

// -----

// Plan parameters are range-checked when parsed.
// expected-error @+1 {{blockM must be 128 on sm_100a (one tcgen05 M=128 tile), got 64}}
#bad_block_m = #fa4.plan<arch = sm_100a, blockM = 64, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{blockM must be 64 on sm_90a (one wgmma M=64 tile per consumer warpgroup), got 128}}
#bad_hopper_block_m = #fa4.plan<arch = sm_90a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// expected-error @+1 {{headDim must be a positive multiple of 16 up to 256, got 40}}
#bad_hopper_head_dim = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 40, qStages = 2, kvStages = 2, gqaPack = 1, scheduler = paired, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// expected-error @+1 {{blockN must be 64 or 128 on sm_100a, got 96}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 96, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 48, rescaleThreshold = 8>

// -----

// sm_90a takes KV blocks of any multiple of 16 keys up to 128.
// expected-error @+1 {{blockN must be a multiple of 16 from 16 to 128 on sm_90a, got 72}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 72, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// expected-error @+1 {{blockN must be a multiple of 16 from 16 to 128 on sm_90a, got 144}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 144, headDim = 64, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// expected-error @+1 {{headDim must be a positive multiple of 16 up to 256, got 72}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 72, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{headDim must be a positive multiple of 16 up to 256, got 512}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 512, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// Two Q stages of head dim 192 need more TMEM than an SM has (one fits).
// expected-error @+1 {{plan needs 640 TMEM columns (2 Q stages x (128 S + 192 O)), more than the 512 available}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 192, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// What fa4-specialize refuses, the plan refuses with the same rule.
// expected-error @+1 {{blockN must be 64 or 128 on sm_100a, got 32}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 32, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 32, rescaleThreshold = 8>

// -----

// expected-error @+1 {{pvSplit must be a multiple of 32 in (0, blockN = 128), got 80}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 80, rescaleThreshold = 8>

// -----

// expected-error @+1 {{pvSplit must be a multiple of 32 in (0, blockN = 128), got 48}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 48, rescaleThreshold = 8>

// -----

// Huge values are refused by their range before any resource formula
// uses them (the shared-memory bytes would overflow int64).
// expected-error @+1 {{kvStages must be in [2, 16], got 9223372036854775807}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 9223372036854775807, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{kvStages must be in [2, 16], got 4611686018427387904}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 4611686018427387904, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{qStages must be in [1, 2] on sm_100a, got 9223372036854775807}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 9223372036854775807, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{headDim must be a positive multiple of 16 up to 256, got 9223372036854775792}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 9223372036854775792, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{gqaPack must divide blockM (128), got 9223372036854775807}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 9223372036854775807, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{softmaxRegs must be a multiple of 8 in [24, 256], got 9223372036854775800}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 9223372036854775800, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{correctionRegs must be a multiple of 8 in [24, 256], got -9223372036854775808}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = -9223372036854775808, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{emulatedExp2 must be in [0, 16], got 9223372036854775807}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 9223372036854775807, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{pvSplit must be a multiple of 32 in (0, blockN = 128), got 9223372036854775776}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 9223372036854775776, rescaleThreshold = 8>

// -----

// expected-error @+1 {{rescaleThreshold must be in [0, 64], got 9223372036854775807}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 9223372036854775807>

// -----

// expected-error @+1 {{rescaleThreshold must be in [0, 64], got 65}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 65>

// -----

// expected-error @+1 {{qStages must be in [1, 2] on sm_100a, got 3}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 3, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 120, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{qStages must be in [1, 3] on sm_90a, got 4}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 64, qStages = 4, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 120, correctionRegs = 0, producerRegs = 24, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// Three consumers at 168 registers: 3 x 168 + 24 = 528 of the 512 x 128.
// expected-error @+1 {{register budgets (3 x 168 consumer + 24 producer) x 128 threads need 67584 registers per CTA of 4 warpgroups, more than the 65536 it is launched with}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 64, qStages = 3, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 168, correctionRegs = 0, producerRegs = 24, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// expected-error @+1 {{kvStages must be in [2, 16], got 1}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 1, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{gqaPack must divide blockM (128), got 3}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 3, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{producerRegs must be a multiple of 8 in [24, 256], got 20}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 20, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{emulatedExp2 must be in [0, 16], got 17}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 17, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{rescaleThreshold must be in [0, 64], got -1}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = -1>

// -----

// Two Q stages of S (128 columns) and O (256 columns) exceed Tensor Memory.
// expected-error @+1 {{plan needs 768 TMEM columns (2 Q stages x (128 S + 256 O)), more than the 512 available}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 256, qStages = 2, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// One sink per query head.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %s: memref<2xf32>) {
  // expected-error @+1 {{heads_q mismatch: query dimension 2 is 8 but sink dimension 0 is 2}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) sink(%s : memref<2xf32>)
  return
}

// -----

// The sinks are f32.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %s: memref<8xbf16>) {
  // expected-error @+1 {{operand #4 must be 1D memref or tensor of f32, but got 'memref<8xbf16>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) sink(%s : memref<8xbf16>)
  return
}

// -----

// The sinks have unit stride.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %s: memref<8xf32, strided<[2]>>) {
  // expected-error @+1 {{sink must have unit stride in its innermost (heads_q) dimension}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) sink(%s : memref<8xf32, strided<[2]>>)
  return
}

// -----

// The regions take the score, the four coordinates and one argument per
// capture.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<8xf32>) {
  // expected-error @+1 {{the score region must take (f32 score, index batch, index head, index query, index key) and one argument per capture, (f32, index, index, index, index, memref<8xf32>), got (f32, index, index, index, index)}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<8xf32>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    fa4.yield %s : f32
  }
  return
}

// -----

// A mask yields i1.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{of the mask region must yield 'i1', got 'f32'}}
    fa4.yield %s : f32
  }
  return
}

// -----

// Regions are isolated: outer values come in as captures.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %x: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{using value defined outside the region}}
    %t = arith.addf %s, %x : f32
    fa4.yield %t : f32
  }
  return
}

// -----

// Only arith, math and reads of the captures.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<8xf32>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<8xf32>):
    // expected-error @+1 {{'memref.store' op is not allowed in a score region: only arith ops, the math ops the kernels lower}}
    memref.store %s, %c[%h] : memref<8xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

// No nested regions.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi sle, %j, %i : index
    // expected-error @+1 {{'scf.if' op is not allowed in a mask region: it has regions (use arith.select)}}
    %keep = scf.if %c -> i1 {
      scf.yield %c : i1
    } else {
      scf.yield %c : i1
    }
    fa4.yield %keep : i1
  }
  return
}

// -----

// Scalars only.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'arith.extf' op in a score region must compute integers, index, f16, bf16 or f32 scalars, got 'f64'}}
    %w = arith.extf %s : f32 to f64
    %t = arith.truncf %w : f64 to f32
    fa4.yield %t : f32
  }
  return
}

// -----

// memref.dim of a capture takes a constant dimension.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<?x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<?x?xf32>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<?x?xf32>):
    // expected-error @+1 {{'memref.dim' op in a score region must take a constant dimension of a captured operand}}
    %n = memref.dim %c, %h : memref<?x?xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

// Captures are row-major in global memory.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<8xf32, strided<[2]>>) {
  // expected-error @+1 {{capture #0 must be a row-major memref in global memory (identity layout, no memory space), got 'memref<8xf32, strided<[2]>>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<8xf32, strided<[2]>>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<8xf32, strided<[2]>>):
    fa4.yield %s : f32
  }
  return
}

// -----

// Captures are read by a region.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<8xf32>) {
  // expected-error @+1 {{has captured operands but no score or mask region to read them}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<8xf32>)
  return
}

// -----

// A region has one block.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{the score region must have one block}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    cf.br ^bb1
  ^bb1:
    fa4.yield %s : f32
  }
  return
}

// -----

// A region block ends in fa4.yield (checked before anything reads it).
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{the score region must end in fa4.yield}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
  }
  return
}

// -----

// memref.dim of a capture within its rank.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<?x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<?x?xf32>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<?x?xf32>):
    %five = arith.constant 5 : index
    // expected-error @+1 {{'memref.dim' op in a score region must take a constant dimension of a captured operand, within its rank}}
    %n = memref.dim %c, %five : memref<?x?xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %t: memref<?x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) captures(%t : memref<?x?xf32>) score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<?x?xf32>):
    %minus = arith.constant -1 : index
    // expected-error @+1 {{'memref.dim' op in a score region must take a constant dimension of a captured operand, within its rank}}
    %n = memref.dim %c, %minus : memref<?x?xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

// Only the math ops the kernels lower.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %ji = arith.index_cast %j : index to i32
    // expected-error @+1 {{'math.ctpop' op is not allowed in a mask region: only arith ops, the math ops the kernels lower}}
    %bits = math.ctpop %ji : i32
    %one = arith.constant 1 : i32
    %keep = arith.cmpi eq, %bits, %one : i32
    fa4.yield %keep : i1
  }
  return
}

// -----

// The two tables of packed sequences come together (generic form: the
// custom syntax cannot spell one).
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<?xi32>) {
  // expected-error @+1 {{takes cu_seqlens_q and cu_seqlens_k together}}
  "fa4.attention"(%q, %k, %k, %o, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>, memref<?x8x64xbf16>, memref<?xi32>) -> ()
  return
}

// -----

// A dense KV cache's seqused_k has one entry per batch.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %u: memref<3xi32>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but seqused_k dimension 0 is 3}}
  fa4.attention ins(%q, %k, %k : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) seqused_k(%u : memref<3xi32>)
  return
}

// -----

// A dense KV cache's seqused_k is read through a plain pointer.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %u: memref<2xi32, strided<[2]>>) {
  // expected-error @+1 {{seqused_k must have unit stride in its innermost (batch) dimension, got 'memref<2xi32, strided<[2]>>'}}
  fa4.attention ins(%q, %k, %k : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) seqused_k(%u : memref<2xi32, strided<[2]>>)
  return
}

// -----

// Paged K and V: a static page size.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<?x?x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{paged key and value must be [pages, P, heads_kv, head_dim] with a static page size P that is a power of two of at least 16, got 'memref<?x?x2x64xbf16>'}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) paged(%t : memref<?x?xi32>)
  return
}

// -----

// Paged K and V: a power-of-two page size.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<?x96x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{paged key and value must be [pages, P, heads_kv, head_dim] with a static page size P that is a power of two of at least 16, got 'memref<?x96x2x64xbf16>'}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<?x96x2x64xbf16>, memref<?x96x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) paged(%t : memref<?x?xi32>)
  return
}

// -----

// Paged K and V: pages of at least 16 keys.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<?x8x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{paged key and value must be [pages, P, heads_kv, head_dim] with a static page size P that is a power of two of at least 16, got 'memref<?x8x2x64xbf16>'}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<?x8x2x64xbf16>, memref<?x8x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) paged(%t : memref<?x?xi32>)
  return
}

// -----

// Paged K and V hold the same pages.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<10x128x2x64xbf16>, %v: memref<12x128x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{pages mismatch: key dimension 0 is 10 but value dimension 0 is 12}}
  fa4.attention ins(%q, %k, %v : memref<?x4x8x64xbf16>, memref<10x128x2x64xbf16>, memref<12x128x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) paged(%t : memref<?x?xi32>)
  return
}

// -----

// seqused_k and the page table agree on the batch, also where Q's is dynamic.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<?x128x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %u: memref<2xi32>, %t: memref<3x?xi32>) {
  // expected-error @+1 {{batch mismatch: seqused_k dimension 0 is 2 but page_table dimension 0 is 3}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<?x128x2x64xbf16>, memref<?x128x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) seqused_k(%u : memref<2xi32>) paged(%t : memref<3x?xi32>)
  return
}

// -----

// A dense cache's seqused_k has K's batch.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<2x128x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %u: memref<3xi32>) {
  // expected-error @+1 {{batch mismatch: key dimension 0 is 2 but seqused_k dimension 0 is 3}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<2x128x2x64xbf16>, memref<2x128x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) seqused_k(%u : memref<3xi32>)
  return
}

// -----

// One page-table row per batch.
func.func @f(%q: memref<2x4x8x64xbf16>, %k: memref<?x128x2x64xbf16>, %o: memref<2x4x8x64xbf16>, %t: memref<3x8xi32>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but page_table dimension 0 is 3}}
  fa4.attention ins(%q, %k, %k : memref<2x4x8x64xbf16>, memref<?x128x2x64xbf16>, memref<?x128x2x64xbf16>) outs(%o : memref<2x4x8x64xbf16>) paged(%t : memref<3x8xi32>)
  return
}

// -----

// The page table is read through a plain pointer.
func.func @f(%q: memref<2x4x8x64xbf16>, %k: memref<?x128x2x64xbf16>, %o: memref<2x4x8x64xbf16>, %t: memref<2x8xi32, strided<[16, 1]>>) {
  // expected-error @+1 {{page_table must be a contiguous tensor in global memory, got 'memref<2x8xi32, strided<[16, 1]>>'}}
  fa4.attention ins(%q, %k, %k : memref<2x4x8x64xbf16>, memref<?x128x2x64xbf16>, memref<?x128x2x64xbf16>) outs(%o : memref<2x4x8x64xbf16>) paged(%t : memref<2x8xi32, strided<[16, 1]>>)
  return
}

// -----

// Packed sequences over pages: K and V are still the cache's pages.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<3xi32>, %t: memref<2x8xi32>) {
  // expected-error @+1 {{key must be [pages, page_size, heads, head_dim] in a paged KV cache, got 'memref<?x2x64xbf16>'}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>) paged(%t : memref<2x8xi32>)
  return
}

// -----

// Packed sequences over pages: a page-table row per sequence.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x64x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<3xi32>, %t: memref<3x8xi32>) {
  // expected-error @+1 {{page_table must have one row per sequence: cu_seqlens_q has 3 entries (2 sequences) but page_table has 3}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x64x2x64xbf16>, memref<?x64x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>) paged(%t : memref<3x8xi32>)
  return
}

// -----

// Packed sequences over pages: the heads of the cache's.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x64x3x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<3xi32>, %t: memref<2x8xi32>) {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x64x3x64xbf16>, memref<?x64x3x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>) paged(%t : memref<2x8xi32>)
  return
}

// -----

// Packed sequences over pages: the head dim of the cache's.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x64x2x128xbf16>, %o: memref<?x8x64xbf16>, %c: memref<3xi32>, %t: memref<2x8xi32>) {
  // expected-error @+1 {{head_dim_qk mismatch: query dimension 2 is 64 but key dimension 3 is 128}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>) paged(%t : memref<2x8xi32>)
  return
}

// -----

// A KV block lies in one page or spans whole ones.
func.func @f(%q: memref<?x4x8x64xbf16>, %k: memref<?x64x2x64xbf16>, %o: memref<?x4x8x64xbf16>, %t: memref<?x?xi32>) {
  // expected-error @+1 {{plan blockN 80 and the page size 64 must divide one another: a KV block lies in one page or spans whole ones}}
  fa4.attention ins(%q, %k, %k : memref<?x4x8x64xbf16>, memref<?x64x2x64xbf16>, memref<?x64x2x64xbf16>) outs(%o : memref<?x4x8x64xbf16>) paged(%t : memref<?x?xi32>) {plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 80, headDim = 64, qStages = 2, kvStages = 2, gqaPack = 4, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>}
  return
}

// -----

// Packed sequences have no batch dimension.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %c: memref<3xi32>) {
  // expected-error @+1 {{query must be [total, heads, head_dim] with variable lengths, got 'memref<2x128x8x64xbf16>'}}
  fa4.attention ins(%q, %k, %k : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>)
  return
}

// -----

// The tables are int32.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<?xi64>) {
  // expected-error @+1 {{operand #4 must be 1D memref or tensor of i32, but got 'memref<?xi64>'}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<?xi64>, memref<?xi64>)
  return
}

// -----

// The tables are contiguous, in global memory.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<?xi32>, %s: memref<?xi32, strided<[2]>>) {
  // expected-error @+1 {{cu_seqlens_k must have unit stride in its innermost (batch + 1) dimension, got 'memref<?xi32, strided<[2]>>'}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %s : memref<?xi32>, memref<?xi32, strided<[2]>>)
  return
}

// -----

func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<?xi32>, %s: memref<?xi32, 3>) {
  // expected-error @+1 {{cu_seqlens_q must be a contiguous tensor in global memory, got 'memref<?xi32, 3>'}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%s, %c : memref<?xi32, 3>, memref<?xi32>)
  return
}

// -----

// One boundary per sequence in both tables.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c3: memref<3xi32>, %c4: memref<4xi32>) {
  // expected-error @+1 {{batch + 1 mismatch: cu_seqlens_q dimension 0 is 3 but cu_seqlens_k dimension 0 is 4}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c3, %c4 : memref<3xi32>, memref<4xi32>)
  return
}

// -----

// seqused_k has one entry per sequence.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<3xi32>, %u: memref<3xi32>) {
  // expected-error @+1 {{seqused_k must have one entry per sequence: cu_seqlens_q has 3 entries (2 sequences) but seqused_k has 3}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%c, %c : memref<3xi32>, memref<3xi32>) seqused_k(%u : memref<3xi32>)
  return
}

// -----

// Packed, LSE is [heads_q, total_q].
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %c: memref<?xi32>, %l: memref<1x8x?xf32>) {
  // expected-error @+1 {{lse must be [heads_q, total_q] with variable lengths, got 'memref<1x8x?xf32>'}}
  fa4.attention ins(%q, %k, %k : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) lse(%l : memref<1x8x?xf32>) varlen(%c, %c : memref<?xi32>, memref<?xi32>)
  return
}

// -----

func.func @f(%q: memref<100x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<100x8x64xbf16>, %c: memref<?xi32>, %l: memref<8x99xf32>) {
  // expected-error @+1 {{total_q mismatch: query dimension 0 is 100 but lse dimension 1 is 99}}
  fa4.attention ins(%q, %k, %k : memref<100x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<100x8x64xbf16>) lse(%l : memref<8x99xf32>) varlen(%c, %c : memref<?xi32>, memref<?xi32>)
  return
}

// -----

// Q and O hold the same packed rows.
func.func @f(%q: memref<100x8x64xbf16>, %k: memref<?x2x64xbf16>, %o: memref<90x8x64xbf16>, %c: memref<?xi32>) {
  // expected-error @+1 {{total_q mismatch: query dimension 0 is 100 but output dimension 0 is 90}}
  fa4.attention ins(%q, %k, %k : memref<100x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<90x8x64xbf16>) varlen(%c, %c : memref<?xi32>, memref<?xi32>)
  return
}

// -----

// The tensor form: all operands tensors.
func.func @f(%q: tensor<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: tensor<2x256x2x64xbf16>, %o: tensor<2x128x8x64xbf16>) {
  // expected-error @+1 {{operand #1 is a memref but query is a tensor: the operands are all memrefs or all tensors}}
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%o : tensor<2x128x8x64xbf16>) -> tensor<2x128x8x64xbf16>
  return
}

// -----

// The tensor form returns O and, with lse, the LSE.
func.func @f(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x256x2x64xbf16>, %v: tensor<2x256x2x64xbf16>, %o: tensor<2x128x8x64xbf16>, %l: tensor<2x8x128xf32>) {
  // expected-error @+1 {{on tensors returns the output and the lse it writes, of types 'tensor<2x128x8x64xbf16>', 'tensor<2x8x128xf32>', got 'tensor<2x128x8x64xbf16>'}}
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%o : tensor<2x128x8x64xbf16>) lse(%l : tensor<2x8x128xf32>) -> tensor<2x128x8x64xbf16>
  return
}

// -----

func.func @f(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x256x2x64xbf16>, %v: tensor<2x256x2x64xbf16>, %o: tensor<2x128x8x64xbf16>) {
  // expected-error @+1 {{on tensors returns the output it writes, of types 'tensor<2x128x8x64xbf16>', got 'tensor<2x128x8x64xf16>'}}
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%o : tensor<2x128x8x64xbf16>) -> tensor<2x128x8x64xf16>
  return
}

// -----

// The memref form writes in place.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{on memrefs writes output and lse in place and has no results, got 1}}
  %r = fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) -> tensor<2x128x8x64xbf16>
  return
}

// -----

// On tensors the regions read captures with tensor.extract / tensor.dim.
func.func @f(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x256x2x64xbf16>, %v: tensor<2x256x2x64xbf16>, %o: tensor<2x128x8x64xbf16>, %t: tensor<8xf32>) {
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%o : tensor<2x128x8x64xbf16>) captures(%t : tensor<8xf32>) -> tensor<2x128x8x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %table: tensor<8xf32>):
    %c9 = arith.constant 9 : index
    // expected-error @+1 {{'tensor.dim' op in a score region must take a constant dimension of a captured operand, within its rank}}
    %n = tensor.dim %table, %c9 : tensor<8xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

func.func @f(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x256x2x64xbf16>, %v: tensor<2x256x2x64xbf16>, %o: tensor<2x128x8x64xbf16>, %t: tensor<8xf32>) {
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%o : tensor<2x128x8x64xbf16>) captures(%t : tensor<8xf32>) -> tensor<2x128x8x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %table: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'tensor.insert' op in a score region must compute integers, index, f16, bf16 or f32 scalars, got 'tensor<8xf32>'}}
    %w = tensor.insert %s into %table[%c0] : tensor<8xf32>
    fa4.yield %s : f32
  }
  return
}

// -----

// Dv = Dqk has one spelling: no headDimV.
// expected-error @+1 {{headDimV equals headDim (128); omit it}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, headDimV = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>

// -----

// expected-error @+1 {{headDimV must be a positive multiple of 16 up to 256, got 264}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 64, headDim = 128, headDimV = 264, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>

// -----

// Two Q stages of (192, 256): 768 TMEM columns.
// expected-error @+1 {{plan needs 768 TMEM columns (2 Q stages x (128 S + 256 O)), more than the 512 available}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 192, headDimV = 256, qStages = 2, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
