// RUN: fa4-opt %s --fa4-synchronize="family=decode" -o %t.mlir
// RUN: %python %S/plant-bug.py drop-sync softmax 1 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 9 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=NO-SYNC
// RUN: %python %S/plant-bug.py drop-proxy-fence softmax < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 9 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=P-FENCE
// RUN: %python %S/plant-bug.py drop-wait p_ready.empty softmax < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 9 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=P-BACK
// RUN: %python %S/plant-bug.py drop-wait o_ready.full softmax < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 9 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=O-READY
// The unchanged kernel passes.
// RUN: fa4-sim %t.mlir --batch 1 --seq-q 9 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// The decode family (sm_100a swap-AB) with four planted bugs: the first
// row-maximum exchange without its named barrier (a thread folds the four
// warps' maxima before the other warps published theirs), the fence
// between the P^T stores and the PV MMA's reads through the async proxy
// deleted, the softmax writing P^T without taking its buffer back from
// the previous PV MMA (which still reads it), and the epilogue reading
// O^T without waiting for the tile's last PV MMA.

// NO-SYNC: seed 2: FAIL
// NO-SYNC: race on shared memory bytes {{.*}} ('exchange' + {{[0-9]+}}): read by {{.*}} role softmax, {{.*}} and write by {{.*}} role softmax, {{.*}} are not ordered by any barrier
// P-FENCE: seed 2: FAIL
// P-FENCE: race on shared memory bytes {{.*}} ('p' + {{[0-9]+}}): write by {{.*}} role softmax, {{.*}} through the async proxy are not ordered: the writing thread executed no fence.proxy.async
// P-BACK: seed 2: FAIL
// P-BACK: race on shared memory bytes {{.*}} ('p' + {{[0-9]+}}): read by the MMA issued by {{.*}} role mma, {{.*}} and write by {{.*}} role softmax, {{.*}} are not ordered by any barrier
// O-READY: seed 2: FAIL
// O-READY: race on TMEM {{.*}} ('o'): write by the MMA issued by {{.*}} role mma, {{.*}} and read by {{.*}} role softmax, {{.*}} are not ordered by any barrier
// OK: seed 2: ok: @decode_attention {{.*}} D=128 bf16 causal,

func.func @decode(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x4x128xbf16>,
                  %v: memref<?x?x4x128xbf16>, %o: memref<?x?x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x4x128xbf16>,
                    memref<?x?x4x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>) {causal}
  return
}
