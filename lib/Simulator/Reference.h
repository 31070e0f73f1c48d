//===- Reference.h - the float64 reference and the verdict ------*- C++ -*-===//
//
// O and LSE of the simulated problem computed in float64 from the same
// (rounded) inputs, the score and mask regions evaluated on the host, and
// the comparison of the kernel's outputs with them: every row a sequence
// owns written and within the error bounds, every other row untouched.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_REFERENCE_H
#define FA4_LIB_SIMULATOR_REFERENCE_H

#include "ProblemShape.h"

namespace mlir::fa4::sim {

/// O and LSE of the problem in float64 from the (rounded) inputs.
struct Reference {
  std::vector<double> output, lse;
  /// FP8 (e4m3): per element of O, the bound on |O - reference| that the
  /// rounding of P to e4m3 and of O to its 16-bit type allow (empty for
  /// 16-bit inputs, whose O is held to a relative bound).
  std::vector<double> bound;
  /// Per query row of O: whether a sequence owns it (padding rows of packed
  /// sequences do not, and must stay unwritten).
  std::vector<bool> owned;
  std::string error; // why the regions could not be evaluated
};

/// The reference of the problem `s` on the operand tensors `t`, with the
/// softmax scale `scale`.
Reference reference(const std::vector<GlobalTensor> &t, const Shape &s,
                    double scale);

/// Compares the kernel's O (and LSE) in `tensors` with `ref`: appends what
/// is wrong to `errors` (`bound` is O's relative error bound) and returns
/// the measured errors as text.
std::string compareWithReference(const std::vector<GlobalTensor> &tensors,
                                 const Shape &s, const Reference &ref,
                                 double bound,
                                 std::vector<std::string> &errors);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_REFERENCE_H
