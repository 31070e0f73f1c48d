// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py drop-proxy-fence correction \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The correction warpgroup writes the normalized O tile into shared memory
// with ordinary stores and hands it to the store warp, whose TMA store reads
// it through the async proxy, but no fence.proxy.async makes the stores
// visible to that proxy.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('o_staging' + {{[0-9]+}}): write by thread {{[0-9]+}} ({{.*}}role correction{{.*}}(vector.store) and read by the TMA store issued by thread 448 {{.*}}(nvgpu.tma.async.store) through the async proxy are not ordered: the writing thread executed no fence.proxy.async

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
