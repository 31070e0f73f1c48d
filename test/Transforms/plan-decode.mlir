// RUN: split-file %s %t
// RUN: fa4-opt %t/d128.mlir --fa4-plan="family=decode" | FileCheck %s --check-prefix=DECODE
// RUN: fa4-opt %t/d128.mlir --fa4-plan="family=decode block-m=16" | FileCheck %s --check-prefix=SIXTEEN
// RUN: fa4-opt %t/token.mlir --fa4-plan="family=decode" | FileCheck %s --check-prefix=TOKEN
// RUN: fa4-opt %t/group7.mlir --fa4-plan="family=decode" | FileCheck %s --check-prefix=GROUP7
// RUN: fa4-opt %t/d256.mlir --fa4-plan="family=decode" | FileCheck %s --check-prefix=D256
// RUN: fa4-opt %t/d128.mlir --fa4-plan="family=prefill" | FileCheck %s --check-prefix=PREFILL
// RUN: fa4-opt %t/d128.mlir --fa4-plan | FileCheck %s --check-prefix=PREFILL
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=bogus" 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="block-m=32" 2>&1 | FileCheck %s --check-prefix=BLOCKM-PREFILL
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode block-m=-1" 2>&1 | FileCheck %s --check-prefix=BLOCKM-NEGATIVE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode block-m=64" 2>&1 | FileCheck %s --check-prefix=BLOCKM-64
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="arch=sm_90a family=decode" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode shared-key=4" 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: fa4-opt %t/d128.mlir --fa4-plan="family=decode p-precision=hi_lo" | FileCheck %s --check-prefix=HILO
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode pv-split=32" 2>&1 | FileCheck %s --check-prefix=PVSPLIT
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode q-stages=2" 2>&1 | FileCheck %s --check-prefix=QSTAGES
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="family=decode block-n=64" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not fa4-opt %t/d96.mlir --fa4-plan="family=decode" 2>&1 | FileCheck %s --check-prefix=DV96
// RUN: not fa4-opt %t/fp8.mlir --fa4-plan="family=decode" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: fa4-opt %t/rope.mlir --fa4-plan="family=decode" | FileCheck %s --check-prefix=ROPE
// RUN: not fa4-opt %fa4_src_root/examples/regions/alibi.mlir --fa4-plan="family=decode" 2>&1 | FileCheck %s --check-prefix=REGIONS
// RUN: not fa4-opt %t/alibi_planned.mlir --fa4-tile --fa4-specialize 2>&1 | FileCheck %s --check-prefix=REGIONS-PLANNED
// RUN: not fa4-opt %t/plans.mlir -split-input-file 2>&1 | FileCheck %s --check-prefix=WRITTEN
// RUN: fa4-opt %t/rope_planned.mlir --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=ROPE-PLANNED

// The decode family (sm_100a, never the default): one Q stage of 32 rows
// (16 where a static query's rows fit), 128-key blocks as the MMAs' M, no
// correction warpgroup, one PV MMA per 128 of Dv, MUFU exp2 only.
// DECODE: plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 4, gqaPack = 4, scheduler = lpt, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>
// SIXTEEN: plan = #fa4.plan<arch = sm_100a, blockM = 16, blockN = 128, {{.*}}gqaPack = 4, {{.*}}family = decode>
// One new token of 8 packed heads: a 16-row tile; the split fills the SMs.
// TOKEN: plan = #fa4.plan<arch = sm_100a, blockM = 16, blockN = 128, headDim = 128, qStages = 1, kvStages = 4, gqaPack = 8, {{.*}}kvSplits = {{[0-9]+}}, family = decode>
// A GQA ratio of 7 packs no heads (7 divides neither 16 nor 32).
// GROUP7: blockM = 16, {{.*}}gqaPack = 1, {{.*}}family = decode>
// Head dim 256: two O^T tiles; 128-key K/V slots of 64 KB, a ring of two.
// D256: plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 256, qStages = 1, kvStages = 2, {{.*}}family = decode>
// P as hi + lo: two P^T tiles, two MMAs per O^T tile.
// HILO: plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 4, {{.*}}pvSplit = 0, rescaleThreshold = 8, pPrecision = hi_lo, family = decode>
// PREFILL: blockM = 128,
// PREFILL-NOT: family

