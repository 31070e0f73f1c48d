// RUN: fa4-opt %s -split-input-file --fa4-specialize -verify-diagnostics

func.func @no_plan(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{has no plan; run fa4-plan first}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
func.func @lse(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>, %lse: memref<1x1x128xf32, strided<[512, 256, 1]>>) {
  // expected-error @+1 {{fa4-specialize writes LSE to a contiguous [B, Hq, Sq] tensor, got 'memref<1x1x128xf32, strided<[512, 256, 1]>>'}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>) lse(%lse : memref<1x1x128xf32, strided<[512, 256, 1]>>) {plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 32, rescaleThreshold = 8>
func.func @block_n(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{fa4-specialize needs blockN = 128, the plan has 64}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>) {plan = #plan}
  return
}

// -----

#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 80, rescaleThreshold = 8>
func.func @pv_split(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{fa4-specialize needs a pvSplit that is a multiple of 32, the plan has 80}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>) {plan = #plan}
  return
}
