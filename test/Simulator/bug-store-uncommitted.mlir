// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-store-commit store \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The store warp issues the TMA store of an O tile but no longer commits it
// to a bulk group, then waits for zero pending groups and releases the
// staging buffer: the wait, whose contract (AsyncWaitOpInterface) is to
// retire the thread's TMA stores, covers only committed groups.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK-NEXT: error: loc({{.*}}): nvvm.cp.async.bulk.wait_group: retires bulk_group_wait accesses, but when it returns in thread 448 (warp 14, role store, CTA {{[0-9]+}}), TMA stores are not committed to a group, so the wait does not cover them

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
