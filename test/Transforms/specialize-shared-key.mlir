// RUN: fa4-opt %s --fa4-plan="shared-key=4" --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan="shared-key=2" | FileCheck %s --check-prefix=TWO

// Shared keys on sm_100a (the Mojo FA4 shared-key mode, sharedKey = 4): a Q
// stage of 32 rows whose S (128 keys) and O (Dv 64) the weight-stationary
// MMA folds over the 128 lanes, 32 and 16 columns; every row's four
// threads agree on its maximum and sum through a two-half exchange in shared
// memory on their warpgroup's own hardware barrier (3 and 4, past the
// statistics hand-offs' 1 and 2), and P goes to one PV MMA through shared
// memory, fenced for the async proxy.

// TWO: blockM = 64, {{.*}}pvSplit = 0, rescaleThreshold = 8, sharedKey = 2>

// A CTA's tile: 2 stages of 32 rows, 8 positions of 4 packed heads each.
// CHECK: fa4.launch {{.*}}query_rows_per_cta = 16 : i64
// P (2 stages x 32 rows x 128 keys x 2 bytes) and the exchange (2
// warpgroups x 2 halves x 128 threads x 4 bytes).
// CHECK: gpu.func @attention_attention(
// CHECK-SAME: %{{.*}} : memref<16384xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "p"}
// CHECK-SAME: %{{.*}} : memref<2048xi8, #gpu.address_space<workgroup>> {fa4.alignment = 16 : i64, fa4.name = "exchange"}
// CHECK-SAME: fa4.plan = #fa4.plan<arch = sm_100a, blockM = 32, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 4, {{.*}}pvSplit = 0, rescaleThreshold = 8, sharedKey = 4>
// CHECK-DAG: %[[P0:.*]] = fa4.channel "p_o_rescale0" : !fa4.channel<1> producer <threads = 256> consumer <mma>
// CHECK-NOT: fa4.channel "p_ready_2
// CHECK-DAG: %[[S0:.*]] = fa4.tmem.buffer "s0" : !fa4.tmem<128x32xf32>
// CHECK-DAG: %[[O0:.*]] = fa4.tmem.buffer "o0" : !fa4.tmem<128x16xf32>
// CHECK-NOT: fa4.tmem.buffer "p

// The softmax: its 32 keys of S, the row maximum exchanged, P stored into
// the P tile, fenced, handed over.
// Each exchange writes the half its sequence number's parity picks, syncs
// and folds the row's four partials (the lane's row plus 0, 32, 64, 96).
// CHECK: fa4.role "softmax0" warps [0, 4) registers 200
// CHECK: fa4.tmem.load %[[S0]][0] : !fa4.tmem<128x32xf32> -> vector<32xf32>
// CHECK: %[[HALF:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// CHECK-NEXT: memref.store %{{.*}}, %[[XCHG:.*]][%[[HALF]], %{{.*}}] : memref<2x128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: fa4.named_barrier.sync 3, 128 threads
// CHECK-COUNT-4: memref.load %[[XCHG]][%[[HALF]], %{{.*}}]
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}} : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: fa4.channel.commit %[[P0]]
// After the tile's blocks, the row sum the same way (its sequence number
// the tile's final statistics hand-off).
// CHECK: memref.store %{{.*}}#1, %[[SUMX:.*]][%[[SUMHALF:.*]], %{{.*}}] : memref<2x128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: fa4.named_barrier.sync 3, 128 threads
// CHECK-COUNT-4: memref.load %[[SUMX]][%[[SUMHALF]], %{{.*}}]
// CHECK: arith.addf
// CHECK: fa4.role "softmax1"
// CHECK: fa4.named_barrier.sync 4, 128 threads

// The correction: its 16 columns of O.
// CHECK: fa4.role "correction"
// CHECK: fa4.tmem.load %[[O0]][0] : !fa4.tmem<128x16xf32> -> vector<16xf32>

// The MMA warp: both products weight-stationary, M = 32.
// CHECK: fa4.role "mma"
// CHECK: fa4.mma %{{.*}}, %{{.*}}, %[[O0]], %{{.*}} b_major(mn) ws(32) : memref<2x32x64xbf16, #gpu.address_space<workgroup>>, memref<1x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x16xf32>
// CHECK: fa4.mma %{{.*}}, %{{.*}}, %[[S0]], %false b_major(k) ws(32) : memref<1x32x64xbf16, #gpu.address_space<workgroup>>, memref<1x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x32xf32>
// CHECK-NOT: fa4.mma {{.*}} b_major(k) :

func.func @attention(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) {causal}
  return
}
