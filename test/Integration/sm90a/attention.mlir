// The sm_90a attention kernel end to end: fa4-compile to PTX (and, with
// ptxas, to a cubin and the resource report). The same kernels are checked
// and timed on the H200 by scripts/device/attention-check.py and
// bench/attention.py (docs/HOPPER.md).
//
// RUN: rm -rf %t && fa4-opt %s --fa4-compile="arch=sm_90a emit-dir=%t" -o /dev/null > %t.report
// RUN: FileCheck %s --check-prefix=REPORT < %t.report
// RUN: FileCheck %s --check-prefix=PTX < %t/gqa_causal_attention.ptx
// RUN: FileCheck %s --check-prefix=ADDR < %t/gqa_causal_attention.ptx
// RUN: %if ptxas %{ FileCheck %s --check-prefix=CUBIN < %t.report %}

// REPORT: kernel gqa_causal_attention (sm_90a)
// REPORT-NEXT: block 384 threads; persistent grid over batch x 2 head blocks x ceil(seq_q / 32) tiles
// REPORT-NEXT: roles: load [warps 0-0, 40 regs] store [warps 1-1, 40 regs] consumer0 [warps 4-7, 232 regs] consumer1 [warps 8-11, 232 regs]
// REPORT: shared memory: 229376 bytes dynamic
// REPORT-NEXT: tensor memory: 0 columns
// REPORT-NEXT: barriers: 20 mbarriers, 2 named

// Registers moved to the budgets; wgmma for QK^T from shared memory (both
// operands K-major) and for PV with P from registers (V transposed); the
// S group waited with the PV group pending; the ping-pong barriers.
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync {{.*}}1, 256;
// PTX-DAG: bar.arrive 2, 256;
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// PTX-NOT: tcgen05
// TMA writes to shared::cluster addresses without a generic round trip
// (fa4-fold-cluster-address-casts).
// ADDR-NOT: cvta

// CUBIN: ptxas: {{[0-9]+}} registers, {{[0-9]+}} bytes spill stores
// CUBIN: files: {{.*}}/gqa_causal_attention.{ptx,cubin,json}

func.func @gqa_causal(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
                      %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal}
  return
}
