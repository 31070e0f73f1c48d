//===- FA4Attrs.cpp - fa4 attributes --------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa4;

#include "fa4/Dialect/FA4/IR/FA4Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Attrs.cpp.inc"

void FA4Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fa4/Dialect/FA4/IR/FA4Attrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

/// Q stages (two slots each on sm_90a up to head dim 128), the K/V ring (a
/// slot holds a K or a V tile, the wider of the two), the O staging (one
/// tile on sm_100a, one per consumer warpgroup on sm_90a; all 16-bit), on
/// sm_100a the per-row statistics exchange (two f32 per row and Q stage: the
/// rescale factor or row sum, and the row max) and the reserve for
/// mbarriers. fa4-specialize lays shared memory out in exactly these pieces.
static int64_t qSlots(Arch arch, int64_t qStages, int64_t headDim) {
  return arch == Arch::sm_90a && headDim <= 128 ? 2 * qStages : qStages;
}

/// The bytes of one row of a tile: whole 128-byte swizzle atoms (64 16-bit
/// or 128 FP8 columns), the last partly filled where the head dim is not a
/// multiple of the atom.
static int64_t rowBytes(int64_t columns, int64_t elementBytes) {
  return llvm::alignTo(columns * elementBytes, 128);
}

int64_t PlanAttr::sharedMemoryBytes(Arch arch, int64_t qStages,
                                    int64_t kvStages, int64_t blockM,
                                    int64_t blockN, int64_t headDim,
                                    int64_t headDimV, int64_t elementBytes,
                                    int64_t interleave, int64_t sharedKey,
                                    KernelFamily family, int64_t pParts) {
  int64_t qk = rowBytes(headDim, elementBytes);
  // A K tile is blockN rows of Dqk; a V tile blockN rows of Dv, or (FP8,
  // key-major) Dv rows of blockN keys.
  int64_t kTile = qk * blockN;
  int64_t vTile = elementBytes == 1 ? headDimV * rowBytes(blockN, 1)
                                    : rowBytes(headDimV, elementBytes) * blockN;
  int64_t slot = std::max(kTile, vTile);
  int64_t qTiles = qSlots(arch, qStages, std::max(headDim, headDimV));
  int64_t oTiles = arch == Arch::sm_90a ? qStages : 1;
  int64_t oTile = rowBytes(headDimV, 2) * blockM;
  // Two f32 per softmax thread (a row's, or with shared keys each
  // thread's copy of its row's).
  int64_t statistics = arch == Arch::sm_90a ? 0
                                            : qStages * interleave *
                                                  limits::kThreadsPerWarpgroup *
                                                  2 * int64_t(sizeof(float));
  // Shared keys: each Q stage's P (blockM rows of blockN 16-bit keys) for
  // the PV MMA, and its row exchange (two parities of an f32 per thread).
  int64_t sharedKeyBytes =
      sharedKey > 1 ? qStages * (blockM * rowBytes(blockN, elementBytes) +
                                 2 * limits::kThreadsPerWarpgroup *
                                     int64_t(sizeof(float)))
                    : 0;
  if (family == KernelFamily::decode) {
    // One Q tile; P^T (blockM rows of blockN keys; P as hi + lo: two
    // parts), the reduction exchange
    // (two parities of 4 warps' blockM f32), the rows' maxima, and O^T
    // transposed to rows (blockM rows of Dv f32, padded by 16 bytes so that
    // a warp's rows fall in different banks).
    int64_t decodeBytes = pParts * blockM * rowBytes(blockN, elementBytes) +
                          2 * 4 * blockM * int64_t(sizeof(float)) +
                          blockM * int64_t(sizeof(float)) +
                          blockM * (headDimV + 4) * int64_t(sizeof(float));
    return qk * blockM + slot * kvStages + oTile + decodeBytes +
           limits::kSmemReservedBytes;
  }
  return qk * qTiles * blockM + slot * kvStages + oTile * oTiles + statistics +
         sharedKeyBytes + limits::kSmemReservedBytes;
}

