// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | %python %S/plant-bug.py bypass-wgmma-wait consumer0 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// Consumer 0 takes S straight from its wgmma (into the masking's scf.if),
// without the fa4.wgmma.wait that completes it: the registers may not hold
// the product yet.

// CHECK: seed 1: FAIL
// CHECK: scf.yield: uses the result of fa4.wgmma at {{.*}} before a fa4.wgmma.wait returns it in thread {{[0-9]+}} (warp {{[4-7]}}, role consumer0, CTA {{[01]}})

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
