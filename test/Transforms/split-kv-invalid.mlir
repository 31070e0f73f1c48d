// Split-KV plans fa4-plan refuses, each at the op (or the option).
// RUN: not fa4-opt %s -split-input-file --fa4-plan="kv-splits=65" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not fa4-opt %s -split-input-file --fa4-plan="kv-splits=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a scheduler=paired kv-splits=2" 2>&1 | FileCheck %s --check-prefix=PAIRED
// RUN: not fa4-opt %s -split-input-file --fa4-plan="kv-splits=2" 2>&1 | FileCheck %s --check-prefix=TWO
// A hand-written plan goes through fa4-tile's checks.
// RUN: not fa4-opt %s -split-input-file --fa4-tile 2>&1 | FileCheck %s --check-prefix=HAND

// RANGE: error: 'fa4.attention' op invalid plan: kvSplits must be in [1, 64], got 65
// NEGATIVE: fa4-plan: option kv-splits must be positive (0 chooses), got -1
// PAIRED: error: 'fa4.attention' op invalid plan: kvSplits > 1 needs the linear or lpt scheduler, got paired
func.func @dense(%q: memref<?x?x8x64xf16>, %k: memref<?x?x2x64xf16>,
                 %o: memref<?x?x8x64xf16>) {
  fa4.attention ins(%q, %k, %k : memref<?x?x8x64xf16>, memref<?x?x2x64xf16>,
                    memref<?x?x2x64xf16>) outs(%o : memref<?x?x8x64xf16>) {causal}
  return
}

// -----

// Packed sequences do not split (the varlen schedule walks its table).
// TWO: error: 'fa4.attention' op kvSplits 2 with packed sequences (cu_seqlens) is not supported; split-KV takes dense batches (kv-splits=1 here)
func.func @packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %cu: memref<?xi32>) {
  fa4.attention ins(%q, %k, %k : memref<?x8x64xf16>, memref<?x2x64xf16>,
                    memref<?x2x64xf16>) outs(%q : memref<?x8x64xf16>)
                varlen(%cu, %cu : memref<?xi32>, memref<?xi32>)
  return
}

// -----

// The workspace numbers the rows of every work tile in 32 bits: 2^25 work
// tiles fit the tile count, their 2^33 rows (256 each) do not.
// TWO: error: 'fa4.attention' op split-KV over 2 CTAs numbers the rows and units of batch x head blocks x query tiles = 1024 x 8 x 4096 work tiles past the kernel's 32-bit range (2147483647)
func.func @many_rows(%q: memref<1024x1048576x8x64xf16>, %k: memref<1024x64x8x64xf16>) {
  fa4.attention ins(%q, %k, %k : memref<1024x1048576x8x64xf16>, memref<1024x64x8x64xf16>,
                    memref<1024x64x8x64xf16>) outs(%q : memref<1024x1048576x8x64xf16>)
  return
}

// -----

// HAND: error: 'fa4.attention' op kvSplits 3 with packed sequences (cu_seqlens) is not supported; split-KV takes dense batches (kv-splits=1 here)
func.func @hand_packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %cu: memref<?xi32>) {
  fa4.attention ins(%q, %k, %k : memref<?x8x64xf16>, memref<?x2x64xf16>,
                    memref<?x2x64xf16>) outs(%q : memref<?x8x64xf16>)
                varlen(%cu, %cu : memref<?xi32>, memref<?xi32>)
                {plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64,
                                  qStages = 2, kvStages = 3, gqaPack = 4, scheduler = linear,
                                  softmaxRegs = 200, correctionRegs = 64, producerRegs = 48,
                                  emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8,
                                  kvSplits = 3>}
  return
}
