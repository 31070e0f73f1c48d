// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a \
// RUN:   | %python %S/plant-bug.py drop-proxy-fence consumer0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 70 --seq-kv 100 | FileCheck %s --check-prefix=FENCE
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a \
// RUN:   | sed 's/\(%[0-9]*\) = arith.subf \(%[0-9]*\), \(%[0-9]*\) fastmath<contract> : vector<4xf32>/\1 = arith.addf \2, \3 fastmath<contract> : vector<4xf32>/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 70 --seq-kv 100 | FileCheck %s --check-prefix=SIGN
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_100a \
// RUN:   | %python %S/plant-bug.py drop-proxy-fence softmax0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 70 --seq-kv 100 | FileCheck %s --check-prefix=FENCE100
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_100a \
// RUN:   | %python %S/plant-bug.py drop-wait q_rotated.full mma \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 100 --ctas 1 | FileCheck %s --check-prefix=HANDOFF

// The rotary embedding with planted bugs. sm_90a: the consumer's rotated
// Q not fenced for the async proxy before its wgmma reads it (its first
// nvvm.fence.proxy is the rotation's), and Q rotated by (x c + y s)
// instead of (x c - y s). sm_100a: the softmax warpgroup's rotated Q not
// fenced before the MMA warp reads it, and the MMA warp not waiting for
// the rotated Q. fa4-sim must see the races and the wrong O.

// FENCE: seed 1: FAIL
// FENCE: race on shared memory bytes {{.*}} ('q' + {{[0-9]+}}): write by thread {{[0-9]+}} {{.*}} (vector.store) and read by the wgmma of warpgroup {{[0-9]+}} {{.*}} through the async proxy are not ordered
// FENCE100: seed 1: FAIL
// FENCE100: race on shared memory bytes {{.*}} ('q' + {{[0-9]+}}): write by thread {{[0-9]+}} {{.*}} role softmax0{{.*}} (vector.store) and read by the MMA issued by thread {{[0-9]+}} {{.*}} (fa4.mma) through the async proxy are not ordered
// HANDOFF: seed 1: FAIL
// HANDOFF: race on shared memory bytes {{.*}} ('q' + {{[0-9]+}}): write by thread {{[0-9]+}} {{.*}} role softmax0{{.*}} (vector.store) and read by the MMA issued by thread {{[0-9]+}} {{.*}} (fa4.mma) are not ordered by any barrier
// SIGN: seed 1: FAIL
// SIGN: error: O differs from the float64 reference

func.func @rope(%q: memref<?x?x14x64xbf16>, %k: memref<?x?x2x64xbf16>,
                %v: memref<?x?x2x64xbf16>, %o: memref<?x?x14x64xbf16>,
                %cs: memref<?x32xf32>, %pos: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x14x64xbf16>,
                    memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x14x64xbf16>)
                rope(%cs, %pos : memref<?x32xf32>, memref<?x?xi32>)
                {rope_start = 32 : i64, rope_output}
  return
}
