//===- Plan.cpp - choose the plan of every fa4.attention ------------------===//

#include "fa4/Transforms/Passes.h"
#include "fa4/Transforms/Planning.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4PLAN
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

StringRef mlir::fa4::fp8PagesRule() {
  return "FP8 reads V key-major in 128-key TMA boxes, each within one "
         "page: a paged KV cache needs pages of at least 128 keys";
}

/// Checks the options before any op is planned: names that exist, numbers
/// that choose or are in range for some plan (each plan checks the rest).
static LogicalResult
checkOptions(const FA4PlanOptions &options,
                  function_ref<InFlightDiagnostic()> emitError) {
  if (!symbolizeArch(options.arch))
    return emitError() << "fa4-plan: unknown arch '" << options.arch
                       << "' (expected sm_100a or sm_90a)";
  if (!options.scheduler.empty() && !symbolizeScheduler(options.scheduler))
    return emitError() << "fa4-plan: unknown scheduler '" << options.scheduler
                       << "' (expected linear, lpt or paired)";
  if (!options.splitCombine.empty() &&
      !symbolizeSplitCombine(options.splitCombine))
    return emitError() << "fa4-plan: unknown split-combine '"
                       << options.splitCombine
                       << "' (expected workspace or cluster)";
  if (!options.family.empty() && !symbolizeKernelFamily(options.family))
    return emitError() << "fa4-plan: unknown family '" << options.family
                       << "' (expected prefill or decode)";
  if (!options.pPrecision.empty() && !symbolizePPrecision(options.pPrecision))
    return emitError() << "fa4-plan: unknown p-precision '"
                       << options.pPrecision << "' (expected single or hi_lo)";
  // 0 (or -1 where 0 is a value) chooses; anything below is a mistake, not
  // a request to choose.
  struct Numeric {
    StringRef name;
    int64_t value, choose;
  };
  for (Numeric option : {
           Numeric{"block-n", options.blockN, 0},
           Numeric{"q-stages", options.qStages, 0},
           Numeric{"kv-stages", options.kvStages, 0},
           Numeric{"gqa-pack", options.gqaPack, 0},
           Numeric{"softmax-regs", options.softmaxRegs, 0},
           Numeric{"correction-regs", options.correctionRegs, 0},
           Numeric{"producer-regs", options.producerRegs, 0},
           Numeric{"emulated-exp2", options.emulatedExp2, -1},
           Numeric{"polynomial-tanh", options.polynomialTanh, -1},
           Numeric{"softcap-ceiling", options.softcapCeiling, -1},
           Numeric{"pv-split", options.pvSplit, 0},
           Numeric{"kv-interleave", options.kvInterleave, 0},
           Numeric{"shared-key", options.sharedKey, 0},
           Numeric{"block-m", options.blockM, 0},
           Numeric{"rescale-threshold", options.rescaleThreshold, -1},
           Numeric{"kv-splits", options.kvSplits, 0},
       })
    if (option.value < option.choose)
      return emitError() << "fa4-plan: option " << option.name << " must be "
                         << (option.choose == 0 ? "positive" : "non-negative")
                         << " (" << option.choose << " chooses), got "
                         << option.value;
  return success();
}

int64_t mlir::fa4::chooseKvSplits(AttentionOp op, Arch arch,
                                  int64_t positionsPerTile, int64_t blockN,
                                  int64_t gqaPack) {
  // Packed sequences do not split; dynamic sizes are the runtime's to
  // weigh.
  if (op.isVarlen())
    return 1;
  ShapedType query = op.getQuery().getType();
  unsigned seqDim = op.getSequenceDim();
  int64_t batch = query.getDimSize(0), seqQ = query.getDimSize(seqDim);
  int64_t seqKv = op.getKey().getType().getDimSize(seqDim);
  if (TypedValue<ShapedType> table = op.getPageTable()) {
    int64_t maxPages = table.getType().getDimSize(1);
    seqKv = ShapedType::isDynamic(maxPages) ? ShapedType::kDynamic
                                            : maxPages * op.getPageSize();
  }
  if (ShapedType::isDynamic(batch) || ShapedType::isDynamic(seqQ) ||
      ShapedType::isDynamic(seqKv) || seqQ == 0 || seqKv == 0)
    return 1;
  return splitsFor(arch,
                   batch * (op.getNumQueryHeads() / gqaPack) *
                       llvm::divideCeil(seqQ, positionsPerTile),
                   llvm::divideCeil(seqKv, blockN));
}

