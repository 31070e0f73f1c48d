// RUN: fa4-opt %s --fa4-synchronize="shared-key=4" -o %t.mlir
// RUN: %python %S/plant-bug.py drop-sync softmax1 4 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 100 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=NO-SYNC
// RUN: %python %S/plant-bug.py set-threads 3 64 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 100 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=HALF
// RUN: %python %S/plant-bug.py drop-proxy-fence softmax0 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 100 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=P-FENCE
// RUN: %python %S/plant-bug.py one-half softmax0 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 100 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=ONE-HALF
// The unchanged kernel passes.
// RUN: fa4-sim %t.mlir --batch 1 --seq-q 100 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// Shared keys (sm_100a sharedKey = 4: four threads per row, each over a
// fourth of every KV block's keys) with four planted bugs: the second
// softmax warpgroup's first row-maximum exchange without its named barrier
// (a thread reads its row's other shares before they are written), the
// first warpgroup's exchange barrier counting 64 threads (two warps pass
// while the other two have not written), and the first warpgroup's fence
// between its P stores and the PV MMA's reads through the async proxy
// deleted, and the first warpgroup's exchanges all through one half of the
// buffer (a thread one exchange ahead overwrites partials its row's other
// threads have yet to read: what the second half is for).

// NO-SYNC: seed 2: FAIL
// NO-SYNC: race on shared memory bytes {{.*}} ('exchange' + {{[0-9]+}}): {{.*}} role softmax1, {{.*}} are not ordered by any barrier
// HALF: seed 2: FAIL
// HALF: race on shared memory bytes {{.*}} ('exchange' + {{[0-9]+}}): {{.*}} role softmax0, {{.*}} are not ordered by any barrier
// P-FENCE: seed 2: FAIL
// P-FENCE: race on shared memory bytes {{.*}} ('p' + {{[0-9]+}}): write by {{.*}} role softmax0, {{.*}} through the async proxy are not ordered: the writing thread executed no fence.proxy.async
// ONE-HALF: seed 2: FAIL
// ONE-HALF: race on shared memory bytes {{.*}} ('exchange' + {{[0-9]+}}): read by {{.*}} role softmax0, {{.*}} and write by {{.*}} role softmax0, {{.*}} are not ordered by any barrier
// OK: seed 2: ok: @attention_attention {{.*}} D=64 bf16 causal,

func.func @attention(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) {causal}
  return
}
