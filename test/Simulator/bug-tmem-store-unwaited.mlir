// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-tmem-wait correction store \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s
// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-tmem-wait softmax0 store \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=SOFTMAX

// The correction warpgroup rescales O in TMEM but no longer waits for its
// tcgen05.st to complete before telling the MMA warp to go on: the next PV
// MMA may accumulate into O while the rescaled values are still being
// written. (Seed 1 draws rising keys, so the rescale runs.) Likewise the
// softmax warpgroup telling the MMA warp that P is in TMEM before its
// stores of P completed.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL: {{.*}}, rising keys,
// CHECK: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns {{[0-9]+}}-{{[0-9]+}} ('o0'): {{.*(the MMA issued by thread 384.*role correction.*fa4.tmem.store|role correction.*fa4.tmem.store.*the MMA issued by thread 384)}}

// SOFTMAX: seed 1: FAIL
// SOFTMAX: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns {{[0-9]+}}-{{[0-9]+}} ('p0', 's0'): {{.*(role softmax0.*fa4.tmem.store.*the MMA issued by thread 384|the MMA issued by thread 384.*role softmax0.*fa4.tmem.store)}}

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
