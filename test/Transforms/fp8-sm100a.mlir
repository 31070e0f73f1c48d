// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_100a" | FileCheck %s --check-prefix=PLAN
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_100a" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=ROLES
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_100a" --fa4-tile --fa4-specialize --fa4-allocate-tmem | FileCheck %s --check-prefix=TMEM

// The sm_100a FP8 (e4m3) kernel: causal GQA 16/4 with LSE and descale
// factors at head dim 128. The plan is the 16-bit one's with one byte a
// column (two Q stages, 128-key blocks, the causal PV split at 64).
// PLAN-LABEL: func.func @causal
// PLAN: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 64, rescaleThreshold = 8, operandBytes = 1>
// P is e4m3 in Tensor Memory: 32 columns per Q stage.
// ROLES-LABEL: gpu.func @causal_attention(
// ROLES: %[[P0:.*]] = fa4.tmem.buffer "p0" : !fa4.tmem<128x128xf8E4M3FN>
// ROLES: %[[P1:.*]] = fa4.tmem.buffer "p1" : !fa4.tmem<128x128xf8E4M3FN>
// Each softmax warpgroup: per tile qd * kd into the log2 scale, then P
// rounded to e4m3, 32 keys (8 columns) per store.
// ROLES: fa4.role "softmax0"
// ROLES: %[[KDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: %[[QDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: %[[SD:.*]] = arith.mulf %[[QDV]], %[[KDV]] : f32
// ROLES: %[[OUTER:.*]] = arith.mulf %{{.*}}, %[[SD]] : f32
// ROLES: arith.mulf %{{.*}}, %[[OUTER]] : f32
// ROLES: %[[E0:.*]] = arith.truncf %{{.*}} : vector<32xf32> to vector<32xf8E4M3FN>
// ROLES: fa4.tmem.store %[[E0]], %[[P0]][0] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
// ROLES: fa4.tmem.store %{{.*}}, %[[P0]][32] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
// ROLES: fa4.tmem.store %{{.*}}, %[[P0]][64] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
// ROLES: fa4.tmem.store %{{.*}}, %[[P0]][96] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
// The correction warpgroup scales O's factor by vd.
// ROLES: fa4.role "correction"
// ROLES: %[[VDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: arith.mulf %{{.*}}, %[[VDV]] : f32
// ROLES: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// The MMA warp: P's halves (keys [0, 64) from column 0, [64, 128) from
// column 16) against V's key windows, K-major; then Q K^T, kind::f8f6f4 on
// one 128-column atom.
// ROLES: fa4.role "mma"
// ROLES: %[[PTOP:.*]] = fa4.tmem.view %[[P0]][0] : !fa4.tmem<128x128xf8E4M3FN> -> !fa4.tmem<128x64xf8E4M3FN>
// ROLES: %[[PBOT:.*]] = fa4.tmem.view %[[P0]][16] : !fa4.tmem<128x128xf8E4M3FN> -> !fa4.tmem<128x64xf8E4M3FN>
// ROLES: %[[VTOP:.*]] = memref.subview %[[V:.*]][0, 0, 0] [1, 128, 64] [1, 1, 1] : memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>
// ROLES: %[[VBOT:.*]] = memref.subview %[[V]][0, 0, 64] [1, 128, 64] [1, 1, 1] : memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1], offset: 64>, #gpu.address_space<workgroup>>
// ROLES: fa4.mma %[[PTOP]], %[[VTOP]], %{{.*}}, %{{.*}} b_major(k) : !fa4.tmem<128x64xf8E4M3FN>, memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
// ROLES: fa4.mma %[[PBOT]], %[[VBOT]], %{{.*}}, %{{.*}} b_major(k) : !fa4.tmem<128x64xf8E4M3FN>, memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1], offset: 64>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
// ROLES: fa4.mma %{{.*}}, %{{.*}}, %{{.*}}, %false b_major(k) : memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
// fa4-allocate-tmem puts each 32-column P over the top of its S.
// TMEM-LABEL: gpu.func @causal_attention(
// TMEM: fa4.tmem.alloc 512 columns
// TMEM: fa4.tmem.view %{{.*}}[96] {fa4.name = "p0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf8E4M3FN>
// TMEM: fa4.tmem.view %{{.*}}[0] {fa4.name = "s0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
// TMEM: fa4.tmem.view %{{.*}}[224] {fa4.name = "p1"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf8E4M3FN>
// TMEM: fa4.tmem.view %{{.*}}[128] {fa4.name = "s1"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
func.func @causal(%q: memref<?x?x16x128xf8E4M3FN>, %k: memref<?x?x4x128xf8E4M3FN>,
                  %v: memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>,
                  %o: memref<?x?x16x128xbf16>, %lse: memref<?x16x?xf32>,
                  %qd: memref<?x4xf32>, %kd: memref<?x4xf32>, %vd: memref<?x4xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xf8E4M3FN>, memref<?x?x4x128xf8E4M3FN>,
                    memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x16x128xbf16>) lse(%lse : memref<?x16x?xf32>)
                descale(%qd, %kd, %vd : memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>) {causal}
  return
}

// -----

// Head dim 80 reads 96 columns of Q and K (the e4m3 K step is 32; TMA
// zero-fills the rest of the atom), without descale factors.
// PLAN-LABEL: func.func @d80
// PLAN: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 80, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8, operandBytes = 1>
// ROLES-LABEL: gpu.func @d80_attention(
// ROLES-NOT: llvm.load
// ROLES: fa4.role "mma"
// ROLES: fa4.mma %{{.*}}, %{{.*}}, %{{.*}}, %false b_major(k) depth(96) : memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
func.func @d80(%q: memref<?x?x2x80xf8E4M3FN>, %k: memref<?x?x2x80xf8E4M3FN>, %v: memref<?x?x2x80xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x2x80xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x80xf8E4M3FN>, memref<?x?x2x80xf8E4M3FN>, memref<?x?x2x80xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x?x2x80xf16>)
  return
}

// -----

// Head dim 256, which the 16-bit kernel cannot fit: with one-byte tiles one
// Q stage (S 128 + O 256 TMEM columns), a ring of 3 and the O staging take
// 193 KB.
// PLAN-LABEL: func.func @wide
// PLAN: plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 256, qStages = 1, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8, operandBytes = 1>
func.func @wide(%q: memref<?x?x8x256xf8E4M3FN>, %k: memref<?x?x8x256xf8E4M3FN>, %v: memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x8x256xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xf8E4M3FN>, memref<?x?x8x256xf8E4M3FN>, memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x?x8x256xf16>)
  return
}
