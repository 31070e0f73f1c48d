// RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-plan="arch=sm_90a p-precision=hi_lo" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER
// RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-plan="p-precision=hi_lo" --fa4-tile --fa4-specialize --fa4-allocate-tmem | FileCheck %s --check-prefix=BLACKWELL
// RUN: not fa4-opt %fa4_src_root/examples/attention.mlir --fa4-plan="p-precision=hi_lo kv-interleave=2" 2>&1 | FileCheck %s --check-prefix=INTERLEAVED

// sm_90a (64-key blocks at head dim 128 with hi + lo): the consumer rounds
// P (hi), rounds the residual P - hi (lo), and carries both through the KV
// loop; each block's product is two wgmmas into the same registers in one
// commit group, lo's accumulator hi's result.
// HOPPER: fa4.role "consumer0"
// HOPPER: %[[HI0:.*]] = arith.truncf %[[E0:.*]] : vector<32xf32> to vector<32xbf16>
// HOPPER-NEXT: %[[BACK0:.*]] = arith.extf %[[HI0]] : vector<32xbf16> to vector<32xf32>
// HOPPER-NEXT: %[[RES0:.*]] = arith.subf %[[E0]], %[[BACK0]] : vector<32xf32>
// HOPPER-NEXT: %[[LO0:.*]] = arith.truncf %[[RES0]] : vector<32xf32> to vector<32xbf16>
// HOPPER: scf.for {{.*}} iter_args({{.*}}, %[[PHI:.*]] = %[[HI0]], %[[PLO:.*]] = %[[LO0]]) -> (f32, f32, f32, f32, vector<64xf32>, vector<32xbf16>, vector<32xbf16>)
// HOPPER: fa4.wgmma {{.*}} b_major(k)
// HOPPER-NEXT: nvvm.wgmma.commit.group.sync.aligned
// HOPPER: %[[OHI:.*]] = fa4.wgmma %[[PHI]], %[[V:.*]], %{{.*}} b_major(mn) : vector<32xbf16>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// HOPPER-NEXT: %[[OLO:.*]] = fa4.wgmma %[[PLO]], %[[V]], %[[OHI]] b_major(mn) : vector<32xbf16>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
// HOPPER-NEXT: nvvm.wgmma.commit.group.sync.aligned
// HOPPER: fa4.wgmma.wait 0, %[[OLO]], %[[PHI]], %[[PLO]] : vector<64xf32>, vector<32xbf16>, vector<32xbf16>
// HOPPER: scf.yield {{.*}} : f32, f32, f32, f32, vector<64xf32>, vector<32xbf16>, vector<32xbf16>
// The last block's two products.
// HOPPER: fa4.wgmma {{.*}} b_major(mn)
// HOPPER-NEXT: fa4.wgmma {{.*}} b_major(mn)
// HOPPER-NEXT: nvvm.wgmma.commit.group.sync.aligned
// HOPPER: fa4.role "consumer1"

// sm_100a (64-key blocks with hi + lo): no P buffer (S and O per Q stage).
// The softmax reads S a 32-column chunk at a time, once for the row
// maximum and again for P, and writes each chunk's hi and lo into that
// chunk's own columns: 16-bit views of S at columns 32c and 32c + 16.
// BLACKWELL: fa4.tmem_columns = 512 : i64
// BLACKWELL-NOT: fa4.name = "p
// BLACKWELL: fa4.role "softmax0"
// BLACKWELL: %[[S:.*]] = fa4.tmem.view %{{.*}} {fa4.name = "s0"} : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x64xf32>
// BLACKWELL: scf.for
// The maximum pass: chunk by chunk, each load waited for.
// BLACKWELL: fa4.tmem.load %[[S]][0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
// BLACKWELL-NEXT: nvvm.tcgen05.wait <load>
// BLACKWELL: fa4.tmem.load %[[S]][32] : !fa4.tmem<128x64xf32> -> vector<32xf32>
// BLACKWELL-NEXT: nvvm.tcgen05.wait <load>
// The P pass: chunk 0 again, its hi and lo into columns 0 and 16, then
// (pvSplit 32) the first part handed over; chunk 1 into 32 and 48.
// BLACKWELL: fa4.tmem.load %[[S]][0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
// BLACKWELL: %[[HI:.*]] = arith.truncf %[[E:.*]] : vector<32xf32> to vector<32xbf16>
// BLACKWELL-NEXT: %[[HIV:.*]] = fa4.tmem.view %[[S]][0] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xbf16>
// BLACKWELL-NEXT: %[[LOV:.*]] = fa4.tmem.view %[[S]][16] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xbf16>
// BLACKWELL-NEXT: fa4.tmem.store %[[HI]], %[[HIV]][0]
// BLACKWELL-NEXT: %[[BACK:.*]] = arith.extf %[[HI]] : vector<32xbf16> to vector<32xf32>
// BLACKWELL-NEXT: %[[RES:.*]] = arith.subf %[[E]], %[[BACK]] : vector<32xf32>
// BLACKWELL-NEXT: %[[LO:.*]] = arith.truncf %[[RES]] : vector<32xf32> to vector<32xbf16>
// BLACKWELL-NEXT: fa4.tmem.store %[[LO]], %[[LOV]][0]
// BLACKWELL-NEXT: nvvm.tcgen05.wait <store>
// BLACKWELL-NEXT: fa4.channel.commit
// BLACKWELL: fa4.tmem.load %[[S]][32] : !fa4.tmem<128x64xf32> -> vector<32xf32>
// BLACKWELL: fa4.tmem.view %[[S]][32] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xbf16>
// BLACKWELL-NEXT: fa4.tmem.view %[[S]][48] : !fa4.tmem<128x64xf32> -> !fa4.tmem<128x32xbf16>
// BLACKWELL: fa4.role "softmax1"
// The MMA warp: per block and Q stage the previous block's PV MMAs (per
// 32-key chunk of P its hi and then its lo, with that chunk's keys of V),
// then QK^T; after the loop the last block's.
// BLACKWELL: fa4.role "mma"
// BLACKWELL: scf.for
// BLACKWELL: fa4.mma %{{.*}}, %[[V0:subview[_0-9]*]], %[[O0:[0-9]+]], %{{.*}} b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16
// BLACKWELL-NEXT: fa4.mma %{{.*}}, %[[V0]], %[[O0]], %true b_major(mn)
// BLACKWELL: fa4.mma %{{.*}}, %[[V1:subview[_0-9]*]], %[[O0]], %true b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16, strided<[4096, 64, 1], offset: 2048>
// BLACKWELL-NEXT: fa4.mma %{{.*}}, %[[V1]], %[[O0]], %true b_major(mn)
// BLACKWELL: fa4.mma {{.*}} b_major(k)
// BLACKWELL-COUNT-4: fa4.mma {{.*}} b_major(mn)
// BLACKWELL: fa4.mma {{.*}} b_major(k)
// BLACKWELL-NOT: fa4.mma
// BLACKWELL: }
// BLACKWELL-COUNT-8: fa4.mma {{.*}} b_major(mn)
// BLACKWELL-NOT: fa4.mma
// BLACKWELL: fa4.role "load"

// Interleaved softmax warpgroups do not take it.
// INTERLEAVED: error: 'fa4.attention' op invalid plan: pPrecision = hi_lo does not combine with kvInterleave = 2 (their softmax and combined epilogue do not fit the registers of one SM)
