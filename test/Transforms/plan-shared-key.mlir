// RUN: split-file %s %t
// RUN: fa4-opt %t/d128.mlir --fa4-plan="shared-key=4" | FileCheck %s --check-prefix=FOUR
// RUN: fa4-opt %t/d128.mlir --fa4-plan="shared-key=2" | FileCheck %s --check-prefix=TWO
// RUN: fa4-opt %t/d128.mlir --fa4-plan="shared-key=1" | FileCheck %s --check-prefix=ONE
// RUN: fa4-opt %t/d128.mlir --fa4-plan | FileCheck %s --check-prefix=DEFAULT
// RUN: fa4-opt %t/d256.mlir --fa4-plan="shared-key=4" | FileCheck %s --check-prefix=D256
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=3" 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="arch=sm_90a shared-key=2" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=4 kv-interleave=2" 2>&1 | FileCheck %s --check-prefix=INTERLEAVE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=4 p-precision=hi_lo" 2>&1 | FileCheck %s --check-prefix=HILO
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=4 pv-split=64" 2>&1 | FileCheck %s --check-prefix=PVSPLIT
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="shared-key=4 split-combine=cluster" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not fa4-opt %t/d96.mlir --fa4-plan="shared-key=4" 2>&1 | FileCheck %s --check-prefix=DV96
// RUN: not fa4-opt %t/fp8.mlir --fa4-plan="shared-key=4" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not fa4-opt %t/rope.mlir --fa4-plan="shared-key=4" 2>&1 | FileCheck %s --check-prefix=ROPE
// RUN: not fa4-opt %t/plans.mlir -split-input-file 2>&1 | FileCheck %s --check-prefix=WRITTEN
// RUN: not fa4-opt %t/rope_planned.mlir --fa4-tile --fa4-specialize 2>&1 | FileCheck %s --check-prefix=ROPE-PLANNED

// Shared keys (sm_100a, never the default): a Q stage of 128 / sharedKey
// rows, S and O folded over the lanes (qStages x (blockN + Dv) / sharedKey
// TMEM columns), one PV MMA (pvSplit 0).
// FOUR: plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 0, rescaleThreshold = 8, sharedKey = 4>
// TWO: plan = #fa4.plan<arch = sm_100a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, {{.*}}pvSplit = 0, rescaleThreshold = 8, sharedKey = 2>
// ONE: blockM = 128,
// ONE-NOT: sharedKey
// DEFAULT: blockM = 128,
// DEFAULT-NOT: sharedKey
// Head dim 256 keeps two Q stages: 2 x (64 + 256) / 4 = 160 columns.
// D256: blockM = 32, blockN = 64, headDim = 256, qStages = 2, {{.*}}sharedKey = 4>

// NEGATIVE: error: fa4-plan: option shared-key must be positive (0 chooses), got -1
// THREE: error: 'fa4.attention' op shared-key must be 1, 2 or 4, got 3
// SM90: error: 'fa4.attention' op shared-key needs sm_100a (the weight-stationary tcgen05 MMA), got sm_90a
// INTERLEAVE: error: 'fa4.attention' op invalid plan: sharedKey does not combine with kvInterleave = 2
// HILO: error: 'fa4.attention' op invalid plan: sharedKey does not combine with pPrecision = hi_lo
// PVSPLIT: error: 'fa4.attention' op invalid plan: pvSplit must be 0 with sharedKey (one PV MMA reads P from shared memory), got 64
// CLUSTER: error: 'fa4.attention' op invalid plan: sharedKey does not combine with splitCombine = cluster
// DV96: error: 'fa4.attention' op invalid plan: sharedKey needs Dv of 64, 128 or 256 (the N of the PV tcgen05.mma.ws), got 96
// FP8: error: 'fa4.attention' op invalid plan: sharedKey does not combine with FP8 operands
// ROPE: error: 'fa4.attention' op shared-key does not combine with rope_output (O's rotated columns would span the threads that share a row)

// A plan written by hand past fa4-plan's refusal: fa4-specialize refuses
// it at the inverse rotation of O.
// ROPE-PLANNED: error: 'fa4.tile.rope' op disagrees with the kernel's plan: sharedKey = 4 does not rotate O back

// Plans written by hand.
// WRITTEN: error: sharedKey must be 1, 2 or 4, got 8
// WRITTEN: error: blockM must be 32 on sm_100a with sharedKey = 4 (a tcgen05.mma.ws M), got 128
// WRITTEN: error: sharedKey needs sm_100a (the weight-stationary tcgen05 MMA)
// WRITTEN: error: pvSplit must be 0 with sharedKey (one PV MMA reads P from shared memory), got 96

//--- d128.mlir
func.func @d128(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) {causal}
  return
}
//--- d256.mlir
func.func @d256(%q: memref<?x?x8x256xbf16>, %k: memref<?x?x8x256xbf16>,
                %v: memref<?x?x8x256xbf16>, %o: memref<?x?x8x256xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>)
                outs(%o : memref<?x?x8x256xbf16>)
  return
}
//--- d96.mlir
func.func @d96(%q: memref<?x?x8x96xbf16>, %k: memref<?x?x8x96xbf16>,
               %v: memref<?x?x8x96xbf16>, %o: memref<?x?x8x96xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x96xbf16>, memref<?x?x8x96xbf16>, memref<?x?x8x96xbf16>)
                outs(%o : memref<?x?x8x96xbf16>)
  return
}
//--- fp8.mlir
func.func @fp8(%q: memref<?x?x8x128xf8E4M3FN>, %k: memref<?x?x2x128xf8E4M3FN>,
               %v: memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>,
               %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xf8E4M3FN>, memref<?x?x2x128xf8E4M3FN>,
                    memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x8x128xbf16>)
  return
}
//--- rope.mlir
func.func @rope(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>,
                %cos_sin: memref<?x32xf32>, %positions: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>)
                rope(%cos_sin, %positions : memref<?x32xf32>, memref<?x?xi32>)
                {causal, rope_output}
  return
}
//--- plans.mlir
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 16, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 0, rescaleThreshold = 8, sharedKey = 8>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 0, rescaleThreshold = 8, sharedKey = 4>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, sharedKey = 2>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8, sharedKey = 4>} {
  return
}
//--- rope_planned.mlir
func.func @rope(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>,
                %cos_sin: memref<?x32xf32>, %positions: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>)
                rope(%cos_sin, %positions : memref<?x32xf32>, memref<?x?xi32>)
                {causal, rope_output, plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 0, rescaleThreshold = 8, sharedKey = 4>}
  return
}
