// RUN: fa4-opt %s --fa4-plan=arch=sm_90a --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | FileCheck %s --check-prefix=SYNC

// The sm_90a kernel of causal GQA (4 query heads per K/V head, all packed
// into a tile), head dim 128, with LSE: a load and a store warp, and two
// consumer warpgroups that compute S, the softmax and O in registers.

// CHECK: fa4.launch {{.*}}block = [384, 1, 1]
// CHECK-SAME: grid = {head_blocks = 2 : i64, query_rows_per_cta = 32 : i64, rule = "persistent"}
// Q and O boxes: 16 positions x 4 heads = 64 rows; K and V: 128 keys.
// CHECK-SAME: tensor_maps = [{box = [64, 4, 16, 1], {{.*}}operand = "query"{{.*}}}, {box = [64, 1, 128, 1], {{.*}}operand = "key"{{.*}}}, {box = [64, 1, 128, 1], {{.*}}operand = "value"{{.*}}}, {box = [64, 4, 16, 1], {{.*}}operand = "output"

// CHECK-LABEL: gpu.func @gqa_attention
// Q double-buffered per consumer; the K/V ring (two K/V pairs) released by
// both consumers; a staging tile per consumer; the ping-pong turns.
// CHECK-DAG: %[[Q:.*]] = fa4.channel "q" : !fa4.channel<4> producer <tma> consumer <threads = 128>
// CHECK-DAG: %[[KV:.*]] = fa4.channel "kv" : !fa4.channel<4> producer <tma> consumer <threads = 256>
// CHECK-DAG: %[[EPI:.*]] = fa4.channel "epilogue" : !fa4.channel<2> producer <threads = 128> consumer <threads = 1>
// CHECK-DAG: %[[TURN0:.*]] = fa4.channel "turn0" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 1 : i32}
// CHECK-DAG: %[[TURN1:.*]] = fa4.channel "turn1" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 2 : i32}
// CHECK-NOT: fa4.tmem.buffer
// CHECK: fa4.warp_specialize warps 12

// The load warp: the tile's first K, then both Q tiles, then K/V by block.
// CHECK: fa4.role "load" warps [0, 1) registers 40
// CHECK: fa4.tma.load %arg1{{.*}} for %[[KV]]
// CHECK: fa4.channel.commit %[[KV]]
// CHECK: fa4.channel.acquire %[[Q]]
// CHECK-COUNT-2: fa4.tma.load %arg0{{.*}} for %[[Q]]
// CHECK: fa4.role "store" warps [1, 2) registers 40
// CHECK: fa4.channel.wait %[[EPI]]
// CHECK: nvgpu.tma.async.store

// Consumer 0: block 0's S in its turn; then per block, S of this block and
// O += P V of the previous one in one turn, S waited with one group still
// pending, P kept in its registers until the product is waited; row
// reductions over the quad by butterfly shuffles.
// CHECK: fa4.role "consumer0" warps [4, 8) registers 232
// CHECK: fa4.channel.wait %[[Q]]
// CHECK: fa4.channel.wait %[[TURN0]]
// CHECK: fa4.wgmma %{{.*}}, %{{.*}} b_major(k) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: fa4.channel.commit %[[TURN1]]
// CHECK: fa4.wgmma.wait 0, %{{.*}} : vector<64xf32>
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: scf.for
// CHECK: fa4.channel.wait %[[TURN0]]
// CHECK: fa4.wgmma {{.*}} b_major(k)
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: fa4.wgmma %[[P:.*]], %{{.*}}, %{{.*}} b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: fa4.channel.commit %[[TURN1]]
// CHECK: fa4.wgmma.wait 1, %{{.*}} : vector<64xf32>
// CHECK: fa4.wgmma.wait 0, %{{.*}}, %[[P]] : vector<64xf32>, vector<64xbf16>
// The last block's product, then the epilogue.
// CHECK: fa4.wgmma {{.*}} b_major(mn)
// CHECK: fa4.channel.release %[[Q]]
// CHECK: fa4.channel.acquire %[[EPI]]
// CHECK: vector.store {{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: fa4.channel.commit %[[EPI]]
// Consumer 0 takes consumer 1's last turn hand-off after its tiles.
// CHECK: fa4.channel.wait %[[TURN0]]
// CHECK-NEXT: }
// Consumer 1 gives consumer 0 the first turn.
// CHECK: fa4.role "consumer1" warps [8, 12) registers 232
// CHECK-NOT: fa4.channel.wait
// CHECK: fa4.channel.commit %[[TURN0]]
// CHECK: fa4.channel.wait %[[TURN1]]

// Synchronized: 20 mbarriers, the turns on bar.sync/bar.arrive 1 and 2 with
// 256 threads, no Tensor Memory.
// SYNC: gpu.func @gqa_attention
// SYNC-SAME: fa4.mbarriers = 20 : i64
// SYNC-SAME: fa4.named_barriers = 2 : i64
// SYNC-SAME: fa4.tmem_columns = 0 : i64
// SYNC-NOT: fa4.tmem
// SYNC-DAG: fa4.named_barrier.sync 1, 256 threads
// SYNC-DAG: fa4.named_barrier.arrive 1, 256 threads
// SYNC-DAG: fa4.named_barrier.sync 2, 256 threads
// SYNC-DAG: fa4.named_barrier.arrive 2, 256 threads
// SYNC-NOT: fa4.channel

func.func @gqa(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>,
               %v: memref<?x?x2x128xbf16>, %o: memref<?x?x8x128xbf16>,
               %lse: memref<?x8x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) lse(%lse : memref<?x8x?xf32>) {causal}
  return
}
