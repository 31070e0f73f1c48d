// A cluster split (split-combine=cluster): the splits of a tile are the
// CTAs of one cluster and combine their partial rows over distributed
// shared memory, with no workspace.
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a kv-splits=4 split-combine=cluster" | FileCheck %s --check-prefix=PLAN
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a split-combine=cluster" | FileCheck %s --check-prefix=CHOSEN
// RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-plan="arch=sm_90a split-combine=cluster" | FileCheck %s --check-prefix=CAUSAL
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a kv-splits=4 split-combine=cluster" | FileCheck %s --check-prefix=SYNC
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_100a kv-splits=2 split-combine=cluster" | FileCheck %s --check-prefix=SYNC100
// RUN: not fa4-opt %s --fa4-plan="arch=sm_90a kv-splits=4 split-combine=dsmem" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fa4-opt %s --fa4-plan="arch=sm_90a kv-splits=9 split-combine=cluster" 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not fa4-opt %s --fa4-plan="arch=sm_90a kv-splits=1 split-combine=cluster" 2>&1 | FileCheck %s --check-prefix=WIDE1
// RUN: not fa4-opt %s --fa4-plan="arch=sm_90a kv-splits=4 split-combine=cluster q-stages=2 kv-stages=4" 2>&1 | FileCheck %s --check-prefix=FIT

// One Q stage (the partial rows of a stage take 64 x 132 words) and the
// deepest ring beside them.
// PLAN: qStages = 1, kvStages = 4,
// PLAN-SAME: kvSplits = 4, splitCombine = cluster>

// Without kv-splits, the planner's choice (16 splits of 8 blocks) within a
// cluster's 8 CTAs.
// CHOSEN: kvSplits = 8, splitCombine = cluster>
// A causal prefill that needs no split gets 2, in LPT order (a split's
// units are not paired tiles).
// CAUSAL: scheduler = lpt,
// CAUSAL-SAME: kvSplits = 2, splitCombine = cluster>

// No workspace parameters; clusters of the 4 splits; the exchange channel.
// SYNC-NOT: split_partials
// SYNC: cluster = [4, 1, 1]
// SYNC-SAME: split_kv = {counters_per_tile = 0 : i64, partial_words_per_tile = 0 : i64, splits = 4 : i64}
// SYNC: nvgpu.mbarrier.create {fa4.name = "split_exchange.full"}
// SYNC: nvgpu.mbarrier.create {fa4.name = "split_exchange.empty"}
// SYNC: nvvm.fence.mbarrier.init
// SYNC: nvvm.cluster.arrive
// SYNC-NEXT: nvvm.cluster.wait
// SYNC: fa4.role "store"
// SYNC: fa4.mbarrier.arrive_cluster %{{.*}}[%{{.*}}], 4 ctas
// SYNC: llvm.fence syncscope("cluster") acq_rel
// SYNC-COUNT-2: fa4.dsmem.load
// SYNC: fa4.dsmem.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], rank %c0
// SYNC: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cluster>}
// SYNC: fa4.mbarrier.arrive_cluster %{{.*}}[%{{.*}}], 4 ctas
// SYNC: nvgpu.tma.async.store
// SYNC: fa4.role "consumer0"
// SYNC: nvvm.cluster.arrive
// SYNC-NEXT: nvvm.cluster.wait
// SYNC-NEXT: gpu.return

// SYNC100: cluster = [2, 1, 1]
// SYNC100: fa4.role "store"
// SYNC100: fa4.mbarrier.arrive_cluster %{{.*}}[%{{.*}}], 2 ctas

// UNKNOWN: fa4-plan: unknown split-combine 'dsmem' (expected workspace or cluster)
// WIDE: splitCombine = cluster makes the splits one cluster's CTAs: kvSplits must be in [2, 8], got 9
// WIDE1: splitCombine = cluster makes the splits one cluster's CTAs: kvSplits must be in [2, 8], got 1
// FIT: plan needs 297984 bytes of shared memory (2 Q stages, 4 K/V stages, O staging, the cluster's partial rows), more than the 232448 available

func.func @decode(%q: memref<2x16x8x128xbf16>, %k: memref<2x8192x2x128xbf16>,
                  %o: memref<2x16x8x128xbf16>, %lse: memref<2x8x16xf32>) {
  fa4.attention ins(%q, %k, %k : memref<2x16x8x128xbf16>, memref<2x8192x2x128xbf16>,
                    memref<2x8192x2x128xbf16>) outs(%o : memref<2x16x8x128xbf16>)
                lse(%lse : memref<2x8x16xf32>)
  return
}
