// RUN: fa4-opt %s --fa4-plan=arch=sm_90a | FileCheck %s
// RUN: not fa4-opt %s --fa4-plan 2>&1 | FileCheck %s --check-prefix=BLACKWELL
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | FileCheck %s --check-prefix=SYNC

// Head dim 256 on sm_90a: 64-key blocks keep S and P small beside the
// 128-register O fragment; a ring of 3 K/V tiles and single-buffered Q fit
// beside the O staging (224 KB). sm_100a refuses it.
// CHECK: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 64, headDim = 256, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
// BLACKWELL: error: 'fa4.attention' op head dim 256 is not supported on sm_100a (supported: 64, 128)
// Q: 2 slots; K/V: 3; S a 64 x 64 wgmma, O a 64 x 256 one with P (K = 64) from registers.
// SYNC: fa4.dynamic_smem_bytes = 229376 : i64
// SYNC: fa4.wgmma {{.*}} -> vector<32xf32>
// SYNC: fa4.wgmma {{.*}} : vector<32xbf16>, memref<4x64x64xbf16, #gpu.address_space<workgroup>>, vector<128xf32> -> vector<128xf32>
func.func @d256(%q: memref<?x?x8x256xbf16>, %k: memref<?x?x8x256xbf16>,
                %v: memref<?x?x8x256xbf16>, %o: memref<?x?x8x256xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>, memref<?x?x8x256xbf16>)
                outs(%o : memref<?x?x8x256xbf16>)
  return
}
