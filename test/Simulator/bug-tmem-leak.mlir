// RUN: fa4-opt %s --fa4-synchronize -o %t.sync.mlir
// RUN: %python %S/plant-bug.py drop-dealloc < %t.sync.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=LEAK
// RUN: %python %S/plant-bug.py dealloc-warp 1 < %t.sync.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=WARP

// The CTA exits without freeing its Tensor Memory (the fa4.tmem.dealloc
// removed), or a warp other than the allocating one frees it.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// LEAK: seed 1: FAIL
// LEAK: error: loc({{.*}}): fa4.tmem.alloc: CTA {{[0-9]+}} exited with TMEM columns [0, 512) still allocated: no fa4.tmem.dealloc freed them

// WARP: seed 1: FAIL
// WARP: error: loc({{.*}}): fa4.tmem.dealloc: frees Tensor Memory in warp 1, but warp 0 allocated it at loc({{.*}})

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
