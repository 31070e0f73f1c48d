// RUN: fa4-opt %s --fa4-synchronize="kv-splits=3" | %python %S/plant-bug.py drop-warp-sync store 2 \
// RUN:   | not fa4-sim --batch 1 --seq-q 3 --seq-kv 700 --ctas 2 | FileCheck %s

// Split-KV: the last split's store warp combines the splits' rows into the
// staging tile, every lane its pieces, and one lane stores the tile by TMA.
// Without the bar.warp.sync between them the other lanes' writes are not
// ordered before that lane's TMA store.

// CHECK: seed 1: FAIL
// CHECK: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('o_staging' + {{[0-9]+}}): write by thread {{[0-9]+}} ({{.*}}role store{{.*}}(vector.store) and read by the TMA store issued by thread {{[0-9]+}} {{.*}}(nvgpu.tma.async.store)

func.func @attention(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>)
  return
}
