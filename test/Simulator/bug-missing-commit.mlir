// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-commit s_ready0.full \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The MMA warp issues QK^T for Q stage 0 but no tcgen05.commit tells the
// softmax warpgroup that S is ready.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: error: deadlock in CTA {{[0-9]+}}: every live thread waits and nothing is in flight
// CHECK: threads 0-127 (128, role softmax0) at {{.*}}: waits on mbarrier 's_ready0.full' for phase parity 0; it is in phase 0 with 1 of 1 arrivals and 0 transaction bytes pending

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
