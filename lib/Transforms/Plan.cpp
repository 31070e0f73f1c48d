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

/// Checks the options that name something (arch, scheduler) before any op
/// is planned; numbers are checked with the plan they produce.
static LogicalResult
checkNamedOptions(const FA4PlanOptions &options,
                  function_ref<InFlightDiagnostic()> emitError) {
  if (!symbolizeArch(options.arch))
    return emitError() << "fa4-plan: unknown arch '" << options.arch
                       << "' (expected sm_100a or sm_90a)";
  if (!options.scheduler.empty() && !symbolizeScheduler(options.scheduler))
    return emitError() << "fa4-plan: unknown scheduler '" << options.scheduler
                       << "' (expected linear, lpt or paired)";
  return success();
}

FailureOr<PlanAttr> mlir::fa4::choosePlan(AttentionOp op,
                                          const FA4PlanOptions &options) {
  if (failed(checkNamedOptions(options, [&] { return op.emitOpError(); })))
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
  int64_t gqaPack = positiveOr(options.gqaPack, groupSize);
  if (options.gqaPack <= 0 && blockM % groupSize != 0)
    return op.emitOpError()
           << "GQA ratio " << groupSize << " (" << op.getNumQueryHeads()
           << " query heads / " << op.getNumKeyValueHeads()
           << " key/value heads) does not divide the " << blockM
           << "-row Q tile, so its query heads cannot be packed; set "
              "gqa-pack to a divisor of both (1 disables packing)";
  if (groupSize % gqaPack != 0 || blockM % gqaPack != 0)
    return op.emitOpError()
           << "gqa-pack " << gqaPack << " must divide both the GQA ratio ("
           << groupSize << ") and the " << blockM << "-row Q tile";

  bool causal = op.getCausal();
  // sm_90a at head dim 256: 64-key blocks keep S and P small next to the
  // 128-register O fragment, and a ring of 3 K/V tiles fits beside Q and
  // the O staging.
  bool wide = hopper && headDim == 256;
  int64_t blockN = positiveOr(options.blockN, wide ? 64 : 128);
  // FA4 splits P so the first PV MMA starts before softmax finishes the row:
  // 3/4 of the columns when there is no mask to apply, half with one. On
  // sm_90a P stays in registers and feeds one PV wgmma.
  int64_t defaultPvSplit = hopper ? 0 : causal ? blockN / 2 : blockN * 3 / 4;
  Scheduler scheduler = !causal  ? Scheduler::linear
                        : hopper ? Scheduler::paired
                                 : Scheduler::lpt;
  if (!options.scheduler.empty())
    scheduler = *symbolizeScheduler(options.scheduler);

  // sm_90a (FlashAttention-3): two consumer warpgroups at 240 registers, the
  // producer at the minimum; a ring of two K/V pairs; MUFU ex2 only (the
  // Hopper Tensor Cores do not outrun it). sm_100a: the FA4 budgets.
  auto emitError = [&] { return op.emitOpError() << "invalid plan: "; };
  PlanAttr plan = PlanAttr::getChecked(
      emitError, op.getContext(), target, blockM, blockN, headDim,
      positiveOr(options.qStages, 2),
      positiveOr(options.kvStages, wide ? 3 : hopper ? 4 : 3), gqaPack,
      scheduler, positiveOr(options.softmaxRegs, hopper ? 232 : 200),
      positiveOr(options.correctionRegs, hopper ? 0 : 64),
      positiveOr(options.producerRegs, hopper ? 40 : 48),
      nonNegativeOr(options.emulatedExp2, hopper ? 0 : 3),
      positiveOr(options.pvSplit, defaultPvSplit),
      nonNegativeOr(options.rescaleThreshold, 8));
  if (!plan)
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
    if (failed(checkNamedOptions(
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
