// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" --fa4-tile | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" | FileCheck %s --check-prefix=PLAN
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" --fa4-tile --fa4-specialize 2>&1 | FileCheck %s --check-prefix=ROLES

// The roles of the FP8 kernel are not built yet: fa4-specialize says so at
// the kernel.
// ROLES-COUNT-2: error: 'gpu.func' op fa4-specialize does not build FP8 (e4m3) kernels yet

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

// Without descale factors, f16 O, head dim 256 with sinks: no
// fa4.tile.descale, unscaled products; a ring of 4 of FP8's 32 KB K/V
// slots fits next to one Q slot per consumer and the 16-bit O staging
// (225 KB; at 16 bits the planner takes 64-key blocks and a ring of 3
// here).
// PLAN-LABEL: func.func @wide
// PLAN: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 256, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8, operandBytes = 1>
// CHECK-LABEL: func.func @wide
// CHECK-NOT: fa4.tile.descale
// CHECK: fa4.tile.matmul %{{.*}}, %{{.*}} transpose_b : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<64x128xf32>
// CHECK: fa4.tile.matmul %{{.*}}, %{{.*}} acc %{{.*}} : tensor<64x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<64x256xf32>
// CHECK: fa4.tile.normalize {{.*}} -> tensor<64x256xf16>
func.func @wide(%q: memref<?x?x8x256xf8E4M3FN>, %k: memref<?x?x8x256xf8E4M3FN>,
                %v: memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>,
                %o: memref<?x?x8x256xf16>, %sinks: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x256xf8E4M3FN>, memref<?x?x8x256xf8E4M3FN>,
                    memref<?x?x8x256xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x8x256xf16>) sink(%sinks : memref<8xf32>)
  return
}