/// Whether `op`'s static sizes make fewer work tiles of `positionsPerTile`
/// positions than the SMs.
static bool fewTiles(AttentionOp op, Arch arch, int64_t positionsPerTile,
                     int64_t gqaPack) {
  if (op.isVarlen())
    return false;
  ShapedType query = op.getQuery().getType();
  int64_t batch = query.getDimSize(0);
  int64_t seqQ = query.getDimSize(op.getSequenceDim());
  if (ShapedType::isDynamic(batch) || ShapedType::isDynamic(seqQ) || seqQ == 0)
    return false;
  int64_t tiles = batch * (op.getNumQueryHeads() / gqaPack) *
                  llvm::divideCeil(seqQ, positionsPerTile);
  int64_t sms = arch == Arch::sm_90a ? 132 : 148;
  return tiles < sms;
}

/// The KV block (keys per block) `op`'s plan takes unless the options fix
/// it, before a paged cache or interleaved softmax warpgroups narrow it.
static int64_t defaultBlockN(AttentionOp op, Arch target, bool hiLo) {
  bool hopper = target == Arch::sm_90a;
  bool fp8 = op.isFp8();
  int64_t headDim = op.getHeadDimQK(), headDimV = op.getHeadDimV();
  int64_t widest = std::max(headDim, headDimV);
  // sm_90a past head dim 128: 64-key blocks keep S and P small next to the
  // O fragment (up to 128 registers). FP8 too (its 128-key S, O and P
  // spilled 8-388 bytes at 192 and 256): its blocks read the first half of
  // a 128-key V box, a key-major V row of one 128-byte atom. sm_100a's
  // blocks are 128 keys (S, P and O live in Tensor Memory) where shared
  // memory holds them.
  bool wide = hopper && widest > 128;
  // Score and mask regions add per-element code to the sm_90a consumer,
  // whose 128-key S fragment, the next block's and O already fill its
  // registers (96 bytes of spills for ALiBi at head dim 128): 64-key
  // blocks there.
  bool modified = !op.getScoreMod().empty() || !op.getMaskMod().empty();
  // (FP8 keeps 128-key blocks with regions up to head dim 128: ALiBi
  // there spills nothing.) P as hi + lo likewise: its residual is a second
  // fragment the size of P (32 registers at 128 keys), which spilled 4-28
  // bytes from head dim 128 on (causal, windows, sinks, softcap). On
  // sm_100a, whose softmax reads S twice with hi + lo, the masks' second
  // pass spilled 4-16 bytes at 128 keys (windows, O rotated back): 64, but
  // for packed sequences with Q alone rotated (64-key blocks spilled 8
  // bytes there with or without hi + lo, 128 nothing).
  bool narrowHiLo =
      hiLo && !(op.isVarlen() && op.hasRope() && !op.getRopeOutput());
  bool crowded = modified || (hiLo && widest >= 128);
  // sm_100a past head dim 192 (16-bit): even one Q stage with a ring of two
  // 128-key K/V slots and the O staging overflows shared memory (264 KB at
  // 256); 64-key blocks fit a ring of 3 (S 64 and O 256 TMEM columns).
  bool narrowBlackwell =
      !hopper &&
      PlanAttr::sharedMemoryBytes(target, 1, 2, 128, 128, headDim, headDimV,
                                  fp8 ? 1 : 2) > limits::kSmemBytes;
  // sm_90a past head dim 192 (16-bit, not paged: 48 keys never tile
  // power-of-two pages): 48-key blocks and a ring of 4 ran 1.12-1.33x the
  // 64-key blocks' ring of 3 on an H100 (head dim 256, causal or not; 32
  // keys and a ring of 6 were slower than 48).
  bool widest16 = hopper && !fp8 && widest > 192 && !op.getPageSize();
  // With P as hi + lo 32 (O rotated back spilled 124 bytes at 48).
  if (widest16)
    return hiLo ? 32 : 48;
  // sm_90a past head dim 128 up to 192 (16-bit, not paged, no regions or
  // hi + lo): 80-key blocks ran 1.00-1.10x the 64-key ones on an H100
  // (head dim 192, causal or not, 2k-16k keys: 0.97-1.20x cuDNN); 96 and
  // 112 ran 0.72-0.93x (2026-12-07, docs/HOPPER.md).
  if (hopper && !fp8 && widest > 128 && !op.getPageSize() && !hiLo && !crowded)
    return 80;
  return wide || narrowBlackwell || (!fp8 && hopper && crowded) ||
                 (!hopper && !fp8 && narrowHiLo)
             ? 64
             : 128;
}

