// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a -o %t.sync.mlir
// RUN: %python %S/plant-bug.py drop-wait kv.full consumer0 < %t.sync.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=KV
// RUN: %python %S/plant-bug.py drop-wait q.full consumer1 < %t.sync.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s --check-prefix=Q

// A consumer no longer waits for the K tile (consumer 0, which takes the
// first turn) or its Q tile (consumer 1) to land: its wgmma reads shared
// memory the TMA load writes.
// (Consumer 1 skipping its first K wait is no bug: consumer 0 waited for
// the same slot before passing it the turn.)

// KV: seed 1: FAIL
// KV: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('kv' + {{[0-9]+}}): write by the TMA load issued by thread 0 (warp 0, role load, CTA {{[01]}}) at {{.*}} and read by the wgmma of warpgroup 1 (role consumer0, CTA {{[01]}}) at {{.*}} (fa4.wgmma) are not ordered by any barrier
// Q: seed 1: FAIL
// Q: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('q' + {{[0-9]+}}): write by the TMA load issued by thread 0 (warp 0, role load, CTA {{[01]}}) at {{.*}} and read by the wgmma of warpgroup 2 (role consumer1, CTA {{[01]}}) at {{.*}} (fa4.wgmma) are not ordered by any barrier

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