// BOGUS: error: fa4-plan: unknown family 'bogus' (expected prefill or decode)
// BLOCKM-PREFILL: error: 'fa4.attention' op block-m applies to the decode family (family=decode); a prefill Q tile's rows follow from the target
// BLOCKM-NEGATIVE: error: fa4-plan: option block-m must be positive (0 chooses), got -1
// BLOCKM-64: error: 'fa4.attention' op invalid plan: blockM must be 16 or 32 in the decode family (the MMA's N; a thread holds that many scores, maxima and sums), got 64
// SM90: error: 'fa4.attention' op family=decode needs sm_100a (swap-AB tcgen05 MMAs with S and O in Tensor Memory), got sm_90a
// SHARED: error: 'fa4.attention' op family=decode does not combine with shared-key
// PVSPLIT: error: 'fa4.attention' op invalid plan: pvSplit must be 0 in the decode family (one PV MMA per 128 of Dv reads all of P^T), got 32
// QSTAGES: error: 'fa4.attention' op invalid plan: qStages must be 1 in the decode family, got 2
// BLOCKN: error: 'fa4.attention' op invalid plan: blockN must be 128 in the decode family (the keys are the MMA's M), got 64
// DV96: error: 'fa4.attention' op family=decode needs a value head dim of 128 or 256 (O^T is Dv / 128 MMA tiles), got 96
// FP8: error: 'fa4.attention' op family=decode does not combine with FP8 operands

// REGIONS: error: 'fa4.attention' op family=decode does not combine with score or mask regions
// A plan written by hand past fa4-plan's refusal: fa4-specialize refuses
// it at the regions.
// REGIONS-PLANNED: error: 'fa4.tile.modify' op disagrees with the kernel's plan: the decode family does not apply score or mask regions

// A rotary embedding: Q rotated by the softmax warpgroup, handed to the MMA
// warp (O rotated back in the row-wise epilogue).
// ROPE: plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, {{.*}}family = decode>
// ROPE-PLANNED: fa4.channel "q" : !fa4.channel<1> producer <tma> consumer <threads = 128>
// ROPE-PLANNED: fa4.channel "q_rotated" : !fa4.channel<1> producer <threads = 128> consumer <mma>

// Plans written by hand.
// WRITTEN: error: the decode family needs sm_100a (swap-AB tcgen05 MMAs with S and O in Tensor Memory)
// WRITTEN: error: blockM must be 16 or 32 in the decode family (the MMA's N; a thread holds that many scores, maxima and sums), got 128
// WRITTEN: error: correctionRegs must be 0 in the decode family (its softmax warpgroup rescales O), got 64
// WRITTEN: error: the decode family needs Dv of 128 or 256 (O^T is Dv / 128 tcgen05 M=128 tiles), got 64
// WRITTEN: error: the decode family does not combine with kvInterleave = 2

//--- d128.mlir
func.func @d128(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) {causal}
  return
}
//--- token.mlir
func.func @token(%q: memref<4x1x64x128xbf16>, %k: memref<4x8192x8x128xbf16>,
                 %v: memref<4x8192x8x128xbf16>, %o: memref<4x1x64x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<4x1x64x128xbf16>, memref<4x8192x8x128xbf16>, memref<4x8192x8x128xbf16>)
                outs(%o : memref<4x1x64x128xbf16>) {causal}
  return
}
//--- group7.mlir
func.func @group7(%q: memref<2x1x28x128xf16>, %k: memref<2x?x4x128xf16>,
                  %v: memref<2x?x4x128xf16>, %o: memref<2x1x28x128xf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x1x28x128xf16>, memref<2x?x4x128xf16>, memref<2x?x4x128xf16>)
                outs(%o : memref<2x1x28x128xf16>) {causal}
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
func.func @rope(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>,
                %cos_sin: memref<?x64xf32>, %positions: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
                rope(%cos_sin, %positions : memref<?x64xf32>, memref<?x?xi32>)
                {causal, rope_start = 64 : i64, rope_output}
  return
}
//--- plans.mlir
func.func @bad() attributes {p = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 240, correctionRegs = 64, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 64, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>} {
  return
}
// -----
func.func @bad() attributes {p = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, kvInterleave = 2, family = decode>} {
  return
}
//--- rope_planned.mlir
func.func @rope(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>,
                %cos_sin: memref<?x64xf32>, %positions: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
                rope(%cos_sin, %positions : memref<?x64xf32>, memref<?x?xi32>)
                {causal, rope_start = 64 : i64, rope_output, plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>}
  return
}
//--- alibi_planned.mlir
func.func @alibi(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                 %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>,
                 %slopes: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>,
                    memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
                captures(%slopes : memref<8xf32>) {causal, plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 240, correctionRegs = 0, producerRegs = 56, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, family = decode>} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %slope_table: memref<8xf32>):
    %slope = memref.load %slope_table[%h] : memref<8xf32>
    %distance = arith.subi %j, %i : index
    %d32 = arith.index_cast %distance : index to i32
    %df = arith.sitofp %d32 : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    fa4.yield %t : f32
  }
  return
}