int64_t mlir::fa4::splitsFor(Arch arch, int64_t tiles, int64_t kvBlocks) {
  // Splitting pays where the tiles leave most SMs idle (on an H100, 64
  // decode tiles on 132 SMs already stream the cache at the copy's rate:
  // two splits were 1.04-1.15x slower) and each has enough KV blocks that
  // every share keeps a few of them: the partials each
  // split writes and the combine reads then cost little next to the K/V
  // it streams.
  constexpr int64_t kMinBlocksToSplit = 8, kMinBlocksPerSplit = 4;
  int64_t sms = arch == Arch::sm_90a ? 132 : 148;
  if (tiles <= 0 || 4 * tiles > sms || kvBlocks < kMinBlocksToSplit)
    return 1;
  // Whole waves: one more unit than the SMs would run a second wave.
  int64_t splits = std::min<int64_t>(
      {sms / tiles, kvBlocks / kMinBlocksPerSplit, limits::kMaxKvSplits});
  return std::max<int64_t>(splits, 1);
}

/// What the decode family refuses before a plan is chosen, at the op in its
/// terms (the plan verifier holds the plan's fields to the same rules).
static LogicalResult
checkDecodeOptions(AttentionOp op, const FA4PlanOptions &options, Arch target) {
  bool decode = options.family == "decode";
  if (!decode) {
    if (options.blockM > 0)
      return op.emitOpError()
             << "block-m applies to the decode family (family=decode); a "
                "prefill Q tile's rows follow from the target";
    return success();
  }
  if (target != Arch::sm_100a)
    return op.emitOpError() << "family=decode needs sm_100a (swap-AB tcgen05 "
                               "MMAs with S and O in Tensor Memory), got "
                            << stringifyArch(target);
  int64_t headDimV = op.getHeadDimV();
  if (headDimV != 128 && headDimV != 256)
    return op.emitOpError() << "family=decode needs a value head dim of 128 "
                               "or 256 (O^T is Dv / 128 MMA tiles), got "
                            << headDimV;
  StringRef refused = op.isFp8()                   ? "FP8 operands"
                      : options.sharedKey > 1      ? "shared-key"
                      : options.kvInterleave > 1   ? "kv-interleave=2"
                      : options.softcapCeiling > 0 ? "softcap-ceiling"
                      : !op.getScoreMod().empty() || !op.getMaskMod().empty()
                          ? "score or mask regions"
                          : "";
  if (!refused.empty())
    return op.emitOpError()
           << "family=decode does not combine with " << refused;
  return success();
}

/// The decode family's default GQA packing: the largest divisor of the
/// group that divides a Q tile of 16 or 32 rows (8 heads: 8; 12: 4; 7: 1).
static int64_t decodePack(int64_t groupSize) {
  for (int64_t pack = groupSize; pack > 1; --pack)
    if (groupSize % pack == 0 && 32 % pack == 0)
      return pack;
  return 1;
}

/// The decode family's default Q tile: 16 rows where the static query's
/// positions times the packed heads fit them, else 32 (a dynamic or packed
/// query: 32).
static int64_t decodeRows(AttentionOp op, int64_t pack) {
  int64_t seqQ = op.getQuery().getType().getDimSize(op.getSequenceDim());
  if (op.isVarlen() || ShapedType::isDynamic(seqQ) || seqQ == 0)
    return 32;
  return seqQ * pack <= 16 ? 16 : 32;
}

