// RUN: fa4-opt %s -split-input-file --fa4-plan --fa4-tile --fa4-specialize | FileCheck %s
// One Q tile per work tile, with the loop over Q tiles folded away by
// -canonicalize: still the FA4 program.
// RUN: fa4-opt %s -split-input-file --fa4-plan="q-stages=1" --fa4-tile -canonicalize --fa4-specialize | FileCheck %s --check-prefix=ONE
// ONE-LABEL: gpu.func @mha_attention
// ONE-SAME: qStages = 1,
// ONE: fa4.role "softmax0"
// ONE-NOT: fa4.role "softmax1"
// ONE: fa4.role "correction"

// MHA, bf16, head dim 128: the FA4 CTA of the default plan.
// CHECK-LABEL: func.func @mha
// CHECK-NOT: fa4.attention
// The launch carries the manifest of what the shape and plan decide: 512
// threads, the TMA boxes. Shared memory, TMEM, barriers and roles are
// recorded on the kernel by the passes that decide them.
// CHECK: fa4.launch @mha_attention::@mha_attention(%arg0, %arg1, %arg2, %arg3)
// CHECK-SAME: block = [512, 1, 1]
// CHECK-NOT: dynamic_smem_bytes
// CHECK-NOT: named_barriers
// CHECK-SAME: tensor_maps = [{box = [64, 1, 128, 1], element = "bf16", oob_fill = "zero", operand = "query", operand_index = 0 : i64, swizzle = "128B"}
// CHECK-NOT: tmem_columns
// One gpu.module per kernel, both named after the function.
// CHECK: gpu.module @mha_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">]
// Q, K, V, O descriptors (one 128 x 64 box per swizzle atom), batch, Sq, Skv,
// scale * log2(e). Shared-memory buffers in bytes, not yet placed: Q stages
// (2 x 32K), the K/V ring (3 x 32K), the O staging tile (32K), statistics
// (2 stages x 2 floats x 128 rows).
// CHECK: gpu.func @mha_attention(%{{.*}}: !nvgpu.tensormap.descriptor<tensor = memref<1x128x1x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK-SAME: %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f32)
// CHECK-SAME: workgroup(%{{.*}} : memref<65536xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "q"},
// CHECK-SAME: %{{.*}} : memref<98304xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "kv"},
// CHECK-SAME: %{{.*}} : memref<32768xi8, #gpu.address_space<workgroup>> {fa4.alignment = 1024 : i64, fa4.name = "o_staging"},
// CHECK-SAME: %{{.*}} : memref<2048xi8, #gpu.address_space<workgroup>> {fa4.alignment = 16 : i64, fa4.name = "statistics"})
// CHECK-SAME: kernel
// CHECK-SAME: fa4.plan = #fa4.plan<arch = sm_100a
// The hand-offs and who signals them.
// CHECK-DAG: fa4.channel "q" : !fa4.channel<2> producer <tma> consumer <mma>
// CHECK-DAG: fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
// CHECK-DAG: fa4.channel "s_ready0" : !fa4.channel<1> producer <mma> consumer <threads = 128>
// CHECK-DAG: fa4.channel "p_o_rescale0" : !fa4.channel<1> producer <threads = 256> consumer <mma>
// CHECK-DAG: fa4.channel "p_ready_2_0" : !fa4.channel<1> producer <threads = 128> consumer <mma>
// CHECK-DAG: fa4.channel "softmax_corr0" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 1 : i32}
// CHECK-DAG: fa4.channel "softmax_corr1" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 2 : i32}
// CHECK-DAG: fa4.channel "o_ready0" : !fa4.channel<1> producer <mma> consumer <threads = 128>
// CHECK-DAG: fa4.channel "s_ready1"
// CHECK-DAG: fa4.channel "corr_epi" : !fa4.channel<1> producer <threads = 128> consumer <threads = 1>
// TMEM buffers per Q stage, not yet placed: S and O in f32, P in bf16.
// CHECK: %[[S0:.*]] = fa4.tmem.buffer "s0" : !fa4.tmem<128x128xf32>
// CHECK: %[[S1:.*]] = fa4.tmem.buffer "s1" : !fa4.tmem<128x128xf32>
// CHECK: %[[O0:.*]] = fa4.tmem.buffer "o0" : !fa4.tmem<128x128xf32>
// CHECK: %[[O1:.*]] = fa4.tmem.buffer "o1" : !fa4.tmem<128x128xf32>
// CHECK: %[[P0:.*]] = fa4.tmem.buffer "p0" : !fa4.tmem<128x128xbf16>
// CHECK-NOT: fa4.tmem.alloc
// Roles and register budgets.
// CHECK: fa4.warp_specialize warps 16 {
// CHECK: fa4.role "softmax0" warps [0, 4) registers 200 {
// Softmax reads S, then writes P.
// CHECK: fa4.tmem.load %[[S0]][0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
// CHECK: fa4.exp2 %{{.*}} emulated 3 : vector<32xf32>
// CHECK: fa4.tmem.store %{{.*}}, %[[P0]][0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
// CHECK: fa4.role "softmax1" warps [4, 8) registers 200 {
// CHECK: fa4.tmem.load %[[S1]][0]
// CHECK: fa4.role "correction" warps [8, 12) registers 64 {
// CHECK: nvvm.vote.sync any %{{.*}}, %{{.*}} -> i1
// CHECK: fa4.tmem.load %[[O0]][0] : !fa4.tmem<128x128xf32> -> vector<16xf32>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: fa4.role "mma" warps [12, 13) registers 48 {
// PV in two parts: P[0, 96) and P[96, 128) (columns 48..64 of P).
// CHECK-DAG: fa4.tmem.view %[[P0]][0] : !fa4.tmem<128x128xbf16> -> !fa4.tmem<128x96xbf16>
// CHECK-DAG: fa4.tmem.view %[[P0]][48] : !fa4.tmem<128x128xbf16> -> !fa4.tmem<128x32xbf16>
// CHECK: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x96xbf16>, memref<2x96x64xbf16
// CHECK: fa4.mma {{.*}} b_major(mn) : !fa4.tmem<128x32xbf16>, memref<2x32x64xbf16
// CHECK: fa4.mma {{.*}} b_major(k) : memref<2x128x64xbf16
// CHECK: fa4.role "load" warps [13, 14) registers 48 {
// CHECK-COUNT-2: fa4.tma.load %arg0
// CHECK: fa4.role "store" warps [14, 15) registers 48 {
// CHECK: nvgpu.tma.async.store
// CHECK-NOT: fa4.tmem.dealloc
func.func @mha(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x16x128xbf16>,
               %v: memref<?x?x16x128xbf16>, %o: memref<?x?x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>)
  return
}

