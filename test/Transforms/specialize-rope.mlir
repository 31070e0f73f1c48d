// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile | FileCheck %s --check-prefix=TILE
// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | FileCheck %s --check-prefix=SYNC
// RUN: fa4-opt %s --fa4-plan=arch=sm_100a --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=SM100

// The rotary embedding on sm_90a: Q's columns [64, 128) rotated by each
// query's position before Q K^T, O's rotated back before the
// normalization (the tiled program); in the kernel each consumer
// warpgroup rotates its Q tile in shared memory (16-byte pieces: the
// row's position, then four cos and four sin, the tile's swizzled
// chunk), fences it for the async proxy and syncs its 128 threads on its
// own hardware barrier (3 + stage) before the first wgmma; the epilogue
// rotates O's pairs of those columns back.

func.func @mla(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x2x128xbf16>,
               %v: memref<?x?x2x128xbf16>, %o: memref<?x?x16x128xbf16>,
               %cs: memref<?x64xf32>, %pos: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>)
                rope(%cs, %pos : memref<?x64xf32>, memref<?x?xi32>)
                {causal, rope_start = 64 : i64, rope_output}
  return
}

// TILE: fa4.launch @mla_attention::@mla_attention(%{{.*}}) {rope}
// TILE: %[[Q:.*]] = fa4.tile.load
// TILE: %[[QR:.*]] = fa4.tile.rope %[[Q]], %arg4, %arg5[%{{.*}}, %{{.*}}] heads 8 start 64 : tensor<64x128xbf16>, memref<?x64xf32>, memref<?x?xi32>
// TILE: fa4.tile.matmul %[[QR]]
// TILE: %[[OR:.*]] = fa4.tile.rope %{{.*}}, %arg4, %arg5[%{{.*}}, %{{.*}}] heads 8 start 64 inverse : tensor<64x128xf32>
// TILE: fa4.tile.normalize %[[OR]]

// The manifest names the operands and says which columns rotate.
// CHECK-DAG: {kind = "pointer", name = "cos_sin", source = "cos_sin.data"}
// CHECK-DAG: {kind = "i32", name = "rope_positions", source = "cos_sin.shape[0]"}
// CHECK-DAG: {kind = "pointer", name = "positions", source = "positions.data"}
// CHECK-DAG: rope = {columns = 64 : i64, output = true, start = 64 : i64}
// CHECK-DAG: {element = "f32", name = "cos_sin", shape = [-1, 64]}
// CHECK-DAG: {element = "i32", name = "positions", shape = [-1, -1]}

// The two barriers of the turns and the two of the Q rotations.
// SYNC: fa4.named_barriers = 4 : i64
// Each consumer: the pieces of its Q tile, then the fence and its barrier.
// SYNC: fa4.role "consumer0"
// SYNC: vector.load %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// SYNC: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// SYNC: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// SYNC: vector.store %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// SYNC: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// SYNC-NEXT: }
// SYNC-NEXT: fa4.named_barrier.sync 3, 128 threads
// SYNC: fa4.wgmma
// The epilogue: O's pairs rotated back with one cos and one sin each.
// SYNC: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<1xf32>
// SYNC: fa4.role "consumer1"
// SYNC: fa4.named_barrier.sync 4, 128 threads

// sm_100a: Q goes to the softmax warpgroup of its stage, which rotates it
// and hands it to the MMA warp; the MMA warp waits for and releases the
// rotated Q.
// SM100-DAG: %[[Q:.*]] = fa4.channel "q" : !fa4.channel<2> producer <tma> consumer <threads = 128>
// SM100-DAG: %[[QR:.*]] = fa4.channel "q_rotated" : !fa4.channel<2> producer <threads = 128> consumer <mma>
// SM100: fa4.role "softmax0"
// SM100: fa4.channel.acquire %[[QR]]
// SM100: fa4.channel.release %[[Q]]
// SM100: fa4.channel.wait %[[Q]]
// SM100: nvvm.fence.proxy
// SM100: fa4.channel.commit %[[QR]]
// SM100: fa4.role "mma"
// SM100: fa4.channel.wait %[[QR]]
// SM100: fa4.channel.release %[[QR]]