/// sm_100a: the softmax warpgroups (one per Q stage, or kvInterleave
/// sharing one), the correction and the producer warpgroup. sm_90a: a
/// consumer warpgroup per Q stage and the producer.
static int64_t registersPerCta(Arch arch, int64_t softmaxWarpgroups,
                               int64_t softmaxRegs, int64_t correctionRegs,
                               int64_t producerRegs) {
  int64_t correction = arch == Arch::sm_90a ? 0 : correctionRegs;
  return limits::kThreadsPerWarpgroup *
         (softmaxWarpgroups * softmaxRegs + correction + producerRegs);
}

int64_t PlanAttr::tmemColumns(int64_t softmaxWarpgroups, int64_t blockN,
                              int64_t headDimV, int64_t sharedKey) {
  // Per softmax warpgroup: S is blockN f32 columns (P aliases it as
  // 16-bit); O is Dv columns. Shared keys fold both over the lanes.
  return softmaxWarpgroups * (blockN + headDimV) / sharedKey;
}

int64_t PlanAttr::getNumWarpgroups() const {
  // The decode family: its softmax warpgroup and the producer warpgroup.
  return getArch() == Arch::sm_90a ? getQStages() + 1
         : isDecode()              ? 2
                                   : getSoftmaxWarpgroups() + 2;
}

int64_t PlanAttr::getQSlots() const {
  return qSlots(getArch(), getQStages(),
                std::max(getHeadDim(), getValueHeadDim()));
}

int64_t PlanAttr::getRegistersPerCta() const {
  return registersPerCta(getArch(), getSoftmaxWarpgroups(), getSoftmaxRegs(),
                         getCorrectionRegs(), getProducerRegs());
}

/// The sm_90a plan (FlashAttention-3 structure): a 64-row wgmma tile per
/// consumer warpgroup, and the fields only the sm_100a pipeline uses at 0.
static LogicalResult
verifyHopperFields(function_ref<InFlightDiagnostic()> emitError,
                   int64_t blockM, int64_t correctionRegs, int64_t pvSplit) {
  if (blockM != 64)
    return emitError() << "blockM must be 64 on sm_90a (one wgmma M=64 tile "
                          "per consumer warpgroup), got "
                       << blockM;
  if (correctionRegs != 0)
    return emitError() << "correctionRegs must be 0 on sm_90a (no correction "
                          "warpgroup), got "
                       << correctionRegs;
  if (pvSplit != 0)
    return emitError() << "pvSplit must be 0 on sm_90a (P stays in "
                          "registers, one PV wgmma), got "
                       << pvSplit;
  return success();
}

/// The decode family (sm_100a swap-AB): 128-key blocks as the MMA's M, a
/// Q tile of 16 or 32 rows as its N (a thread holds a key's scores, the
/// rows' maxima and its share of their sums: at 64 rows they spilled 2-3 KB
/// at 240 registers), one Q stage, its
/// softmax warpgroup rescaling O^T itself, P^T through shared memory.
static LogicalResult
verifyDecodeFields(function_ref<InFlightDiagnostic()> emitError, Arch arch,
                   int64_t blockM, int64_t blockN, int64_t qStages,
                   int64_t correctionRegs, int64_t pvSplit) {
  if (arch != Arch::sm_100a)
    return emitError() << "the decode family needs sm_100a (swap-AB tcgen05 "
                          "MMAs with S and O in Tensor Memory)";
  if (blockN != 128)
    return emitError() << "blockN must be 128 in the decode family (the "
                          "keys are the MMA's M), got "
                       << blockN;
  if (blockM != 16 && blockM != 32)
    return emitError() << "blockM must be 16 or 32 in the decode family (the "
                          "MMA's N; a thread holds that many scores, maxima "
                          "and sums), got "
                       << blockM;
  if (qStages != 1)
    return emitError() << "qStages must be 1 in the decode family, got "
                       << qStages;
  if (correctionRegs != 0)
    return emitError() << "correctionRegs must be 0 in the decode family (its "
                          "softmax warpgroup rescales O), got "
                       << correctionRegs;
  if (pvSplit != 0)
    return emitError() << "pvSplit must be 0 in the decode family (one PV "
                          "MMA per 128 of Dv reads all of P^T), got "
                       << pvSplit;
  return success();
}

