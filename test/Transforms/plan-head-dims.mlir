// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_90a | FileCheck %s --check-prefix=HOPPER
// RUN: fa4-opt %s -split-input-file --fa4-plan | FileCheck %s --check-prefix=BLACKWELL
// RUN: not fa4-opt %s -split-input-file --fa4-plan=block-n=128 2>&1 >/dev/null | FileCheck %s --check-prefix=BLACKWELL-128
// RUN: fa4-opt %s -split-input-file --fa4-synchronize=arch=sm_90a | FileCheck %s --check-prefix=SYNC90
// RUN: fa4-opt %s -split-input-file --fa4-synchronize | FileCheck %s --check-prefix=SYNC100

// Head dims are multiples of 16 up to 256. Tiles hold whole 64-column
// swizzle atoms: a head dim that is not a multiple of 64 fills its last
// atom in part (TMA zero-fills the columns past the tensor and the TMA
// store skips them), QK^T names its depth, PV's N is the head dim.

// Head dim 96 (Phi-3): tiles as head dim 128's, the same plans.
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 96, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
// BLACKWELL: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 96, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
// SYNC90-LABEL: gpu.func @d96_attention
// SYNC90: fa4.wgmma {{.*}} b_major(k) depth(96) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
// SYNC90: fa4.wgmma {{.*}} b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<48xf32> -> vector<48xf32>
// Two Q stages of 128 S + 96 O columns: 448, allocated as 512.
// SYNC100-LABEL: gpu.func @d96_attention
// SYNC100-SAME: fa4.tmem_columns = 512 : i64
// SYNC100: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x96xf32>
// SYNC100: fa4.mma {{.*}} b_major(k) depth(96) : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
func.func @d96(%q: memref<?x?x8x96xbf16>, %k: memref<?x?x8x96xbf16>,
               %v: memref<?x?x8x96xbf16>, %o: memref<?x?x8x96xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x96xbf16>, memref<?x?x8x96xbf16>, memref<?x?x8x96xbf16>)
                outs(%o : memref<?x?x8x96xbf16>)
  return
}

// -----

// Head dim 192: on sm_90a 80-key blocks (1.00-1.10x 64-key ones on an
// H100) and a ring of 4; on sm_100a two Q stages need 640 TMEM columns, so both softmax
// warpgroups share one (kvInterleave = 2) over 64-key blocks: S 64 and O
// 192 columns each, a ring of 3 in 174 KB.
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 80, headDim = 192, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
// BLACKWELL: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, headDim = 192, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 184, correctionRegs = 96, producerRegs = 48, emulatedExp2 = 3, pvSplit = 32, rescaleThreshold = 8, kvInterleave = 2>
// SYNC90-LABEL: gpu.func @d192_attention
// Two Q tiles, a ring of 4 80-key slots and two O staging tiles, each row
// 3 atoms (384 bytes): (128 + 320 + 128) x 384.
// SYNC90-SAME: fa4.dynamic_smem_bytes = 221184 : i64
// SYNC90: fa4.wgmma {{.*}} b_major(k) : memref<3x64x64xbf16, #gpu.address_space<workgroup>>, memref<3x80x64xbf16, #gpu.address_space<workgroup>> -> vector<40xf32>
// SYNC90: fa4.wgmma {{.*}} b_major(mn) : vector<40xbf16>, memref<3x80x64xbf16, #gpu.address_space<workgroup>>, vector<96xf32> -> vector<96xf32>
// SYNC100-LABEL: gpu.func @d192_attention
// SYNC100-SAME: fa4.dynamic_smem_bytes = 174084 : i64
// SYNC100-SAME: fa4.tmem_columns = 512 : i64
// SYNC100-COUNT-2: fa4.mma {{.*}} b_major(k) : memref<3x128x64xbf16, #gpu.address_space<workgroup>>, memref<3x64x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x64xf32>
func.func @d192(%q: memref<?x?x8x192xbf16>, %k: memref<?x?x8x192xbf16>,
                %v: memref<?x?x8x192xbf16>, %o: memref<?x?x8x192xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>)
                outs(%o : memref<?x?x8x192xbf16>)
  return
}

// -----