// -----

// GQA 4, f16, head dim 64: each 128-row tile holds 32 query positions x 4
// heads (the TMA box of Q and O is [1, 32, 4, 64]); K/V boxes are one head.
// One 64-column atom per tile (one load per Q stage, K and V); O and P
// buffers of 64 columns.
// CHECK-LABEL: func.func @gqa
// CHECK: fa4.launch @gqa_attention::@gqa_attention
// CHECK-SAME: box = [64, 4, 32, 1], element = "f16"
// CHECK-LABEL: gpu.func @gqa_attention
// CHECK-SAME: (%arg0: !nvgpu.tensormap.descriptor<tensor = memref<1x32x4x64xf16, #gpu.address_space<workgroup>>
// CHECK-SAME: %arg1: !nvgpu.tensormap.descriptor<tensor = memref<1x128x1x64xf16, #gpu.address_space<workgroup>>
// CHECK-SAME: %arg3: !nvgpu.tensormap.descriptor<tensor = memref<1x32x4x64xf16, #gpu.address_space<workgroup>>
// CHECK-SAME: gqaPack = 4,
// CHECK: fa4.tmem.buffer "o1" : !fa4.tmem<128x64xf32>
// CHECK: fa4.tmem.buffer "p1" : !fa4.tmem<128x128xf16>
// CHECK: fa4.role "load"
// CHECK-COUNT-2: fa4.tma.load %arg0
// CHECK-NOT: fa4.tma.load %arg0
// CHECK: fa4.tma.load %arg1
// CHECK-NOT: fa4.tma.load %arg1
// CHECK: fa4.tma.load %arg2
func.func @gqa(%q: memref<?x?x32x64xf16>, %k: memref<?x?x8x64xf16>,
               %v: memref<?x?x8x64xf16>, %o: memref<?x?x32x64xf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xf16>, memref<?x?x8x64xf16>, memref<?x?x8x64xf16>)
                outs(%o : memref<?x?x32x64xf16>)
  return
}

