// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py set-count p_ready_2_0.full 129 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=HIGH
// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py set-count p_ready_2_0.full 64 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=LOW

// The barrier the 128 softmax threads arrive on when the second half of P
// is in TMEM expects the wrong number of arrivals. One too many: the phase
// never completes and the MMA warp waits forever. Half as many: every
// iteration completes two phases, so the MMA warp's parity wait may miss
// the one it needs (a skipped phase reads as not yet completed); the
// simulator reports it at the first arrival of the second phase, which
// nothing orders after the first phase's completion.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// HIGH: seed 1: FAIL
// HIGH: error: deadlock in CTA {{[0-9]+}}: every live thread waits and nothing is in flight
// HIGH: thread 384 (role mma) at {{.*}}: waits on mbarrier 'p_ready_2_0.full' for phase parity 0; it is in phase 0 with 1 of 129 arrivals and 0 transaction bytes pending

// LOW: seed 1: FAIL
// LOW-NEXT: error: loc({{.*}}): nvgpu.mbarrier.arrive: thread {{[0-9]+}} (warp {{[0-3]}}, role softmax0, CTA {{[0-9]+}}) arrives on mbarrier 'p_ready_2_0.full' in its phase 1, but is not ordered after the completion of phase 0

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