// Head dim 256 on sm_90a: 48-key blocks keep S and P small beside the
// 128-register O fragment; a ring of 4 K/V tiles of 24 KB fits beside two
// Q stages and the O staging (224 KB). On sm_100a one Q stage, a ring of two
// 128-key slots and the O staging need 264192 bytes of shared memory, more
// than the 232448 there are: 64-key blocks (S 64 TMEM columns beside O's
// 256) take a ring of 3 (230404 bytes), P V two MMAs of 32 keys.
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 48, headDim = 256, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
// BLACKWELL-128: error: 'fa4.attention' op head dim 256 does not fit sm_100a: 1 Q stage, a 2-slot K/V ring and the O staging of 256-column tiles need 264192 bytes of shared memory, more than the 232448 available
// BLACKWELL: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 64, headDim = 256, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 32, rescaleThreshold = 8>
// SYNC100-LABEL: gpu.func @d256_attention
// SYNC100-SAME: fa4.dynamic_smem_bytes = 230404 : i64
// SYNC100-SAME: fa4.tmem_columns = 512 : i64
// SYNC100: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x32xbf16>, memref<4x32x64xbf16, strided<[4096, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x256xf32>
// SYNC100: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x32xbf16>, memref<4x32x64xbf16, strided<[4096, 64, 1], offset: 2048>, #gpu.address_space<workgroup>>, !fa4.tmem<128x256xf32>
// SYNC100: fa4.mma {{.*}} b_major(k) : memref<4x128x64xbf16, #gpu.address_space<workgroup>>, memref<4x64x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x64xf32>
// Q: 2 slots; K/V: 4; S a 64 x 48 wgmma, O a 64 x 256 one with P (K = 48) from registers.
// SYNC90-LABEL: gpu.func @d256_attention
// SYNC90-SAME: fa4.dynamic_smem_bytes = 229376 : i64
// SYNC90: fa4.wgmma {{.*}} b_major(k) : memref<4x64x64xbf16, #gpu.address_space<workgroup>>, memref<4x48x64xbf16, #gpu.address_space<workgroup>> -> vector<24xf32>
// SYNC90: fa4.wgmma {{.*}} b_major(mn) : vector<24xbf16>, memref<4x48x64xbf16, #gpu.address_space<workgroup>>, vector<128xf32> -> vector<128xf32>
func.func @d256(%q: memref<?x?x8x256xbf16>, %k: memref<?x?x8x256xbf16>,
                %v: memref<?x?x8x256xbf16>, %o: memref<?x?x8x256xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>)
                outs(%o : memref<?x?x8x256xbf16>)
  return
}

// -----

// Dqk 192, Dv 128 (DeepSeek prefill): the plan records Dv. sm_100a: two
// Q stages of 128 S + 128 O columns; Q tiles of 3 atoms, ring slots as wide
// as K (3 atoms) holding V in 2, an O staging of 2: exactly 227 KB with a
// ring of 2. sm_90a: the 80-key blocks of a head dim past 128.
// HOPPER: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 80, headDim = 192, headDimV = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
// BLACKWELL: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 192, headDimV = 128, qStages = 2, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
// SYNC90-LABEL: gpu.func @dv128_attention
// SYNC90: fa4.wgmma {{.*}} b_major(k) : memref<3x64x64xbf16, #gpu.address_space<workgroup>>, memref<3x80x64xbf16, #gpu.address_space<workgroup>> -> vector<40xf32>
// SYNC90: fa4.wgmma {{.*}} b_major(mn) : vector<40xbf16>, memref<2x80x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// SYNC100-LABEL: gpu.func @dv128_attention
// SYNC100-SAME: fa4.dynamic_smem_bytes = 231428 : i64
// SYNC100-SAME: fa4.tmem_columns = 512 : i64
// SYNC100: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
// SYNC100: fa4.mma {{.*}} b_major(k) : memref<3x128x64xbf16, #gpu.address_space<workgroup>>, memref<3x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
func.func @dv128(%q: memref<?x?x8x192xbf16>, %k: memref<?x?x8x192xbf16>,
                 %v: memref<?x?x8x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x192xbf16>, memref<?x?x8x192xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>)
  return
}
