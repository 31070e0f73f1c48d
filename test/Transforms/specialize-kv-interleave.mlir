// RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-plan=kv-interleave=2 --fa4-tile --fa4-specialize --fa4-allocate-tmem | FileCheck %s

// sm_100a with interleaved softmax warpgroups: one 128-row Q tile (32
// positions of 4 packed heads) per work tile, both softmax warpgroups on
// it with their own S, P, O and channels in all 512 TMEM columns, the
// correction warpgroup at its combined epilogue's budget.
// CHECK: query_rows_per_cta = 32 : i64
// CHECK: fa4.tmem_columns = 512 : i64
// CHECK: fa4.channel "q" : !fa4.channel<1> producer <tma> consumer <mma>
// CHECK: %[[S0:.*]] = fa4.channel "s_ready0" : !fa4.channel<1> producer <mma> consumer <threads = 128>
// CHECK: %[[PO0:.*]] = fa4.channel "p_o_rescale0" : !fa4.channel<1> producer <threads = 256> consumer <mma>
// CHECK: fa4.channel "softmax_corr0" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 1 : i32}
// CHECK: %[[S1:.*]] = fa4.channel "s_ready1" : !fa4.channel<1> producer <mma> consumer <threads = 128>
// CHECK: %[[PO1:.*]] = fa4.channel "p_o_rescale1" : !fa4.channel<1> producer <threads = 256> consumer <mma>
// CHECK: fa4.channel "softmax_corr1" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 2 : i32}

// Each softmax warpgroup walks every other block, from the first whose
// place in the CTA's sequence (carried count + n) has its parity; its
// hand-off numbers are that place halved.
// CHECK: fa4.role "softmax0" warps [0, 4) registers 192
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "p0"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s0"}
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %{{.*}} step %{{c2.*}} iter_args
// CHECK-NEXT: %[[K0:.*]] = arith.addi %{{.*}}, %[[N0]] : index
// CHECK: %[[H0:.*]] = arith.divui %[[K0]], %{{c2.*}} : index
// CHECK-NEXT: fa4.channel.wait %[[S0]][%[[H0]]]
// CHECK: fa4.role "softmax1" warps [4, 8) registers 192
// CHECK-DAG: fa4.tmem.view %{{.*}}[192] {fa4.name = "p1"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "s1"}
// CHECK: scf.for %{{.*}} step %{{c2.*}} iter_args
// CHECK: fa4.channel.wait %[[S1]]

// The correction warpgroup rescales the block's warpgroup's O and reads
// both Os in the epilogue.
// CHECK: fa4.role "correction" warps [8, 12) registers 88
// CHECK-DAG: fa4.tmem.view %{{.*}}[384] {fa4.name = "o1"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[256] {fa4.name = "o0"}
// CHECK: fa4.channel.commit %[[PO1]]
// CHECK: } else {
// CHECK: fa4.channel.commit %[[PO0]]

// The MMA warp: block n's QK^T into the S of warpgroup (count + n) mod 2,
// then block n - 1's two PV MMAs into the other's O; after the loop the
// last block's.
// CHECK: fa4.role "mma" warps [12, 13) registers 40
// CHECK-COUNT-2: fa4.mma %{{.*}} b_major(k)
// CHECK-COUNT-8: fa4.mma %{{.*}} b_major(mn)
// CHECK-NOT: fa4.mma
// CHECK: fa4.role "load"
