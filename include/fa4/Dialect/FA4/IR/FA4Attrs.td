//===- FA4Attrs.td - fa4 attributes and enums --------------*- tablegen -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4ATTRS_TD
#define FA4_DIALECT_FA4_IR_FA4ATTRS_TD

include "fa4/Dialect/FA4/IR/FA4Dialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def FA4_Arch : I32EnumAttr<"Arch", "target GPU architecture", [
    I32EnumAttrCase<"sm_100a", 0>,
    I32EnumAttrCase<"sm_90a", 1>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_Scheduler : I32EnumAttr<"Scheduler", "order of work tiles", [
    I32EnumAttrCase<"linear", 0>,
    I32EnumAttrCase<"lpt", 1>,
    I32EnumAttrCase<"paired", 2>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_SplitCombine : I32EnumAttr<"SplitCombine",
    "where split-KV's partial rows are combined", [
    I32EnumAttrCase<"workspace", 0>,
    I32EnumAttrCase<"cluster", 1>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_PPrecision : I32EnumAttr<"PPrecision",
    "how the PV product takes the softmax's probabilities", [
    // P rounded once to the operand type.
    I32EnumAttrCase<"single", 0>,
    // P as the sum of two 16-bit parts: the rounded P and its rounding
    // residual, each in its own PV MMA.
    I32EnumAttrCase<"hi_lo", 1>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_AsyncCompletion : I32EnumAttr<"AsyncCompletion",
    "what completes an asynchronous access", [
    // A TMEM load: its registers are defined by tcgen05.wait::ld.
    I32EnumAttrCase<"tmem_load_wait", 0>,
    // A TMEM store: visible to others after tcgen05.wait::st.
    I32EnumAttrCase<"tmem_store_wait", 1>,
    // A TMA store: done with shared memory once no bulk group is pending.
    I32EnumAttrCase<"bulk_group_wait", 2>,
    // A TMA load: completes transaction bytes on an mbarrier, observed by
    // whoever waits on it (usually another role).
    I32EnumAttrCase<"mbarrier", 3>,
    // A tcgen05 MMA: runs behind the issuing thread's earlier MMAs, done
    // when a tcgen05.commit issued after it arrives.
    I32EnumAttrCase<"tensor_core_commit", 4>,
    // A wgmma: done when a wgmma.wait leaves no later group pending.
    I32EnumAttrCase<"wgmma_group_wait", 5>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_OperandMajor : I32EnumAttr<"OperandMajor", "contiguous dimension of an MMA operand in shared memory", [
    I32EnumAttrCase<"k", 0>,
    I32EnumAttrCase<"mn", 1>
  ]> {
  let cppNamespace = "::mlir::fa4";
}

def FA4_KernelFamily : I32EnumAttr<"KernelFamily",
    "which kernel an attention plan builds", [
    // The prefill kernels: a Q tile's rows are the MMA's M.
    I32EnumAttrCase<"prefill", 0>,
    // sm_100a swap-AB decode: a KV block's keys are the MMA's M, the Q
    // tile's few rows its N.
    I32EnumAttrCase<"decode", 1>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

def FA4_EndpointKind : I32EnumAttr<"EndpointKind", "who produces or consumes a channel slot", [
    I32EnumAttrCase<"tma", 0>,
    I32EnumAttrCase<"mma", 1>,
    I32EnumAttrCase<"threads", 2>,
    I32EnumAttrCase<"cluster", 3>
  ]> {
  let cppNamespace = "::mlir::fa4";
  let genSpecializedAttr = 0;
}

// The scheduler as an attribute of its own (the tiled program's
// fa4.tile.coords), printed as its keyword.
def FA4_SchedulerAttr : EnumAttr<FA4_Dialect, FA4_Scheduler, "scheduler"> {
  let assemblyFormat = "$value";
}

def FA4_EndpointAttr : AttrDef<FA4_Dialect, "Endpoint"> {
  let mnemonic = "endpoint";
  let summary = "the side of a channel: how its hand-off is signalled";
  let description = [{
    - `tma`: TMA transfers into the slot; one thread announces their bytes,
      the transfers complete the slot (producer only).
    - `mma`: tcgen05 MMAs issued by one thread; `tcgen05.commit` signals
      once they completed.
    - `threads = N`: N threads each signal with an mbarrier arrival.
    - `cluster = N`: one thread in each CTA of an N-CTA cluster signals,
      and its signal reaches the slot's barrier in every CTA of the cluster
      (a remote arrival, release at cluster scope): the barrier completes
      once all N CTAs signalled. Both sides of such a channel are `cluster`
      endpoints of the same N (an exchange among the cluster's CTAs).

    ```mlir
    #fa4.endpoint<tma>
    #fa4.endpoint<threads = 128>
    #fa4.endpoint<cluster = 4>
    ```
  }];
  let parameters = (ins EnumParameter<FA4_EndpointKind>:$kind,
                        "int64_t":$threads);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Arrivals that complete one phase of the slot's barrier on this side.
    int64_t getArrivals() const {
      return getKind() == EndpointKind::threads ||
                     getKind() == EndpointKind::cluster
                 ? getThreads()
                 : 1;
    }
  }];
}

def FA4_PlanAttr : AttrDef<FA4_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "every configuration decision of one attention kernel";
  let description = [{
    The plan is chosen once by `fa4-plan` (or written by hand) and read by
    every later pass; no pass re-derives a decision it records.

    | parameter | meaning |
    |---|---|
    | `arch` | `sm_100a` (tcgen05, TMEM) or `sm_90a` (wgmma) |
    | `blockM`, `blockN` | rows of a Q tile, rows of a K/V block |
    | `headDim` | Dqk, the head dim of Q and K |
    | `headDimV` | Dv, the head dim of V and O, where it differs from Dqk (absent: Dv = Dqk) |
    | `qStages` | Q tiles in flight per CTA; one softmax warpgroup each |
    | `kvStages` | slots of the K/V shared-memory ring (K and V alternate) |
    | `gqaPack` | query heads of one KV head packed into the rows of a Q tile |
    | `scheduler` | `linear` (persistent, row-major tile order), `lpt` (longest tile first, (batch, head) grouped for L2) or `paired` (causal: each work unit is a long query tile and its complement, so that every unit costs the same; grouped for L2 like `lpt`) |
    | `softmaxRegs`, `correctionRegs`, `producerRegs` | per-thread register budgets (`setmaxnreg`) of the softmax, correction/epilogue and load/MMA/store warpgroups |
    | `emulatedExp2` | of every 16 score columns, how many take the FMA polynomial instead of MUFU `ex2` |
    | `pvSplit` | columns of P consumed by the first of the two PV MMAs |
    | `rescaleThreshold` | growth of the row max (log2 units) tolerated before O is rescaled |
    | `kvSplits` | split-KV: CTAs that share one work tile's KV blocks, each computing a partial O over a contiguous share (absent: 1, no split) |
    | `splitCombine` | with `kvSplits` > 1, where the splits' partial rows meet: `workspace` (absent; a global buffer, the last split to finish combines) or `cluster` (the splits are the CTAs of one thread-block cluster and combine over distributed shared memory, each CTA a share of the rows) |
    | `operandBytes` | bytes per element of Q, K and V: absent for 16-bit (f16, bf16), 1 for FP8 (e4m3, sm_90a: `blockN` 128 and `rescaleThreshold` at most 8, so that P below 2^8 stays within e4m3's 448) |
    | `polynomialTanh` | with a softcap: of every 16 scores, how many take tanh from an FMA polynomial instead of MUFU `tanh.approx`, in warps whose scores all lie within the cap (absent: 0; up to 8 spill nothing on either target, more spill at sm_90a's 128-key blocks) |
    | `kvInterleave` | sm_100a: softmax warpgroups sharing each Q tile, taking its KV blocks in turn (absent: 1). At 2 (one Q stage) each warpgroup has its own S, P and O in Tensor Memory over every other KV block, and the correction warpgroup combines the two partial rows with their statistics before the store: a CTA's work tile is 128 rows, half of two Q stages', so a grid with fewer tiles than two per SM keeps twice the SMs busy, and head dims whose two Q tiles do not fit beside the K/V ring still use both softmax warpgroups |
    | `pPrecision` | `single` (absent: P rounded once to the 16-bit operand type) or `hi_lo`: P as the sum of two 16-bit parts, `hi` = P rounded and `lo` = (P - hi) rounded, each multiplied by V in its own MMA into the same O, so that O sees P to about 16 bits of mantissa instead of 8 (bf16) at twice the PV MMAs (the seeds' decode kernel, where the MMAs are idle; 16-bit operands only). On sm_100a the softmax then reads S a 32-key chunk at a time, once for the row maximum and once for P, and writes each chunk's `hi` and `lo` into that chunk's own S columns |
    | `sharedKey` | sm_100a: threads of a softmax warpgroup sharing each query row (absent: 1). At 2 or 4 a Q stage is `blockM = 128 / sharedKey` rows, and the weight-stationary MMA (`tcgen05.mma.ws`, M = `blockM`) folds S and O over the 128 lanes: lane t holds row `t mod blockM` of the `t / blockM`-th of `sharedKey` equal column shares (of S's keys, of O's columns), in `blockN / sharedKey` and `Dv / sharedKey` TMEM columns. The threads of a row agree on its maximum through shared memory every KV block (a double-buffered exchange, one named barrier per warpgroup) and write P to shared memory for the PV MMA (`pvSplit` 0: one PV MMA); Dv is 64, 128 or 256 (the N of a .ws MMA; blockN is 64 or 128 anyway). The Mojo FA4 shared-key mode: 1 / sharedKey of the softmax work per key where a tile's rows are few (decode) |
    | `softcapCeiling` | with a softcap: the largest cap in log2 units, `B = softcap log2(e)` (a launch argument), at which the softmax takes `B` as every row's exponent reference in place of the running maximum: no row maximum per KV block, no rescale of O (absent: never; at most 48 for bf16, 7 for f16, as P = 2^(s - B) >= 2^-2B must stay a normal number with room in O's f32 accumulator; not with FP8) |
    | `family` | `prefill` (absent) or `decode` (sm_100a, swap-AB, the seeds' decode kernel): the KV block's `blockN = 128` keys are the tcgen05 MMA's M and the Q tile's `blockM` rows (16 or 32: few new tokens times the packed query heads; a thread holds a key's score, maximum and sum of every row) its N, so that a decode tile wastes no M rows. S^T = K Q^T lands transposed in Tensor Memory (lane = key, one column per query row; two buffers, `2 blockM` columns), the softmax warpgroup (one thread per key) reduces each row's maximum and sum across its 128 lanes (warp butterflies and a double-buffered shared-memory exchange on one named barrier), writes P^T to shared memory, rescales O^T (lane = Dv column, `Dv / 128 x blockM` columns) itself and transposes O through shared memory for the row-wise epilogue; O^T += V^T P^T reads V MN-major as the MMA's A. One Q stage, Dv 128 or 256, 16-bit operands (P as hi + lo: two P^T tiles, two MMAs per O^T tile), no correction warpgroup (`correctionRegs` 0), `pvSplit` 0 |

    On `sm_90a` (FlashAttention-3 structure) a Q stage is the 64-row tile of
    one consumer warpgroup (`blockM = 64`), `softmaxRegs` is the consumers'
    budget and `producerRegs` the load/store warpgroup's; `correctionRegs`
    and `pvSplit` do not apply and must be 0. Q is double-buffered there up
    to head dim 128. `qStages = 3` (sm_90a only) runs three consumer
    warpgroups, 512 threads, passing the ping-pong turns round robin
    (FlashAttention-3's 192-row tiles at small head dims); their budgets
    share the 512 x 128 registers (e.g. 3 x 160 + 32).

    The verifier checks each parameter's range before anything is computed
    from it: `blockN` 128 on sm_100a, a multiple of 16 from 16 to 128 on
    sm_90a, `headDim` a multiple of 16 up to 256 (tiles hold whole 64-column swizzle atoms, the last partly
    filled where the head dim is not a multiple of 64), `headDimV` likewise
    and different from `headDim` where given, `qStages` 1 or 2 (up to 3
    on sm_90a),
    `kvStages` 2 to 16, `gqaPack` a divisor of `blockM`, register budgets
    multiples of 8 in [24, 256], `emulatedExp2` 0 to 16, `pvSplit` a
    multiple of 32 below `blockN` on sm_100a (whole 32-column P fragments),
    `rescaleThreshold` 0 to 64, `polynomialTanh` 0 to 16, `softcapCeiling` 1 to 48, `kvSplits` 1 to 64 and with more than one
    split the `linear` or `lpt` scheduler, `kvInterleave` 1 or 2 and 2 only
    on sm_100a with one Q stage and no split, `pPrecision = hi_lo` only
    with 16-bit operands and not with `kvInterleave = 2`, `sharedKey` 1, 2
    or 4 and above 1 only on sm_100a with `blockM = 128 / sharedKey`,
    Dv of 64, 128 or 256, `pvSplit` 0, 16-bit operands, P
    rounded once, one softmax warpgroup per Q stage and no cluster split,
    `family = decode` only on sm_100a with `blockN` 128, `blockM` 16 or
    32, one Q stage, `correctionRegs` and `pvSplit` 0, Dv 128 or 256,
    16-bit operands, no interleaving, shared keys or softcap ceiling;
    `fa4-specialize` builds every plan within
    these ranges. It then checks what the plan asks of one SM: registers
    (`128 x (qStages x kvInterleave x softmaxRegs + correctionRegs + producerRegs)` within
    the registers the CTA is launched with: 65536 for four warpgroups
    (sm_90a's three consumers and the producer too),
    64512 for three, as setmaxnreg only moves them between warpgroups), TMEM columns on sm_100a (`qStages x kvInterleave x (blockN + Dv) / sharedKey <= 512`; the decode family's `2 x blockM + Dv / 128 x blockM`)
    and shared memory (`<= 227 KB`, tiles counted at their atoms' width:
    128 bytes, 64 16-bit or 128 FP8 columns; O staging always 16-bit).

    Example:

    ```mlir
    #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128,
              qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear,
              softmaxRegs = 200, correctionRegs = 64, producerRegs = 48,
              emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>
    #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128,
              qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear,
              softmaxRegs = 240, correctionRegs = 0, producerRegs = 24,
              emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>
    ```
  }];
  let parameters = (ins
    EnumParameter<FA4_Arch>:$arch,
    "int64_t":$blockM,
    "int64_t":$blockN,
    "int64_t":$headDim,
    OptionalParameter<"std::optional<int64_t>">:$headDimV,
    "int64_t":$qStages,
    "int64_t":$kvStages,
    "int64_t":$gqaPack,
    EnumParameter<FA4_Scheduler>:$scheduler,
    "int64_t":$softmaxRegs,
    "int64_t":$correctionRegs,
    "int64_t":$producerRegs,
    "int64_t":$emulatedExp2,
    "int64_t":$pvSplit,
    "int64_t":$rescaleThreshold,
    OptionalParameter<"std::optional<int64_t>">:$kvSplits,
    DefaultValuedParameter<"::mlir::fa4::SplitCombine",
                           "::mlir::fa4::SplitCombine::workspace">:$splitCombine,
    OptionalParameter<"std::optional<int64_t>">:$operandBytes,
    OptionalParameter<"std::optional<int64_t>">:$polynomialTanh,
    OptionalParameter<"std::optional<int64_t>">:$softcapCeiling,
    OptionalParameter<"std::optional<int64_t>">:$kvInterleave,
    DefaultValuedParameter<"::mlir::fa4::PPrecision",
                           "::mlir::fa4::PPrecision::single">:$pPrecision,
    OptionalParameter<"std::optional<int64_t>">:$sharedKey,
    DefaultValuedParameter<"::mlir::fa4::KernelFamily",
                           "::mlir::fa4::KernelFamily::prefill">:$family
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Warpgroups of one CTA. sm_100a: a softmax warpgroup per Q stage, the
    /// correction/epilogue warpgroup and the load/MMA/store warpgroup.
    /// sm_90a: a consumer warpgroup per Q stage and the load/store
    /// warpgroup.
    int64_t getNumWarpgroups() const;
    /// Q tiles in shared memory: one per Q stage, two on sm_90a up to head
    /// dim 128 (the next work tile's Q loads during the current one).
    int64_t getQSlots() const;
    /// Registers one CTA asks for through setmaxnreg.
    int64_t getRegistersPerCta() const;
    /// CTAs that share a work tile's KV blocks (1: no split).
    int64_t getSplits() const { return getKvSplits().value_or(1); }
    /// Softmax warpgroups per Q stage (sm_100a's kvInterleave; 1 without).
    int64_t getInterleave() const { return getKvInterleave().value_or(1); }
    /// Softmax (sm_90a: consumer) warpgroups of one CTA, each with its own
    /// S and O.
    int64_t getSoftmaxWarpgroups() const {
      return getQStages() * getInterleave();
    }
    /// Threads sharing each query row (sm_100a's sharedKey; 1 without).
    int64_t getKeyShares() const { return getSharedKey().value_or(1); }
    /// Whether the plan builds the swap-AB decode kernel.
    bool isDecode() const { return getFamily() == KernelFamily::decode; }
    /// Whether the splits form a thread-block cluster (1 CTA: none).
    bool isClusterSplit() const {
      return getSplits() > 1 && getSplitCombine() == SplitCombine::cluster;
    }
    /// Shared memory of a cluster split's exchange: per Q stage, the rows'
    /// partial O (Dv f32 words each) and their LSEs, a row padded to 16
    /// bytes.
    static int64_t exchangeBytes(int64_t qStages, int64_t blockM,
                                 int64_t headDimV) {
      return qStages * blockM * (headDimV + 4) * 4;
    }
    /// Of every 16 capped scores, how many take the FMA polynomial tanh.
    int64_t getTanhOnFma() const { return getPolynomialTanh().value_or(0); }
    /// The softcap ceiling in log2 units (0: the running maximum only).
    int64_t getCeiling() const { return getSoftcapCeiling().value_or(0); }
    /// Bytes per element of Q, K and V (2: 16-bit, 1: FP8).
    int64_t getElementBytes() const { return getOperandBytes().value_or(2); }
    /// Whether Q, K and V are FP8 (e4m3).
    bool isFp8() const { return getElementBytes() == 1; }
    /// Whether P is split into a rounded part and its residual, each with
    /// its own PV MMA.
    bool isHiLo() const { return getPPrecision() == PPrecision::hi_lo; }
    /// Dv: headDimV where given, else headDim.
    int64_t getValueHeadDim() const {
      return getHeadDimV().value_or(getHeadDim());
    }
    /// What a plan of these parameters asks of one SM (before they are
    /// verified: the planner sizes its choices with them): shared memory in
    /// bytes, barriers' reserve included, and sm_100a Tensor Memory columns.
    static int64_t sharedMemoryBytes(Arch arch, int64_t qStages,
                                     int64_t kvStages, int64_t blockM,
                                     int64_t blockN, int64_t headDim,
                                     int64_t headDimV,
                                     int64_t elementBytes = 2,
                                     int64_t interleave = 1,
                                     int64_t sharedKey = 1,
                                     KernelFamily family =
                                         KernelFamily::prefill,
                                     int64_t pParts = 1);
    static int64_t tmemColumns(int64_t softmaxWarpgroups, int64_t blockN,
                               int64_t headDimV, int64_t sharedKey = 1);
    /// The decode family: S (double-buffered) and O of a Q tile of
    /// `blockM` rows, transposed: blockM columns per S and per 128 of Dv.
    static int64_t decodeTmemColumns(int64_t blockM, int64_t headDimV) {
      return 2 * blockM + headDimV / 128 * blockM;
    }
  }];
}

#endif // FA4_DIALECT_FA4_IR_FA4ATTRS_TD
