// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a \
// RUN:   | %python %S/plant-bug.py drop-proxy-fence consumer0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 70 --seq-kv 100 | FileCheck %s --check-prefix=FENCE
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a \
// RUN:   | sed 's/\(%[0-9]*\) = arith.subf \(%[0-9]*\), \(%[0-9]*\) fastmath<contract> : vector<4xf32>/\1 = arith.addf \2, \3 fastmath<contract> : vector<4xf32>/' \
// RUN:   | not fa4-sim --batch 1 --seq-q 70 --seq-kv 100 | FileCheck %s --check-prefix=SIGN

// The rotary embedding with two planted bugs: the consumer's rotated Q
// not fenced for the async proxy before its wgmma reads it (its first
// nvvm.fence.proxy is the rotation's), and Q rotated by (x c + y s)
// instead of (x c - y s). fa4-sim must see the race and the wrong O.

// FENCE: seed 1: FAIL
// FENCE: race on shared memory bytes {{.*}} ('q' + {{[0-9]+}}): write by thread {{[0-9]+}} {{.*}} (vector.store) and read by the wgmma of warpgroup {{[0-9]+}} {{.*}} through the async proxy are not ordered
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
