// RUN: fa4-opt %s -split-input-file --fa4-plan | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-plan="kv-stages=4 emulated-exp2=0 softmax-regs=192 correction-regs=80 scheduler=linear rescale-threshold=0" | FileCheck %s --check-prefix=OVERRIDE
// RUN: fa4-opt %s -split-input-file --fa4-plan="q-stages=1 kv-stages=2" | FileCheck %s --check-prefix=SMALL
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" | FileCheck %s --check-prefix=HOPPER

// Non-causal MHA, head dim 128: the FA4 defaults.
// CHECK-LABEL: func @mha_d128
// CHECK: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
// OVERRIDE-LABEL: func @mha_d128
// OVERRIDE: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 192, correctionRegs = 80, producerRegs = 48, emulatedExp2 = 0, pvSplit = 96, rescaleThreshold = 0>
// SMALL-LABEL: func @mha_d128
// SMALL: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 1, kvStages = 2, gqaPack = 1, scheduler = linear, {{.*}}, pvSplit = 96,
// sm_90a: a 64-row wgmma tile per consumer warpgroup, two K/V pairs in the
// ring, consumers at 232 registers and the producer at 40, MUFU exp2 only,
// no correction warpgroup and no P split.
// HOPPER-LABEL: func @mha_d128
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
func.func @mha_d128(%q: memref<2x4096x16x128xbf16>, %k: memref<2x4096x16x128xbf16>,
                    %v: memref<2x4096x16x128xbf16>, %o: memref<2x4096x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x4096x16x128xbf16>, memref<2x4096x16x128xbf16>,
                    memref<2x4096x16x128xbf16>) outs(%o : memref<2x4096x16x128xbf16>)
  return
}

// -----

// Causal GQA (ratio 8), head dim 64: LPT scheduler, 64+64 PV split, 8 query
// heads packed per tile.
// CHECK-LABEL: func @causal_gqa8_d64
// CHECK: {causal, plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 8, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 64, rescaleThreshold = 8>}
// OVERRIDE-LABEL: func @causal_gqa8_d64
// OVERRIDE: scheduler = linear
// Causal on sm_90a: paired work units; 8 query heads packed per 64-row tile;
// head dim 64: three consumers (FA3's 192-row tile) at 160 registers, the
// producer at 32, 112-key causal blocks.
// HOPPER-LABEL: func @causal_gqa8_d64
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 112, headDim = 64, qStages = 3, kvStages = 4, gqaPack = 8, scheduler = paired, softmaxRegs = 160, correctionRegs = 0, producerRegs = 32,
func.func @causal_gqa8_d64(%q: memref<?x?x32x64xf16>, %k: memref<?x?x4x64xf16>,
                           %v: memref<?x?x4x64xf16>, %o: memref<?x?x32x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xf16>, memref<?x?x4x64xf16>, memref<?x?x4x64xf16>)
                outs(%o : memref<?x?x32x64xf16>) {causal}
  return
}

// -----

// A plan written by hand is kept as it is.
// CHECK-LABEL: func @kept
// CHECK: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 1, kvStages = 2, gqaPack = 1, scheduler = lpt, softmaxRegs = 240, correctionRegs = 128, producerRegs = 56, emulatedExp2 = 16, pvSplit = 32, rescaleThreshold = 0>
func.func @kept(%q: memref<1x128x1x64xf16>, %k: memref<1x128x1x64xf16>,
                %v: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>)
                outs(%o : memref<1x128x1x64xf16>)
                {plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 1, kvStages = 2, gqaPack = 1, scheduler = lpt, softmaxRegs = 240, correctionRegs = 128, producerRegs = 56, emulatedExp2 = 16, pvSplit = 32, rescaleThreshold = 0>}
  return
}

// -----

// MQA with 128 query heads: the whole tile is one query position. The
// 64-row sm_90a tile packs 64 of them.
// CHECK-LABEL: func @mqa128
// CHECK: gqaPack = 128,
// HOPPER-LABEL: func @mqa128
// HOPPER: gqaPack = 64,
func.func @mqa128(%q: memref<1x64x128x64xbf16>, %k: memref<1x512x1x64xbf16>,
                  %v: memref<1x512x1x64xbf16>, %o: memref<1x64x128x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x64x128x64xbf16>, memref<1x512x1x64xbf16>, memref<1x512x1x64xbf16>)
                outs(%o : memref<1x64x128x64xbf16>)
  return
}

