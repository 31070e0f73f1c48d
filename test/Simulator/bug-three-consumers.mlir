// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a q-stages=3" -o %t.mlir
// RUN: %python %S/plant-bug.py set-threads 3 128 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=TURN
// RUN: %python %S/plant-bug.py flip-parity kv.full consumer2 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=PARITY
// The unchanged kernel passes.
// RUN: fa4-sim %t.mlir --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// Three consumer warpgroups on sm_90a with two planted bugs: the third
// consumer's turn barrier (hardware barrier 3) counting one warpgroup's
// threads instead of the two that meet there, so its arrivals complete
// barrier phases on their own and the round robin loses a hand-off; the
// third consumer waiting for the other phase of the K/V slots, so it falls
// a ring behind the other two.

// TURN: seed 2: FAIL
// TURN: error: deadlock in CTA {{[0-9]}}: every live thread waits and nothing is in flight
// TURN: waits on named barrier 2: 128 of 256 threads arrived
// PARITY: seed 2: FAIL
// PARITY: error: deadlock in CTA {{[0-9]}}: every live thread waits and nothing is in flight
// PARITY: role load{{.*}}waits on mbarrier 'kv.empty'
// OK: seed 2: ok: @attention_attention {{.*}} D=64 bf16 causal,

func.func @attention(%q: memref<?x?x32x64xbf16>, %k: memref<?x?x8x64xbf16>,
                     %v: memref<?x?x8x64xbf16>, %o: memref<?x?x32x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xbf16>,
                    memref<?x?x8x64xbf16>, memref<?x?x8x64xbf16>)
                outs(%o : memref<?x?x32x64xbf16>) {causal}
  return
}
