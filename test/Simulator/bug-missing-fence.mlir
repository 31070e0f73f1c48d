// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-fence s_ready0.full softmax0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The softmax warpgroup waits for S, but no tcgen05.fence::after_thread_sync
// follows the wait: its TMEM loads are not ordered after the MMA that wrote
// S, whatever the mbarrier says.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns {{[0-9]+}}-{{[0-9]+}} ('s0'): write by the MMA issued by thread 384 {{.*}} and read by thread {{[0-9]+}} (warp {{[0-3]}}, role softmax0, CTA {{[01]}}) at {{.*}}(fa4.tmem.load) are ordered only for ordinary accesses: the second thread waited on a barrier, but no tcgen05.fence after_thread_sync follows that wait

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
