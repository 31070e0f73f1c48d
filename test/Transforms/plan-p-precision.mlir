// RUN: split-file %s %t
// RUN: fa4-opt %t/bf16.mlir --fa4-plan | FileCheck %s --check-prefix=DEFAULT
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="p-precision=single" | FileCheck %s --check-prefix=DEFAULT
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="p-precision=hi_lo" | FileCheck %s --check-prefix=HILO
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo" | FileCheck %s --check-prefix=HILO90
// RUN: fa4-opt %t/d192.mlir --fa4-plan="p-precision=hi_lo" | FileCheck %s --check-prefix=D192
// RUN: fa4-opt %t/d128.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo" | FileCheck %s --check-prefix=BLOCKS90
// RUN: fa4-opt %t/d128.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo block-n=128" | FileCheck %s --check-prefix=ASKED90
// RUN: fa4-opt %t/d256.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo" | FileCheck %s --check-prefix=D256-90
// RUN: fa4-opt %fa4_src_root/examples/varlen/rope.mlir --fa4-plan="p-precision=hi_lo" | FileCheck %s --check-prefix=VARLEN-ROPE
// RUN: not fa4-opt %t/bf16.mlir --fa4-plan="p-precision=hi_lo kv-interleave=2" 2>&1 | FileCheck %s --check-prefix=INTERLEAVED
// RUN: fa4-opt %t/hand.mlir | FileCheck %s --check-prefix=HAND
// RUN: not fa4-opt %t/bf16.mlir --fa4-plan="p-precision=double" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fa4-opt %t/fp8.mlir --fa4-plan="p-precision=hi_lo" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not fa4-opt %t/fp8.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not fa4-opt %t/bad-hand.mlir 2>&1 | FileCheck %s --check-prefix=BAD-HAND

// The default is one rounded P (the parameter is left out); hi_lo is asked
// for and kept on both targets.
// DEFAULT: plan = #fa4.plan<arch = sm_100a,
// DEFAULT-NOT: pPrecision
// HILO: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, {{.*}}, pPrecision = hi_lo>
// HILO90: plan = #fa4.plan<arch = sm_90a, {{.*}}, pPrecision = hi_lo>
// HAND: pPrecision = hi_lo>

// sm_100a takes 64-key blocks (its softmax reads S twice; HILO above), and at Dv 192
// leaves out the interleaved warpgroups it would take: two Q stages fit.
// D192: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, headDim = 192, qStages = 2,
// D192-NOT: kvInterleave
// D192-SAME: pPrecision = hi_lo>
// sm_90a from head dim 128 on: 64-key blocks (the residual fragment
// beside 128-key S and P spilled), past 192 32 (where 48 do), unless
// block-n says otherwise.
// BLOCKS90: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 64, headDim = 128,
// ASKED90: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128,
// D256-90: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 32, headDim = 256,
// sm_100a packed sequences with Q alone rotated keep 128-key blocks (64
// spilled there, with one rounded P too).
// VARLEN-ROPE: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128,
// VARLEN-ROPE-SAME: pPrecision = hi_lo>

// INTERLEAVED: error: 'fa4.attention' op invalid plan: pPrecision = hi_lo does not combine with kvInterleave = 2 (their softmax and combined epilogue do not fit the registers of one SM)

// UNKNOWN: error: fa4-plan: unknown p-precision 'double' (expected single or hi_lo)
// FP8: error: 'fa4.attention' op invalid plan: pPrecision = hi_lo needs 16-bit operands (P as two f16 or bf16 parts), got FP8
// BAD-HAND: error: expected keyword for how the PV product takes the softmax's probabilities
// BAD-HAND: error: failed to parse FA4_PlanAttr parameter 'pPrecision'

//--- bf16.mlir
func.func @bf16(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal}
  return
}
//--- d192.mlir
func.func @d192(%q: memref<?x?x8x192xbf16>, %k: memref<?x?x2x192xbf16>,
                %v: memref<?x?x2x192xbf16>, %o: memref<?x?x8x192xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x192xbf16>, memref<?x?x2x192xbf16>, memref<?x?x2x192xbf16>)
                outs(%o : memref<?x?x8x192xbf16>) {causal}
  return
}
//--- d128.mlir
func.func @d128(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x8x128xbf16>,
                %v: memref<?x?x8x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
  return
}
//--- d256.mlir
func.func @d256(%q: memref<?x?x8x256xbf16>, %k: memref<?x?x8x256xbf16>,
                %v: memref<?x?x8x256xbf16>, %o: memref<?x?x8x256xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>)
                outs(%o : memref<?x?x8x256xbf16>) {causal}
  return
}
//--- hand.mlir
func.func @hand(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal, plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 4, scheduler = paired, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, pPrecision = hi_lo>}
  return
}
//--- bad-hand.mlir
func.func @bad_hand(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal, plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 4, scheduler = paired, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, pPrecision = 3>}
  return
}
//--- fp8.mlir
func.func @fp8(%q: memref<?x?x16x128xf8E4M3FN>, %k: memref<?x?x4x128xf8E4M3FN>,
               %v: memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>,
               %o: memref<?x?x16x128xbf16>,
               %qd: memref<?x4xf32>, %kd: memref<?x4xf32>, %vd: memref<?x4xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xf8E4M3FN>, memref<?x?x4x128xf8E4M3FN>,
                    memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x16x128xbf16>)
                descale(%qd, %kd, %vd : memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>) {causal}
  return
}
