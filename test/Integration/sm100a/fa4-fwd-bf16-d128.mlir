// RUN: fa4-opt %s --pass-pipeline="builtin.module(fa4-insert-barriers, fa4-lower-warp-specialize, gpu.module(expand-strided-metadata, convert-scf-to-cf, convert-gpu-to-nvvm{index-bitwidth=32}))" -o %t.nvvm.mlir
// RUN: fa4-opt %t.nvvm.mlir --pass-pipeline="builtin.module(convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" -o %t.mlir
// RUN: %python %fa4_src_root/scripts/extract-ptx.py %t.mlir %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// Exact instruction counts of the protocol:
// RUN: grep -c "nvvm.mbarrier.init" %t.nvvm.mlir | FileCheck %s --check-prefix=INITS
// RUN: grep -c "nvvm.tcgen05.mma " %t.nvvm.mlir | FileCheck %s --check-prefix=MMAS
// RUN: grep -c "nvvm.tcgen05.commit" %t.nvvm.mlir | FileCheck %s --check-prefix=COMMITS
// RUN: grep -c "ex2.approx.ftz.f32" %t.ptx | FileCheck %s --check-prefix=MUFU
// RUN: grep -c "fma.rn.f32" %t.ptx | FileCheck %s --check-prefix=FMA
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// PTX: .target sm_100a
// PTX: .maxntid 512, 1, 1
// PTX: .minnctapersm 1
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 {{.*}}200;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 {{.*}}64;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 {{.*}}48;
// PTX-DAG: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: tcgen05.ld.sync.aligned.32x32b.x32.b32
// PTX-DAG: tcgen05.st.sync.aligned.32x32b.x16.b32
// PTX-DAG: vote.sync.any.pred
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// PTX-DAG: cp.async.bulk.wait_group.read 0
// PTX-DAG: tcgen05.dealloc.cta_group::1.sync.aligned.b32

// 16 channel slots (q 2, kv 3, eleven single-slot hand-offs), full + empty.
// INITS: 32
// One tcgen05.mma per fa4.mma (each a loop over its K steps): QK^T for 2
// stages, the two PV parts for 2 stages inside the KV loop and after it.
// MMAS: 10
// S ready x 2, K and V released (3), O ready x 2, Q released x 2.
// COMMITS: 9
// Per softmax warpgroup: 128 exponentials of which 3 in 16 emulated (24),
// plus the rescale factor: 105 on MUFU, 24 x 3 FMAs.
// MUFU: 210
// FMA: 144

// PTXAS: Compiling entry function 'fa4_fwd_bf16_d128' for 'sm_100a'
// PTXAS: Used {{[0-9]+}} registers

// The FlashAttention-4 forward kernel for sm_100a at the role level (level 4),
// written by hand: bf16, head dim 128, 16 heads, non-causal, Skv a multiple of
// 128. It is the reference the role-specialization pass will generate, and
// the end-to-end check that the kernel-level ops compose: barrier insertion,
// role lowering and NVVM conversion take it to PTX, and ptxas must accept it
// for sm_100a. At the FA4 budgets (200/200/64/48) it still spills about 90
// bytes, mostly in the correction role, whose swizzled epilogue addresses
// LLVM hoists out of the tile loop; removing the spills is open work.
//
// Roles (16 warps): softmax for Q stage 0 (warps 0-3) and 1 (4-7), 200
// registers; correction + epilogue (8-11), 64; MMA (12), TMA load (13) and
// TMA store (14), 48.
// Shared memory: Q stages [0, 64K), K/V ring of 3 [64K, 160K), O staging
// [160K, 192K), per-row statistics [192K, 193K).
// Tensor Memory: S0 [0, 128), S1 [128, 256), O0 [256, 384), O1 [384, 512);
// P_j is the bf16 view of the upper half of S_j.

