// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a kv-splits=2 split-combine=cluster" \
// RUN:   | %python %S/plant-bug.py drop-proxy-fence store \
// RUN:   | not fa4-sim --batch 1 --seq-q 3 --seq-kv 300 --ctas 2 | FileCheck %s

// A cluster split whose store warps write their combined rows into CTA 0's
// staging tile over distributed shared memory without the
// fence.proxy.async.shared::cluster that makes them visible to CTA 0's TMA
// store.

// CHECK: seed 1: FAIL
// CHECK: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('o_staging' + {{[0-9]+}}): write by thread {{[0-9]+}} ({{.*}}role store, CTA {{[01]}}) in CTA 0's shared memory {{.*}}(fa4.dsmem.store) and read by the TMA store issued by thread {{[0-9]+}} ({{.*}}CTA 0) {{.*}}(nvgpu.tma.async.store) through the async proxy are not ordered: the writing thread executed no fence.proxy.async

func.func @attention(%q: memref<?x?x14x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x14x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x14x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x14x64xbf16>)
  return
}
