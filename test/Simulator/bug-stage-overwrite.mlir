// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-wait kv.empty load \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The load warp no longer waits for the MMA warp to release a K/V stage: it
// refills a stage whose K or V an MMA may still be reading, and arrives on
// the stage's full barrier before knowing that its previous phase (the
// previous load into the stage) completed, so on a schedule where that
// load is still in flight the arrival counts towards the wrong phase. The
// second is found first: the simulator stops at it.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK-NEXT: error: loc({{.*}}): nvgpu.mbarrier.arrive.expect_tx: thread 416 (warp 13, role load, CTA {{[0-9]+}}) arrives on mbarrier 'kv.full'[{{[0-9]}}] in its phase 1, but is not ordered after the completion of phase 0: where that phase is still pending, the arrival counts towards it

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