// -----

// Causal (bottom-right aligned): the LPT order walks query blocks from the
// last; a tile visits only the KV blocks up to the diagonal of its last row;
// each softmax row masks keys past its own diagonal.
// The LSE: one extra kernel argument (a global pointer), written per row.
// CHECK-LABEL: func.func @causal
// CHECK: fa4.launch @causal_attention::@causal_attention
// CHECK-SAME: kind = "pointer", name = "lse"
// CHECK-LABEL: gpu.func @causal_attention
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: !llvm.ptr<1>)
// CHECK-SAME: scheduler = lpt
// CHECK-SAME: pvSplit = 64,
// CHECK: fa4.role "softmax0"
// Tile order: groups of 8 (batch, head) pairs, each group's query blocks
// from the last: pair = 8 g + within mod size, query block =
// tiles_per_head - 1 - within / size.
// CHECK: %[[GROUP_TILES:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[WITHIN:.*]] = arith.remui %{{.*}}, %[[GROUP_TILES]]
// CHECK: %[[SIZE:.*]] = arith.minui %c8
// CHECK: %[[FROM_LAST:.*]] = arith.divui %[[WITHIN]], %[[SIZE]]
// CHECK: arith.subi %{{.*}}, %[[FROM_LAST]]
// The row's key limit: min(max(position + 1 + Skv - Sq, 0), Skv).
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: scf.for
// CHECK: arith.cmpi slt
// The correction warpgroup writes LSE = (max + lg2(sum)) * ln 2 per row.
// CHECK: fa4.role "correction"
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: fa4.role "mma"
// A tile without KV blocks (rows before the first key) skips the last PVs
// but still signals O ready.
// CHECK: scf.if
// CHECK: fa4.channel.release
// CHECK: fa4.channel.commit
func.func @causal(%q: memref<?x?x4x64xbf16>, %k: memref<?x?x4x64xbf16>,
                  %v: memref<?x?x4x64xbf16>, %o: memref<?x?x4x64xbf16>,
                  %lse: memref<?x4x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>, memref<?x?x4x64xbf16>)
                outs(%o : memref<?x?x4x64xbf16>) lse(%lse : memref<?x4x?xf32>) {causal}
  return
}

// -----

// A tiled program edited by hand: the LPT order and 5 of 16 exponentials
// emulated. fa4-specialize reads both from the program, not from the plan.
// CHECK-LABEL: gpu.module @f_attention
// CHECK: gpu.func @f_attention(%{{.*}}: !nvgpu.tensormap.descriptor
// CHECK-SAME: scheduler = lpt
// CHECK-SAME: emulatedExp2 = 5,
// CHECK: fa4.role "softmax0"
// CHECK: arith.minui %c8
// CHECK: fa4.exp2 %{{.*}} emulated 5 : vector<32xf32>
// CHECK-NOT: fa4.tile.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler lpt head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 5 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}
