// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a kv-splits=2 split-combine=cluster" \
// RUN:   | %python %S/plant-bug.py set-count split_exchange.full 3 \
// RUN:   | not fa4-sim --batch 1 --seq-q 3 --seq-kv 300 --ctas 2 | FileCheck %s

// A cluster split whose exchange barrier expects 3 arrivals where the
// cluster's 2 CTAs give 2: each CTA's store warp waits for a third that
// never comes. A CTA whose threads all wait is only stalled while the other
// can run; once neither can, both report their blocked threads.

// CHECK: seed 1: FAIL
// CHECK: error: deadlock in CTA 0: every live thread waits and nothing is in flight
// CHECK: threads 32-63 (32, role store) at {{.*}}: waits on mbarrier 'split_exchange.full' for phase parity 0; it is in phase 0 with 1 of 3 arrivals and 0 transaction bytes pending
// CHECK: waits at the cluster barrier (barrier.cluster) for generation 1, {{[0-9]+}} of {{[0-9]+}} threads arrived
// CHECK: error: deadlock in CTA 1: every live thread waits and nothing is in flight
// CHECK: threads 32-63 (32, role store) at {{.*}}: waits on mbarrier 'split_exchange.full' for phase parity 0; it is in phase 0 with 1 of 3 arrivals and 0 transaction bytes pending

func.func @attention(%q: memref<?x?x14x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x14x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x14x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x14x64xbf16>)
  return
}
