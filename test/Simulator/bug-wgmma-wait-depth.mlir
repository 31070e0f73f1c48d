// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | %python %S/plant-bug.py set-wgmma-wait consumer0 3 1 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// Consumer 0's wait for O += P V inside the KV loop (its third
// fa4.wgmma.wait) leaves one group in flight: the product it returns may
// still be running. Reported at the wait whatever the schedule.

// CHECK: seed 1: FAIL
// CHECK: fa4.wgmma.wait: returns the result of the fa4.wgmma at {{.*}}, which may still run: its commit group is not among those a wait for at most 1 pending groups completes

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
