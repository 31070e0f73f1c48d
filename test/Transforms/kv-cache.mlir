// RUN: fa4-opt %s -split-input-file --fa4-plan --fa4-tile | FileCheck %s --check-prefix=TILE
// RUN: fa4-opt %s -split-input-file --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s

// A paged KV cache with per-batch lengths. The tiled program counts the
// batch's keys once per work tile (fa4.tile.keys) and bounds the mask with
// them, and reads K and V through the page table. The kernel takes
// seqused_k, the page table and its row length after LSE; the manifest
// binds them. The load role reads each block's page from the table (row
// batch * max_pages + key / 256) before it acquires the slot and addresses
// the block at (key mod 256, page) in the [pages, 256, Hkv, D] map; every
// role clamps the batch's seqused_k entry to [0, max_pages * 256].
// TILE-LABEL: gpu.func @paged_attention
// TILE: %[[KEYS:.*]] = fa4.tile.keys %arg1[%[[B:.*]]] seqused_k %arg5 : memref<?xi32> pages %arg6 : memref<?x?xi32> : memref<?x256x8x128xbf16>
// TILE: fa4.tile.load %arg1[%[[B]], %[[K:.*]], %{{.*}}] heads 1 pages %arg6 : memref<?x?xi32> : memref<?x256x8x128xbf16> -> tensor<128x128xbf16>
// TILE: fa4.tile.load %arg2[%[[B]], %[[K]], %{{.*}}] heads 1 pages %arg6 : memref<?x?xi32> : memref<?x256x8x128xbf16> -> tensor<128x128xbf16>
// TILE: fa4.tile.mask %{{.*}} rows %{{.*}} keys %[[K]] lengths (%{{.*}}, %[[KEYS]]) heads 4 causal
// CHECK-LABEL: fa4.launch @paged_attention::@paged_attention
// CHECK-SAME: {kind = "pointer", name = "lse", source = "lse.data"}, {kind = "pointer", name = "seqused_k", source = "seqused_k.data"}, {kind = "pointer", name = "page_table", source = "page_table.data"}, {kind = "i32", name = "max_pages", source = "page_table.shape[1]"}]
// CHECK: gpu.func @paged_attention({{.*}}, %[[SEQKV:[^:]*]]: index, %{{[^:]*}}: f32, %{{[^:]*}}: !llvm.ptr<1>, %[[USED:[^:]*]]: !llvm.ptr<1>, %[[TABLE:[^:]*]]: !llvm.ptr<1>, %[[MAXPAGES:[^:]*]]: index)
// CHECK: %[[CAPACITY:.*]] = arith.muli %[[MAXPAGES]], %c256{{.*}} : index
// CHECK: fa4.role "softmax0"
// CHECK: llvm.getelementptr %[[USED]]
// CHECK: %[[USEDKEYS:.*]] = arith.maxsi
// CHECK-NEXT: arith.minsi %[[USEDKEYS]], %[[CAPACITY]] : index
// CHECK: fa4.role "load"
// CHECK: llvm.getelementptr %[[USED]]
// CHECK: %[[USEDKEYS2:.*]] = arith.maxsi
// CHECK-NEXT: arith.minsi %[[USEDKEYS2]], %[[CAPACITY]] : index
// CHECK: %[[KEY:.*]] = arith.muli %{{.*}}, %c128{{.*}} : index
// CHECK: %[[PAGEINDEX:.*]] = arith.divui %[[KEY]], %c256{{.*}} : index
// CHECK: %[[LASTPAGE:.*]] = arith.maxsi %{{.*}}, %c0{{.*}} : index
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[PAGEINDEX]], %[[LASTPAGE]] : index
// CHECK: %[[ROWSTART:.*]] = arith.muli %{{.*}}, %[[MAXPAGES]] : index
// CHECK: %[[ENTRY:.*]] = arith.addi %[[ROWSTART]], %[[CLAMPED]] : index
// CHECK: %[[OFFSET:.*]] = arith.index_cast %[[ENTRY]] : index to i64
// CHECK: %[[ADDRESS:.*]] = llvm.getelementptr %[[TABLE]][%[[OFFSET]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[PAGE32:.*]] = llvm.load %[[ADDRESS]] : !llvm.ptr<1> -> i32
// CHECK: %[[PAGE:.*]] = arith.index_cast %[[PAGE32]] : i32 to index
// CHECK: %[[INPAGE:.*]] = arith.remui %[[KEY]], %c256{{.*}} : index
// CHECK: fa4.channel.acquire
// CHECK: fa4.tma.load %arg1[%{{.*}}, %{{.*}}, %[[INPAGE]], %[[PAGE]]]
func.func @paged(%q: memref<?x?x32x128xbf16>, %k: memref<?x256x8x128xbf16>,
                 %v: memref<?x256x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                 %lse: memref<?x32x?xf32>, %lengths: memref<?xi32>,
                 %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                    memref<?x256x8x128xbf16>, memref<?x256x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>)
                seqused_k(%lengths : memref<?xi32>)
                paged(%pages : memref<?x?xi32>) {causal}
  return
}

// -----

