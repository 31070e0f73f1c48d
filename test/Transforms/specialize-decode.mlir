// RUN: fa4-opt %s --fa4-plan="family=decode" --fa4-tile --fa4-specialize | FileCheck %s

// The decode family on sm_100a (swap-AB, family=decode): a 32-row Q tile
// (8 positions of 4 packed heads) is the N of every MMA and a KV block's
// 128 keys its M. S^T has two 32-column buffers, O^T one 32-column tile
// (Dv 128); the softmax warpgroup (one thread per key) reduces each row's
// maximum over its four warps through a two-half exchange on named barrier
// 1, takes P^T's one buffer back from the previous PV MMA before it
// rescales O^T and writes P^T, and at the end of a tile transposes O^T to
// rows for a row-wise epilogue.

// 256 threads: the softmax warpgroup and the producer warps. Shared memory:
// Q (32 x 128 bf16), a ring of 4 K/V slots, the O staging, P^T (32 rows x
// 128 keys), the exchange (2 halves x 4 warps x 32 rows f32), the rows'
// maxima and O^T as rows (32 x (128 + 4) f32).
// CHECK: gpu.func @decode_attention(
// CHECK-SAME: %{{.*}} : memref<8192xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "q"}
// CHECK-SAME: %{{.*}} : memref<131072xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "kv"}
// CHECK-SAME: %{{.*}} : memref<8192xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "o_staging"}
// CHECK-SAME: %{{.*}} : memref<8192xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "p"}
// CHECK-SAME: %{{.*}} : memref<1024xi8, #gpu.address_space<workgroup>> {fa4.alignment = 16 : i64, fa4.name = "exchange"}
// CHECK-SAME: %{{.*}} : memref<128xi8, #gpu.address_space<workgroup>> {fa4.alignment = 16 : i64, fa4.name = "row_max"}
// CHECK-SAME: %{{.*}} : memref<16896xi8, #gpu.address_space<workgroup>> {fa4.alignment = 16 : i64, fa4.name = "transpose"}
// CHECK-SAME: fa4.plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 128, qStages = 1, kvStages = 4, gqaPack = 4, {{.*}}family = decode>
// CHECK: %[[Q:.*]] = fa4.channel "q" : !fa4.channel<1> producer <tma> consumer <mma>
// CHECK: %[[KV:.*]] = fa4.channel "kv" : !fa4.channel<4> producer <tma> consumer <mma>
// CHECK: %[[S:.*]] = fa4.channel "s_ready" : !fa4.channel<2> producer <mma> consumer <threads = 128>
// CHECK: %[[P:.*]] = fa4.channel "p_ready" : !fa4.channel<1> producer <threads = 128> consumer <mma>
// CHECK: %[[O:.*]] = fa4.channel "o_ready" : !fa4.channel<1> producer <mma> consumer <threads = 128>
// CHECK: %[[EPI:.*]] = fa4.channel "corr_epi" : !fa4.channel<1> producer <threads = 128> consumer <threads = 1>
// CHECK: %[[S0:.*]] = fa4.tmem.buffer "s0" : !fa4.tmem<128x32xf32>
// CHECK: %[[S1:.*]] = fa4.tmem.buffer "s1" : !fa4.tmem<128x32xf32>
// CHECK: %[[OT:.*]] = fa4.tmem.buffer "o" : !fa4.tmem<128x32xf32>
// CHECK: fa4.warp_specialize warps 8

// The softmax: S^T from the block's buffer, each row's maximum butterflied
// over the warp (offsets 16 to 1), published by lane 0, synced, folded over
// the four warps; P^T back (the previous PV done), O^T rescaled where a
// reference moved, P^T stored key by key, fenced, handed over.
// CHECK: fa4.role "softmax" warps [0, 4) registers 240
// CHECK: fa4.channel.wait %[[S]]
// CHECK: fa4.tmem.load %[[S1]][0] : !fa4.tmem<128x32xf32> -> vector<32xf32>
// CHECK: fa4.tmem.load %[[S0]][0] : !fa4.tmem<128x32xf32> -> vector<32xf32>
// CHECK: fa4.channel.release %[[S]]
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: vector.store %{{.*}}, %[[XCHG:.*]][%{{.*}}, %{{.*}}, %c0{{.*}}] : memref<2x4x32xf32, #gpu.address_space<workgroup>>, vector<32xf32>
// CHECK: fa4.named_barrier.sync 1, 128 threads
// CHECK-COUNT-4: vector.load %[[XCHG]]
// CHECK: fa4.channel.acquire %[[P]]
// CHECK: vector.reduction <minimumf>
// CHECK: fa4.tmem.load %[[OT]][0] : !fa4.tmem<128x32xf32> -> vector<32xf32>
// CHECK: fa4.tmem.store %{{.*}}, %[[OT]][0] : vector<32xf32>, !fa4.tmem<128x32xf32>
// CHECK-COUNT-32: memref.store %{{.*}} : memref<2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: fa4.channel.commit %[[P]]
// The tile's end: the sums published, O^T to rows, synced, the epilogue.
// CHECK: fa4.named_barrier.sync 1, 128 threads
// CHECK: fa4.channel.wait %[[O]]
// CHECK-COUNT-32: memref.store %{{.*}} : memref<32x132xf32, #gpu.address_space<workgroup>>
// CHECK: fa4.channel.release %[[O]]
// CHECK-NEXT: fa4.named_barrier.sync 1, 128 threads
// CHECK: fa4.channel.acquire %[[EPI]]
// CHECK: vector.load %{{.*}} : memref<32x132xf32, #gpu.address_space<workgroup>>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: fa4.channel.commit %[[EPI]]

// The MMA warp: S^T = K Q^T into the block's buffer, then the previous
// block's O^T += V^T P^T with V MN-major as A.
// CHECK: fa4.role "mma" warps [4, 5) registers 56
// CHECK: fa4.channel.wait %[[Q]]
// CHECK: fa4.channel.acquire %[[S]]
// CHECK: fa4.mma %{{.*}}, %{{.*}}, %[[S1]], %false b_major(k) : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x32x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x32xf32>
// CHECK: fa4.mma %{{.*}}, %{{.*}}, %[[S0]], %false b_major(k)
// CHECK: fa4.channel.commit %[[S]]
// CHECK: fa4.channel.wait %[[P]]
// CHECK: fa4.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} a_major(mn) b_major(k) : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x32x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x32xf32>
// CHECK: fa4.channel.release %[[P]]
// CHECK: fa4.channel.acquire %[[O]]
// CHECK-NEXT: fa4.channel.commit %[[O]]
// CHECK: fa4.role "load" warps [5, 6) registers 56
// CHECK: fa4.role "store" warps [6, 7) registers 56

func.func @decode(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                  %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>,
                  %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>)
                {causal}
  return
}
