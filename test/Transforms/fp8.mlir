// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" --fa4-tile | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" | FileCheck %s --check-prefix=PLAN
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=ROLES

// FP8 (e4m3) Q, K and a key-major V with descale factors, O in bf16, causal
// GQA 16/4 with LSE at head dim 128: the sm_90a plan takes 128-key blocks
// and says FP8 (one byte per element); the tiled program reads the factors
// once per work tile at its batch and KV head and scales Q K^T and P V by
// them; P is e4m3, O bf16.
// PLAN-LABEL: func.func @causal
// PLAN: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 4, scheduler = paired, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>
// CHECK-LABEL: func.func @causal
// CHECK: fa4.launch @causal_attention::@causal_attention(%[[A0:.*]], %[[A1:.*]], %[[A2:.*]], %[[A3:.*]], %[[A4:.*]], %[[A5:.*]], %[[A6:.*]], %[[A7:.*]]) : memref<?x?x16x128xf8E4M3FN>, memref<?x?x4x128xf8E4M3FN>, memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, memref<?x?x16x128xbf16>, memref<?x16x?xf32>, memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>
// CHECK: gpu.func @causal_attention(%[[Q:.*]]: memref<?x?x16x128xf8E4M3FN>, %[[K:.*]]: memref<?x?x4x128xf8E4M3FN>, %[[V:.*]]: memref<?x?x4x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %[[O:.*]]: memref<?x?x16x128xbf16>, %[[LSE:.*]]: memref<?x16x?xf32>, %[[QD:.*]]: memref<?x4xf32>, %[[KD:.*]]: memref<?x4xf32>, %[[VD:.*]]: memref<?x4xf32>) kernel
// CHECK: %[[BI:.*]], %[[H:.*]], %{{.*}} = fa4.tile.coords
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %c4
// CHECK: %[[SF:.*]], %[[VF:.*]] = fa4.tile.descale %[[QD]], %[[KD]], %[[VD]][%[[BI]], %[[KVH]]] : memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>
// CHECK: fa4.tile.load %[[Q]]{{.*}} -> tensor<64x128xf8E4M3FN>
// CHECK: %[[KT:.*]] = fa4.tile.load %[[K]]{{.*}} -> tensor<128x128xf8E4M3FN>
// CHECK: %[[VT:.*]] = fa4.tile.load %[[V]]{{.*}} -> tensor<128x128xf8E4M3FN>
// CHECK: fa4.tile.matmul %{{.*}}, %[[KT]] scale %[[SF]] transpose_b : tensor<64x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<64x128xf32>
// CHECK: %[[P:.*]], %{{.*}}, %{{.*}}, %{{.*}} = fa4.tile.softmax {{.*}} -> tensor<64x128xf8E4M3FN>
// CHECK: fa4.tile.matmul %[[P]], %[[VT]] acc %{{.*}} scale %[[VF]] : tensor<64x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<64x128xf32>
// CHECK: fa4.tile.normalize {{.*}} -> tensor<64x128xbf16>
// CHECK: fa4.tile.store {{.*}} : tensor<64x128xbf16> -> memref<?x?x16x128xbf16>
// The roles: Q and K boxes of one 128-column atom, V's box key-major (Dv
// rows of 128 keys), O's 64-column bf16 atoms; the three descale pointers
// after LSE. A ring slot holds a 16 KB K or V tile.
// ROLES-LABEL: gpu.func @causal_attention(
// ROLES-SAME: %[[QM:[a-z0-9]+]]: !nvgpu.tensormap.descriptor<tensor = memref<1x16x4x128xf8E4M3FN, #gpu.address_space<workgroup>>
// ROLES-SAME: %[[KM:[a-z0-9]+]]: !nvgpu.tensormap.descriptor<tensor = memref<1x128x1x128xf8E4M3FN, #gpu.address_space<workgroup>>
// ROLES-SAME: %[[VM:[a-z0-9]+]]: !nvgpu.tensormap.descriptor<tensor = memref<1x128x1x128xf8E4M3FN, #gpu.address_space<workgroup>>
// ROLES-SAME: !nvgpu.tensormap.descriptor<tensor = memref<1x16x4x64xbf16, #gpu.address_space<workgroup>>
// ROLES-SAME: %[[SCALE:[a-z0-9]+]]: f32, %{{[a-z0-9]+}}: !llvm.ptr<1>, %[[QD:[a-z0-9]+]]: !llvm.ptr<1>, %[[KD:[a-z0-9]+]]: !llvm.ptr<1>, %[[VD:[a-z0-9]+]]: !llvm.ptr<1>)
// ROLES-SAME: workgroup(%{{.*}} : memref<32768xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "q"}, %{{.*}} : memref<65536xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "kv"}, %{{.*}} : memref<32768xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "o_staging"})
// The load role: V at (first key, KV head, column 0, batch).
// ROLES: fa4.role "load"
// ROLES: fa4.tma.load %[[VM]][%{{.*}}, %{{.*}}, %c0{{.*}}, %{{.*}}] into %{{.*}} : {{.*}}, memref<1x128x1x128xf8E4M3FN, #gpu.address_space<workgroup>>, !fa4.channel<4>
// Each consumer: per tile qd * kd into the log2 scale, vd kept for O.
// ROLES: fa4.role "consumer0"
// ROLES: %[[KDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: %[[QDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: %[[SD:.*]] = arith.mulf %[[QDV]], %[[KDV]] : f32
// ROLES: %[[VDV:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// ROLES: arith.mulf %[[SCALE]], %[[SD]] : f32
// ROLES: fa4.wgmma %{{.*}}, %{{.*}} b_major(k) : memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> -> vector<64xf32>
// ROLES: fa4.wgmma.quantize %{{.*}} : vector<64xf32> -> vector<64xf8E4M3FN>
// ROLES: fa4.wgmma %{{.*}}, %{{.*}}, %{{.*}} b_major(k) : vector<64xf8E4M3FN>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// ROLES: arith.mulf %{{.*}}, %[[VDV]] : f32
// ROLES: arith.truncf %{{.*}} : vector<64xf32> to vector<64xbf16>
// ROLES: fa4.role "consumer1"
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