!desc = !nvgpu.tensormap.descriptor<tensor = memref<1x128x1x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!box = memref<1x128x1x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>
!stats = memref<2x128xf32, #gpu.address_space<workgroup>>
!smem = memref<?xi8, #gpu.address_space<workgroup>>
!slot = memref<1xi32, #gpu.address_space<workgroup>>

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @fa4_fwd_bf16_d128(%qd: !desc, %kd: !desc, %vd: !desc, %od: !desc,
                                %batch: index, %seq_q: index, %seq_kv: index,
                                %scale_log2: f32)
        workgroup(%slot : !slot) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c16384 = arith.constant 16384 : index
      %c32768 = arith.constant 32768 : index
      %c65536 = arith.constant 65536 : index
      %c163840 = arith.constant 163840 : index
      %c180224 = arith.constant 180224 : index
      %c196608 = arith.constant 196608 : index
      %true = arith.constant true
      %smem = gpu.dynamic_shared_memory : !smem
      // Work: (batch, head, pair of 128-row Q tiles), persistent over CTAs.
      %seq_q_up = arith.addi %seq_q, %c255 : index
      %mpairs = arith.divui %seq_q_up, %c256 : index
      %heads = arith.muli %batch, %c16 : index
      %tiles = arith.muli %heads, %mpairs : index
      %nblocks = arith.divui %seq_kv, %c128 : index
      %cta = gpu.block_id x
      %grid = gpu.grid_dim x

      %q = fa4.channel "q" : !fa4.channel<2> producer <tma> consumer <mma>
      %kv = fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
      %s0 = fa4.channel "s0" : !fa4.channel<1> producer <mma> consumer <threads = 128>
      %s1 = fa4.channel "s1" : !fa4.channel<1> producer <mma> consumer <threads = 128>
      %pf0 = fa4.channel "p_o_rescale0" : !fa4.channel<1> producer <threads = 256> consumer <mma>
      %pf1 = fa4.channel "p_o_rescale1" : !fa4.channel<1> producer <threads = 256> consumer <mma>
      %ps0 = fa4.channel "p_ready_2_0" : !fa4.channel<1> producer <threads = 128> consumer <mma>
      %ps1 = fa4.channel "p_ready_2_1" : !fa4.channel<1> producer <threads = 128> consumer <mma>
      %st0 = fa4.channel "stats0" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %st1 = fa4.channel "stats1" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %o0 = fa4.channel "o_ready0" : !fa4.channel<1> producer <mma> consumer <threads = 128>
      %o1 = fa4.channel "o_ready1" : !fa4.channel<1> producer <mma> consumer <threads = 128>
      %epi = fa4.channel "corr_epi" : !fa4.channel<1> producer <threads = 128> consumer <threads = 1>

      // One warp allocates all 512 TMEM columns for the CTA.
      %kernel_tid = gpu.thread_id x
      %kernel_warp = arith.divui %kernel_tid, %c32 : index
      %first_warp = arith.cmpi eq, %kernel_warp, %c0 : index
      scf.if %first_warp {
        fa4.tmem.alloc 512 columns into %slot : !slot
      }
      fa4.tcgen05.fence before_thread_sync
      gpu.barrier
      fa4.tcgen05.fence after_thread_sync

      fa4.warp_specialize warps 16 {
        fa4.role "softmax0" warps [0, 4) registers 200 {
          %tmem = fa4.tmem.base %slot : !slot -> !fa4.tmem<128x512xf32>
          %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
          %p = fa4.tmem.view %tmem[64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
          %stats = memref.view %smem[%c196608][] : !smem to !stats
          %tid = gpu.thread_id x
          %row = arith.remui %tid, %c128 : index
          %scale = vector.broadcast %scale_log2 : f32 to vector<32xf32>
          %threshold = arith.constant 8.0 : f32
          %ninf = arith.constant 0xFF800000 : f32
          %zero = arith.constant 0.0 : f32
          %one = arith.constant 1.0 : f32
          %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
            %base = arith.muli %it, %nblocks : index
            %final:2 = scf.for %n = %c0 to %nblocks step %c1 iter_args(%m = %ninf, %l = %zero) -> (f32, f32) {
              %k = arith.addi %base, %n : index
              fa4.channel.wait %s0[%k] : !fa4.channel<1>
              %c0v = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c1v = fa4.tmem.load %s[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c2v = fa4.tmem.load %s[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c3v = fa4.tmem.load %s[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              fa4.tcgen05.wait load
              // Scores in log2 units; the row max decides the exponent
              // reference, which moves only when it grew by more than 8.
              %sc0 = arith.mulf %c0v, %scale : vector<32xf32>
              %sc1 = arith.mulf %c1v, %scale : vector<32xf32>
              %sc2 = arith.mulf %c2v, %scale : vector<32xf32>
              %sc3 = arith.mulf %c3v, %scale : vector<32xf32>
              %mx0 = vector.reduction <maximumf>, %sc0 : vector<32xf32> into f32
              %mx1 = vector.reduction <maximumf>, %sc1, %mx0 : vector<32xf32> into f32
              %mx2 = vector.reduction <maximumf>, %sc2, %mx1 : vector<32xf32> into f32
              %tile_max = vector.reduction <maximumf>, %sc3, %mx2 : vector<32xf32> into f32
              %m_new = arith.maximumf %m, %tile_max : f32
              %growth = arith.subf %m_new, %m : f32
              %rescale = arith.cmpf ogt, %growth, %threshold : f32
              %ref = arith.select %rescale, %m_new, %m : f32
              %delta = arith.subf %m, %ref : f32
              %delta_v = vector.broadcast %delta : f32 to vector<1xf32>
              %corr_v = fa4.exp2 %delta_v emulated 0 : vector<1xf32>
              %corr = vector.extract %corr_v[0] : f32 from vector<1xf32>
              %acc_scale = arith.select %rescale, %corr, %one : f32
              // The correction warpgroup rescales O by acc_scale.
              %nb1 = arith.addi %nblocks, %c1 : index
              %sbase = arith.muli %it, %nb1 : index
              %sk = arith.addi %sbase, %n : index
              fa4.channel.acquire %st0[%sk] : !fa4.channel<1>
              memref.store %acc_scale, %stats[%c0, %row] : !stats
              fa4.channel.commit %st0[%sk] : !fa4.channel<1>
              // P = 2^(S - ref) chunk by chunk, in bf16 over the upper half of
              // S: columns [0, 96) release the first PV MMA, [96, 128) the
              // second.
              %ref_v = vector.broadcast %ref : f32 to vector<32xf32>
              %l_scaled = arith.mulf %l, %acc_scale : f32
              %sh0 = arith.subf %sc0, %ref_v : vector<32xf32>
              %pe0 = fa4.exp2 %sh0 emulated 3 : vector<32xf32>
              %ls0 = vector.reduction <add>, %pe0, %l_scaled : vector<32xf32> into f32
              %pb0 = arith.truncf %pe0 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb0, %p[0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              %sh1 = arith.subf %sc1, %ref_v : vector<32xf32>
              %pe1 = fa4.exp2 %sh1 emulated 3 : vector<32xf32>
              %ls1 = vector.reduction <add>, %pe1, %ls0 : vector<32xf32> into f32
              %pb1 = arith.truncf %pe1 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb1, %p[32] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              %sh2 = arith.subf %sc2, %ref_v : vector<32xf32>
              %pe2 = fa4.exp2 %sh2 emulated 3 : vector<32xf32>
              %ls2 = vector.reduction <add>, %pe2, %ls1 : vector<32xf32> into f32
              %pb2 = arith.truncf %pe2 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb2, %p[64] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              fa4.tcgen05.wait store
              fa4.channel.commit %pf0[%k] : !fa4.channel<1>
              %sh3 = arith.subf %sc3, %ref_v : vector<32xf32>
              %pe3 = fa4.exp2 %sh3 emulated 3 : vector<32xf32>
              %ls3 = vector.reduction <add>, %pe3, %ls2 : vector<32xf32> into f32
              %pb3 = arith.truncf %pe3 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb3, %p[96] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              fa4.tcgen05.wait store
              fa4.channel.commit %ps0[%k] : !fa4.channel<1>
              scf.yield %ref, %ls3 : f32, f32
            }
            // The row sum for the epilogue's normalization.
            %nb1 = arith.addi %nblocks, %c1 : index
            %sbase = arith.muli %it, %nb1 : index
            %sk = arith.addi %sbase, %nblocks : index
            fa4.channel.acquire %st0[%sk] : !fa4.channel<1>
            memref.store %final#1, %stats[%c0, %row] : !stats
            fa4.channel.commit %st0[%sk] : !fa4.channel<1>
            %next = arith.addi %it, %c1 : index
            scf.yield %next : index
          }
        }
        fa4.role "softmax1" warps [4, 8) registers 200 {
          %tmem = fa4.tmem.base %slot : !slot -> !fa4.tmem<128x512xf32>
          %s = fa4.tmem.view %tmem[128] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
          %p = fa4.tmem.view %tmem[192] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
          %stats = memref.view %smem[%c196608][] : !smem to !stats
          %tid = gpu.thread_id x
          %row = arith.remui %tid, %c128 : index
          %scale = vector.broadcast %scale_log2 : f32 to vector<32xf32>
          %threshold = arith.constant 8.0 : f32
          %ninf = arith.constant 0xFF800000 : f32
          %zero = arith.constant 0.0 : f32
          %one = arith.constant 1.0 : f32
          %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
            %base = arith.muli %it, %nblocks : index
            %final:2 = scf.for %n = %c0 to %nblocks step %c1 iter_args(%m = %ninf, %l = %zero) -> (f32, f32) {
              %k = arith.addi %base, %n : index
              fa4.channel.wait %s1[%k] : !fa4.channel<1>
              %c0v = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c1v = fa4.tmem.load %s[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c2v = fa4.tmem.load %s[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              %c3v = fa4.tmem.load %s[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
              fa4.tcgen05.wait load
              // Scores in log2 units; the row max decides the exponent
              // reference, which moves only when it grew by more than 8.
              %sc0 = arith.mulf %c0v, %scale : vector<32xf32>
              %sc1 = arith.mulf %c1v, %scale : vector<32xf32>
              %sc2 = arith.mulf %c2v, %scale : vector<32xf32>
              %sc3 = arith.mulf %c3v, %scale : vector<32xf32>
              %mx0 = vector.reduction <maximumf>, %sc0 : vector<32xf32> into f32
              %mx1 = vector.reduction <maximumf>, %sc1, %mx0 : vector<32xf32> into f32
              %mx2 = vector.reduction <maximumf>, %sc2, %mx1 : vector<32xf32> into f32
              %tile_max = vector.reduction <maximumf>, %sc3, %mx2 : vector<32xf32> into f32
              %m_new = arith.maximumf %m, %tile_max : f32
              %growth = arith.subf %m_new, %m : f32
              %rescale = arith.cmpf ogt, %growth, %threshold : f32
              %ref = arith.select %rescale, %m_new, %m : f32
              %delta = arith.subf %m, %ref : f32
              %delta_v = vector.broadcast %delta : f32 to vector<1xf32>
              %corr_v = fa4.exp2 %delta_v emulated 0 : vector<1xf32>
              %corr = vector.extract %corr_v[0] : f32 from vector<1xf32>
              %acc_scale = arith.select %rescale, %corr, %one : f32
              // The correction warpgroup rescales O by acc_scale.
              %nb1 = arith.addi %nblocks, %c1 : index
              %sbase = arith.muli %it, %nb1 : index
              %sk = arith.addi %sbase, %n : index
              fa4.channel.acquire %st1[%sk] : !fa4.channel<1>
              memref.store %acc_scale, %stats[%c1, %row] : !stats
              fa4.channel.commit %st1[%sk] : !fa4.channel<1>
              // P = 2^(S - ref) chunk by chunk, in bf16 over the upper half of
              // S: columns [0, 96) release the first PV MMA, [96, 128) the
              // second.
              %ref_v = vector.broadcast %ref : f32 to vector<32xf32>
              %l_scaled = arith.mulf %l, %acc_scale : f32
              %sh0 = arith.subf %sc0, %ref_v : vector<32xf32>
              %pe0 = fa4.exp2 %sh0 emulated 3 : vector<32xf32>
              %ls0 = vector.reduction <add>, %pe0, %l_scaled : vector<32xf32> into f32
              %pb0 = arith.truncf %pe0 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb0, %p[0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              %sh1 = arith.subf %sc1, %ref_v : vector<32xf32>
              %pe1 = fa4.exp2 %sh1 emulated 3 : vector<32xf32>
              %ls1 = vector.reduction <add>, %pe1, %ls0 : vector<32xf32> into f32
              %pb1 = arith.truncf %pe1 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb1, %p[32] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              %sh2 = arith.subf %sc2, %ref_v : vector<32xf32>
              %pe2 = fa4.exp2 %sh2 emulated 3 : vector<32xf32>
              %ls2 = vector.reduction <add>, %pe2, %ls1 : vector<32xf32> into f32
              %pb2 = arith.truncf %pe2 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb2, %p[64] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              fa4.tcgen05.wait store
              fa4.channel.commit %pf1[%k] : !fa4.channel<1>
              %sh3 = arith.subf %sc3, %ref_v : vector<32xf32>
              %pe3 = fa4.exp2 %sh3 emulated 3 : vector<32xf32>
              %ls3 = vector.reduction <add>, %pe3, %ls2 : vector<32xf32> into f32
              %pb3 = arith.truncf %pe3 : vector<32xf32> to vector<32xbf16>
              fa4.tmem.store %pb3, %p[96] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
              fa4.tcgen05.wait store
              fa4.channel.commit %ps1[%k] : !fa4.channel<1>
              scf.yield %ref, %ls3 : f32, f32
            }
            // The row sum for the epilogue's normalization.
            %nb1 = arith.addi %nblocks, %c1 : index
            %sbase = arith.muli %it, %nb1 : index
            %sk = arith.addi %sbase, %nblocks : index
            fa4.channel.acquire %st1[%sk] : !fa4.channel<1>
            memref.store %final#1, %stats[%c1, %row] : !stats
            fa4.channel.commit %st1[%sk] : !fa4.channel<1>
            %next = arith.addi %it, %c1 : index
            scf.yield %next : index
          }
        }
        fa4.role "correction" warps [8, 12) registers 64 {
          %tmem = fa4.tmem.base %slot : !slot -> !fa4.tmem<128x512xf32>
          %stats = memref.view %smem[%c196608][] : !smem to !stats
          %tid = gpu.thread_id x
          %row = arith.remui %tid, %c128 : index
          %one = arith.constant 1.0 : f32
          %c8 = arith.constant 8 : index
          %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
            %base = arith.muli %it, %nblocks : index
            %nb1 = arith.addi %nblocks, %c1 : index
            %sbase = arith.muli %it, %nb1 : index
            scf.for %n = %c0 to %nblocks step %c1 {
              %k = arith.addi %base, %n : index
              %sk = arith.addi %sbase, %n : index
              fa4.channel.wait %st0[%sk] : !fa4.channel<1>
              %a0 = memref.load %stats[%c0, %row] : !stats
              fa4.channel.release %st0[%sk] : !fa4.channel<1>
              // A warp rescales O only if one of its 32 rows needs it.
              %needs0 = arith.cmpf une, %a0, %one : f32
              %any0 = fa4.warp_any %needs0
              %started0 = arith.cmpi ugt, %n, %c0 : index
              %go0 = arith.andi %any0, %started0 : i1
              scf.if %go0 {
                %o = fa4.tmem.view %tmem[256] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
                %av = vector.broadcast %a0 : f32 to vector<32xf32>
                %oc0 = fa4.tmem.load %o[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os0 = arith.mulf %oc0, %av : vector<32xf32>
                fa4.tmem.store %os0, %o[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc1 = fa4.tmem.load %o[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os1 = arith.mulf %oc1, %av : vector<32xf32>
                fa4.tmem.store %os1, %o[32] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc2 = fa4.tmem.load %o[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os2 = arith.mulf %oc2, %av : vector<32xf32>
                fa4.tmem.store %os2, %o[64] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc3 = fa4.tmem.load %o[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os3 = arith.mulf %oc3, %av : vector<32xf32>
                fa4.tmem.store %os3, %o[96] : vector<32xf32>, !fa4.tmem<128x128xf32>
                fa4.tcgen05.wait store
              }
              fa4.channel.commit %pf0[%k] : !fa4.channel<1>
              fa4.channel.wait %st1[%sk] : !fa4.channel<1>
              %a1 = memref.load %stats[%c1, %row] : !stats
              fa4.channel.release %st1[%sk] : !fa4.channel<1>
              // A warp rescales O only if one of its 32 rows needs it.
              %needs1 = arith.cmpf une, %a1, %one : f32
              %any1 = fa4.warp_any %needs1
              %started1 = arith.cmpi ugt, %n, %c0 : index
              %go1 = arith.andi %any1, %started1 : i1
              scf.if %go1 {
                %o = fa4.tmem.view %tmem[384] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
                %av = vector.broadcast %a1 : f32 to vector<32xf32>
                %oc0 = fa4.tmem.load %o[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os0 = arith.mulf %oc0, %av : vector<32xf32>
                fa4.tmem.store %os0, %o[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc1 = fa4.tmem.load %o[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os1 = arith.mulf %oc1, %av : vector<32xf32>
                fa4.tmem.store %os1, %o[32] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc2 = fa4.tmem.load %o[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os2 = arith.mulf %oc2, %av : vector<32xf32>
                fa4.tmem.store %os2, %o[64] : vector<32xf32>, !fa4.tmem<128x128xf32>
                %oc3 = fa4.tmem.load %o[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
                fa4.tcgen05.wait load
                %os3 = arith.mulf %oc3, %av : vector<32xf32>
                fa4.tmem.store %os3, %o[96] : vector<32xf32>, !fa4.tmem<128x128xf32>
                fa4.tcgen05.wait store
              }
              fa4.channel.commit %pf1[%k] : !fa4.channel<1>
            }
            // Epilogue of Q stage 0: O / row_sum in bf16, written to the
            // staging tile in the TMA's 128-byte swizzle, stored by the
            // store warp.
            fa4.channel.wait %o0[%it] : !fa4.channel<1>
            %fk0 = arith.addi %sbase, %nblocks : index
            fa4.channel.wait %st0[%fk0] : !fa4.channel<1>
            %sum0 = memref.load %stats[%c0, %row] : !stats
            fa4.channel.release %st0[%fk0] : !fa4.channel<1>
            %inv0 = arith.divf %one, %sum0 : f32
            %invv0 = vector.broadcast %inv0 : f32 to vector<32xf32>
            %e0 = arith.addi %it, %it : index
            %ek0 = arith.addi %e0, %c0 : index
            fa4.channel.acquire %epi[%ek0] : !fa4.channel<1>
            %ov0 = fa4.tmem.view %tmem[256] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
            %stage0_0 = memref.view %smem[%c163840][] : !smem to !atom
            %stage1_0 = memref.view %smem[%c180224][] : !smem to !atom
            %swz0 = arith.remui %row, %c8 : index
            %q0_0 = fa4.tmem.load %ov0[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n0_0 = arith.mulf %q0_0, %invv0 : vector<32xf32>
            %b0_0 = arith.truncf %n0_0 : vector<32xf32> to vector<32xbf16>
            %cc00_0 = arith.constant 0 : index
            %pos00_0 = arith.xori %cc00_0, %swz0 : index
            %col00_0 = arith.muli %pos00_0, %c8 : index
            %v00_0 = vector.shuffle %b0_0, %b0_0 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v00_0, %stage0_0[%row, %col00_0] : !atom, vector<8xbf16>
            %cc01_0 = arith.constant 1 : index
            %pos01_0 = arith.xori %cc01_0, %swz0 : index
            %col01_0 = arith.muli %pos01_0, %c8 : index
            %v01_0 = vector.shuffle %b0_0, %b0_0 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v01_0, %stage0_0[%row, %col01_0] : !atom, vector<8xbf16>
            %cc02_0 = arith.constant 2 : index
            %pos02_0 = arith.xori %cc02_0, %swz0 : index
            %col02_0 = arith.muli %pos02_0, %c8 : index
            %v02_0 = vector.shuffle %b0_0, %b0_0 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v02_0, %stage0_0[%row, %col02_0] : !atom, vector<8xbf16>
            %cc03_0 = arith.constant 3 : index
            %pos03_0 = arith.xori %cc03_0, %swz0 : index
            %col03_0 = arith.muli %pos03_0, %c8 : index
            %v03_0 = vector.shuffle %b0_0, %b0_0 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v03_0, %stage0_0[%row, %col03_0] : !atom, vector<8xbf16>
            %q1_0 = fa4.tmem.load %ov0[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n1_0 = arith.mulf %q1_0, %invv0 : vector<32xf32>
            %b1_0 = arith.truncf %n1_0 : vector<32xf32> to vector<32xbf16>
            %cc10_0 = arith.constant 4 : index
            %pos10_0 = arith.xori %cc10_0, %swz0 : index
            %col10_0 = arith.muli %pos10_0, %c8 : index
            %v10_0 = vector.shuffle %b1_0, %b1_0 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v10_0, %stage0_0[%row, %col10_0] : !atom, vector<8xbf16>
            %cc11_0 = arith.constant 5 : index
            %pos11_0 = arith.xori %cc11_0, %swz0 : index
            %col11_0 = arith.muli %pos11_0, %c8 : index
            %v11_0 = vector.shuffle %b1_0, %b1_0 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v11_0, %stage0_0[%row, %col11_0] : !atom, vector<8xbf16>
            %cc12_0 = arith.constant 6 : index
            %pos12_0 = arith.xori %cc12_0, %swz0 : index
            %col12_0 = arith.muli %pos12_0, %c8 : index
            %v12_0 = vector.shuffle %b1_0, %b1_0 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v12_0, %stage0_0[%row, %col12_0] : !atom, vector<8xbf16>
            %cc13_0 = arith.constant 7 : index
            %pos13_0 = arith.xori %cc13_0, %swz0 : index
            %col13_0 = arith.muli %pos13_0, %c8 : index
            %v13_0 = vector.shuffle %b1_0, %b1_0 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v13_0, %stage0_0[%row, %col13_0] : !atom, vector<8xbf16>
            %q2_0 = fa4.tmem.load %ov0[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n2_0 = arith.mulf %q2_0, %invv0 : vector<32xf32>
            %b2_0 = arith.truncf %n2_0 : vector<32xf32> to vector<32xbf16>
            %cc20_0 = arith.constant 0 : index
            %pos20_0 = arith.xori %cc20_0, %swz0 : index
            %col20_0 = arith.muli %pos20_0, %c8 : index
            %v20_0 = vector.shuffle %b2_0, %b2_0 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v20_0, %stage1_0[%row, %col20_0] : !atom, vector<8xbf16>
            %cc21_0 = arith.constant 1 : index
            %pos21_0 = arith.xori %cc21_0, %swz0 : index
            %col21_0 = arith.muli %pos21_0, %c8 : index
            %v21_0 = vector.shuffle %b2_0, %b2_0 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v21_0, %stage1_0[%row, %col21_0] : !atom, vector<8xbf16>
            %cc22_0 = arith.constant 2 : index
            %pos22_0 = arith.xori %cc22_0, %swz0 : index
            %col22_0 = arith.muli %pos22_0, %c8 : index
            %v22_0 = vector.shuffle %b2_0, %b2_0 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v22_0, %stage1_0[%row, %col22_0] : !atom, vector<8xbf16>
            %cc23_0 = arith.constant 3 : index
            %pos23_0 = arith.xori %cc23_0, %swz0 : index
            %col23_0 = arith.muli %pos23_0, %c8 : index
            %v23_0 = vector.shuffle %b2_0, %b2_0 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v23_0, %stage1_0[%row, %col23_0] : !atom, vector<8xbf16>
            %q3_0 = fa4.tmem.load %ov0[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n3_0 = arith.mulf %q3_0, %invv0 : vector<32xf32>
            %b3_0 = arith.truncf %n3_0 : vector<32xf32> to vector<32xbf16>
            %cc30_0 = arith.constant 4 : index
            %pos30_0 = arith.xori %cc30_0, %swz0 : index
            %col30_0 = arith.muli %pos30_0, %c8 : index
            %v30_0 = vector.shuffle %b3_0, %b3_0 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v30_0, %stage1_0[%row, %col30_0] : !atom, vector<8xbf16>
            %cc31_0 = arith.constant 5 : index
            %pos31_0 = arith.xori %cc31_0, %swz0 : index
            %col31_0 = arith.muli %pos31_0, %c8 : index
            %v31_0 = vector.shuffle %b3_0, %b3_0 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v31_0, %stage1_0[%row, %col31_0] : !atom, vector<8xbf16>
            %cc32_0 = arith.constant 6 : index
            %pos32_0 = arith.xori %cc32_0, %swz0 : index
            %col32_0 = arith.muli %pos32_0, %c8 : index
            %v32_0 = vector.shuffle %b3_0, %b3_0 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v32_0, %stage1_0[%row, %col32_0] : !atom, vector<8xbf16>
            %cc33_0 = arith.constant 7 : index
            %pos33_0 = arith.xori %cc33_0, %swz0 : index
            %col33_0 = arith.muli %pos33_0, %c8 : index
            %v33_0 = vector.shuffle %b3_0, %b3_0 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v33_0, %stage1_0[%row, %col33_0] : !atom, vector<8xbf16>
            fa4.fence_proxy_async
            fa4.channel.commit %epi[%ek0] : !fa4.channel<1>
            // Epilogue of Q stage 1: O / row_sum in bf16, written to the
            // staging tile in the TMA's 128-byte swizzle, stored by the
            // store warp.
            fa4.channel.wait %o1[%it] : !fa4.channel<1>
            %fk1 = arith.addi %sbase, %nblocks : index
            fa4.channel.wait %st1[%fk1] : !fa4.channel<1>
            %sum1 = memref.load %stats[%c1, %row] : !stats
            fa4.channel.release %st1[%fk1] : !fa4.channel<1>
            %inv1 = arith.divf %one, %sum1 : f32
            %invv1 = vector.broadcast %inv1 : f32 to vector<32xf32>
            %e1 = arith.addi %it, %it : index
            %ek1 = arith.addi %e1, %c1 : index
            fa4.channel.acquire %epi[%ek1] : !fa4.channel<1>
            %ov1 = fa4.tmem.view %tmem[384] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
            %stage0_1 = memref.view %smem[%c163840][] : !smem to !atom
            %stage1_1 = memref.view %smem[%c180224][] : !smem to !atom
            %swz1 = arith.remui %row, %c8 : index
            %q0_1 = fa4.tmem.load %ov1[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n0_1 = arith.mulf %q0_1, %invv1 : vector<32xf32>
            %b0_1 = arith.truncf %n0_1 : vector<32xf32> to vector<32xbf16>
            %cc00_1 = arith.constant 0 : index
            %pos00_1 = arith.xori %cc00_1, %swz1 : index
            %col00_1 = arith.muli %pos00_1, %c8 : index
            %v00_1 = vector.shuffle %b0_1, %b0_1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v00_1, %stage0_1[%row, %col00_1] : !atom, vector<8xbf16>
            %cc01_1 = arith.constant 1 : index
            %pos01_1 = arith.xori %cc01_1, %swz1 : index
            %col01_1 = arith.muli %pos01_1, %c8 : index
            %v01_1 = vector.shuffle %b0_1, %b0_1 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v01_1, %stage0_1[%row, %col01_1] : !atom, vector<8xbf16>
            %cc02_1 = arith.constant 2 : index
            %pos02_1 = arith.xori %cc02_1, %swz1 : index
            %col02_1 = arith.muli %pos02_1, %c8 : index
            %v02_1 = vector.shuffle %b0_1, %b0_1 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v02_1, %stage0_1[%row, %col02_1] : !atom, vector<8xbf16>
            %cc03_1 = arith.constant 3 : index
            %pos03_1 = arith.xori %cc03_1, %swz1 : index
            %col03_1 = arith.muli %pos03_1, %c8 : index
            %v03_1 = vector.shuffle %b0_1, %b0_1 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v03_1, %stage0_1[%row, %col03_1] : !atom, vector<8xbf16>
            %q1_1 = fa4.tmem.load %ov1[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n1_1 = arith.mulf %q1_1, %invv1 : vector<32xf32>
            %b1_1 = arith.truncf %n1_1 : vector<32xf32> to vector<32xbf16>
            %cc10_1 = arith.constant 4 : index
            %pos10_1 = arith.xori %cc10_1, %swz1 : index
            %col10_1 = arith.muli %pos10_1, %c8 : index
            %v10_1 = vector.shuffle %b1_1, %b1_1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v10_1, %stage0_1[%row, %col10_1] : !atom, vector<8xbf16>
            %cc11_1 = arith.constant 5 : index
            %pos11_1 = arith.xori %cc11_1, %swz1 : index
            %col11_1 = arith.muli %pos11_1, %c8 : index
            %v11_1 = vector.shuffle %b1_1, %b1_1 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v11_1, %stage0_1[%row, %col11_1] : !atom, vector<8xbf16>
            %cc12_1 = arith.constant 6 : index
            %pos12_1 = arith.xori %cc12_1, %swz1 : index
            %col12_1 = arith.muli %pos12_1, %c8 : index
            %v12_1 = vector.shuffle %b1_1, %b1_1 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v12_1, %stage0_1[%row, %col12_1] : !atom, vector<8xbf16>
            %cc13_1 = arith.constant 7 : index
            %pos13_1 = arith.xori %cc13_1, %swz1 : index
            %col13_1 = arith.muli %pos13_1, %c8 : index
            %v13_1 = vector.shuffle %b1_1, %b1_1 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v13_1, %stage0_1[%row, %col13_1] : !atom, vector<8xbf16>
            %q2_1 = fa4.tmem.load %ov1[64] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n2_1 = arith.mulf %q2_1, %invv1 : vector<32xf32>
            %b2_1 = arith.truncf %n2_1 : vector<32xf32> to vector<32xbf16>
            %cc20_1 = arith.constant 0 : index
            %pos20_1 = arith.xori %cc20_1, %swz1 : index
            %col20_1 = arith.muli %pos20_1, %c8 : index
            %v20_1 = vector.shuffle %b2_1, %b2_1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v20_1, %stage1_1[%row, %col20_1] : !atom, vector<8xbf16>
            %cc21_1 = arith.constant 1 : index
            %pos21_1 = arith.xori %cc21_1, %swz1 : index
            %col21_1 = arith.muli %pos21_1, %c8 : index
            %v21_1 = vector.shuffle %b2_1, %b2_1 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v21_1, %stage1_1[%row, %col21_1] : !atom, vector<8xbf16>
            %cc22_1 = arith.constant 2 : index
            %pos22_1 = arith.xori %cc22_1, %swz1 : index
            %col22_1 = arith.muli %pos22_1, %c8 : index
            %v22_1 = vector.shuffle %b2_1, %b2_1 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v22_1, %stage1_1[%row, %col22_1] : !atom, vector<8xbf16>
            %cc23_1 = arith.constant 3 : index
            %pos23_1 = arith.xori %cc23_1, %swz1 : index
            %col23_1 = arith.muli %pos23_1, %c8 : index
            %v23_1 = vector.shuffle %b2_1, %b2_1 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v23_1, %stage1_1[%row, %col23_1] : !atom, vector<8xbf16>
            %q3_1 = fa4.tmem.load %ov1[96] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            fa4.tcgen05.wait load
            %n3_1 = arith.mulf %q3_1, %invv1 : vector<32xf32>
            %b3_1 = arith.truncf %n3_1 : vector<32xf32> to vector<32xbf16>
            %cc30_1 = arith.constant 4 : index
            %pos30_1 = arith.xori %cc30_1, %swz1 : index
            %col30_1 = arith.muli %pos30_1, %c8 : index
            %v30_1 = vector.shuffle %b3_1, %b3_1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xbf16>, vector<32xbf16>
            vector.store %v30_1, %stage1_1[%row, %col30_1] : !atom, vector<8xbf16>
            %cc31_1 = arith.constant 5 : index
            %pos31_1 = arith.xori %cc31_1, %swz1 : index
            %col31_1 = arith.muli %pos31_1, %c8 : index
            %v31_1 = vector.shuffle %b3_1, %b3_1 [8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
            vector.store %v31_1, %stage1_1[%row, %col31_1] : !atom, vector<8xbf16>
            %cc32_1 = arith.constant 6 : index
            %pos32_1 = arith.xori %cc32_1, %swz1 : index
            %col32_1 = arith.muli %pos32_1, %c8 : index
            %v32_1 = vector.shuffle %b3_1, %b3_1 [16, 17, 18, 19, 20, 21, 22, 23] : vector<32xbf16>, vector<32xbf16>
            vector.store %v32_1, %stage1_1[%row, %col32_1] : !atom, vector<8xbf16>
            %cc33_1 = arith.constant 7 : index
            %pos33_1 = arith.xori %cc33_1, %swz1 : index
            %col33_1 = arith.muli %pos33_1, %c8 : index
            %v33_1 = vector.shuffle %b3_1, %b3_1 [24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
            vector.store %v33_1, %stage1_1[%row, %col33_1] : !atom, vector<8xbf16>
            fa4.fence_proxy_async
            fa4.channel.commit %epi[%ek1] : !fa4.channel<1>
            %next = arith.addi %it, %c1 : index
            scf.yield %next : index
          }
        }
        fa4.role "mma" warps [12, 13) registers 48 {
          %tmem = fa4.tmem.base %slot : !slot -> !fa4.tmem<128x512xf32>
          %false = arith.constant false
          %leader = fa4.elect
          scf.if %leader {
            %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
              %base = arith.muli %it, %nblocks : index
              %q_first = arith.addi %it, %it : index
              %q_second = arith.addi %q_first, %c1 : index
              fa4.channel.wait %q[%q_first] : !fa4.channel<2>
              fa4.channel.wait %q[%q_second] : !fa4.channel<2>
              %qs0 = arith.remui %q_first, %c2 : index
              %qoff0 = arith.muli %qs0, %c32768 : index
              %qt0 = memref.view %smem[%qoff0][] : !smem to !tile
              %s0t = fa4.tmem.view %tmem[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
              %pa0t = fa4.tmem.view %tmem[64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x96xbf16>
              %pb0t = fa4.tmem.view %tmem[112] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x32xbf16>
              %o0t = fa4.tmem.view %tmem[256] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
              %qs1 = arith.remui %q_second, %c2 : index
              %qoff1 = arith.muli %qs1, %c32768 : index
              %qt1 = memref.view %smem[%qoff1][] : !smem to !tile
              %s1t = fa4.tmem.view %tmem[128] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
              %pa1t = fa4.tmem.view %tmem[192] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x96xbf16>
              %pb1t = fa4.tmem.view %tmem[240] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x32xbf16>
              %o1t = fa4.tmem.view %tmem[384] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
              // Per KV block: the PVs of the previous block, then this block's
              // QK^T, for each Q stage; tcgen05 executes them in order, so S_j
              // is overwritten only after the PV that read P_j.
              scf.for %n = %c0 to %nblocks step %c1 {
                %k = arith.addi %base, %n : index
                %kv2 = arith.addi %k, %k : index
                %kvs = arith.remui %kv2, %c3 : index
                %kvoff0 = arith.muli %kvs, %c32768 : index
                %kvoff = arith.addi %kvoff0, %c65536 : index
                %kt = memref.view %smem[%kvoff][] : !smem to !tile
                fa4.channel.wait %kv[%kv2] : !fa4.channel<3>
                %prev = arith.subi %k, %c1 : index
                %vk = arith.subi %kv2, %c1 : index
                %vs = arith.remui %vk, %c3 : index
                %voff0 = arith.muli %vs, %c32768 : index
                %voff = arith.addi %voff0, %c65536 : index
                %vt = memref.view %smem[%voff][] : !smem to !tile
                %va = memref.subview %vt[0, 0, 0] [2, 96, 64] [1, 1, 1] : !tile to memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>
                %vb = memref.subview %vt[0, 96, 0] [2, 32, 64] [1, 1, 1] : !tile to memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>
                %started = arith.cmpi ugt, %n, %c0 : index
                %accumulate = arith.cmpi ugt, %n, %c1 : index
                scf.if %started {
                  fa4.channel.wait %pf0[%prev] : !fa4.channel<1>
                  fa4.mma %pa0t, %va, %o0t, %accumulate b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
                  fa4.channel.wait %ps0[%prev] : !fa4.channel<1>
                  fa4.mma %pb0t, %vb, %o0t, %true b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
                }
                fa4.mma %qt0, %kt, %s0t, %false b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
                fa4.channel.commit %s0[%k] : !fa4.channel<1>
                scf.if %started {
                  fa4.channel.wait %pf1[%prev] : !fa4.channel<1>
                  fa4.mma %pa1t, %va, %o1t, %accumulate b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
                  fa4.channel.wait %ps1[%prev] : !fa4.channel<1>
                  fa4.mma %pb1t, %vb, %o1t, %true b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
                }
                fa4.mma %qt1, %kt, %s1t, %false b_major(k) : !tile, !tile, !fa4.tmem<128x128xf32>
                fa4.channel.commit %s1[%k] : !fa4.channel<1>
                fa4.channel.release %kv[%kv2] : !fa4.channel<3>
                scf.if %started {
                  fa4.channel.release %kv[%vk] : !fa4.channel<3>
                }
                %vnext = arith.addi %kv2, %c1 : index
                fa4.channel.wait %kv[%vnext] : !fa4.channel<3>
              }
              // The last block's PVs, then O is complete.
              %last = arith.addi %base, %nblocks : index
              %lastk = arith.subi %last, %c1 : index
              %lkv2 = arith.addi %lastk, %lastk : index
              %lv = arith.addi %lkv2, %c1 : index
              %lvs = arith.remui %lv, %c3 : index
              %lvoff0 = arith.muli %lvs, %c32768 : index
              %lvoff = arith.addi %lvoff0, %c65536 : index
              %lvt = memref.view %smem[%lvoff][] : !smem to !tile
              %lva = memref.subview %lvt[0, 0, 0] [2, 96, 64] [1, 1, 1] : !tile to memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>
              %lvb = memref.subview %lvt[0, 96, 0] [2, 32, 64] [1, 1, 1] : !tile to memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>
              %lacc = arith.cmpi ugt, %nblocks, %c1 : index
              fa4.channel.wait %pf0[%lastk] : !fa4.channel<1>
              fa4.mma %pa0t, %lva, %o0t, %lacc b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
              fa4.channel.wait %ps0[%lastk] : !fa4.channel<1>
              fa4.mma %pb0t, %lvb, %o0t, %true b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
              fa4.channel.commit %o0[%it] : !fa4.channel<1>
              fa4.channel.wait %pf1[%lastk] : !fa4.channel<1>
              fa4.mma %pa1t, %lva, %o1t, %lacc b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16, strided<[8192, 64, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
              fa4.channel.wait %ps1[%lastk] : !fa4.channel<1>
              fa4.mma %pb1t, %lvb, %o1t, %true b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16, strided<[8192, 64, 1], offset: 6144>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
              fa4.channel.commit %o1[%it] : !fa4.channel<1>
              fa4.channel.release %kv[%lv] : !fa4.channel<3>
              fa4.channel.release %q[%q_first] : !fa4.channel<2>
              fa4.channel.release %q[%q_second] : !fa4.channel<2>
              %next = arith.addi %it, %c1 : index
              scf.yield %next : index
            }
          }
        }
        fa4.role "load" warps [13, 14) registers 48 {
          %leader = fa4.elect
          scf.if %leader {
            %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
              %mpair = arith.remui %t, %mpairs : index
              %bh = arith.divui %t, %mpairs : index
              %h = arith.remui %bh, %c16 : index
              %b = arith.divui %bh, %c16 : index
              %base = arith.muli %it, %nblocks : index
              %m0 = arith.muli %mpair, %c256 : index
              %qk0a = arith.addi %it, %it : index
              %qk0 = arith.addi %qk0a, %c0 : index
              %qrow0 = arith.addi %m0, %c0 : index
              %qs0 = arith.remui %qk0, %c2 : index
              %qoff0 = arith.muli %qs0, %c32768 : index
              %qoffb0 = arith.addi %qoff0, %c16384 : index
              %qa0 = memref.view %smem[%qoff0][] : !smem to !box
              %qb0 = memref.view %smem[%qoffb0][] : !smem to !box
              fa4.channel.acquire %q[%qk0] : !fa4.channel<2>
              fa4.tma.load %qd[%c0, %h, %qrow0, %b] into %qa0 for %q[%qk0] : !desc, !box, !fa4.channel<2>
              fa4.tma.load %qd[%c64, %h, %qrow0, %b] into %qb0 for %q[%qk0] : !desc, !box, !fa4.channel<2>
              fa4.channel.commit %q[%qk0] : !fa4.channel<2>
              %qk1a = arith.addi %it, %it : index
              %qk1 = arith.addi %qk1a, %c1 : index
              %qrow1 = arith.addi %m0, %c128 : index
              %qs1 = arith.remui %qk1, %c2 : index
              %qoff1 = arith.muli %qs1, %c32768 : index
              %qoffb1 = arith.addi %qoff1, %c16384 : index
              %qa1 = memref.view %smem[%qoff1][] : !smem to !box
              %qb1 = memref.view %smem[%qoffb1][] : !smem to !box
              fa4.channel.acquire %q[%qk1] : !fa4.channel<2>
              fa4.tma.load %qd[%c0, %h, %qrow1, %b] into %qa1 for %q[%qk1] : !desc, !box, !fa4.channel<2>
              fa4.tma.load %qd[%c64, %h, %qrow1, %b] into %qb1 for %q[%qk1] : !desc, !box, !fa4.channel<2>
              fa4.channel.commit %q[%qk1] : !fa4.channel<2>
              scf.for %n = %c0 to %nblocks step %c1 {
                %k = arith.addi %base, %n : index
                %kvrow = arith.muli %n, %c128 : index
                %x0a = arith.addi %k, %k : index
                %x0 = arith.addi %x0a, %c0 : index
                %xs0 = arith.remui %x0, %c3 : index
                %xo0a = arith.muli %xs0, %c32768 : index
                %xo0 = arith.addi %xo0a, %c65536 : index
                %xob0 = arith.addi %xo0, %c16384 : index
                %xa0 = memref.view %smem[%xo0][] : !smem to !box
                %xb0 = memref.view %smem[%xob0][] : !smem to !box
                fa4.channel.acquire %kv[%x0] : !fa4.channel<3>
                fa4.tma.load %kd[%c0, %h, %kvrow, %b] into %xa0 for %kv[%x0] : !desc, !box, !fa4.channel<3>
                fa4.tma.load %kd[%c64, %h, %kvrow, %b] into %xb0 for %kv[%x0] : !desc, !box, !fa4.channel<3>
                fa4.channel.commit %kv[%x0] : !fa4.channel<3>
                %x1a = arith.addi %k, %k : index
                %x1 = arith.addi %x1a, %c1 : index
                %xs1 = arith.remui %x1, %c3 : index
                %xo1a = arith.muli %xs1, %c32768 : index
                %xo1 = arith.addi %xo1a, %c65536 : index
                %xob1 = arith.addi %xo1, %c16384 : index
                %xa1 = memref.view %smem[%xo1][] : !smem to !box
                %xb1 = memref.view %smem[%xob1][] : !smem to !box
                fa4.channel.acquire %kv[%x1] : !fa4.channel<3>
                fa4.tma.load %vd[%c0, %h, %kvrow, %b] into %xa1 for %kv[%x1] : !desc, !box, !fa4.channel<3>
                fa4.tma.load %vd[%c64, %h, %kvrow, %b] into %xb1 for %kv[%x1] : !desc, !box, !fa4.channel<3>
                fa4.channel.commit %kv[%x1] : !fa4.channel<3>
              }
              %next = arith.addi %it, %c1 : index
              scf.yield %next : index
            }
          }
        }
        fa4.role "store" warps [14, 15) registers 48 {
          %leader = fa4.elect
          scf.if %leader {
            %stage0 = memref.view %smem[%c163840][] : !smem to !box
            %stage1 = memref.view %smem[%c180224][] : !smem to !box
            %tiles_done = scf.for %t = %cta to %tiles step %grid iter_args(%it = %c0) -> (index) {
              %mpair = arith.remui %t, %mpairs : index
              %bh = arith.divui %t, %mpairs : index
              %h = arith.remui %bh, %c16 : index
              %b = arith.divui %bh, %c16 : index
              %m0 = arith.muli %mpair, %c256 : index
              %ek0a = arith.addi %it, %it : index
              %ek0 = arith.addi %ek0a, %c0 : index
              %orow0 = arith.addi %m0, %c0 : index
              fa4.channel.wait %epi[%ek0] : !fa4.channel<1>
              nvgpu.tma.async.store %stage0 to %od[%c0, %h, %orow0, %b] : !box -> !desc
              nvgpu.tma.async.store %stage1 to %od[%c64, %h, %orow0, %b] : !box -> !desc
              fa4.tma.store_commit
              fa4.tma.store_wait 0 read
              fa4.channel.release %epi[%ek0] : !fa4.channel<1>
              %ek1a = arith.addi %it, %it : index
              %ek1 = arith.addi %ek1a, %c1 : index
              %orow1 = arith.addi %m0, %c128 : index
              fa4.channel.wait %epi[%ek1] : !fa4.channel<1>
              nvgpu.tma.async.store %stage0 to %od[%c0, %h, %orow1, %b] : !box -> !desc
              nvgpu.tma.async.store %stage1 to %od[%c64, %h, %orow1, %b] : !box -> !desc
              fa4.tma.store_commit
              fa4.tma.store_wait 0 read
              fa4.channel.release %epi[%ek1] : !fa4.channel<1>
              %next = arith.addi %it, %c1 : index
              scf.yield %next : index
            }
            fa4.tma.store_wait 0
          }
        }
      }

      fa4.tcgen05.fence before_thread_sync
      gpu.barrier
      fa4.tcgen05.fence after_thread_sync
      scf.if %first_warp {
        %tmem = fa4.tmem.base %slot : !slot -> !fa4.tmem<128x512xf32>
        fa4.tmem.dealloc %tmem : !fa4.tmem<128x512xf32>
      }
      gpu.return
    }
  }
}
