//===- Plan.cpp - choose the plan of every fa4.attention ------------------===//

#include "fa4/Transforms/Passes.h"
#include "fa4/Transforms/Planning.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4PLAN
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;

FailureOr<PlanAttr> mlir::fa4::choosePlan(AttentionOp op,
                                          const PlanOptions &options) {
  bool hopper = options.arch == Arch::sm_90a;
  StringRef arch = stringifyArch(options.arch);
  int64_t headDim = op.getHeadDimQK();
  if (op.getHeadDimV() != headDim)
    return op.emitOpError()
           << "query/key head dim " << headDim << " and value head dim "
           << op.getHeadDimV() << " differ; " << arch
           << " kernels need them equal";
  bool supported = headDim == 64 || headDim == 128 || (hopper && headDim == 256);
  if (!supported)
    return op.emitOpError() << "head dim " << headDim
                            << " is not supported on " << arch
                            << (hopper ? " (supported: 64, 128, 256)"
                                       : " (supported: 64, 128)");
  if (op.getWindow())
    return op.emitOpError() << "sliding-window attention is not supported on "
                            << arch << " yet";
  if (op.getSoftcap())
    return op.emitOpError() << "softcap is not supported on " << arch
                            << " yet";

  // A Q tile is one tcgen05 M=128 tile on sm_100a, one consumer
  // warpgroup's wgmma M=64 tile on sm_90a.
  int64_t blockM = hopper ? 64 : 128;
  int64_t groupSize = op.getGroupSize();
  int64_t gqaPack = options.gqaPack.value_or(groupSize);
  if (!options.gqaPack && blockM % groupSize != 0)
    return op.emitOpError()
           << "GQA ratio " << groupSize << " (" << op.getNumQueryHeads()
           << " query heads / " << op.getNumKeyValueHeads()
           << " key/value heads) does not divide the " << blockM
           << "-row Q tile, so its query heads cannot be packed; set "
              "gqa-pack to a divisor of both (1 disables packing)";
  if (gqaPack < 1 || groupSize % gqaPack != 0 || blockM % gqaPack != 0)
    return op.emitOpError()
           << "gqa-pack " << gqaPack << " must divide both the GQA ratio ("
           << groupSize << ") and the " << blockM << "-row Q tile";

  bool causal = op.getCausal();
  // sm_90a at head dim 256: 64-key blocks keep S and P small next to the
  // 128-register O fragment, and a ring of 3 K/V tiles fits beside Q and
  // the O staging.
  bool wide = hopper && headDim == 256;
  int64_t blockN = options.blockN.value_or(wide ? 64 : 128);
  // FA4 splits P so the first PV MMA starts before softmax finishes the row:
  // 3/4 of the columns when there is no mask to apply, half with one. On
  // sm_90a P stays in registers and feeds one PV wgmma.
  int64_t defaultPvSplit = hopper ? 0 : causal ? blockN / 2 : blockN * 3 / 4;

  // sm_90a (FlashAttention-3): two consumer warpgroups at 240 registers, the
  // producer at the minimum; a ring of two K/V pairs; MUFU ex2 only (the
  // Hopper Tensor Cores do not outrun it). sm_100a: the FA4 budgets.
  auto emitError = [&] { return op.emitOpError() << "invalid plan: "; };
  PlanAttr plan = PlanAttr::getChecked(
      emitError, op.getContext(), options.arch, blockM, blockN, headDim,
      options.qStages.value_or(2),
      options.kvStages.value_or(wide ? 3 : hopper ? 4 : 3),
      gqaPack,
      options.scheduler.value_or(!causal  ? Scheduler::linear
                                 : hopper ? Scheduler::paired
                                          : Scheduler::lpt),
      options.softmaxRegs.value_or(hopper ? 232 : 200),
      options.correctionRegs.value_or(hopper ? 0 : 64),
      options.producerRegs.value_or(hopper ? 40 : 48),
      options.emulatedExp2.value_or(hopper ? 0 : 3),
      options.pvSplit.value_or(defaultPvSplit),
      options.rescaleThreshold.value_or(8));
  if (!plan)
    return failure();
  return plan;
}

namespace {
struct FA4PlanPass : public fa4::impl::FA4PlanBase<FA4PlanPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<PlanOptions> options = parseOptions();
    if (failed(options))
      return signalPassFailure();

    WalkResult result = getOperation()->walk([&](AttentionOp op) {
      if (op.getPlanAttr())
        return WalkResult::advance();
      FailureOr<PlanAttr> plan = choosePlan(op, *options);
      if (failed(plan))
        return WalkResult::interrupt();
      op.setPlanAttr(*plan);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Turns the textual pass options into overrides; 0, -1 and "" mean
  /// "choose".
  FailureOr<PlanOptions> parseOptions() {
    PlanOptions options;
    std::optional<Arch> parsedArch = symbolizeArch(arch);
    if (!parsedArch) {
      getOperation()->emitError()
          << "fa4-plan: unknown arch '" << arch
          << "' (expected sm_100a or sm_90a)";
      return failure();
    }
    options.arch = *parsedArch;
    if (!scheduler.empty()) {
      options.scheduler = symbolizeScheduler(scheduler);
      if (!options.scheduler) {
        getOperation()->emitError() << "fa4-plan: unknown scheduler '"
                                    << scheduler
                                    << "' (expected linear, lpt or paired)";
        return failure();
      }
    }
    auto positive = [](int64_t v) {
      return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
    };
    auto nonNegative = [](int64_t v) {
      return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
    };
    options.blockN = positive(blockN);
    options.qStages = positive(qStages);
    options.kvStages = positive(kvStages);
    options.gqaPack = positive(gqaPack);
    options.softmaxRegs = positive(softmaxRegs);
    options.correctionRegs = positive(correctionRegs);
    options.producerRegs = positive(producerRegs);
    options.emulatedExp2 = nonNegative(emulatedExp2);
    options.pvSplit = positive(pvSplit);
    options.rescaleThreshold = nonNegative(rescaleThreshold);
    return options;
  }
};
} // namespace
