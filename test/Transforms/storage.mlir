// RUN: fa4-opt %s -split-input-file --fa4-plan --fa4-tile --fa4-specialize --fa4-allocate-tmem --fa4-allocate-smem | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-plan="q-stages=1" --fa4-tile --fa4-specialize --fa4-allocate-tmem --fa4-allocate-smem | FileCheck %s --check-prefix=ONE

// The storage of the FA4 kernel. Two Q stages, head dim 128: S and O of
// each stage take 128 columns, P (bf16) the upper half of its stage's S:
// all 512 columns. Shared memory, largest first: the K/V ring (3 x 32K) at
// 0, the Q stages (2 x 32K), the O staging tile, statistics, and the TMEM
// address slot at 198656.
// CHECK-LABEL: gpu.func @mha_attention
// CHECK-SAME: fa4.dynamic_smem_bytes = 198660 : i64
// CHECK-SAME: fa4.tmem_columns = 512 : i64
// CHECK: fa4.tmem.alloc 512 columns
// CHECK: fa4.role "softmax0"
// CHECK-DAG: arith.constant 196608 : index
// CHECK-DAG: {fa4.name = "statistics"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "p0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
// CHECK: fa4.role "softmax1"
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "s1"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[192] {fa4.name = "p1"}
// CHECK: fa4.role "correction"
// CHECK-DAG: arith.constant 163840 : index
// CHECK-DAG: {fa4.name = "o_staging"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[256] {fa4.name = "o0"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[384] {fa4.name = "o1"}
// CHECK: fa4.role "mma"
// CHECK-DAG: arith.constant 98304 : index
// CHECK-DAG: {fa4.name = "q"}
// CHECK-DAG: {fa4.name = "kv"}
// CHECK: fa4.role "load"
// CHECK: fa4.tmem.dealloc
// One Q stage: S and O, 256 columns.
// ONE-LABEL: gpu.func @mha_attention
// ONE-SAME: fa4.tmem_columns = 256 : i64
func.func @mha(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x16x128xbf16>,
               %v: memref<?x?x16x128xbf16>, %o: memref<?x?x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>)
  return
}

// -----

// One Q stage, head dim 64: S (128) and O (64) columns with P over S, 192
// columns, rounded up to a 256-column allocation. Shared memory: K/V ring 3 x
// 16K, Q 16K, O 16K, statistics 1K, slot: 82948 bytes.
// ONE-LABEL: gpu.func @gqa_attention
// ONE-SAME: fa4.dynamic_smem_bytes = 82948 : i64
// ONE-SAME: fa4.tmem_columns = 256 : i64
// ONE: fa4.tmem.alloc 256 columns
// ONE: fa4.role "softmax0"
// ONE-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s0"} : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf32>
// ONE-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "p0"} : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x128xf16>
// ONE: fa4.role "correction"
// ONE: fa4.tmem.view %{{.*}}[128] {fa4.name = "o0"} : !fa4.tmem<128x256xf32> -> !fa4.tmem<128x64xf32>
// Two stages: 2 x (128 + 64) columns, rounded up to 512.
// CHECK-LABEL: gpu.func @gqa_attention
// CHECK-SAME: fa4.tmem_columns = 512 : i64
func.func @gqa(%q: memref<?x?x32x64xf16>, %k: memref<?x?x8x64xf16>,
               %v: memref<?x?x8x64xf16>, %o: memref<?x?x32x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xf16>, memref<?x?x8x64xf16>, memref<?x?x8x64xf16>)
                outs(%o : memref<?x?x32x64xf16>)
  return
}

// -----

// Packed sequences: every role walks its tiles in an scf.while, whose
// condition reads only the sequence tables, so the buffers' lifetimes are
// those of the dense kernel's loop body: the same 512 columns, S, P and O
// of each stage where the dense kernel puts them.
// CHECK-LABEL: gpu.func @packed_attention
// CHECK-SAME: fa4.tmem_columns = 512 : i64
// CHECK: fa4.tmem.alloc 512 columns
// CHECK: fa4.role "softmax0"
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "p0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf16>
// CHECK: scf.while
// CHECK: fa4.role "softmax1"
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "s1"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[192] {fa4.name = "p1"}
// CHECK: fa4.role "correction"
// CHECK-DAG: fa4.tmem.view %{{.*}}[256] {fa4.name = "o0"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[384] {fa4.name = "o1"}
// ONE-LABEL: gpu.func @packed_attention
// ONE-SAME: fa4.tmem_columns = 256 : i64
func.func @packed(%q: memref<?x16x128xf16>, %k: memref<?x2x128xf16>,
                  %v: memref<?x2x128xf16>, %o: memref<?x16x128xf16>,
                  %cu_q: memref<?xi32>, %cu_k: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x16x128xf16>, memref<?x2x128xf16>,
                    memref<?x2x128xf16>)
                outs(%o : memref<?x16x128xf16>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) {causal}
  return
}
