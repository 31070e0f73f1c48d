//===- Interpreter.h - running one CTA of a kernel --------------*- C++ -*-===//
//
// The interface between the host side of the simulator (problem, buffers,
// manifest, verdict) and the execution of one CTA of a synchronization-level
// kernel.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_INTERPRETER_H
#define FA4_LIB_SIMULATOR_INTERPRETER_H

#include "Hardware.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>
#include <vector>

namespace mlir::fa4::sim {

/// A tensor in global memory, row-major, its values held as floats (exact
/// for its element type).
struct GlobalTensor {
  std::string name;
  Type element;
  SmallVector<int64_t, 4> shape;
  std::vector<float> data;
};

/// A TMA tensor map over a global tensor, each list innermost dimension
/// first as cuTensorMapEncodeTiled takes it: the box, the map's dimensions
/// and strides (in elements) and the element its coordinate 0 addresses,
/// relative to the tensor's first (0 for every map the kernels take; a
/// negative base would address memory before the tensor, which faults on
/// the hardware unless it is mapped).
struct TensorMap {
  unsigned tensor;
  SmallVector<int64_t, 4> box, dims, strides;
  int64_t base = 0;
};

/// One kernel argument.
struct Argument {
  enum class Kind { integer, real, tensorMap, pointer } kind;
  int64_t integer = 0;
  float real = 0;
  unsigned index = 0; // the tensor map, or the tensor a pointer points to
};

struct Launch {
  gpu::GPUFuncOp kernel;
  int64_t grid = 1, block = 0, dynamicSharedBytes = 0;
  /// CTAs per thread-block cluster (consecutive block ids; 1: none).
  int64_t cluster = 1;
  std::vector<GlobalTensor> *tensors = nullptr;
  std::vector<TensorMap> maps;
  SmallVector<Argument> arguments;
};

/// How a CTA ran.
struct CtaOutcome {
  /// Errors that stop the CTA: an op that cannot run, an out-of-bounds
  /// access, a deadlock (with every blocked thread's wait), a misuse of a
  /// barrier.
  std::vector<std::string> errors;
  /// Data races, once per pair of ops.
  std::vector<RaceReport> races;
  uint64_t steps = 0;
};

class Trace;

struct Schedule {
  uint64_t seed = 1;
  /// The CTA stops with an error after this many executed ops.
  uint64_t maxSteps = 200000000;
  /// Records the CTA's protocol timeline when set (CtaTrace.h).
  Trace *trace = nullptr;
};

/// Runs the launch's whole grid to completion under the random schedule
/// `schedule.seed` chooses: the CTAs' interleaving, each CTA's thread
/// interleavings and when its asynchronous TMA, MMA and store operations
/// complete. One outcome per CTA; the first CTA that fails stops the grid.
std::vector<CtaOutcome> runGrid(const Launch &launch, const Schedule &schedule);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_INTERPRETER_H
