// RUN: fa4-opt %s --fa4-synchronize="kv-interleave=2" -o %t.mlir
// RUN: %python %S/plant-bug.py move-tmem o1 256 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=SHARED-O
// RUN: %python %S/plant-bug.py drop-wait p_o_rescale1.full mma < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=UNWAITED
// RUN: %python %S/plant-bug.py flip-parity s_ready1.full softmax1 < %t.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=PARITY
// The unchanged kernel passes.
// RUN: fa4-sim %t.mlir --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// Interleaved softmax warpgroups (sm_100a kvInterleave = 2) with three
// planted bugs: the second warpgroup's O placed on the first's (columns
// 256-319), so both warpgroups' PV MMAs accumulate into one O; the MMA
// warp's first wait for the second warpgroup's P (and its rescaled O)
// deleted; the second warpgroup waiting for the other phase of its S (it
// reads S while the MMA writes it).

// SHARED-O: seed 2: FAIL
// SHARED-O: error: O differs from the float64 reference
// UNWAITED: seed 2: FAIL
// UNWAITED: error: {{.*}}'p_o_rescale1.full'{{.*}}is not ordered after the completion of phase
// PARITY: seed 2: FAIL
// PARITY: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns {{[0-9]+}}-{{[0-9]+}} ('s1'): read by {{.*}}role softmax1
// OK: seed 2: ok: @attention_attention {{.*}} D=64 bf16 causal,

func.func @attention(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) {causal}
  return
}
