// RUN: fa4-opt %s --fa4-plan="arch=sm_90a q-stages=3" --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a q-stages=3" | FileCheck %s --check-prefix=PLAN

// Three consumer warpgroups on sm_90a (q-stages=3, FlashAttention-3's
// 192-row tile at small head dims): 512 threads, the register file split
// 3 x 160 + 32, the K/V ring released by all three consumers, and the
// ping-pong turns passed round robin on hardware barriers 1-3.

// PLAN: qStages = 3, {{.*}}softmaxRegs = 160, correctionRegs = 0, producerRegs = 32,

// CHECK: fa4.launch {{.*}}block = [512, 1, 1]
// CHECK-SAME: query_rows_per_cta = 48 : i64
// CHECK-DAG: %[[Q:.*]] = fa4.channel "q" : !fa4.channel<6> producer <tma> consumer <threads = 128>
// CHECK-DAG: %[[KV:.*]] = fa4.channel "kv" : !fa4.channel<{{[0-9]+}}> producer <tma> consumer <threads = 384>
// CHECK-DAG: %[[EPI:.*]] = fa4.channel "epilogue" : !fa4.channel<3> producer <threads = 128> consumer <threads = 1>
// CHECK-DAG: %[[TURN0:.*]] = fa4.channel "turn0" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 1 : i32}
// CHECK-DAG: %[[TURN1:.*]] = fa4.channel "turn1" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 2 : i32}
// CHECK-DAG: %[[TURN2:.*]] = fa4.channel "turn2" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 3 : i32}
// CHECK: fa4.warp_specialize warps 16
// CHECK: fa4.role "load" warps [0, 1) registers 32
// The tile's three Q tiles after its first K.
// CHECK: fa4.channel.acquire %[[Q]]
// CHECK-COUNT-3: fa4.tma.load %arg0{{.*}} for %[[Q]]
// CHECK: fa4.role "store" warps [1, 2) registers 32

// Consumer 0 takes turn 0 and hands consumer 1 the next; after its tiles
// it takes consumer 2's last hand-off.
// CHECK: fa4.role "consumer0" warps [4, 8) registers 160
// CHECK-NOT: fa4.channel.commit %[[TURN0]]
// CHECK: fa4.channel.wait %[[TURN0]]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: fa4.channel.commit %[[TURN1]]
// CHECK: fa4.channel.wait %[[TURN0]]
// CHECK: fa4.channel.commit %[[TURN1]]
// CHECK: fa4.channel.wait %[[TURN0]][%c0{{(_[0-9]+)?}}]
// CHECK-NEXT: {{^ *}}}
// Consumer 1 passes its turns to consumer 2.
// CHECK: fa4.role "consumer1" warps [8, 12) registers 160
// CHECK-NOT: fa4.channel.commit %[[TURN0]]
// CHECK: fa4.channel.wait %[[TURN1]]
// CHECK: fa4.channel.commit %[[TURN2]]
// Consumer 2 opens consumer 0's first turn and passes its own back to it.
// CHECK: fa4.role "consumer2" warps [12, 16) registers 160
// CHECK: fa4.channel.commit %[[TURN0]][%c0{{(_[0-9]+)?}}]
// CHECK: fa4.channel.wait %[[TURN2]]
// CHECK: fa4.channel.commit %[[TURN0]]
// CHECK-NOT: fa4.role "consumer3"

func.func @d64(%q: memref<?x?x32x64xbf16>, %k: memref<?x?x8x64xbf16>,
               %v: memref<?x?x8x64xbf16>, %o: memref<?x?x32x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xbf16>,
                    memref<?x?x8x64xbf16>, memref<?x?x8x64xbf16>)
                outs(%o : memref<?x?x32x64xbf16>) {causal}
  return
}