// Head dim 256: 64-key blocks (a 128-key S would spill next to a 256-column
// O) and a ring of 3; each V box still holds 128 keys, one 128-byte atom
// per row, of which a block's P V reads the first 64 (K = 64: a 32-element
// e4m3 P fragment against the whole atom), the next block's keys in the
// other half.
// PLAN-LABEL: func.func @wide
// PLAN: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 64, headDim = 256, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>
// ROLES-LABEL: gpu.func @wide_attention(
// ROLES-SAME: !nvgpu.tensormap.descriptor<tensor = memref<1x64x1x128xf8E4M3FN, #gpu.address_space<workgroup>>
// ROLES-SAME: !nvgpu.tensormap.descriptor<tensor = memref<1x256x1x128xf8E4M3FN, #gpu.address_space<workgroup>>
// ROLES: fa4.role "consumer0"
// ROLES: fa4.wgmma %{{.*}}, %{{.*}} b_major(k) : memref<2x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<2x64x128xf8E4M3FN, #gpu.address_space<workgroup>> -> vector<32xf32>
// ROLES: fa4.wgmma %{{.*}}, %{{.*}}, %{{.*}} b_major(k) : vector<32xf8E4M3FN>, memref<1x256x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<128xf32> -> vector<128xf32>
func.func @wide(%q: memref<?x?x8x256xf8E4M3FN>, %k: memref<?x?x8x256xf8E4M3FN>,
                %v: memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>,
                %o: memref<?x?x8x256xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xf8E4M3FN>, memref<?x?x8x256xf8E4M3FN>,
                    memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x8x256xf16>)
  return
}