// -----

// Any GQA ratio: the default packs the largest divisor of both the ratio
// and the Q tile (Qwen2.5-7B's 28 / 4 heads, ratio 7: none).
// CHECK-LABEL: func @gqa7
// CHECK: gqaPack = 1,
// HOPPER-LABEL: func @gqa7
// HOPPER: gqaPack = 1,
func.func @gqa7(%q: memref<1x256x28x128xbf16>, %k: memref<1x256x4x128xbf16>,
                %v: memref<1x256x4x128xbf16>, %o: memref<1x256x28x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x28x128xbf16>, memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>)
                outs(%o : memref<1x256x28x128xbf16>) {causal}
  return
}

// -----

// Ratio 6 packs 2 heads per position, ratio 3 none.
// CHECK-LABEL: func @gqa6
// CHECK: gqaPack = 2,
// HOPPER-LABEL: func @gqa6
// HOPPER: gqaPack = 2,
func.func @gqa6(%q: memref<1x256x12x64xf16>, %k: memref<1x256x2x64xf16>,
                %v: memref<1x256x2x64xf16>, %o: memref<1x256x12x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x12x64xf16>, memref<1x256x2x64xf16>, memref<1x256x2x64xf16>)
                outs(%o : memref<1x256x12x64xf16>)
  return
}

// -----

// Sliding windows and softcap take the plan of the same shape without them,
// except that a causal window is scheduled longest first on sm_90a too
// (its tiles but the first cost the same; pairs do not balance them); a
// symmetric window takes the non-causal choices. (These static shapes
// make 4 two-stage tiles: sm_100a interleaves its softmax warpgroups.)
// CHECK-LABEL: func @window_causal
// CHECK: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = lpt, softmaxRegs = 192, correctionRegs = 88, producerRegs = 40, emulatedExp2 = 3, pvSplit = 64, rescaleThreshold = 8, kvInterleave = 2>
// HOPPER-LABEL: func @window_causal
// HOPPER: scheduler = lpt,
func.func @window_causal(%q: memref<1x256x4x64xf16>, %k: memref<1x256x4x64xf16>,
                         %v: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>, memref<1x256x4x64xf16>)
                outs(%o : memref<1x256x4x64xf16>) {causal, window = array<i64: 128, 0>}
  return
}

// -----

// sm_100a takes 8 of every 16 tanh from the FMA polynomial; sm_90a none.
// The softcap's ceiling (f16: 7) on sm_100a; on sm_90a only from Dv 128.
// CHECK-LABEL: func @window_softcap
// CHECK: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 192, correctionRegs = 88, producerRegs = 40, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8, polynomialTanh = 8, softcapCeiling = 7, kvInterleave = 2>
// HOPPER-LABEL: func @window_softcap
// HOPPER: scheduler = linear,
// HOPPER-NOT: polynomialTanh
// HOPPER-NOT: softcapCeiling
func.func @window_softcap(%q: memref<1x256x4x64xf16>, %k: memref<1x256x4x64xf16>,
                          %v: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>, memref<1x256x4x64xf16>)
                outs(%o : memref<1x256x4x64xf16>) {window = array<i64: 64, 64>, softcap = 30.0 : f32}
  return
}

// -----

// bf16 takes the largest ceiling, 48 (softcap up to 33), on both targets
// at head dim 128.
// CHECK-LABEL: func @softcap_bf16
// CHECK: polynomialTanh = 8, softcapCeiling = 48, kvInterleave = 2>
// HOPPER-LABEL: func @softcap_bf16
// HOPPER: rescaleThreshold = 8, softcapCeiling = 48>
func.func @softcap_bf16(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                        %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>)
                outs(%o : memref<1x256x4x128xbf16>) {causal, softcap = 30.0 : f32}
  return
}
