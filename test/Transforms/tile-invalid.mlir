// RUN: fa4-opt %s -split-input-file --fa4-tile -verify-diagnostics

func.func @no_plan(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{has no plan; run fa4-plan first}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
  return
}

// -----

// A plan written by hand skips fa4-plan: fa4-tile refuses what the kernel
// cannot compute, as the planner does.
#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
func.func @lse(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>, %lse: memref<1x1x128xf32, strided<[512, 256, 1]>>) {
  // expected-error @+1 {{the kernel writes LSE to a contiguous [B, Hq, Sq] tensor, got 'memref<1x1x128xf32, strided<[512, 256, 1]>>'}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>) lse(%lse : memref<1x1x128xf32, strided<[512, 256, 1]>>) {plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
func.func @head_stride(%q: memref<1x256x4x64xbf16, strided<[?, 4160, 65, 1]>>, %k: memref<1x256x4x64xbf16>, %o: memref<1x256x4x64xbf16>) {
  // expected-error @+1 {{query stride 65 of dimension 2 (heads_q) is 130 bytes, which a TMA descriptor cannot describe (a multiple of 16 bytes below 2^40)}}
  fa4.attention ins(%q, %k, %k : memref<1x256x4x64xbf16, strided<[?, 4160, 65, 1]>>, memref<1x256x4x64xbf16>, memref<1x256x4x64xbf16>) outs(%o : memref<1x256x4x64xbf16>) {plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 64, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
func.func @seq_q(%q: memref<1x2147483647x1x64xbf16>, %k: memref<1x256x1x64xbf16>, %o: memref<1x2147483647x1x64xbf16>) {
  // expected-error @+1 {{seq_q 2147483647 rounded up to whole work tiles of 128 query positions exceeds the kernel's 32-bit row coordinates (2147483647)}}
  fa4.attention ins(%q, %k, %k : memref<1x2147483647x1x64xbf16>, memref<1x256x1x64xbf16>, memref<1x256x1x64xbf16>) outs(%o : memref<1x2147483647x1x64xbf16>) {plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
func.func @scale(%q: memref<1x256x1x64xf16>, %o: memref<1x256x1x64xf16>) {
  // expected-error @+1 {{scale 3.400000e+38 times log2(e) is 4.905163e+38, more than an f32 holds (3.402823e+38)}}
  fa4.attention ins(%q, %q, %q : memref<1x256x1x64xf16>, memref<1x256x1x64xf16>, memref<1x256x1x64xf16>) outs(%o : memref<1x256x1x64xf16>) {scale = 3.4e38 : f32, plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 16>
func.func @threshold_f16(%q: memref<1x256x1x64xf16>, %o: memref<1x256x1x64xf16>) {
  // expected-error @+1 {{rescaleThreshold 16 lets probabilities grow to 2^16, past the largest f16 (65504) that P is rounded to; at most 15 with f16}}
  fa4.attention ins(%q, %q, %q : memref<1x256x1x64xf16>, memref<1x256x1x64xf16>, memref<1x256x1x64xf16>) outs(%o : memref<1x256x1x64xf16>) {plan = #plan}
  return
}

// -----

// Kernels are built from memrefs: the tensor form is bufferized first.
func.func @tensors(%q: tensor<1x128x2x64xbf16>, %k: tensor<1x128x2x64xbf16>, %v: tensor<1x128x2x64xbf16>, %o: tensor<1x128x2x64xbf16>) -> tensor<1x128x2x64xbf16> {
  // expected-error @+1 {{is on tensors; fa4-tile builds kernels from memrefs: bufferize first (one-shot-bufferize)}}
  %r = fa4.attention ins(%q, %k, %v : tensor<1x128x2x64xbf16>, tensor<1x128x2x64xbf16>, tensor<1x128x2x64xbf16>) outs(%o : tensor<1x128x2x64xbf16>) {plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 64, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>} -> tensor<1x128x2x64xbf16>
  return %r : tensor<1x128x2x64xbf16>
}