FailureOr<PlanAttr> mlir::fa4::choosePlan(AttentionOp op,
                                          const FA4PlanOptions &options) {
  if (failed(checkOptions(options, [&] { return op.emitOpError(); })))
    return failure();
  // An option of 0 (-1 where 0 is a choice, "" for a name) is unset.
  auto positiveOr = [](int64_t value, int64_t choice) {
    return value > 0 ? value : choice;
  };
  auto nonNegativeOr = [](int64_t value, int64_t choice) {
    return value >= 0 ? value : choice;
  };
  Arch target = *symbolizeArch(options.arch);
  bool hopper = target == Arch::sm_90a;
  StringRef arch = stringifyArch(target);
  int64_t headDim = op.getHeadDimQK(), headDimV = op.getHeadDimV();
  // The MMAs step through K 16 elements at a time, and Dv is the N of P V
  // (at most 256); tiles round both up to 64-column atoms.
  for (auto [name, dim] :
       {std::pair<StringRef, int64_t>{"", headDim}, {"value ", headDimV}}) {
    if (dim % 16 != 0 || dim > limits::kMaxHeadDim) {
      InFlightDiagnostic diag = op.emitOpError()
                                << name << "head dim " << dim
                                << " is not supported on " << arch
                                << " (supported: multiples of 16 up to "
                                << limits::kMaxHeadDim << ")";
      // Name what a wide O overflows (MLA's 512-wide latent): one f32
      // column of Tensor Memory per O column beside the smallest S, or
      // (sm_90a) a consumer's registers for its 64 rows; short of that, P V
      // is one MMA whose N is Dv.
      if (name != "value " || dim % 16 != 0)
        return diag;
      constexpr int64_t kMaxMmaN = 256, kSmallestS = 64, kThreadRegs = 255;
      if (!hopper && dim + kSmallestS > limits::kTmemColumns)
        return diag << ": O alone takes " << dim
                    << " f32 TMEM columns, beside S's " << kSmallestS
                    << " more than the " << limits::kTmemColumns
                    << " of a CTA (splitting O over a CTA pair is not built)";
      if (hopper && dim / 2 > kThreadRegs)
        return diag << ": a consumer's 64-row O fragment takes " << dim / 2
                    << " registers per thread, more than the " << kThreadRegs
                    << " a thread has";
      return diag << ": P V is one " << (hopper ? "wgmma" : "tcgen05 MMA")
                  << " whose N is Dv, at most " << kMaxMmaN
                  << " (splitting it over O's columns is not built)";
    }
  }
  int64_t widest = std::max(headDim, headDimV);
  bool fp8 = op.isFp8();
  // A Q tile is one tcgen05 M=128 tile on sm_100a, one consumer
  // warpgroup's wgmma M=64 tile on sm_90a. Shared keys (sm_100a): the
  // weight-stationary MMA's M of 32 or 64 rows, each row held by 4 or 2
  // threads.
  int64_t sharedKey = positiveOr(options.sharedKey, 1);
  if (sharedKey != 1 && sharedKey != 2 && sharedKey != 4)
    return op.emitOpError()
           << "shared-key must be 1, 2 or 4, got " << sharedKey;
  if (sharedKey > 1 && hopper)
    return op.emitOpError() << "shared-key needs sm_100a (the "
                               "weight-stationary tcgen05 MMA), got "
                            << arch;
  if (sharedKey > 1 && op.hasRope() && op.getRopeOutput())
    return op.emitOpError()
           << "shared-key does not combine with rope_output (O's rotated "
              "columns would span the threads that share a row)";
  int64_t blockM = hopper ? 64 : 128 / sharedKey;
  int64_t groupSize = op.getGroupSize();
  // The decode family (sm_100a swap-AB): the Q tile is the MMA's N.
  bool decode = options.family == "decode";
  KernelFamily family = decode ? KernelFamily::decode : KernelFamily::prefill;
  if (failed(checkDecodeOptions(op, options, target)))
    return failure();
  // The query heads of a group share K/V: pack as many of them into a Q
  // tile's rows as divide both the group and the tile (a ratio of 7 packs
  // none, 6 packs 2).
  int64_t gqaPack =
      positiveOr(options.gqaPack,
                 decode ? decodePack(groupSize) : std::gcd(groupSize, blockM));
  bool hiLo = options.pPrecision == "hi_lo";
  if (decode) {
    blockM = positiveOr(options.blockM, decodeRows(op, gqaPack));
    // Fewer rows where the tile's shared memory leaves no room for a ring
    // of two K/V slots.
    int64_t unit = std::max<int64_t>(16, gqaPack);
    while (options.blockM <= 0 && blockM > unit &&
           PlanAttr::sharedMemoryBytes(target, 1, 2, blockM, 128, headDim,
                                       headDimV, 2, 1, 1, KernelFamily::decode,
                                       hiLo ? 2 : 1) > limits::kSmemBytes)
      blockM -= unit;
  }
  if (groupSize % gqaPack != 0 || blockM % gqaPack != 0)
    return op.emitOpError()
           << "gqa-pack " << gqaPack << " must divide both the GQA ratio ("
           << groupSize << ") and the " << blockM
           << "-row Q tile; the divisors of both are those of "
           << std::gcd(groupSize, blockM);

  bool causal = op.getCausal();
  int64_t blockN = positiveOr(options.blockN,
                              decode ? 128 : defaultBlockN(op, target, hiLo));
  // Score and mask regions (per-element code in the softmax).
  bool modified = !op.getScoreMod().empty() || !op.getMaskMod().empty();
  int64_t elementBytes = fp8 ? 1 : 2;
  // A paged KV cache: a block lies in one page or spans whole pages (one
  // TMA box per page); the verifier holds a block-n option to that. The
  // load warp computes every box's page: more than two per block spill
  // sm_90a's 40 registers (pages of 16 keys with 128-key blocks: 112 bytes
  // at head dim 128), more than four sm_100a's 48 (pages of 16: 4-48
  // bytes). sm_90a plans smaller blocks; sm_100a's stay as chosen above.
  if (int64_t pageSize = op.getPageSize()) {
    if (fp8 && pageSize < limits::kFp8MinPageSize)
      return op.emitOpError()
             << fp8PagesRule() << ", got pages of " << pageSize << " keys";
    int64_t maxPages = hopper ? 2 : 4;
    if (hopper && options.blockN <= 0)
      blockN = std::min(blockN, std::max<int64_t>(16, maxPages * pageSize));
    if (blockN > maxPages * pageSize)
      return op.emitOpError()
             << "KV blocks of " << blockN << " keys span " << blockN / pageSize
             << " pages of " << pageSize << " keys, more than the " << maxPages
             << " whose page indices the " << arch << " load warp holds; "
             << (hopper ? "use a block-n of at most " +
                              std::to_string(maxPages * pageSize)
                        : "use pages of at least " +
                              std::to_string(blockN / maxPages) + " keys");
  }
  // FA4 splits P so the first PV MMA starts before softmax finishes the row:
  // 3/4 of the columns when there is no mask to apply, half with one. On
  // sm_90a P stays in registers and feeds one PV wgmma.
  // (64-key blocks: one 32-column fragment first.)
  // (Computed once blockN is final: interleaving may narrow it below.)
  auto defaultPvSplit = [&] {
    return hopper || sharedKey > 1 || decode    ? 0
           : causal || modified || blockN < 128 ? blockN / 2
                                                : blockN * 3 / 4;
  };
  // Causal tiles visit more blocks the later their rows: the longest go
  // first (or in balanced pairs). A window's left bound caps every tile at
  // its width, so only the first tiles are shorter and pairs no longer
  // balance: LPT (0.92x the dense causal kernel's throughput on the H200 at
  // a 4096 window, paired 0.89x, linear 0.82x). Past head dim 192 with
  // packed query heads a pair's second tile's coordinates spill the
  // 232-register consumer (44 bytes at head dim 256, GQA 4); LPT does not,
  // and ran 2-6% faster (H100 and H200, GQA 16/4 and 32/4 with LSE).
  bool windowed = op.getEffectiveWindow().first >= 0;
  bool widePacked = hopper && widest > 192 && gqaPack > 1;
  Scheduler scheduler = !causal                              ? Scheduler::linear
                        : hopper && !windowed && !widePacked ? Scheduler::paired
                                                             : Scheduler::lpt;
  if (!options.scheduler.empty())
    scheduler = *symbolizeScheduler(options.scheduler);

  // sm_100a: two Q stages (ping-pong softmax warpgroups) where their S and
  // O fit the 512 TMEM columns (head dims up to 128), else one.
  int64_t qStages =
      positiveOr(options.qStages,
                 !decode && (hopper || PlanAttr::tmemColumns(
                                           2, blockN, headDimV, sharedKey) <=
                                           limits::kTmemColumns)
                     ? 2
                     : 1);
  // sm_100a: both softmax warpgroups on one Q tile, each over every other
  // KV block (kvInterleave = 2), where a second Q stage would leave a
  // warpgroup idle or SMs without work: past Dv 128, where two Q stages'
  // S and O overflow Tensor Memory (one softmax warpgroup would leave the
  // MMA warp waiting on it every block; 64-key blocks make room for two S
  // and two O up to Dv 192), and for static sizes whose two-stage tiles
  // leave SMs idle without a split. Not where the options fix the stages
  // or ask for a split, nor where fa4-plan would split (decode: the split
  // fills the SMs, and the two do not combine), nor with P as hi + lo (the
  // verifier's rule).
  int64_t interleave = options.kvInterleave;
  if (interleave <= 0) {
    interleave = 1;
    bool free = !hopper && !decode && !hiLo && sharedKey == 1 &&
                options.qStages <= 0 && options.kvSplits <= 0 &&
                options.splitCombine.empty() &&
                chooseKvSplits(op, target, qStages * (blockM / gqaPack), blockN,
                               gqaPack) == 1;
    bool idleWarpgroup =
        qStages == 1 && !fp8 && options.blockN <= 0 &&
        PlanAttr::tmemColumns(2, 64, headDimV) <= limits::kTmemColumns;
    bool idleSms =
        qStages == 2 && fewTiles(op, target, 2 * (blockM / gqaPack), gqaPack);
    if (free && (idleWarpgroup || idleSms))
      interleave = 2;
  }
  if (interleave > 1) {
    // (Stages the options fix are the verifier's to hold to the rule.)
    if (options.qStages <= 0)
      qStages = 1;
    if (options.blockN <= 0 &&
        PlanAttr::tmemColumns(2, blockN, headDimV) > limits::kTmemColumns)
      blockN = 64;
  }
  // sm_90a decode: a query that one consumer's Q tile holds (few new tokens
  // times the packed heads) leaves the second consumer only padding rows,
  // whose MMAs and softmax slow the first (on an H100, 0.68-0.81x the time
  // of two stages at one new token, split or not).
  int64_t staticSeqQ = op.getQuery().getType().getDimSize(op.getSequenceDim());
  if (hopper && options.qStages <= 0 && !op.isVarlen() &&
      !ShapedType::isDynamic(staticSeqQ) &&
      staticSeqQ <= blockM / gqaPack)
    qStages = 1;
  // sm_90a up to head dim 64: FA3's 192-row tile, three consumer
  // warpgroups at 160 registers (1.15-1.29x two consumers on an H100,
  // dense and packed GQA, causal or not). Not where a third consumer's
  // registers spill (windows, softcap, rotary embedding, packed sequences,
  // regions: 16-44 bytes), nor with pages, FP8, P as hi + lo or a split
  // (decode: the split fills the SMs). Causal 128-key blocks spill 16
  // bytes under the paired scheduler; 112 keys spill nothing.
  if (hopper && qStages == 2 && options.qStages <= 0 && !fp8 && !hiLo &&
      widest <= 64 && !modified && !windowed && !op.getSoftcap() &&
      !op.hasRope() && !op.isVarlen() && !op.getPageSize() &&
      options.kvSplits <= 0 && options.splitCombine.empty() &&
      chooseKvSplits(op, target, 3 * (blockM / gqaPack), blockN, gqaPack) ==
          1) {
    qStages = 3;
    if (causal && options.blockN <= 0)
      blockN = 112;
  }
  // A cluster split keeps each Q stage's partial rows in shared memory: one
  // Q stage (the split is for decode, whose query one stage holds) and the
  // ring that fits beside them.
  bool clusterSplit = options.splitCombine == "cluster";
  if (clusterSplit && options.qStages <= 0)
    qStages = 1;
  auto planBytes = [&](int64_t kvSlots) {
    return PlanAttr::sharedMemoryBytes(
               target, qStages, kvSlots, blockM, blockN, headDim, headDimV,
               elementBytes, interleave, sharedKey, family, hiLo ? 2 : 1) +
           (clusterSplit ? PlanAttr::exchangeBytes(qStages, blockM, headDimV)
                         : 0);
  };
  // The deepest K/V ring up to the default that fits shared memory (never
  // below the 2 slots the protocol needs; the verifier reports a plan that
  // does not fit even so). sm_90a: 4 slots where they fit (head dim 192:
  // 1.22-1.40x the throughput of 3 on the H200; 256 fits 3); FP8 past 192
  // takes 3 (4 fit, and spilled 16 bytes in causal packed GQA).
  int64_t kvStages = options.kvStages;
  if (kvStages <= 0) {
    kvStages = (hopper && !(fp8 && widest > 192)) || decode ? 4 : 3;
    while (kvStages > 2 && planBytes(kvStages) > limits::kSmemBytes)
      --kvStages;
    // The smallest plan of this head dim does not fit: say so in its terms
    // (a plan the options chose is the verifier's to report).
    int64_t smallest = PlanAttr::sharedMemoryBytes(
        target, qStages, kvStages, blockM, blockN, headDim, headDimV,
        elementBytes, interleave, sharedKey, family, hiLo ? 2 : 1);
    if (options.qStages <= 0 && smallest > limits::kSmemBytes) {
      InFlightDiagnostic diag = op.emitOpError() << "head dim " << headDim;
      if (headDimV != headDim)
        diag << " (value " << headDimV << ")";
      return diag << " does not fit " << arch << ": " << qStages << " Q stage"
                  << (qStages == 1 ? "" : "s") << ", a " << kvStages
                  << "-slot K/V ring and the O staging of "
                  << llvm::alignTo(widest, 64) << "-column tiles need "
                  << smallest << " bytes of shared memory, more than the "
                  << limits::kSmemBytes << " available";
    }
  }

  // A split's CTAs take consecutive units of the strided orders: a paired
  // scheduler the options ask for keeps its tiles whole.
  bool pairedAsked = options.scheduler == "paired";
  int64_t kvSplits = positiveOr(
      options.kvSplits,
      pairedAsked ? 1
                  : chooseKvSplits(op, target, qStages * (blockM / gqaPack),
                                   blockN, gqaPack));
  // A cluster split the options ask for without a split count: the chosen
  // one within a cluster's 2 to 8 CTAs.
  if (clusterSplit && options.kvSplits <= 0)
    kvSplits = std::clamp<int64_t>(kvSplits, 2, limits::kMaxClusterCtas);
  if (kvSplits > 1 && scheduler == Scheduler::paired && !pairedAsked)
    scheduler = Scheduler::lpt;
  SplitCombine splitCombine =
      options.splitCombine.empty()
          ? SplitCombine::workspace
          : *symbolizeSplitCombine(options.splitCombine);

  // Split-KV on sm_90a: the store warp combines the splits' rows, which
  // needs more than the producer's 40 registers (36 bytes of spills at
  // head dim 64); with two consumers they give up 8. With one consumer the
  // two warpgroups' pool holds 56 for the producer anyway (at 40 the load
  // warp of 64-key pages spilled 4 bytes).
  bool splitHopper = hopper && kvSplits > 1;
  // Packed sequences with a rotary embedding rotating O back on sm_100a:
  // the correction warpgroup's epilogue spilled at 64 (16 bytes at head
  // dim 128); swept at head dims 64 and 128, it takes 80 from the softmax
  // warpgroups' 200 (72 from the load warpgroup still spilled 12 bytes).
  // Interleaved softmax warpgroups: the correction warpgroup's combined
  // epilogue holds both warpgroups' totals and O fragments (at 64 it
  // spilled 52-88 bytes). Swept over the config matrix's interleaved rows:
  // with 128-key blocks 88 from the softmax warpgroups (192: at 184 a
  // window's masking spilled 92 bytes) and the load warpgroup (40); with
  // 64-key blocks (Dv past 128) the softmax needs less and the epilogue of
  // 192 columns more (88 spilled 12-16 bytes with LSE): 184 / 96 / 48.
  bool ropeOutput =
      !hopper && op.isVarlen() && op.hasRope() && op.getRopeOutput();
  // Shared keys with 128 of O's columns per thread (Dv 256 at two threads
  // per row): the correction warpgroup spilled 12 bytes at 64; 80 from the
  // softmax warpgroups' 200 spill nothing.
  bool wideShare = sharedKey > 1 && headDimV / sharedKey >= 128;
  bool interleaved = interleave > 1,
       narrowInterleaved = interleaved && blockN < 128;
  // sm_90a with three consumers (q-stages=3): 512 threads share the
  // register file, 3 x 160 + 32 of 512 per thread.
  bool threeConsumers = hopper && qStages == 3;
  // The decode family: one softmax warpgroup (a key's scores, the rows'
  // maxima and its share of their sums: 3 x blockM registers; at 192 a
  // 32-row tile spilled 52-508 bytes) beside the producer warpgroup.
  int64_t consumerRegs = decode                                   ? 240
                         : narrowInterleaved                      ? 184
                         : ropeOutput || interleaved || wideShare ? 192
                         : !hopper                                ? 200
                         : threeConsumers                         ? 160
                         : splitHopper && qStages == 2            ? 224
                                                                  : 232;
  int64_t correctionRegs = hopper || decode          ? 0
                           : narrowInterleaved       ? 96
                           : interleaved             ? 88
                           : ropeOutput || wideShare ? 80
                                                     : 64;
  int64_t producerRegs = decode                              ? 56
                         : interleaved && !narrowInterleaved ? 40
                         : !hopper                           ? 48
                         : threeConsumers                    ? 32
                         : splitHopper || qStages == 1       ? 56
                                                             : 40;

  // Softcap: on sm_100a half of the tanh from the FMA polynomial. The
  // SASS counts per KV block at head dim 128 (docs/PERFORMANCE.md): MUFU
  // tanh makes the softmax MUFU-bound (3728 MUFU cycles against 2048 of
  // the tensor core and 1963 issue slots); with 8 of 16 on the FMA pipe the
  // within-cap branch takes 2704 MUFU cycles and at most 2854 issue slots,
  // and the fallback branch the MUFU tanh's. On sm_90a the consumer is
  // issue-bound and the polynomial lost on the H200 (docs/HOPPER.md): MUFU
  // tanh only. FP8 keeps MUFU tanh until counted. (Asked of an attention
  // without a softcap, checkKernelLimits refuses it.)
  int64_t tanhOnFma =
      nonNegativeOr(options.polynomialTanh,
                    op.getSoftcap() && !hopper && !fp8 && !decode ? 8 : 0);

  // Softcap ceiling: as large as P's type allows (bf16 48, f16 7), but on
  // sm_90a only from Dv 128 on. On an H100 (docs/HOPPER.md) it took the
  // softcap's cost at head dim 128 from 20-24% to 13-20%, and raised it at
  // 64 (22% to 22-30%): there the MUFU unit, not the issue slots the row
  // maximum takes, bounds the softmax.
  int64_t ceiling = 0;
  if (op.getSoftcap() && !fp8 && !decode && (!hopper || headDimV >= 128)) {
    Type element = op.getQuery().getType().getElementType();
    ceiling = element.isF16() ? limits::kMaxF16SoftcapCeiling
                              : limits::kMaxSoftcapCeiling;
  }
  ceiling = nonNegativeOr(options.softcapCeiling, ceiling);

  // sm_90a (FlashAttention-3): two consumer warpgroups at 240 registers, the
  // producer at the minimum; a ring of two K/V pairs; MUFU ex2 only (the
  // Hopper Tensor Cores do not outrun it). sm_100a: the FA4 budgets.
  auto emitError = [&] { return op.emitOpError() << "invalid plan: "; };
  PlanAttr plan = PlanAttr::getChecked(
      emitError, op.getContext(), target, blockM, blockN, headDim,
      headDimV != headDim ? std::optional<int64_t>(headDimV) : std::nullopt,
      qStages, kvStages, gqaPack, scheduler,
      positiveOr(options.softmaxRegs, consumerRegs),
      positiveOr(options.correctionRegs, correctionRegs),
      positiveOr(options.producerRegs, producerRegs),
      nonNegativeOr(options.emulatedExp2, hopper || decode ? 0 : 3),
      positiveOr(options.pvSplit, defaultPvSplit()),
      nonNegativeOr(options.rescaleThreshold, 8),
      kvSplits > 1 ? std::optional<int64_t>(kvSplits) : std::nullopt,
      splitCombine, fp8 ? std::optional<int64_t>(1) : std::nullopt,
      tanhOnFma > 0 ? std::optional<int64_t>(tanhOnFma) : std::nullopt,
      ceiling > 0 ? std::optional<int64_t>(ceiling) : std::nullopt,
      interleave > 1 ? std::optional<int64_t>(interleave) : std::nullopt,
      hiLo ? PPrecision::hi_lo : PPrecision::single,
      sharedKey > 1 ? std::optional<int64_t>(sharedKey) : std::nullopt, family);
  if (!plan || failed(checkKernelLimits(op, plan)))
    return failure();
  return plan;
}

namespace {
struct FA4PlanPass : public fa4::impl::FA4PlanBase<FA4PlanPass> {
  using Base::Base;

  void runOnOperation() override {
    FA4PlanOptions options;
#define FA4_PASS_OPTION(TYPE, NAME, ...) options.NAME = NAME;
#include "fa4/Transforms/PlanOptions.inc"
    if (failed(checkOptions(
            options, [&] { return getOperation()->emitError(); })))
      return signalPassFailure();

    WalkResult result = getOperation()->walk([&](AttentionOp op) {
      if (op.getPlanAttr())
        return WalkResult::advance();
      FailureOr<PlanAttr> plan = choosePlan(op, options);
      if (failed(plan))
        return WalkResult::interrupt();
      op.setPlanAttr(*plan);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