// A contiguous cache with per-batch lengths: no page table; K and V at the
// tile's batch as for any dense batch.
// TILE-LABEL: gpu.func @contiguous_attention
// TILE: %[[KEYS:.*]] = fa4.tile.keys %arg1[%{{.*}}] seqused_k %arg4 : memref<?xi32> : memref<?x?x2x64xf16>
// TILE: fa4.tile.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
// TILE: fa4.tile.mask %{{.*}} lengths (%{{.*}}, %[[KEYS]]) heads 4
// CHECK-LABEL: fa4.launch @contiguous_attention::@contiguous_attention
// CHECK-SAME: {kind = "i32", name = "seq_kv", source = "key.shape[1]"}
// CHECK-SAME: {kind = "pointer", name = "seqused_k", source = "seqused_k.data"}]
// CHECK: gpu.func @contiguous_attention({{.*}}: f32, %[[USED:[^:]*]]: !llvm.ptr<1>)
// CHECK: fa4.role "load"
// CHECK: llvm.getelementptr %[[USED]]
// CHECK-NEXT: llvm.load
// CHECK-NOT: llvm.load
// CHECK: fa4.tma.load
func.func @contiguous(%q: memref<?x?x8x64xf16>, %k: memref<?x?x2x64xf16>,
                      %v: memref<?x?x2x64xf16>, %o: memref<?x?x8x64xf16>,
                      %lengths: memref<?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>, memref<?x?x2x64xf16>,
                    memref<?x?x2x64xf16>) outs(%o : memref<?x?x8x64xf16>)
                seqused_k(%lengths : memref<?xi32>)
  return
}

// -----

// Packed sequences over a paged cache: fa4.tile.sequence views Q and O per
// sequence and K and V as the cache itself; fa4.tile.keys counts the
// sequence's keys from cu_seqlens_k (and seqused_k) at most its pages hold,
// and K and V are read through its page-table row. The manifest's K and V
// maps are the cache's (not packed), seq_kv the page size; the page table
// and its row length follow the sequence tables and O's rows. Every role
// counts a sequence's keys as cu_seqlens_k[s + 1] - cu_seqlens_k[s] (no
// clamp into a packed K) capped at max_pages * 64, then seqused_k[s].
// TILE-LABEL: gpu.func @paged_varlen_attention
// TILE: %[[VIEWS:.*]]:4 = fa4.tile.sequence %[[S:[^ ]*]] of %arg4, %arg5 : memref<?xi32>, memref<?xi32> (%arg0, %arg1, %arg2, %arg3 : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<?x8x128xbf16>) -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
// TILE: %[[KEYS:.*]] = fa4.tile.keys %[[VIEWS]]#1[%[[B:.*]]] seqused_k %arg6 : memref<?xi32> pages %arg7 : memref<?x?xi32> cu_seqlens_k %arg5 : memref<?xi32> : memref<?x64x2x128xbf16>
// TILE: fa4.tile.load %[[VIEWS]]#1[%[[B]], %[[K:.*]], %{{.*}}] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
// TILE: fa4.tile.load %[[VIEWS]]#2[%[[B]], %[[K]], %{{.*}}] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
// TILE: fa4.tile.mask %{{.*}} keys %[[K]] lengths (%{{.*}}, %[[KEYS]]) heads 4 causal
// CHECK-LABEL: fa4.launch @paged_varlen_attention::@paged_varlen_attention
// CHECK-SAME: {kind = "i32", name = "seq_kv", source = "key.shape[1]"}
// CHECK-SAME: {kind = "pointer", name = "cu_seqlens_q", source = "cu_seqlens_q.data"}, {kind = "pointer", name = "cu_seqlens_k", source = "cu_seqlens_k.data"}, {kind = "pointer", name = "seqused_k", source = "seqused_k.data"}, {kind = "pointer", name = "output_rows", source = "output.data"}, {kind = "pointer", name = "page_table", source = "page_table.data"}, {kind = "i32", name = "max_pages", source = "page_table.shape[1]"}]
// CHECK-SAME: tensor_maps = [{box = [64, 4, 32, 1], element = "bf16", oob_fill = "zero", operand = "query", operand_index = 0 : i64, swizzle = "128B", varlen = true}, {box = [64, 1, 64, 1], element = "bf16", oob_fill = "zero", operand = "key", operand_index = 1 : i64, swizzle = "128B"}, {box = [64, 1, 64, 1], element = "bf16", oob_fill = "zero", operand = "value", operand_index = 2 : i64, swizzle = "128B"}, {box = [64, 4, 32, 1], element = "bf16", oob_fill = "zero", operand = "output", operand_index = 3 : i64, swizzle = "128B", varlen = true}]
// CHECK: gpu.func @paged_varlen_attention({{.*}}, %[[CUK:[^:]*]]: !llvm.ptr<1>, %[[USED:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[TABLE:[^:]*]]: !llvm.ptr<1>, %[[MAXPAGES:[^:]*]]: index)
// CHECK: %[[CAPACITY:.*]] = arith.muli %[[MAXPAGES]], %c64{{.*}} : index
// CHECK: fa4.role "load"
// CHECK: llvm.getelementptr %[[CUK]]
// CHECK: llvm.getelementptr %[[CUK]]
// CHECK: %[[END:.*]] = arith.maxsi %{{[0-9]+}}, %[[START:[0-9]+]] : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.subi %[[END]], %[[START]] : index
// CHECK-NEXT: arith.minsi %[[COUNT]], %[[CAPACITY]] : index
// CHECK: llvm.getelementptr %[[USED]]
// CHECK: llvm.getelementptr %[[TABLE]]
func.func @paged_varlen(%q: memref<?x8x128xbf16>, %k: memref<?x64x2x128xbf16>,
                        %v: memref<?x64x2x128xbf16>, %o: memref<?x8x128xbf16>,
                        %cu_q: memref<?xi32>, %cu_k: memref<?xi32>,
                        %used: memref<?xi32>, %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>,
                    memref<?x64x2x128xbf16>)
                outs(%o : memref<?x8x128xbf16>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                seqused_k(%used : memref<?xi32>)
                paged(%pages : memref<?x?xi32>) {causal}
  return
}
