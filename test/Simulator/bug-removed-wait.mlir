// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-wait kv.full mma \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The MMA warp no longer waits for the K/V stage to land: its MMAs read
// shared memory the TMA load has not written (or is still writing). The race
// is reported whatever the schedule; wrong numbers only when the MMA ran early.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('kv' + {{[0-9]+}}): {{.*(the MMA issued by thread 384.*the TMA load issued by thread 416|the TMA load issued by thread 416.*the MMA issued by thread 384)}}{{.*}} are not ordered by any barrier

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