LogicalResult PlanAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Arch arch, int64_t blockM,
    int64_t blockN, int64_t headDim, std::optional<int64_t> headDimV,
    int64_t qStages, int64_t kvStages, int64_t gqaPack, Scheduler scheduler,
    int64_t softmaxRegs, int64_t correctionRegs, int64_t producerRegs,
    int64_t emulatedExp2, int64_t pvSplit, int64_t rescaleThreshold,
    std::optional<int64_t> kvSplits, SplitCombine splitCombine,
    std::optional<int64_t> operandBytes, std::optional<int64_t> polynomialTanh,
    std::optional<int64_t> softcapCeiling, std::optional<int64_t> kvInterleave,
    PPrecision pPrecision, std::optional<int64_t> sharedKey,
    KernelFamily family) {
  // Every parameter is bounded before the resource formulas below use it,
  // so that they cannot overflow.
  bool hopper = arch == Arch::sm_90a;
  bool decode = family == KernelFamily::decode;
  if (decode && failed(verifyDecodeFields(emitError, arch, blockM, blockN,
                                          qStages, correctionRegs, pvSplit)))
    return failure();
  if (hopper &&
      failed(verifyHopperFields(emitError, blockM, correctionRegs, pvSplit)))
    return failure();
  // Shared keys: 2 or 4 threads per row, on a Q stage of 128 / sharedKey
  // rows (the weight-stationary MMA's M).
  int64_t keyShares = sharedKey.value_or(1);
  if (keyShares != 1 && keyShares != 2 && keyShares != 4)
    return emitError() << "sharedKey must be 1, 2 or 4, got " << keyShares;
  if (keyShares > 1 && hopper)
    return emitError() << "sharedKey needs sm_100a (the weight-stationary "
                          "tcgen05 MMA)";
  if (!hopper && !decode && blockM != 128 / keyShares)
    return emitError() << "blockM must be " << 128 / keyShares << " on sm_100a"
                       << (keyShares > 1 ? " with sharedKey = " +
                                               std::to_string(keyShares) +
                                               " (a tcgen05.mma.ws M)"
                                         : " (one tcgen05 M=128 tile)")
                       << ", got " << blockM;
  // sm_90a: any multiple of the PV wgmma's K step (16) up to 128 (S is an
  // m64nN wgmma, N a multiple of 8 up to 256; the consumer's registers
  // bound it). sm_100a: 128-key blocks, or 64 where a head dim past 192
  // leaves shared memory no room for 128 (S in 32-column fragments, the PV
  // split in whole fragments).
  if (hopper && (blockN < 16 || blockN > 128 || blockN % 16 != 0))
    return emitError() << "blockN must be a multiple of 16 from 16 to 128 "
                          "on sm_90a, got "
                       << blockN;
  if (!hopper && blockN != 128 && blockN != 64)
    return emitError() << "blockN must be 64 or 128 on sm_100a, got " << blockN;
  // A multiple of the MMAs' K step (16); tiles round it up to whole
  // 128-byte swizzle atoms of 64 columns.
  if (headDim <= 0 || headDim % 16 != 0 || headDim > limits::kMaxHeadDim)
    return emitError() << "headDim must be a positive multiple of 16 up to "
                       << limits::kMaxHeadDim << ", got " << headDim;
  if (headDimV && (*headDimV <= 0 || *headDimV % 16 != 0 ||
                   *headDimV > limits::kMaxHeadDim))
    return emitError() << "headDimV must be a positive multiple of 16 up to "
                       << limits::kMaxHeadDim << ", got " << *headDimV;
  // One spelling per plan: Dv = Dqk is the absent headDimV.
  if (headDimV && *headDimV == headDim)
    return emitError() << "headDimV equals headDim (" << headDim
                       << "); omit it";
  int64_t valueHeadDim = headDimV.value_or(headDim);
  // sm_90a: up to three consumer warpgroups (FlashAttention-3's 192-row
  // tiles at small head dims); sm_100a: two softmax warpgroups' S and O.
  if (qStages < 1 || qStages > (hopper ? 3 : 2))
    return emitError() << "qStages must be in [1, " << (hopper ? 3 : 2) << "]"
                       << " on " << stringifyArch(arch) << ", got " << qStages;
  if (kvStages < 2 || kvStages > limits::kMaxKvStages)
    return emitError() << "kvStages must be in [2, " << limits::kMaxKvStages
                       << "], got " << kvStages;
  if (gqaPack < 1 || blockM % gqaPack != 0)
    return emitError() << "gqaPack must divide blockM (" << blockM
                       << "), got " << gqaPack;
  // sm_90a has no correction warpgroup (its budget is checked to be 0).
  for (auto [name, regs] :
       {std::pair<StringRef, int64_t>{"softmaxRegs", softmaxRegs},
        {"correctionRegs", correctionRegs},
        {"producerRegs", producerRegs}})
    if (!((hopper || decode) && name == "correctionRegs") &&
        (regs < limits::kMinRegisters || regs > limits::kMaxRegisters ||
         regs % 8 != 0))
      return emitError() << name << " must be a multiple of 8 in ["
                         << limits::kMinRegisters << ", "
                         << limits::kMaxRegisters << "], got " << regs;
  if (emulatedExp2 < 0 || emulatedExp2 > 16)
    return emitError() << "emulatedExp2 must be in [0, 16], got "
                       << emulatedExp2;
  if (polynomialTanh && (*polynomialTanh < 0 || *polynomialTanh > 16))
    return emitError() << "polynomialTanh must be in [0, 16], got "
                       << *polynomialTanh;
  if (softcapCeiling &&
      (*softcapCeiling < 1 || *softcapCeiling > limits::kMaxSoftcapCeiling))
    return emitError() << "softcapCeiling must be in [1, "
                       << limits::kMaxSoftcapCeiling << "], got "
                       << *softcapCeiling;
  if (softcapCeiling && operandBytes)
    return emitError() << "softcapCeiling does not apply to FP8 operands "
                          "(e4m3 P's normals end at 2^-6)";
  // The softmax writes P in 32-column fragments; the first PV MMA takes a
  // whole number of them.
  // Shared keys: P goes through shared memory to one PV MMA.
  if (!hopper && keyShares > 1 && pvSplit != 0)
    return emitError() << "pvSplit must be 0 with sharedKey (one PV MMA "
                          "reads P from shared memory), got "
                       << pvSplit;
  if (!hopper && !decode && keyShares == 1 &&
      (pvSplit <= 0 || pvSplit >= blockN || pvSplit % 32 != 0))
    return emitError() << "pvSplit must be a multiple of 32 in (0, blockN = "
                       << blockN << "), got " << pvSplit;
  if (rescaleThreshold < 0 || rescaleThreshold > limits::kMaxRescaleThreshold)
    return emitError() << "rescaleThreshold must be in [0, "
                       << limits::kMaxRescaleThreshold << "], got "
                       << rescaleThreshold;
  if (kvSplits && (*kvSplits < 1 || *kvSplits > limits::kMaxKvSplits))
    return emitError() << "kvSplits must be in [1, " << limits::kMaxKvSplits
                       << "], got " << *kvSplits;
  // A split's CTAs take consecutive units of the strided orders; paired
  // units are two tiles.
  if (kvSplits && *kvSplits > 1 && scheduler == Scheduler::paired)
    return emitError() << "kvSplits > 1 needs the linear or lpt scheduler, "
                          "got paired";
  bool cluster = splitCombine == SplitCombine::cluster;
  if (cluster &&
      (kvSplits.value_or(1) < 2 || *kvSplits > limits::kMaxClusterCtas))
    return emitError() << "splitCombine = cluster makes the splits one "
                          "cluster's CTAs: kvSplits must be in [2, "
                       << limits::kMaxClusterCtas << "], got "
                       << kvSplits.value_or(1);

  // Interleaved softmax warpgroups share the one Q tile of sm_100a's CTA
  // and write a whole row each: not with a second Q stage, and not with
  // split-KV, whose partial rows the combine would have to merge twice.
  if (kvInterleave && (*kvInterleave < 1 || *kvInterleave > 2))
    return emitError() << "kvInterleave must be 1 or 2, got " << *kvInterleave;
  int64_t interleave = kvInterleave.value_or(1);
  if (interleave > 1 && hopper)
    return emitError() << "kvInterleave = 2 needs sm_100a (its softmax "
                          "warpgroups keep S and O in Tensor Memory)";
  if (interleave > 1 && qStages != 1)
    return emitError() << "kvInterleave = 2 shares one Q tile between the "
                          "softmax warpgroups: qStages must be 1, got "
                       << qStages;
  if (interleave > 1 && kvSplits.value_or(1) > 1)
    return emitError() << "kvInterleave = 2 does not combine with kvSplits = "
                       << *kvSplits;

  // FP8: a key-major V tile of 128 keys fills one 128-byte swizzle atom
  // per row (the PV MMA reads 8-bit V K-major; sm_90a's 64-key blocks read
  // the first half of such a tile); P, up to 2^threshold before a rescale,
  // must stay within e4m3's largest finite value (448).
  if (operandBytes && *operandBytes != 1)
    return emitError() << "operandBytes must be 1 (FP8) or absent (16-bit), "
                          "got "
                       << *operandBytes;
  // hi + lo: two 16-bit parts of P (an e4m3 P's residual is not built).
  // With interleaved softmax warpgroups the softmax and the combined
  // epilogue spilled 8-24 bytes at every split of the 512 registers.
  if (interleave > 1 && pPrecision == PPrecision::hi_lo)
    return emitError() << "pPrecision = hi_lo does not combine with "
                          "kvInterleave = 2 (their softmax and combined "
                          "epilogue do not fit the registers of one SM)";
  if (operandBytes && pPrecision == PPrecision::hi_lo)
    return emitError() << "pPrecision = hi_lo needs 16-bit operands (P as "
                          "two f16 or bf16 parts), got FP8";
  if (operandBytes && blockN != 128 && (arch != Arch::sm_90a || blockN != 64))
    return emitError() << "blockN must be 128 with FP8 operands (a key-major "
                          "V row of 128 keys is one 128-byte swizzle atom), "
                          "or 64 on sm_90a (the first half of one), got "
                       << blockN;
  if (operandBytes && rescaleThreshold > limits::kMaxFp8RescaleThreshold)
    return emitError() << "rescaleThreshold must be at most "
                       << limits::kMaxFp8RescaleThreshold
                       << " with FP8 operands (P below 2^threshold must fit "
                          "e4m3, whose largest value is 448), got "
                       << rescaleThreshold;

  // Shared keys: the .ws MMAs' N (S: blockN, O: Dv) is 64, 128 or 256;
  // each thread's shares stay whole 16-column TMEM accesses. Not with what
  // reads a whole row per thread elsewhere (interleaved warpgroups' combine,
  // the cluster exchange, P in Tensor Memory as hi + lo or e4m3).
  if (keyShares > 1) {
    if (valueHeadDim != 64 && valueHeadDim != 128 && valueHeadDim != 256)
      return emitError() << "sharedKey needs Dv of 64, 128 or 256 (the N of "
                            "the PV tcgen05.mma.ws), got "
                         << valueHeadDim;
    if (interleave > 1 || cluster || operandBytes ||
        pPrecision == PPrecision::hi_lo)
      return emitError() << "sharedKey does not combine with "
                         << (interleave > 1 ? "kvInterleave = 2"
                             : cluster      ? "splitCombine = cluster"
                             : operandBytes ? "FP8 operands"
                                            : "pPrecision = hi_lo");
  }

  // The decode family reads a whole row of S^T per thread and keeps its
  // statistics per row: not with the modes that change what a thread
  // holds or how P reaches the MMA.
  if (decode) {
    if (valueHeadDim != 128 && valueHeadDim != 256)
      return emitError() << "the decode family needs Dv of 128 or 256 (O^T "
                            "is Dv / 128 tcgen05 M=128 tiles), got "
                         << valueHeadDim;
    if (keyShares > 1 || interleave > 1 || operandBytes || softcapCeiling)
      return emitError() << "the decode family does not combine with "
                         << (keyShares > 1    ? "sharedKey"
                             : interleave > 1 ? "kvInterleave = 2"
                             : operandBytes   ? "FP8 operands"
                                              : "softcapCeiling");
  }

  // What the plan asks of one SM.
  int64_t softmaxWarpgroups = qStages * interleave;
  int64_t warpgroups = hopper   ? qStages + 1
                       : decode ? 2
                                : softmaxWarpgroups + 2;
  int64_t registers = registersPerCta(arch, softmaxWarpgroups, softmaxRegs,
                                      correctionRegs, producerRegs);
  int64_t pool = limits::registerPool(warpgroups);
  if (registers > pool) {
    InFlightDiagnostic diag = emitError()
                              << "register budgets (" << softmaxWarpgroups
                              << " x " << softmaxRegs;
    if (hopper)
      diag << " consumer + ";
    else
      diag << " softmax + " << correctionRegs << " correction + ";
    return diag << producerRegs << " producer) x 128 threads need "
                << registers << " registers per CTA of " << warpgroups
                << " warpgroups, more than the " << pool
                << " it is launched with ("
                << limits::launchRegistersPerThread(
                       warpgroups * limits::kThreadsPerWarpgroup)
                << " per thread; setmaxnreg only moves them between "
                   "warpgroups)";
  }
  if (decode) {
    int64_t columns = decodeTmemColumns(blockM, valueHeadDim);
    if (columns > limits::kTmemColumns)
      return emitError() << "plan needs " << columns
                         << " TMEM columns (2 S^T + " << valueHeadDim / 128
                         << " O^T tiles of " << blockM
                         << " columns), more than the " << limits::kTmemColumns
                         << " available";
  } else if (arch == Arch::sm_100a) {
    int64_t columns =
        tmemColumns(softmaxWarpgroups, blockN, valueHeadDim, keyShares);
    if (columns > limits::kTmemColumns)
      return emitError() << "plan needs " << columns << " TMEM columns ("
                         << softmaxWarpgroups
                         << (interleave > 1 ? " interleaved softmax warpgroups"
                                            : " Q stages")
                         << " x (" << blockN << " S + " << valueHeadDim << " O)"
                         << (keyShares > 1 ? " / " + std::to_string(keyShares)
                                           : "")
                         << "), more than the " << limits::kTmemColumns
                         << " available";
  }
  int64_t smem = sharedMemoryBytes(
      arch, qStages, kvStages, blockM, blockN, headDim, valueHeadDim,
      operandBytes.value_or(2), interleave, keyShares, family,
      pPrecision == PPrecision::hi_lo ? 2 : 1);
  if (cluster)
    smem += exchangeBytes(qStages, blockM, valueHeadDim);
  if (smem > limits::kSmemBytes)
    return emitError() << "plan needs " << smem << " bytes of shared memory ("
                       << qStages << " Q stages, " << kvStages
                       << " K/V stages, O staging"
                       << (hopper ? "" : ", statistics")
                       << (cluster ? ", the cluster's partial rows" : "")
                       << (keyShares > 1 ? ", P and the row exchange" : "")
                       << (decode ? ", P^T, the reductions and O^T" : "")
                       << "), more than the " << limits::kSmemBytes
                       << " available";
  return success();
}

