// RUN: rm -rf %t && fa4-opt %s --fa4-compile="emit-dir=%t/kernels" -o %t.mlir | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels/gqa_attention.json
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels/gqa_attention.ptx
// RUN: FileCheck %s --check-prefix=PDL < %t/kernels/gqa_attention.json
// RUN: %if ptxas %{ test -s %t/kernels/gqa_attention.cubin %}
// RUN: %if ptxas %{ FileCheck %s --check-prefix=PTXAS < %t/kernels/gqa_attention.json %}

// The whole compiler from fa4.attention: the resource report on stdout,
// PTX/cubin/manifest files, and the host side left with the launch.

// REPORT: kernel gqa_attention (sm_100a)
// REPORT-NEXT: block 512 threads; persistent grid over batch x 8 head blocks x ceil(seq_q / 64) tiles
// REPORT-NEXT: roles: softmax0 [warps 0-3, 200 regs] softmax1 [warps 4-7, 200 regs] correction [warps 8-11, 64 regs] mma [warps 12-12, 48 regs] load [warps 13-13, 48 regs] store [warps 14-14, 48 regs]
// REPORT-NEXT: ptxas:
// REPORT-NEXT: shared memory: 198660 bytes dynamic
// REPORT-NEXT: tensor memory: 512 columns
// REPORT-NEXT: barriers: 24 mbarriers, 2 named
// REPORT-NEXT: files: {{.*}}/kernels/gqa_attention.{ptx

// IR: fa4.launch @gqa_attention::@gqa_attention
// IR: gpu.binary @gqa_attention
// IR-NOT: fa4.attention

// JSON: "block": [
// JSON-NEXT: 512,
// JSON: "dynamic_smem_bytes": 198660,
// JSON: "ptx": "gqa_attention.ptx"
// JSON: "grid": {
// JSON-NEXT: "head_blocks": 8,
// JSON-NEXT: "query_rows_per_cta": 64,
// JSON-NEXT: "rule": "persistent"
// JSON: "kernel": "gqa_attention",
// JSON: "name": "query_map"
// JSON: "name": "scale_log2"
// JSON: "scale": 0.08838834764831{{[0-9]*}},
// JSON: "tensor_maps": [
// JSON: "box": [
// JSON-NEXT: {{^ *}}64,
// JSON-NEXT: {{^ *}}4,
// JSON-NEXT: {{^ *}}32,
// JSON-NEXT: {{^ *}}1{{$}}
// JSON: "operand": "query",

// PTX: .target sm_100a
// The dynamic region, 1024-byte aligned for the swizzled tiles.
// PTX: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// PTX: .entry gqa_attention(
// Programmatic dependent launch: the kernel waits for its prerequisite grid
// before any role runs, and lets its dependents launch.
// PTX: griddepcontrol.wait;
// PTX-NEXT: griddepcontrol.launch_dependents;
// PTX: setmaxnreg
// PDL: "programmatic_launch": true,

// PTXAS: "ptxas": {
// PTXAS-NEXT: "registers": {{[0-9]+}},
// PTXAS-NEXT: "spill_load_bytes": 0,
// PTXAS-NEXT: "spill_store_bytes": 0,

func.func @gqa(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
               %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>)
  return
}
