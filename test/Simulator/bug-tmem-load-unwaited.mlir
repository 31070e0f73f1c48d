// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-tmem-wait softmax0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The softmax warpgroup uses the row of S it loaded from TMEM without the
// tcgen05.wait::ld that makes the registers valid (its first use: the row
// max of the raw scores).
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: error: loc({{.*}}): vector.reduction: uses the result of fa4.tmem.load at loc({{.*}}) before nvvm.tcgen05.wait <load> in thread {{[0-9]+}} (warp {{[0-3]}}, role softmax0, CTA {{[0-9]+}})

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
