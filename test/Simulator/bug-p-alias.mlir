// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py move-tmem p0 256 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// P of Q stage 0 is placed over O of stage 0 (columns 256-319) instead of
// the upper half of S: softmax writes P into columns the PV MMA is still
// accumulating O into and the correction warps are still rescaling.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns {{(2[5-9][0-9]|30[0-9]|31[0-9])}}-{{[0-9]+}} ({{.*}}'o0'{{.*}}): {{.*}}role softmax0{{.*}}(fa4.tmem.store){{.*}} are not ordered by any barrier

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
