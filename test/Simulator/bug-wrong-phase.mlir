// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py flip-parity kv.full mma \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The MMA warp waits on the K/V full barrier for the wrong phase parity: on
// a fresh barrier, parity 1 counts as completed, so a first wait that comes
// before the load lands returns at once (a race on the K/V stage); either
// way a later wait asks for a phase that never comes.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: error: deadlock in CTA {{[0-9]+}}
// CHECK: thread 384 (role mma) at {{.*}}: waits on mbarrier 'kv.full'[{{[0-9]}}] for phase parity {{[01]}}

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
