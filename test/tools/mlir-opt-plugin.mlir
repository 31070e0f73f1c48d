// Debian's mlir-opt-22 loads fa4 as a dialect and a pass plugin: it parses
// fa4 IR, runs the fa4 passes and the fa4-synchronize/fa4-compile pipelines,
// and gets what fa4-opt gets.
// REQUIRES: mlir-opt-plugin
// RUN: %mlir_opt --load-dialect-plugin=%fa4_plugin --load-pass-plugin=%fa4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fa4-plan{arch=sm_90a})" | FileCheck %s --check-prefix=PLAN
// PLAN: fa4.attention
// PLAN-SAME: plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 4, scheduler = paired,
//
// RUN: %mlir_opt --load-dialect-plugin=%fa4_plugin --load-pass-plugin=%fa4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fa4-synchronize)" -o %t.plugin.mlir
// RUN: fa4-opt %s --fa4-synchronize -o %t.fa4-opt.mlir
// RUN: diff %t.plugin.mlir %t.fa4-opt.mlir
//
// RUN: %mlir_opt --load-dialect-plugin=%fa4_plugin --load-pass-plugin=%fa4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fa4-compile{arch=sm_90a})" | FileCheck %s --check-prefix=PTX
// PTX: gpu.binary @gqa_causal_attention
// PTX-SAME: .target sm_90a
// PTX-SAME: wgmma.mma_async
//
// Without the dialect plugin, mlir-opt does not know fa4.
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NODIALECT
// NODIALECT: error: Dialect `fa4' not found for custom op 'fa4.attention'

func.func @gqa_causal(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                      %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                      %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>)
                lse(%lse : memref<?x32x?xf32>) {causal}
  return
}
