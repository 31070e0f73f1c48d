//===- ProblemShape.h - the simulated problem and its operands --*- C++ -*-===//
//
// The problem fa4-sim runs a launch on: its sizes resolved against the
// launch's operand types and manifest (a dense batch or packed sequences,
// the masks, the captured operands), and the operand tensors drawn for a
// seed, as the runtime would allocate and a test would fill them.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_LIB_SIMULATOR_PROBLEMSHAPE_H
#define FA4_LIB_SIMULATOR_PROBLEMSHAPE_H

#include "Interpreter.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Simulator/Simulator.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fa4::sim {

/// The sizes and semantics of one simulated problem.
struct Shape {
  /// Packed sequences: batch is their number, seqQ and seqKv the rows of
  /// the packed tensors (padding included).
  /// Dqk (Q, K) and Dv (V, O).
  int64_t batch, seqQ, seqKv, headsQ, headsKv, headDim, headDimV;
  bool causal;
  /// Packed sequences of variable lengths: each one's first query and key
  /// rows, its query rows and the keys it attends (seqused_k applied).
  bool varlen = false, seqused = false;
  std::vector<int64_t> startQ, lengthQ, startKv, lengthKv;
  /// Packed sequences with a key-major (FP8) V: V's rows (0 otherwise: V
  /// has K's rows).
  int64_t valueRows = 0;
  /// The tables the kernel reads (seqused_k empty without it).
  std::vector<int64_t> cuSeqlensQ, cuSeqlensKv, sequsedKv;
  /// A paged KV cache: keys per page, pages per batch (seqKv is their
  /// keys), pages in the cache, and the page table [batch, maxPages] as the
  /// kernel reads it (an entry past a batch's keys names no page of it).
  int64_t pageSize = 0, maxPages = 0, pages = 0;
  std::vector<int64_t> pageTable;
  /// Key window around the bottom-right diagonal, -1 where unbounded
  /// (causal: right 0).
  int64_t windowLeft = -1, windowRight = -1;
  std::optional<double> softcap; // in the op's units
  bool lse = false, sink = false;
  /// The rotary embedding: Q's columns [ropeStart, ropeStart +
  /// ropeColumns) rotated by each query's position in a table of ropeRows
  /// positions, O's rotated back with ropeOutput (no rotation without).
  int64_t ropeStart = 0, ropeColumns = 0, ropeRows = 0;
  bool ropeOutput = false;
  /// FP8: the q, k and v descale operands [B, Hkv].
  bool descale = false;
  /// Q's element: bf16, f16 or e4m3.
  std::string dtype;

  int64_t sequenceQ(int64_t b) const { return varlen ? lengthQ[b] : seqQ; }
  /// A dense batch's keys: seqKv, or its seqused_k entry (lengthKv).
  int64_t sequenceKv(int64_t b) const {
    return lengthKv.empty() ? seqKv : lengthKv[b];
  }
  /// The row of the [B, S, H, D] or packed [T, H, D] tensors that holds
  /// query `i` or key `j` of sequence `b`.
  int64_t queryRow(int64_t b, int64_t i) const {
    return varlen ? startQ[b] + i : b * seqQ + i;
  }
  int64_t keyRow(int64_t b, int64_t j) const {
    if (pageSize)
      return pageTable[b * maxPages + j / pageSize] * pageSize + j % pageSize;
    return varlen ? startKv[b] + j : b * seqKv + j;
  }
  /// V's row of key `j` of sequence `b`: K's, but for packed sequences
  /// with a key-major (FP8) V, which start at packedValueStart.
  int64_t valueRow(int64_t b, int64_t j) const {
    return valueRows ? packedValueStart(startKv[b], b) + j : keyRow(b, j);
  }
  /// The element of LSE [B, Hq, Sq] or packed [Hq, Tq].
  int64_t lseIndex(int64_t b, int64_t h, int64_t i) const {
    return varlen ? h * seqQ + startQ[b] + i : (b * headsQ + h) * seqQ + i;
  }
  /// An activation tensor's shape for `heads` heads of `rows` per sequence
  /// and head dim `dim`.
  SmallVector<int64_t, 4> activation(int64_t rows, int64_t heads,
                                     int64_t dim) const {
    if (varlen)
      return {rows, heads, dim};
    return {batch, rows, heads, dim};
  }
  /// K or V: the activation of seqKv rows, or paged [pages, P, heads, dim].
  SmallVector<int64_t, 4> keyValue(int64_t heads, int64_t dim) const {
    if (pageSize)
      return {pages, pageSize, heads, dim};
    return activation(seqKv, heads, dim);
  }
  SmallVector<int64_t, 4> valueShape() const {
    return valueRows ? activation(valueRows, headsKv, headDimV)
                     : keyValue(headsKv, headDimV);
  }
  /// The captured operands' shapes (dynamic sizes resolved) and the
  /// regions that read them; null regions where the launch has none.
  SmallVector<SmallVector<int64_t, 4>> captureShapes;
  Region *score = nullptr, *mask = nullptr;
};

/// The launch manifest of `launch`.
DictionaryAttr manifestOf(LaunchOp launch);

/// Resolves the problem against the launch's operand types and manifest;
/// failure after an error on `os`.
FailureOr<Shape> resolveShape(LaunchOp launch, const Problem &problem,
                              raw_ostream &os);

/// Whether seed `seed` draws keys whose scale rises along the sequence.
bool risingKeys(uint64_t seed);

/// Operand tensors of the problem for `seed`: q, k, v, the sinks and the
/// captures random (captured integers in [0, intBound)), o and lse
/// poisoned with NaN, the sequence tables as the kernel reads them.
std::vector<GlobalTensor> makeTensors(LaunchOp launch, const Shape &s,
                                      uint64_t seed, int64_t intBound);

/// The tensor of operand `name`, or null.
const GlobalTensor *tensorNamed(const std::vector<GlobalTensor> &tensors,
                                StringRef name);

} // namespace mlir::fa4::sim

#endif // FA4_LIB_SIMULATOR_PROBLEMSHAPE_H
