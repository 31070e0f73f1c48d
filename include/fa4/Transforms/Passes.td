//===- Passes.td - fa4 passes ------------------------------*- tablegen -*-===//

#ifndef FA4_TRANSFORMS_PASSES_TD
#define FA4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FA4Plan : Pass<"fa4-plan"> {
  let summary = "Choose the kernel plan of every fa4.attention";
  let description = [{
    Attaches a `#fa4.plan` to every `fa4.attention` that has none: the target
    architecture, tile sizes, Q and K/V pipeline depths, GQA packing, the
    work-tile scheduler, per-role register budgets, the exp2 emulation split,
    the PV MMA split and the rescale threshold. Later passes read the plan
    and never re-derive these decisions. An op that already carries a plan
    (for example one edited by hand) is left as it is.

    Defaults on sm_100a follow the FlashAttention-4 forward kernel: 128x128
    tiles, 2 Q stages, 3 K/V stages, registers 200 (softmax) / 64
    (correction) / 48 (load and MMA), 3 of 16 exponentials emulated, PV split
    96+32 (non-causal) or 64+64 (causal), rescale threshold 8, `linear`
    scheduler (non-causal) or `lpt` (causal), and as many query heads of
    one KV head packed into the 128 rows of a Q tile as divide both the GQA
    ratio and the rows (all of them for 2, 4, 8, ...; none for 7). Sliding
    windows and softcap keep the plan of the same shape without them, but
    a causal window is scheduled `lpt` on sm_90a too. Defaults on sm_90a follow
    FlashAttention-3: a 64-row Q tile per consumer warpgroup (qStages 2),
    128-key blocks, a ring of 4 K/V tiles, registers 232 (consumers) / 40
    (load and store), MUFU exp2 only, rescale threshold 8, `linear`
    scheduler (non-causal) or `paired` (causal; `lpt` with packed query
    heads past head dim 192, where pairs spill); correctionRegs and pvSplit
    are 0 there; past head dim 128, 80-key blocks and a ring of 4 K/V
    tiles up to head dim 192, past it 48-key blocks and a ring of 4 (16-bit
    and not paged; FP8 and paged K/V keep 64 keys and a ring of 3; score
    regions and hi_lo 64 up to 192).
    Up to head dim 64 (16-bit, no window, softcap, rotary embedding,
    regions, packed sequences, pages, split or hi_lo, where a third
    consumer's registers spill or the split fills the SMs) three consumer
    warpgroups, FA3's 192-row tile (`qStages = 3`), at registers 160 / 32,
    with 112-key blocks when causal (128-key ones spill 16 bytes under the
    paired scheduler); `q-stages=3` asks for them elsewhere on sm_90a.
    `shared-key=N` (sm_100a, N = 2 or 4; never chosen by default) gives a
    Q stage 128 / N rows and lets N threads of its softmax warpgroup share
    each row: each takes 1 / N of every KV block's keys through the
    weight-stationary MMA (`tcgen05.mma.ws`, M = 32 or 64), they agree on
    the row maximum through shared memory every block, and P goes to the
    PV MMA through shared memory (the Mojo FA4 shared-key mode: 1 / N of
    the softmax work per key for decode-sized tiles; Dv 64, 128 or 256, the
    .ws MMA's N).
    `family=decode` (sm_100a; never chosen by default) builds the swap-AB
    decode kernel of the seeds: the KV block's 128 keys are the MMA's M and
    a Q tile of `block-m` rows (16 or 32, a multiple of the packed heads:
    the largest divisor of the GQA ratio that divides 32; by default 16
    where a static query's positions times the packed heads fit them, else
    32, and 16 where 32 rows leave no room for two K/V slots) its N; one Q
    stage, Dv 128 or 256, registers 240 / 56 (no correction warpgroup),
    MUFU exp2 and tanh only, no softcap ceiling, the deepest K/V ring up to
    4 that fits.
    On sm_100a two Q stages where their S and O fit the 512 TMEM columns
    (head dims up to 128), one above, and
    64-key blocks past head dim 192 (16-bit), where 128-key K/V slots do
    not fit shared memory beside Q and the O staging; on both, the
    deepest K/V ring up to the default that fits shared memory.
    On sm_90a one Q stage where a static query fits one consumer's tile
    (decode: few new tokens times the packed heads), and with one Q stage
    56 producer registers. A paged KV cache
    keeps sm_90a blocks within two pages (pages of 32
    keys: 64-key blocks). `p-precision=hi_lo` (P as its rounded value
    plus the rounding residual, two PV MMAs) is never chosen by default; on
    sm_90a it takes 64-key blocks from head dim 128 on and 32-key ones
    past 192 (where 48 do), where the residual's registers beside S and P
    fragments spill, and on sm_100a 64-key blocks (whose softmax reads S
    twice; 128 for packed sequences with Q alone rotated, where 64-key
    blocks spill) without the interleaved softmax warpgroups. Split-KV
    (`kvSplits`): where the sizes are static
    and the work tiles fill at most a quarter of the SMs (132 on sm_90a, 148
    on sm_100a) while each tile has at least 8 KV blocks (decode against a
    long cache), the tiles' blocks are split among CTAs, as many as fit
    one wave of the SMs with at least 4 blocks each (at most 64), unless
    the options ask for the `paired` scheduler; a causal sm_90a plan then
    takes the `lpt` order, and a split sm_90a plan registers 224 / 56 (the
    store warp combines the splits; 232 / 56 with one Q stage, whose two
    warpgroups' pool holds both); with dynamic sizes the runtime, which
    knows them, passes `kv-splits`. `split-combine=cluster` makes a split's
    CTAs one thread-block cluster that combines the partial rows over
    distributed shared memory (no workspace; the plan then needs the
    partial rows' shared memory, and 2 to 8 splits: without `kv-splits`,
    the chosen count within them). Every option
    overrides one choice; 0
    (or an empty string) leaves it to the pass.

    The pass refuses, with an error at the op, what the kernels cannot do:
    head dims that are not multiples of 16 up to 256 (one that is not a
    multiple of 64 fills its tiles' last 64-column atom in part), a head dim whose smallest
    plan exceeds shared memory (above 192 on sm_100a), a `gqa-pack` that does not divide both
    the GQA ratio and the Q tile's rows, any plan outside the ranges
    `#fa4.plan` checks or that exceeds the TMEM columns, shared memory or
    registers of one SM, and operands the kernel cannot address
    (`checkKernelLimits`): static sizes beyond the 32-bit values it computes
    with (each size, the rows of whole work tiles, the number of work tiles,
    the LSE offsets, a paged cache's keys per batch and page-table
    offsets, the rows of the split-KV workspace: at most 2^31 - 1),
    split-KV with packed sequences (not built yet), Q/K/V/O strides that are not
    multiples of 16 bytes below 2^40 bytes or a base offset that is not 16
    bytes (what a TMA descriptor can describe), an LSE that is not
    contiguous, a scale whose log2-scaled value overflows f32, and with f16
    operands a rescale threshold above 15 (P grows to 2^threshold and is
    rounded to f16). FP8 (e4m3) operands plan 128-key blocks with one byte
    a column (`operandBytes = 1`) on both targets, 64-key blocks on sm_90a
    past head dim 128 (each reads the first half of a 128-key V box; a ring
    of 3 past 192); the pass refuses a V whose keys are not unit-stride (the
    PV MMA reads 8-bit V K-major) and pages of fewer than 128 keys. An
    option below its "choose" value is an error.

    Example: `fa4-opt --fa4-plan="kv-stages=4 emulated-exp2=2"`.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_100a\"",
           "Target architecture (sm_100a or sm_90a)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Rows of a K/V block: 128 on sm_100a; on sm_90a a multiple of "
           "16 from 16 to 128">,
    Option<"qStages", "q-stages", "int64_t", /*default=*/"0",
           "Q tiles in flight per CTA (1 or 2; 3 on sm_90a: three "
           "consumer warpgroups)">,
    Option<"kvStages", "kv-stages", "int64_t", /*default=*/"0",
           "Slots of the K/V shared-memory ring">,
    Option<"gqaPack", "gqa-pack", "int64_t", /*default=*/"0",
           "Query heads packed into one Q tile (1 disables packing)">,
    Option<"scheduler", "scheduler", "std::string", /*default=*/"\"\"",
           "Work-tile order: linear, lpt or paired">,
    Option<"softmaxRegs", "softmax-regs", "int64_t", /*default=*/"0",
           "Registers per thread of a softmax warpgroup">,
    Option<"correctionRegs", "correction-regs", "int64_t", /*default=*/"0",
           "Registers per thread of the correction/epilogue warpgroup">,
    Option<"producerRegs", "producer-regs", "int64_t", /*default=*/"0",
           "Registers per thread of the load/MMA/store warpgroup">,
    Option<"emulatedExp2", "emulated-exp2", "int64_t", /*default=*/"-1",
           "Of every 16 score columns, how many use the FMA polynomial "
           "exp2 (-1: choose)">,
    Option<"polynomialTanh", "polynomial-tanh", "int64_t", /*default=*/"-1",
           "With a softcap: of every 16 scores, how many take tanh from an "
           "FMA polynomial where the warp's scaled scores lie within the cap "
           "(-1: choose)">,
    Option<"softcapCeiling", "softcap-ceiling", "int64_t",
           /*default=*/"-1",
           "With a softcap: the largest cap in log2 units (softcap log2(e), "
           "checked at launch) at which the softmax takes the cap as every "
           "row's reference in place of the running maximum (0: never; at "
           "most 48 for bf16, 7 for f16; -1: choose)">,
    Option<"kvInterleave", "kv-interleave", "int64_t", /*default=*/"0",
           "sm_100a: softmax warpgroups sharing each Q tile and taking its "
           "KV blocks in turn, 1 or 2 (2: one Q stage, two partial rows "
           "combined before the store; 0: choose)">,
    Option<"sharedKey", "shared-key", "int64_t", /*default=*/"0",
           "sm_100a: warps of a softmax warpgroup sharing each query row, "
           "each over its share of a KV block's keys: 1 (default), 2 or 4 "
           "(Q stages of 128 / N rows)">,
    Option<"family", "family", "std::string", /*default=*/"\"\"",
           "Kernel family: prefill (default) or decode (sm_100a swap-AB: "
           "the KV block's keys are the MMA's M, the Q tile's rows its N)">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Rows of a Q tile of the decode family: 16 or 32, a multiple "
           "of gqa-pack (0: choose; prefill tiles take theirs from the "
           "target)">,
    Option<"pPrecision", "p-precision", "std::string", /*default=*/"\"\"",
           "How the PV product takes P: single (default: rounded once to "
           "the 16-bit operand type) or hi_lo (P as its rounded value plus "
           "the rounding residual, two PV MMAs; 16-bit operands only)">,
    Option<"pvSplit", "pv-split", "int64_t", /*default=*/"0",
           "Columns of P in the first of the two PV MMAs">,
    Option<"rescaleThreshold", "rescale-threshold", "int64_t",
           /*default=*/"-1",
           "Row-max growth (log2 units) tolerated before rescaling O "
           "(-1: choose)">,
    Option<"kvSplits", "kv-splits", "int64_t", /*default=*/"0",
           "CTAs sharing one work tile's KV blocks (1: no split; at most "
           "64)">,
    Option<"splitCombine", "split-combine", "std::string", /*default=*/"\"\"",
           "Where split-KV combines the splits: workspace (default: a global "
           "buffer) or cluster (the splits form one thread-block cluster, "
           "2 to 8 CTAs, and combine over distributed shared memory)">,
  ];
}

def FA4LowerWarpSpecialize : Pass<"fa4-lower-warp-specialize"> {
  let summary = "Turn warp roles into register reallocation and branches";
  let description = [{
    Replaces every `fa4.warp_specialize` with what the hardware executes:
    one branch per warpgroup (`%tid.x / 128`) in which the warpgroup first
    moves its register file with `setmaxnreg` when its budget differs from
    the launch default (decrease below it, increase above it), and then each
    role it hosts runs under a branch on the warp index `%tid.x / 32`.
    Keeping the reallocation and the role code in one branch is what lets
    ptxas allocate each role with its own budget; a role spanning several
    warpgroups is copied into each. Because `setmaxnreg` only takes effect in a kernel with
    launch bounds, the enclosing `gpu.func` gets `nvvm.maxntid = [32 x
    warps, 1, 1]` and `nvvm.minctasm = 1`. It also records the roles it
    lowers (name, warp range, register budget) as `fa4.roles` for the launch
    manifest.

    The pass refuses a `fa4.warp_specialize` outside a `gpu.func`, and one
    whose `gpu.func` already declares a different `nvvm.maxntid`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def FA4AllocateTmem : Pass<"fa4-allocate-tmem", "::mlir::ModuleOp"> {
  let summary = "Place the Tensor Memory buffers of each kernel";
  let description = [{
    Chooses the columns of every `fa4.tmem.buffer` of a kernel and makes the
    kernel own its Tensor Memory. Buffers are placed largest first; each one
    shares the columns of an already placed buffer when it fits in them and
    never occupies its storage together with any buffer already there (see
    `BufferLiveness.h`: the same roles use both, and in each of them their
    live ranges, from each definition or hand-off to its last read, never
    overlap). A sharing buffer takes the top of the range: P, written by
    softmax after its last read of S and read by the MMA before it next
    writes S, becomes a 16-bit view over the upper half of S. Every other
    buffer takes the next free columns.

    The placed kernel gets a workgroup attribution `tmem_address` (the slot
    `tcgen05.alloc` writes); warp 0 allocates the smallest power of two (at
    least 32) covering the columns right before the first kernel-body op
    that uses Tensor Memory, all threads read the address
    after a CTA barrier between tcgen05 fences, each buffer becomes a
    `fa4.tmem.view` of the allocation named after it (`fa4.name`), and warp
    0 frees the allocation after a final barrier. The kernel records the
    allocation as `fa4.tmem_columns` (0 for kernels without Tensor Memory)
    for its launch manifest.

    The pass refuses, with an error at the kernel and a note per buffer
    giving its columns, a kernel whose buffers need more than 512 columns;
    also buffers outside a kernel and kernels that already allocate Tensor
    Memory themselves.
  }];
  let options = [
    Option<"alias", "alias", "bool", /*default=*/"true",
           "Let buffers that are never live together share columns">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def FA4AllocateSmem : Pass<"fa4-allocate-smem", "::mlir::ModuleOp"> {
  let summary = "Place the shared-memory buffers of each kernel";
  let description = [{
    Lays out the workgroup attributions of every `gpu.func` kernel that
    carries an `fa4.plan` in the kernel's dynamic shared memory, and replaces
    each with a `memref.view` of `gpu.dynamic_shared_memory` at its offset.
    An attribution's `fa4.alignment` (a power of two; 1024 for tiles in the
    128-byte TMA/MMA swizzle, whose pattern repeats every 1024 bytes) sets
    its alignment, 16 bytes otherwise; `fa4.name` names it in diagnostics and
    in the placed IR. Buffers are placed largest first and share bytes under
    the same liveness rule as `fa4-allocate-tmem`, and only when one thread
    does every access of both (program order orders nothing across
    threads). In the FA4 kernel nothing shares: Q and K/V meet in one MMA,
    the staging tile and statistics have different roles. Kernels without
    attributions are left alone. The kernel
    records the end of the last buffer as `fa4.dynamic_smem_bytes` for its
    launch manifest.

    Attributions must be statically shaped memrefs of integers or floats.
    The pass refuses, with an error at the kernel and a note per buffer
    giving its byte range, a layout larger than 227 KB (232448 bytes), the
    most dynamic shared memory a CTA can use on sm_90a and sm_100a.
  }];
  let options = [
    Option<"alias", "alias", "bool", /*default=*/"true",
           "Let buffers that are never live together share bytes">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FA4AlignSharedMemory : Pass<"fa4-align-shared-memory",
                                 "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make the lowered dynamic shared memory the aligned dynamic region";
  let description = [{
    `fa4-allocate-smem` lays buffers out at offsets from the start of the
    dynamic shared memory and records the largest alignment they need on
    the kernel's `gpu.module` as `fa4.shared_alignment` (1024 bytes for
    tiles in the 128-byte swizzle: TMA writes and tcgen05/wgmma descriptors
    with base offset 0 both assume the pattern starts on a 1024-byte
    boundary). The upstream GPU-to-NVVM conversion declares the symbol of
    `gpu.dynamic_shared_memory` (`__dynamic_shmem__*`) as an internal
    zero-size array with 16-byte alignment, which the NVPTX backend emits as
    a one-byte static `.shared` variable among the mbarriers, so the buffers
    would overlap them and start unaligned. This pass, run in each
    `gpu.module` after the conversion, makes those globals external
    declarations with alignment `fa4.shared_alignment`: PTX `.extern
    .shared .align 1024 .b8 __dynamic_shmem__0[]`, the dynamic region,
    which ptxas places after the static one on that boundary. Modules
    without `fa4.shared_alignment` are left alone.
  }];
}

def FA4FoldClusterAddressCasts : Pass<"fa4-fold-cluster-address-casts",
                                       "::mlir::gpu::GPUModuleOp"> {
  let summary = "Use a CTA's shared addresses as its shared::cluster addresses";
  let description = [{
    The upstream lowering of `nvgpu.tma.async.load` (and of other operands
    PTX takes in the `.shared::cluster` space) casts the destination from
    LLVM address space 3 (`.shared`) to 7 (`.shared::cluster`). The NVPTX
    backend lowers that `llvm.addrspacecast` through the generic space,
    `cvta.shared.u64` then `cvta.to.shared::cluster.u64`, which keeps the
    64-bit generic window base of shared memory live in a register across
    the kernel (ptxas spilled it under tight role budgets). The PTX ISA
    puts the `.shared::cta` window inside the `.shared::cluster` window: a
    CTA's shared address already is the cluster address of the same byte in
    that CTA. This pass, run in each `gpu.module` after the conversion to
    NVVM, replaces every such cast with a reinterpretation of the address
    (`llvm.ptrtoint` to i64, `llvm.inttoptr` to address space 7), which
    becomes no instruction:

    ```mlir
    %c = llvm.addrspacecast %p : !llvm.ptr<3> to !llvm.ptr<7>
    // becomes
    %i = llvm.ptrtoint %p : !llvm.ptr<3> to i64
    %c = llvm.inttoptr %i : i64 to !llvm.ptr<7>
    ```

    Casts between other address spaces, and remote addresses (`nvvm.mapa`),
    are left alone.
  }];
}

def FA4InsertBarriers : Pass<"fa4-insert-barriers", "::mlir::ModuleOp"> {
  let summary = "Turn channels between roles into mbarrier protocols";
  let description = [{
    Derives the synchronization of a kernel from its channels. Each
    `fa4.channel` with `S` stages becomes two `nvgpu` mbarrier groups of `S`
    barriers, initialized by thread 0 before the roles start (followed by a
    CTA barrier): `full[s]` expects the producer's arrivals, `empty[s]` the
    consumer's (1 for `tma` and `mma` endpoints, N for `threads = N`). A
    channel whose slots are never acquired or released gets no `empty`
    group. The groups are named after the channel (`fa4.name = "kv.full"`),
    and each fa4 kernel records, for its launch manifest, the mbarriers it
    made (`fa4.mbarriers`) and the named barrier ids its channels use
    (`fa4.named_barriers`).

    Hand-off `i` uses slot `s = i mod S` in round `r = i / S`:

    | step | becomes |
    |---|---|
    | `fa4.channel.acquire` | wait on `empty[s]` for parity `(r + 1) mod 2` (the previous round; immediate in round 0) |
    | `fa4.channel.commit`, TMA producer | `mbarrier.arrive.expect_tx full[s]` with the bytes of the slot's `fa4.tma.load`s, placed before them; the loads complete on `full[s]` |
    | `fa4.channel.commit`, MMA producer | `tcgen05.commit` on `full[s]` |
    | `fa4.channel.commit`, thread producer | `mbarrier.arrive full[s]` |
    | `fa4.channel.wait` | wait on `full[s]` for parity `r mod 2` |
    | `fa4.channel.release` | `tcgen05.commit` (MMA consumer) or `mbarrier.arrive` (threads) on `empty[s]` |

    A channel with `named_barrier = id` keeps only its empty mbarrier: the
    commit becomes `bar.arrive id, N` and the wait `bar.sync id, N`, N
    counting the threads of both sides.

    A channel of `cluster = N` endpoints (an exchange among the N CTAs of a
    thread-block cluster) counts N arrivals per barrier: commit and release
    become `fa4.mbarrier.arrive_cluster` (one arrival on the slot's barrier
    in every CTA of the cluster, release at cluster scope), and each wait
    is followed by `fence.acq_rel.cluster`. Thread 0 follows the
    initialization with `fence.mbarrier_init.release.cluster`, the CTA
    barrier becomes a cluster barrier (`barrier.cluster.arrive` and
    `wait`), and another cluster barrier precedes the kernel's return, so
    that no CTA signals a barrier of another before it is initialized or
    after its CTA exited. Such a channel must be declared in the kernel's
    outermost block.

    MMA issuers follow their waits with `tcgen05.fence::after_thread_sync`.
    Thread sides do the same, and precede their arrivals with
    `tcgen05.fence::before_thread_sync`, when the other side is an MMA or
    the kernel's `gpu.module` targets a tcgen05 chip (sm_100a/sm_101a):
    their TMEM accesses may be ordered through the hand-off, directly or
    transitively, and the tcgen05 memory model orders them only with these
    fences.

    The pass refuses a TMA commit with no load of its slot before it in the
    same block, and TMA loads no commit accounts for.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def FA4RaiseAttention : Pass<"fa4-raise-attention"> {
  let summary = "Replace attention written in linalg on tensors with fa4.attention";
  let description = [{
    Finds scaled dot-product attention spelled in `linalg` on tensors, as
    torch-mlir and IREE lower SDPA or as written by hand, and replaces it
    with the tensor form of `fa4.attention` (bufferize it with
    `one-shot-bufferize` before `fa4-compile`). What it recognizes, from
    the P V contraction backwards:

    - the contractions: any `linalg` op that is a contraction (named
      `matmul`/`batch_matmul` or a `linalg.generic` with contraction
      indexing maps), K read transposed through the indexing map or through
      a `linalg.transpose`/permuting generic;
    - the scores `alpha * S + sum_k beta_k * B_k`: S = Q K^T, the scale
      `alpha` a product of constant multiplies and divides (of S, or of Q
      or K before the contraction), `B_k` additive masks or biases read
      through broadcasting indexing maps (they become a score region with
      the tensors as captures);
    - the numerically stable softmax over the key dimension: `linalg.softmax`
      or `exp(E - max_j E) / sum_j exp(E - max_j E)` in any split of
      elementwise ops, with `exp` or `exp2` (base 2 scores are rescaled by
      ln 2), or the division by the sum applied after the P V contraction;
    - element type casts anywhere along the way, computed in f32 by the
      kernel;
    - heads and GQA: the contraction's batch dimensions shared by Q, K and
      V (the last static one is the head, the others collapse into the
      batch), and a second query dimension that K and V do not have (Q
      `[B, Hkv, G, S, D]` against K `[B, Hkv, S, D]`: grouped-query
      attention with G query heads per key/value head).

    Operands are brought to fa4's `[B, S, H, D]` with `linalg.transpose`
    and reshapes, and the output back to the original layout. Near misses
    are left alone: a softmax reduced over another dimension, a softmax
    without the max subtraction (its result overflows where fa4's does
    not), a mask that multiplies the scores, a contraction of Q with K
    that is not over the head dimension, outputs not in Q's 16-bit type, K
    and V of different layouts, dynamic head counts or head dims. Each
    gets a remark at its P V contraction saying why. Linalg on memrefs is
    not read.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::fa4::FA4Dialect"];
}

def FA4Tile : Pass<"fa4-tile", "::mlir::ModuleOp"> {
  let summary = "Write every planned attention as a sequential tiled program";
  let description = [{
    Replaces every `fa4.attention` that carries a plan with an `fa4.launch`
    of a new kernel, in a `gpu.module` of its own named after the enclosing
    function (`#nvvm.target` for the plan's chip). The kernel takes the
    op's memrefs and its body is the attention as one sequential program
    over tiles (level 3):

    - for every work tile (`batch x heads / gqaPack x ceil(Sq / (qStages x
      128 / gqaPack))`), `fa4.tile.coords` in the plan's scheduler order,
      and for each of its `qStages` Q tiles of 128 rows (`gqaPack` heads of
      each position):
    - `fa4.tile.load` of Q, then an `scf.for` over the KV blocks it can see
      (all of them, or when causal those up to its last row's diagonal)
      carrying O, the row maxima and the row sums: loads of K and V,
      `fa4.tile.matmul` (Q K^T), with a softcap `fa4.tile.softcap` (the cap
      over the scale), `fa4.tile.mask` (Skv tail, causal bottom-right, the
      sliding window; window sides past 2^31 - 257 written as unbounded),
      `fa4.tile.softmax` (base 2, scale folded in,
      conditional rescale with the plan's threshold and exp2 split),
      `fa4.tile.rescale` of O and `fa4.tile.matmul` accumulating P V;
    - `fa4.tile.normalize`, `fa4.tile.store` of O and, with an LSE operand,
      `fa4.tile.store_lse`.

    Sequence lengths and batch are read with `memref.dim`, so they stay
    dynamic. This level fixes what is computed and in which tiles; who
    computes it, and when, is `fa4-specialize`'s decision.

    The pass refuses an op without a plan and, since a plan written by hand
    skips `fa4-plan`, the operand limits of `checkKernelLimits` for that
    plan.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def FA4Specialize : Pass<"fa4-specialize", "::mlir::ModuleOp"> {
  let summary = "Split tiled attention programs into warp-specialized roles";
  let description = [{
    Replaces every tiled kernel written by `fa4-tile` (a `gpu.func` with an
    `fa4.plan` whose body holds `fa4.tile` ops) with the FlashAttention-4
    forward CTA at the role level, under the same name, and attaches the
    launch manifest to its `fa4.launch`. The pass recognizes the FA4
    forward program and reads every choice from it: element type and head
    dim from the tiles, GQA packing and the scheduler from
    `fa4.tile.coords`, masking (key tail, causal, window) from
    `fa4.tile.mask`, a softcap from `fa4.tile.softcap`, the scale, rescale
    threshold and exp2 split from `fa4.tile.softmax`, LSE from
    `fa4.tile.store_lse`; stages, tile sizes, register budgets and the PV
    split from the plan. The roles:

    - a persistent loop over the work tiles in the program's order, with
      the KV blocks of all Q tiles of a work tile visited together: those
      from the first row's first visible key to the last row's last (blocks
      wholly outside every row's window are neither loaded nor computed);
      per-element masking only in the blocks that need it;
    - one softmax warpgroup per Q stage (mask, online softmax, split exp2,
      P written over S in two parts), the correction and epilogue
      warpgroup (warp-uniform O rescale, normalization, swizzled staging,
      LSE), and the MMA, TMA-load and TMA-store warps, with the plan's
      register budgets;
    - the hand-offs as channels: Q (TMA to MMA, qStages), K/V (TMA to MMA,
      kvStages), and per Q stage S ready, P first part + O rescaled (256
      arrivals), P second part, statistics, O ready; the O staging tile.

    With an sm_90a plan it builds the FlashAttention-3 CTA instead: a TMA
    load warp (a tile's first K before its Q tiles), a TMA store warp, and
    one consumer warpgroup per Q stage that computes S = Q K^T and O += P V
    with `fa4.wgmma` (P from registers), the online softmax with quad
    shuffles, and its O staging tile. Consumers are software-pipelined (S
    of block n and the product of block n - 1 in flight during block n's
    softmax) and alternate their wgmma issue on two named-barrier channels
    (`turn0`, `turn1`). Channels: Q (two slots per consumer), K/V (released
    by both consumers), epilogue (one slot per consumer).

    Buffers are declared, not placed (`fa4-allocate-tmem`,
    `fa4-allocate-smem`), and barriers are added by `fa4-insert-barriers`.
    Kernel arguments: the TMA descriptors of Q, K, V and O, batch, Sq, Skv
    (index) and the softmax scale times log2(e) (f32); with a softcap, the
    cap over the scale (f32, `score_cap` in the manifest); with LSE, a
    pointer to the contiguous [B, Hq, Sq] f32 tensor.

    What is checked of the program: each tile op once (the softcap at most
    once); their dataflow (Q K^T optionally capped, masked, exponentiated, O rescaled before P V accumulates, the KV
    loop carrying O, maxima and sums from 0, -inf and 0, normalization by
    the final sums); loops counting from 0 by 1; Q read at the work tile's
    batch and heads and at its position plus the Q-tile loop's offset; K
    and V read block by block at the group's K/V head; O and LSE written
    where Q was read; the mask over Q's rows and K's keys with the lengths
    of Q and K (with a KV cache, K's length the `fa4.tile.keys` of the work
    tile's batch, counted once per work tile from the kernel's seqused_k
    and page-table arguments, and K and V read through that page table);
    one element type and head dim; static head counts with
    whole groups per packed tile. The upper bounds of the work-tile and KV
    loops are not checked: the roles compute their own.

    The pass refuses, at the kernel or the op that differs: a program that
    fails those checks, an LSE tensor that is not contiguous, and a program
    whose tiles disagree with its plan (tile rows, head dim, packing, Q
    tiles per work tile). Every plan `#fa4.plan` accepts is one it builds
    (the attribute refuses blockN other than 128 and pvSplits that are
    not whole 32-column fragments on sm_100a; the pass checks them
    again). The launch manifest's plan records the program's scheduler,
    threshold and exp2 split.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def FA4AssembleManifest : Pass<"fa4-assemble-manifest", "::mlir::ModuleOp"> {
  let summary = "Complete each launch manifest with the facts recorded on its kernel";
  let description = [{
    The passes after `fa4-specialize` record what they decide on the kernel
    itself, as declared `fa4.*` attributes that the dialect verifies:

    | kernel attribute | manifest entry | recorded by |
    |---|---|---|
    | `fa4.tmem_columns` | `tmem_columns` | `fa4-allocate-tmem` |
    | `fa4.dynamic_smem_bytes` | `dynamic_smem_bytes` | `fa4-allocate-smem` |
    | `fa4.mbarriers` | `mbarriers` | `fa4-insert-barriers` |
    | `fa4.named_barriers` | `named_barriers` | `fa4-insert-barriers` |
    | `fa4.roles` | `roles` (name, warps, registers) | `fa4-lower-warp-specialize` |

    This pass, run before `gpu-module-to-binary` while the kernel (a
    `gpu.func`, or the `llvm.func` the NVVM conversion made of it, which
    keeps the attributes) is still readable, copies them into the manifest
    of every `fa4.launch` of the kernel and checks that the manifest is then
    complete (`LaunchOp::verifyManifest`): the manifest describes the
    kernel that was built, with one source for each fact.

    The pass refuses a launch without a manifest, one whose kernel is no
    longer a function (already serialized), and a kernel that lacks a fact
    (naming the pass that records it).
  }];
}

def FA4VerifyLLVMIR : Pass<"fa4-verify-llvm-ir", "::mlir::ModuleOp"> {
  let summary = "Refuse kernel modules that would translate to invalid LLVM IR";
  let description = [{
    `gpu-module-to-binary` translates each `gpu.module` to LLVM IR and hands
    it to the NVPTX backend without running LLVM's verifier, and the LLVM
    dialect's op verifiers do not check everything LLVM IR requires (an
    `llvm.fptrunc` between vectors of different lengths verifies). Such a
    module, hand-edited or produced by a faulty pass, would end in a fatal
    backend error; a value wider than any register file would make the
    translation itself run out of memory. A `#nvvm.target` the backend does
    not know (an unknown PTX version or a chip given as a feature) is only a
    warning there, after which it compiles for a default PTX version that
    lacks mbarriers and instruction selection ends the process. This pass,
    run just before `gpu-module-to-binary` on kernels in the LLVM and NVVM
    dialects, refuses all of these with a diagnostic:

    - a `#nvvm.target` other than the `nvptx64-nvidia-cuda` triple, a chip fa4
      compiles for (`sm_100a`, `sm_90a`) and either no features or one
      `+ptxNN` that the NVPTX backend knows and that is at least the chip's
      first PTX version (8.6 for `sm_100a`, 8.0 for `sm_90a`), at the
      `gpu.module`;
    - a value (op result or block argument) wider than a thread's 255 32-bit
      registers, at the op that defines it;
    - a module whose LLVM IR fails LLVM's verifier, at the `gpu.module`, with
      the verifier's first complaint and the instruction it names.

    A module that does not translate at all (an op outside the LLVM and NVVM
    dialects) is refused with the translation's own diagnostic.

    ```mlir
    gpu.module @k [#nvvm.target<chip = "sm_90a">] {
      llvm.func @f(%x: vector<16xf32>) {
        // error: 'gpu.module' op translates to invalid LLVM IR, ...
        %0 = llvm.fptrunc %x : vector<16xf32> to vector<32xbf16>
        llvm.return
      }
    }
    ```
  }];
}

def FA4EmitKernels : Pass<"fa4-emit-kernels", "::mlir::ModuleOp"> {
  let summary = "Write each kernel's PTX, cubin and launch manifest, and report its resources";
  let description = [{
    For every `fa4.launch` with a manifest, takes the PTX of its kernel's
    `gpu.binary` (produced by `gpu-module-to-binary{format=isa}`) and writes
    `<emit-dir>/<kernel>.ptx`. When ptxas is found (the `ptxas` option, else
    `$CUDA_HOME`, `$CUDA_PATH`, `$CUDA_ROOT`, `/usr/local/cuda`, `PATH`) it
    assembles `<kernel>.cubin` with `ptxas -v` and records registers, spill
    bytes and static shared memory. `<kernel>.json` is the launch manifest:
    kernel symbol, block and cluster shape, grid rule, dynamic shared memory,
    parameter order, TMA descriptor specs (operand, element type, box,
    swizzle), roles and their register budgets, TMEM columns, barrier
    counts, the plan, the file names and the ptxas resources. With `report`
    it prints a resource summary per kernel to stdout.

    The pass refuses a launch whose kernel has no `gpu.binary`, or whose
    binary is not PTX, and a manifest that lacks an entry it reads (kernel,
    arch, block, grid, roles, barrier counts, dynamic shared memory, TMEM
    columns; `LaunchOp::verifyManifest`, which the `fa4.launch` verifier
    also runs on the entries present, checks their kinds and ranges), and
    reports ptxas failures with ptxas's output.
  }];
  let options = [
    Option<"emitDir", "emit-dir", "std::string", /*default=*/"\"\"",
           "Directory the kernel files are written to (fa4-emit-kernels "
           "needs one; fa4-compile without one keeps the binaries in the "
           "IR only)">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas to assemble cubins with (default: search CUDA_HOME, "
           "CUDA_PATH, CUDA_ROOT, /usr/local/cuda, PATH)">,
    Option<"report", "report", "bool", /*default=*/"true",
           "Print each kernel's resource report to stdout">,
  ];
}

#endif // FA4_TRANSFORMS_PASSES_TD
