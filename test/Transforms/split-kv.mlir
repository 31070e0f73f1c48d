// Split-KV: the planner's choice, the plan option, and what fa4-specialize
// builds (the units, the workspace, the counters and the combine).
// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_90a | FileCheck %s --check-prefix=AUTO90
// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_100a | FileCheck %s --check-prefix=AUTO100
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a kv-splits=1" | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a scheduler=paired" | FileCheck %s --check-prefix=NONE
// RUN: fa4-opt %s -split-input-file --fa4-synchronize="arch=sm_90a kv-splits=3" | FileCheck %s --check-prefix=SYNC90
// RUN: fa4-opt %s -split-input-file --fa4-synchronize="arch=sm_100a kv-splits=3" | FileCheck %s --check-prefix=SYNC100

// Decode against 8192 keys: 8 work tiles (4 heads of a KV head packed per
// tile, one Q stage on sm_90a: one token fits a consumer's tile) fill 8 of
// 132 SMs; 16 splits of 4 blocks each (64 blocks) fill them. A causal
// sm_90a plan takes the lpt order and gives the store warp the registers
// of the combine.
// AUTO90-LABEL: func.func @decode_static
// AUTO90: #fa4.plan<arch = sm_90a, {{.*}}qStages = 1, {{.*}}scheduler = lpt, softmaxRegs = 232, correctionRegs = 0, producerRegs = 56, {{.*}}kvSplits = 16>
// sm_100a: 148 SMs, 64 blocks of 128 keys: 16 splits (4 blocks each).
// AUTO100-LABEL: func.func @decode_static
// AUTO100: #fa4.plan<arch = sm_100a, {{.*}}kvSplits = 16>
// kv-splits=1, or a paired scheduler the options ask for: no split.
// NONE-LABEL: func.func @decode_static
// NONE-NOT: kvSplits
// NONE: qStages = 1, {{.*}}scheduler = paired, softmaxRegs = 232, correctionRegs = 0, producerRegs = 56,
// NONE-NOT: kvSplits

// The units are tiles x splits; each split's share of a tile's blocks is
// ceil(blocks / 3); the workspace is two kernel pointers after the cache's.
// Per work tile the workspace holds 64 rows x (3 x 128 + 4) partial words
// and a counter per Q stage (one: a query of one token fits one consumer's
// tile).
// SYNC90-LABEL: func.func @decode_static
// SYNC90: split_kv = {counters_per_tile = 1 : i64, partial_words_per_tile = 24832 : i64, splits = 3 : i64}
// SYNC90: gpu.func @decode_static_attention({{.*}}: f32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// The store warp counts the split done (acq_rel at GPU scope, after a
// fence), joins the warp, votes, and the last split sets the counter back
// to 0 and reads the partials 16 bytes at a time.
// SYNC90: llvm.fence syncscope("device") acq_rel
// SYNC90-NEXT: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") acq_rel : !llvm.ptr<1>, i32
// SYNC90: nvvm.bar.warp.sync
// SYNC90: nvvm.vote.sync any
// SYNC90: llvm.atomicrmw xchg %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
// SYNC90: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// The consumers write their rows' partial O in pairs of f32.
// SYNC90: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// sm_100a: the correction warpgroup writes 16 columns at a time.
// SYNC100-LABEL: gpu.func @decode_static_attention
// SYNC100: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") acq_rel : !llvm.ptr<1>, i32
// SYNC100: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
func.func @decode_static(%q: memref<1x1x32x128xbf16>, %k: memref<1x8192x8x128xbf16>,
                         %v: memref<1x8192x8x128xbf16>, %o: memref<1x1x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x1x32x128xbf16>, memref<1x8192x8x128xbf16>,
                    memref<1x8192x8x128xbf16>) outs(%o : memref<1x1x32x128xbf16>) {causal}
  return
}

// -----

// Enough tiles to fill the SMs, a short cache, or dynamic sizes: no split.
// AUTO90-LABEL: func.func @prefill_static
// AUTO90: qStages = 2,
// AUTO90-NOT: kvSplits
// AUTO90-LABEL: func.func @short_cache
// AUTO90-NOT: kvSplits
// AUTO90-LABEL: func.func @dynamic
// AUTO90-NOT: kvSplits
func.func @prefill_static(%q: memref<8x4096x32x128xbf16>, %k: memref<8x4096x8x128xbf16>,
                          %v: memref<8x4096x8x128xbf16>, %o: memref<8x4096x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<8x4096x32x128xbf16>, memref<8x4096x8x128xbf16>,
                    memref<8x4096x8x128xbf16>) outs(%o : memref<8x4096x32x128xbf16>)
  return
}
func.func @short_cache(%q: memref<1x1x32x128xbf16>, %k: memref<1x700x8x128xbf16>,
                       %v: memref<1x700x8x128xbf16>, %o: memref<1x1x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x1x32x128xbf16>, memref<1x700x8x128xbf16>,
                    memref<1x700x8x128xbf16>) outs(%o : memref<1x1x32x128xbf16>)
  return
}
func.func @dynamic(%q: memref<?x?x32x128xbf16>, %k: memref<?x?x8x128xbf16>,
                   %v: memref<?x?x8x128xbf16>, %o: memref<?x?x32x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>,
                    memref<?x?x8x128xbf16>) outs(%o : memref<?x?x32x128xbf16>)
  return
}
