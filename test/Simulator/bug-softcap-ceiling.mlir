// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a softcap-ceiling=7" \
// RUN:   | sed 's/arith.constant 7.000000e+00 : f32/arith.constant 6.000000e+01 : f32/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_100a softcap-ceiling=7" \
// RUN:   | sed 's/arith.constant 7.000000e+00 : f32/arith.constant 6.000000e+01 : f32/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s
// The unchanged kernels pass (the running maximum: B = 20 log2(e) = 28.9
// is past f16's ceiling of 7).
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a softcap-ceiling=7" \
// RUN:   | fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_100a softcap-ceiling=7" \
// RUN:   | fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// The softcap's ceiling taken as the softmax's reference past where f16 P
// keeps its precision (the plan's 7 raised to 60 in the kernel, past what
// fa4-plan and the tiled verifier accept): at
// softcap 20, P = 2^(score - 28.9) falls below f16's normals (2^-14) for
// every score under 14.5, and rounds to subnormals or zero. fa4-sim must
// see it in O.

// CHECK: seed 2: FAIL
// CHECK: error: O differs from the float64 reference: O rel-err {{[0-9.e+-]+}} (bound 1.95e-03)
// OK: seed 2: ok: @capped_f16_attention {{.*}} f16 causal softcap 20 sink,

func.func @capped_f16(%q: memref<?x?x4x64xf16>, %k: memref<?x?x4x64xf16>, %v: memref<?x?x4x64xf16>,
                      %o: memref<?x?x4x64xf16>, %lse: memref<?x4x?xf32>, %s: memref<4xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xf16>, memref<?x?x4x64xf16>, memref<?x?x4x64xf16>)
                outs(%o : memref<?x?x4x64xf16>) lse(%lse : memref<?x4x?xf32>) sink(%s : memref<4xf32>) {causal, softcap = 20.0 : f32}
  return
}
