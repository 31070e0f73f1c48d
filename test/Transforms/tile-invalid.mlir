// RUN: fa4-opt %s -split-input-file --fa4-tile -verify-diagnostics

func.func @no_plan(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{has no plan; run fa4-plan first}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
  return
}

// -----

// A hand-written plan does not make softcap expressible.
#plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
func.func @softcap(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{fa4-tile expresses neither sliding windows, softcap nor a value head dim other than the query/key head dim}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>) {plan = #plan, softcap = 30.0 : f32}
  return
}
