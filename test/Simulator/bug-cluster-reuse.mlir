// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a kv-splits=2 split-combine=cluster" \
// RUN:   | %python %S/plant-bug.py drop-wait split_exchange.empty store \
// RUN:   | not fa4-sim --batch 1 --seq-q 3 --seq-kv 300 --ctas 2 | FileCheck %s

// A cluster split whose store warp no longer waits until every CTA of the
// cluster released its exchange buffer: it hands the buffer back to its
// consumers, whose next tile's partial rows overwrite what another CTA is
// still reading over distributed shared memory. The race is found in the
// owning CTA's shared memory, between the remote read and the local write.

// CHECK: seed 1: FAIL
// CHECK: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('split_exchange' + {{[0-9]+}}): {{.*}}by thread {{[0-9]+}} ({{.*}}role store, CTA 1) in CTA 0's shared memory {{.*}}(fa4.dsmem.load) and {{.*}}role consumer0, CTA 0) {{.*}}are not ordered by any barrier

func.func @attention(%q: memref<?x?x14x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x14x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x14x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x14x64xbf16>)
  return
}
