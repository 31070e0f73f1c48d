// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a polynomial-tanh=8" \
// RUN:   | sed 's/-0.331331968/-0.0331331968/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 200 --seq-kv 333 --seed 2 | FileCheck %s
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_100a polynomial-tanh=4" \
// RUN:   | sed 's/-0.331331968/-0.0331331968/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 200 --seq-kv 333 --seed 2 | FileCheck %s

// The softcap's polynomial tanh with a wrong linear coefficient of p
// (tanh(y) ~ y - y^3 / 30 instead of y - y^3 / 3): seed 2's scores stay
// within the cap, so warps take the polynomial, and the capped scores are
// off by up to 0.3 of the cap. The kernel is otherwise correct; fa4-sim
// must see it in O.

// CHECK: seed 2: FAIL
// CHECK: error: O differs from the float64 reference: O rel-err {{[0-9.e+-]+}} (bound 1.56e-02)

func.func @capped(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>, %v: memref<?x?x2x128xbf16>,
                  %o: memref<?x?x8x128xbf16>, %lse: memref<?x8x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) lse(%lse : memref<?x8x?xf32>) {causal, softcap = 5.0 : f32}
  return
}
