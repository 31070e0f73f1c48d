// RUN: fa4-opt %s --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER

// Packed sequences of variable lengths with seqused_k, causal, 8 packed
// query heads per KV head. The manifest launches the persistent_varlen
// grid, passes the table's entries and the packed totals as the i32 params
// and the tables' pointers and O's after the sinks, and marks every tensor
// map as a packed one. Each role walks the tiles with a while loop over the
// global tile index (first the CTA's id, then + the grid) whose condition
// moves a cursor along cu_seqlens_q; the load role addresses a sequence's
// rows from its start (row coordinate start + row, the last one 0); the
// store role stores a Q stage inside its sequence by TMA and copies the
// rows of one reaching past it with the warp (16 bytes a thread, through
// O's pointer), every thread releasing the staging tile.
// CHECK: fa4.launch @packed_attention::@packed_attention
// CHECK-SAME: grid = {head_blocks = 2 : i64, query_rows_per_cta = 32 : i64, rule = "persistent_varlen"}
// CHECK-SAME: {kind = "i32", name = "sequence_bounds", source = "cu_seqlens_q.shape[0]"}, {kind = "i32", name = "total_q", source = "query.shape[0]"}, {kind = "i32", name = "total_kv", source = "key.shape[0]"}
// CHECK-SAME: {kind = "pointer", name = "sink", source = "sink.data"}, {kind = "pointer", name = "cu_seqlens_q", source = "cu_seqlens_q.data"}, {kind = "pointer", name = "cu_seqlens_k", source = "cu_seqlens_k.data"}, {kind = "pointer", name = "seqused_k", source = "seqused_k.data"}, {kind = "pointer", name = "output_rows", source = "output.data"}]
// CHECK-SAME: {box = [64, 8, 16, 1], element = "f16", oob_fill = "zero", operand = "query", operand_index = 0 : i64, swizzle = "128B", varlen = true}
// CHECK-SAME: {box = [64, 1, 128, 1], element = "f16", oob_fill = "zero", operand = "key", operand_index = 1 : i64, swizzle = "128B", varlen = true}
// CHECK: gpu.func @packed_attention({{.*}}, %[[BOUNDS:[^:]*]]: index, %[[TOTALQ:[^:]*]]: index, %[[TOTALKV:[^:]*]]: index, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: !llvm.ptr<1>, %[[CUQ:[^:]*]]: !llvm.ptr<1>, %[[CUK:[^:]*]]: !llvm.ptr<1>, %[[USED:[^:]*]]: !llvm.ptr<1>, %[[OUT:[^:]*]]: !llvm.ptr<1>)
// CHECK: %[[SEQUENCES:.*]] = arith.subi %[[BOUNDS]], %{{.*}} : index
// CHECK: fa4.role "load"
// CHECK: %[[FIRST:.*]] = gpu.block_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: scf.while (%[[T:.*]] = %[[FIRST]], %{{.*}} = %c0{{.*}}, %{{.*}} = %c0{{.*}}, %{{.*}} = %c0{{.*}}, %{{.*}} = %c0{{.*}})
// CHECK: scf.while
// CHECK: arith.cmpi slt, %{{.*}}, %[[SEQUENCES]] : index
// CHECK: llvm.getelementptr %[[CUQ]]
// CHECK: scf.condition
// CHECK: } do {
// CHECK: } do {
// CHECK: ^bb0(%[[TILE:[^:]*]]: index, %[[SEQ:[^:]*]]: index,
// CHECK: llvm.getelementptr %[[CUQ]][%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
// CHECK: %[[QSTART:.*]] = arith.minsi %{{.*}}, %[[TOTALQ]] : index
// CHECK: llvm.getelementptr %[[CUK]]
// CHECK: %[[KSTART:.*]] = arith.minsi %{{.*}}, %[[TOTALKV]] : index
// CHECK: llvm.getelementptr %[[USED]]
// CHECK: %[[ROW:.*]] = arith.addi %[[QSTART]], %{{.*}} : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: fa4.channel.acquire
// CHECK: memref.view
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: fa4.tma.load %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW]], %[[ZERO]]]
// CHECK: %[[KROW:.*]] = arith.addi %[[KSTART]], %{{.*}} : index
// CHECK: fa4.tma.load %{{.*}}[%{{.*}}, %{{.*}}, %[[KROW]], %{{.*}}]
// CHECK: scf.yield %{{.*}}, %[[SEQ]], %{{.*}}, %{{.*}}, %{{.*}} : index, index, index, index, index
// CHECK: fa4.role "store"
// CHECK: fa4.channel.wait %[[EPI:[^\[]*]]
// CHECK: %[[PARTIAL:.*]] = arith.cmpi ugt
// CHECK: scf.if %[[PARTIAL]] {
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK: vector.load {{.*}} vector<8xf16>
// CHECK: %[[ADDRESS:.*]] = llvm.getelementptr %[[OUT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK-NEXT: llvm.store %{{.*}}, %[[ADDRESS]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: } else {
// CHECK-NEXT: nvvm.elect.sync
// CHECK: nvgpu.tma.async.store
// CHECK: fa4.channel.release %[[EPI]]
// HOPPER: rule = "persistent_varlen"
// HOPPER: gpu.func @packed_attention(
// HOPPER-SAME: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>)
// HOPPER: fa4.role "load"
// HOPPER: scf.while
// HOPPER: fa4.role "consumer0"
// HOPPER: scf.while
func.func @packed(%q: memref<?x16x128xf16>, %k: memref<?x2x128xf16>, %v: memref<?x2x128xf16>,
                  %o: memref<?x16x128xf16>, %sink: memref<16xf32>, %cq: memref<?xi32>,
                  %ck: memref<?xi32>, %u: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x16x128xf16>, memref<?x2x128xf16>, memref<?x2x128xf16>)
                outs(%o : memref<?x16x128xf16>) sink(%sink : memref<16xf32>)
                varlen(%cq, %ck : memref<?xi32>, memref<?xi32>) seqused_k(%u : memref<?xi32>)
                {causal, softcap = 20.0 : f32}
  return
}