//===----------------------------------------------------------------------===//
// EndpointAttr
//===----------------------------------------------------------------------===//

// #fa4.endpoint<tma> | <mma> | <threads = N>
Attribute EndpointAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<EndpointKind> kind = symbolizeEndpointKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "expected tma, mma, threads or cluster, got '"
                          << keyword << "'";
    return {};
  }
  int64_t threads = 0;
  bool counted =
      *kind == EndpointKind::threads || *kind == EndpointKind::cluster;
  if (counted && (parser.parseEqual() || parser.parseInteger(threads)))
    return {};
  if (parser.parseGreater())
    return {};
  return EndpointAttr::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), *kind, threads);
}

void EndpointAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyEndpointKind(getKind());
  if (getKind() == EndpointKind::threads || getKind() == EndpointKind::cluster)
    printer << " = " << getThreads();
  printer << ">";
}

LogicalResult
EndpointAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     EndpointKind kind, int64_t threads) {
  if (kind == EndpointKind::threads && (threads < 1 || threads > 1024))
    return emitError() << "a threads endpoint has 1 to 1024 threads, got "
                       << threads;
  if (kind == EndpointKind::cluster &&
      (threads < 2 || threads > limits::kMaxClusterCtas))
    return emitError() << "a cluster endpoint has 2 to "
                       << limits::kMaxClusterCtas << " CTAs, got " << threads;
  if (kind != EndpointKind::threads && kind != EndpointKind::cluster &&
      threads != 0)
    return emitError() << "only a threads or cluster endpoint has a count";
  return success();
}
