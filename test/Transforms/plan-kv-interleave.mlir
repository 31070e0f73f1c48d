// RUN: split-file %s %t
// RUN: fa4-opt %t/d128.mlir --fa4-plan | FileCheck %s --check-prefix=D128
// RUN: fa4-opt %t/d192.mlir --fa4-plan | FileCheck %s --check-prefix=D192
// RUN: fa4-opt %t/d192.mlir --fa4-plan="kv-interleave=1" | FileCheck %s --check-prefix=D192-OFF
// RUN: fa4-opt %t/d192.mlir --fa4-plan="arch=sm_90a" | FileCheck %s --check-prefix=HOPPER
// RUN: fa4-opt %t/d192v128.mlir --fa4-plan | FileCheck %s --check-prefix=D192V128
// RUN: fa4-opt %t/d256.mlir --fa4-plan | FileCheck %s --check-prefix=D256
// RUN: fa4-opt %t/d128.mlir --fa4-plan="kv-interleave=2" | FileCheck %s --check-prefix=ASKED
// RUN: fa4-opt %t/grids.mlir --fa4-plan | FileCheck %s --check-prefix=GRIDS
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="kv-interleave=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="kv-interleave=3" 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="arch=sm_90a kv-interleave=2" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="kv-interleave=2 q-stages=2" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not fa4-opt %t/d128.mlir --fa4-plan="kv-interleave=2 kv-splits=2" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not fa4-opt %t/d256.mlir --fa4-plan="kv-interleave=2" 2>&1 | FileCheck %s --check-prefix=TMEM

// Head dim 128 with dynamic sizes: two Q stages, no interleaving.
// D128: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2,
// D128-NOT: kvInterleave

// Dv 192: two Q stages' S and O overflow TMEM (640 columns); both softmax
// warpgroups share the one Q stage over 64-key blocks (2 x (64 + 192)).
// D192: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, headDim = 192, qStages = 1, kvStages = 3,
// D192-SAME: pvSplit = 32,
// D192-SAME: kvInterleave = 2>
// D192-OFF: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 192, qStages = 1,
// D192-OFF-NOT: kvInterleave
// HOPPER: plan = #fa4.plan<arch = sm_90a,
// HOPPER-NOT: kvInterleave

// Dqk 192 / Dv 128 fits two Q stages; head dim 256 does not fit two S and
// two O even at 64 keys.
// D192V128: qStages = 2,
// D192V128-NOT: kvInterleave
// D256: blockN = 64, headDim = 256, qStages = 1,
// D256-NOT: kvInterleave

// Asked for at head dim 128: one Q stage, 128-key blocks (2 x (128 + 128)).
// ASKED: blockN = 128, headDim = 128, qStages = 1,
// ASKED-SAME: kvInterleave = 2>

// Static sizes: 64 two-stage tiles leave SMs idle and do not split (too
// many tiles): interleaved; 1024 tiles: not; a decode-sized grid with a
// long cache splits instead.
// GRIDS-LABEL: func.func @few_tiles
// GRIDS: qStages = 1,
// GRIDS-SAME: kvInterleave = 2>
// GRIDS-LABEL: func.func @many_tiles
// GRIDS: qStages = 2,
// GRIDS-NOT: kvInterleave
// GRIDS-SAME: >
// GRIDS-LABEL: func.func @decode
// GRIDS: qStages = 2,
// GRIDS-SAME: kvSplits =
// GRIDS-NOT: kvInterleave
// At Dv 192 too: the split, not the interleaving (the two do not combine).
// GRIDS-LABEL: func.func @decode192
// GRIDS: blockN = 128, headDim = 192, qStages = 1,
// GRIDS-SAME: kvSplits =
// GRIDS-NOT: kvInterleave

// NEGATIVE: error: fa4-plan: option kv-interleave must be positive (0 chooses), got -1
// THREE: error: 'fa4.attention' op invalid plan: kvInterleave must be 1 or 2, got 3
// SM90: error: 'fa4.attention' op invalid plan: kvInterleave = 2 needs sm_100a (its softmax warpgroups keep S and O in Tensor Memory)
// STAGES: error: 'fa4.attention' op invalid plan: kvInterleave = 2 shares one Q tile between the softmax warpgroups: qStages must be 1, got 2
// SPLIT: error: 'fa4.attention' op invalid plan: kvInterleave = 2 does not combine with kvSplits = 2
// TMEM: error: 'fa4.attention' op invalid plan: plan needs 640 TMEM columns (2 interleaved softmax warpgroups x (64 S + 256 O)), more than the 512 available

//--- d128.mlir
func.func @d128(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal}
  return
}
//--- d192.mlir
func.func @d192(%q: memref<?x?x8x192xbf16>, %k: memref<?x?x8x192xbf16>,
                %v: memref<?x?x8x192xbf16>, %o: memref<?x?x8x192xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>)
                outs(%o : memref<?x?x8x192xbf16>)
  return
}
//--- d192v128.mlir
func.func @d192v128(%q: memref<?x?x8x192xbf16>, %k: memref<?x?x8x192xbf16>,
                    %v: memref<?x?x8x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
  return
}
//--- d256.mlir
func.func @d256(%q: memref<?x?x8x256xbf16>, %k: memref<?x?x8x256xbf16>,
                %v: memref<?x?x8x256xbf16>, %o: memref<?x?x8x256xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>)
                outs(%o : memref<?x?x8x256xbf16>)
  return
}
//--- grids.mlir
func.func @few_tiles(%q: memref<2x256x32x128xbf16>, %k: memref<2x4096x32x128xbf16>,
                     %v: memref<2x4096x32x128xbf16>, %o: memref<2x256x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x256x32x128xbf16>, memref<2x4096x32x128xbf16>, memref<2x4096x32x128xbf16>)
                outs(%o : memref<2x256x32x128xbf16>)
  return
}
func.func @many_tiles(%q: memref<8x4096x32x128xbf16>, %k: memref<8x4096x32x128xbf16>,
                      %v: memref<8x4096x32x128xbf16>, %o: memref<8x4096x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<8x4096x32x128xbf16>, memref<8x4096x32x128xbf16>, memref<8x4096x32x128xbf16>)
                outs(%o : memref<8x4096x32x128xbf16>)
  return
}
func.func @decode(%q: memref<1x1x32x128xbf16>, %k: memref<1x32768x8x128xbf16>,
                  %v: memref<1x32768x8x128xbf16>, %o: memref<1x1x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x1x32x128xbf16>, memref<1x32768x8x128xbf16>, memref<1x32768x8x128xbf16>)
                outs(%o : memref<1x1x32x128xbf16>)
  return
}
func.func @decode192(%q: memref<1x1x32x192xbf16>, %k: memref<1x32768x8x192xbf16>,
                     %v: memref<1x32768x8x192xbf16>, %o: memref<1x1x32x192xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x1x32x192xbf16>, memref<1x32768x8x192xbf16>, memref<1x32768x8x192xbf16>)
                outs(%o : memref<1x1x32x192xbf16>)
  return
}
