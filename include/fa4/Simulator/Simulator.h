//===- Simulator.h - fa4-sim, the CPU simulator of fa4 kernels --*- C++ -*-===//
//
// Executes the synchronization-level IR of fa4 kernels (after
// fa4-insert-barriers: what the NVVM lowering consumes) on the CPU with the
// hardware's asynchronous semantics, under randomized schedules, and checks
// the numbers against a float64 reference, the absence of deadlocks and the
// absence of data races on shared and Tensor Memory.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_SIMULATOR_SIMULATOR_H
#define FA4_SIMULATOR_SIMULATOR_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fa4::sim {

/// The attention problem of a simulated launch. Batch and sequence lengths
/// are required where the kernel's operands are dynamic; the rest is read
/// from the kernel and, where given, must agree with it.
struct Problem {
  std::optional<int64_t> batch, seqQ, seqKv, headsQ, headsKv, headDim;
  std::optional<bool> causal;
  /// Packed sequences of variable lengths (kernels with cu_seqlens tables):
  /// the query and key lengths of each sequence. The packed tensors hold
  /// the sequences back to back, then padding rows no sequence owns. For
  /// kernels that take seqused_k (packed or a dense KV cache), the keys each
  /// sequence or batch uses. A paged KV cache holds seqKv keys per batch,
  /// rounded up to whole pages.
  std::vector<int64_t> seqlensQ, seqlensKv, sequsedK;
  std::optional<std::string> dtype;
  /// The dynamic sizes of the captured operands (those score and mask
  /// regions read), in operand then dimension order.
  std::vector<int64_t> captureSizes;
  /// Integer captures are drawn uniformly from [0, captureIntBound); float
  /// captures from N(0, 1).
  int64_t captureIntBound = 4;
};

struct Options {
  /// The first seed; seed `s` draws the inputs and the schedule.
  uint64_t seed = 1;
  unsigned seeds = 1;
  /// CTAs of the persistent grid (fewer when there are fewer work tiles).
  unsigned ctas = 2;
  uint64_t maxSteps = 200000000;
  /// When set, the first seed's run of each launch is written to this file
  /// as a protocol timeline in the Trace Event Format (Perfetto,
  /// chrome://tracing): a track per warp and per asynchronous unit, spans
  /// for waits, TMA copies and MMAs, arrows from arrivals to the waits they
  /// release. Time is the CTA's scheduler steps.
  std::string traceFile;
  /// Spans and arrow ends the trace records at most; recording stops there
  /// and the trace's metadata says so.
  uint64_t traceLimit = 200000;
};

/// Relative Frobenius error bound of O for an element type ("bf16", "f16").
double outputErrorBound(StringRef dtype);
/// Absolute error bound of the log-sum-exp (natural log).
constexpr double kLseErrorBound = 1e-3;

/// Simulates every fa4.launch in `module` for every seed and prints one
/// verdict line per seed ("seed N: ok ..." or "seed N: FAIL ...", followed
/// by the failures) to `os`. Fails if any seed fails or the module cannot
/// be simulated.
LogicalResult simulate(ModuleOp module, const Problem &problem,
                       const Options &options, raw_ostream &os);

} // namespace mlir::fa4::sim

#endif // FA4_SIMULATOR_SIMULATOR_H
