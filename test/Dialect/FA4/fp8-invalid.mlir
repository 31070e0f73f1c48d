// RUN: fa4-opt %s -split-input-file -verify-diagnostics

// The fa4.attention rules of FP8 (e4m3) operands and descale factors.

// FP8 writes O in 16 bits.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xf8E4M3FN>) {
  // expected-error @+1 {{output element type must be bf16 or f16 with FP8 operands (O is written in 16 bits), got 'f8E4M3FN'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xf8E4M3FN>)
  return
}

// -----

// K and V share Q's 8-bit type.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{key element type 'bf16' must match query element type 'f8E4M3FN'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xbf16>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// An FP8 V has unit stride in its head dim or in its keys.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN, strided<[65536, 2, 32768, 512]>>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{value of an 8-bit type must have unit stride in its head_dim_v or its seq_kv dimension, got 'memref<2x256x2x64xf8E4M3FN, strided<[65536, 2, 32768, 512]>>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN, strided<[65536, 2, 32768, 512]>>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Only V may be key-major.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN, strided<[32768, 1, 16384, 256]>>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{key must have unit stride in its innermost (head_dim_qk) dimension}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN, strided<[32768, 1, 16384, 256]>>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>)
  return
}

// -----

// Descale factors apply to FP8 only.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>, %d: memref<2x2xf32>) {
  // expected-error @+1 {{descale factors apply to FP8 operands, but query is 'bf16'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) descale(%d, %d, %d : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>)
  return
}

// -----

// One factor per batch and KV head.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>, %d: memref<2x8xf32>) {
  // expected-error @+1 {{heads_kv mismatch: key dimension 2 is 2 but q_descale dimension 1 is 8}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>) descale(%d, %d, %d : memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>)
  return
}

// -----

func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>, %d: memref<2x2xf32>, %e: memref<3x2xf32>) {
  // expected-error @+1 {{batch mismatch: query dimension 0 is 2 but v_descale dimension 0 is 3}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>) descale(%d, %d, %e : memref<2x2xf32>, memref<2x2xf32>, memref<3x2xf32>)
  return
}

// -----

// Packed sequences: one row per sequence.
func.func @f(%q: memref<100x8x64xf8E4M3FN>, %k: memref<200x2x64xf8E4M3FN>, %v: memref<248x2x64xf8E4M3FN>, %o: memref<100x8x64xbf16>, %cu: memref<4xi32>, %d: memref<4x2xf32>) {
  // expected-error @+1 {{q_descale must have one row per sequence: cu_seqlens_q has 4 entries (3 sequences) but q_descale has 4}}
  fa4.attention ins(%q, %k, %v : memref<100x8x64xf8E4M3FN>, memref<200x2x64xf8E4M3FN>, memref<248x2x64xf8E4M3FN>) outs(%o : memref<100x8x64xbf16>) descale(%d, %d, %d : memref<4x2xf32>, memref<4x2xf32>, memref<4x2xf32>) varlen(%cu, %cu : memref<4xi32>, memref<4xi32>)
  return
}

// -----

// Read through plain pointers: contiguous.
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>, %d: memref<2x2xf32>, %e: memref<2x2xf32, strided<[4, 1]>>) {
  // expected-error @+1 {{k_descale must be a contiguous tensor in global memory, got 'memref<2x2xf32, strided<[4, 1]>>'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>) outs(%o : memref<2x128x8x64xbf16>) descale(%d, %e, %d : memref<2x2xf32>, memref<2x2xf32, strided<[4, 1]>>, memref<2x2xf32>)
  return
}

// -----

// The three factors come together (the generic form can drop one).
func.func @f(%q: memref<2x128x8x64xf8E4M3FN>, %k: memref<2x256x2x64xf8E4M3FN>, %v: memref<2x256x2x64xf8E4M3FN>, %o: memref<2x128x8x64xbf16>, %d: memref<2x2xf32>) {
  // expected-error @+1 {{takes q_descale, k_descale and v_descale together}}
  "fa4.attention"(%q, %k, %v, %o, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (memref<2x128x8x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x256x2x64xf8E4M3FN>, memref<2x128x8x64xbf16>, memref<2x2xf32>) -> ()
  return
}

// -----

// The plan says FP8 exactly for FP8 operands.
func.func @f(%q: memref<2x128x8x64xbf16>, %k: memref<2x256x2x64xbf16>, %v: memref<2x256x2x64xbf16>, %o: memref<2x128x8x64xbf16>) {
  // expected-error @+1 {{plan operandBytes (1) does not match the operands' element type 'bf16'}}
  fa4.attention ins(%q, %k, %v : memref<2x128x8x64xbf16>, memref<2x256x2x64xbf16>, memref<2x256x2x64xbf16>) outs(%o : memref<2x128x8x64xbf16>) {plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 64, qStages = 2, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>}
  return
}

// -----

// The plan's FP8 rules.
// expected-error @+1 {{operandBytes must be 1 (FP8) or absent (16-bit), got 2}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 2>

// -----

// The e4m3 bound on P holds on sm_100a too (P is e4m3 in Tensor Memory).
// expected-error @+1 {{rescaleThreshold must be at most 8 with FP8 operands (P below 2^threshold must fit e4m3, whose largest value is 448), got 10}}
#bad = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 10, operandBytes = 1>

// -----

// expected-error @+1 {{blockN must be 128 with FP8 operands (a key-major V row of 128 keys is one 128-byte swizzle atom), or 64 on sm_90a (the first half of one), got 96}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 96, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>

// -----

// expected-error @+1 {{rescaleThreshold must be at most 8 with FP8 operands (P below 2^threshold must fit e4m3, whose largest value is 448), got 9}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 9, operandBytes = 1>

// -----

// Shared memory counts FP8 tiles at one byte a column, the O staging at two:
// head dim 256 with a ring of 12 needs 32 KB of Q, 384 KB of K/V, 64 KB of
// staging and the 1 KB barrier reserve.
// expected-error @+1 {{plan needs 492544 bytes of shared memory (2 Q stages, 12 K/V stages, O staging), more than the 232448 available}}
#bad = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 256, qStages = 2, kvStages = 12, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>

// -----

// Packed FP8 sequences read V key-major from row align16(cu_seqlens_k[b]) +
// 16 b: V holds 16 more rows per sequence than K (4 sequences: 300 + 64).
func.func @f(%q: memref<100x8x64xf8E4M3FN>, %k: memref<300x2x64xf8E4M3FN>, %v: memref<363x2x64xf8E4M3FN, strided<[1, 64, 1]>>, %o: memref<100x8x64xbf16>, %cu: memref<5xi32>) {
  // expected-error @+1 {{FP8 packed sequences read V key-major from row align16(cu_seqlens_k[b]) + 16 b (16-byte aligned TMA boxes): value needs at least total_kv + 16 batch = 364 rows, got 363}}
  fa4.attention ins(%q, %k, %v : memref<100x8x64xf8E4M3FN>, memref<300x2x64xf8E4M3FN>, memref<363x2x64xf8E4M3FN, strided<[1, 64, 1]>>) outs(%o : memref<100x8x64xbf16>) varlen(%cu, %cu : memref<5xi32>, memref<5xi32>)
  return
}

