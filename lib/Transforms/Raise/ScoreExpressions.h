//===- ScoreExpressions.h - attention in linalg as expressions -*- C++ -*-===//
//
// fa4-raise-attention's model of a linalg program: the scalar expression a
// tensor holds at each point of the score domain (the dimensions of
// S = Q K^T). Chains of elementwise linalg ops are inlined into one tree
// whose leaves are the tensors they read, each at the map from score
// coordinates to its own; reductions over one dimension and linalg.softmax
// are nodes. The softmax, the scale and the biases are then matched on
// these trees, whatever split of generics, named ops and casts spelled
// them.
//
//===----------------------------------------------------------------------===//

#ifndef FA4_TRANSFORMS_RAISE_SCOREEXPRESSIONS_H
#define FA4_TRANSFORMS_RAISE_SCOREEXPRESSIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"

#include <deque>
#include <optional>

namespace mlir::fa4::raise {

/// One node of an expression tree; trees are built by an ExprBuilder, which
/// owns the nodes.
struct Expr {
  enum class Kind {
    Leaf,     // a tensor read at `map` of the root coordinates
    Constant, // `constant`
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Neg,
    Exp,
    Exp2,
    ReduceMax, // over root dimension `dim`
    ReduceSum,
    Softmax, // linalg.softmax along root dimension `dim`
  };
  Kind kind;
  Value value;
  AffineMap map;
  double constant = 0;
  unsigned dim = 0;
  SmallVector<const Expr *, 2> operands;
};

/// Structural equality: the same ops on the same leaves read at the same
/// maps (so a value computed twice, or split differently into ops, is the
/// same expression).
bool same(const Expr *a, const Expr *b);

/// The float a value holds everywhere: a scalar or splat constant, or a
/// linalg.fill of one.
std::optional<double> constantOf(Value value);

/// Whether `e` has a node of one of `kinds`.
bool contains(const Expr *e, std::initializer_list<Expr::Kind> kinds);

/// Whether `op` computes each result element from its inputs at that point
/// alone: all loops parallel, one result at the identity map, its init not
/// read (generics, named elementwise ops, transposes and broadcasts).
bool isElementwise(linalg::LinalgOp op);

/// Whether `value` is the result of a two-input linalg contraction on
/// tensors.
bool isContraction(Value value);

/// Builds expression trees; every op it inlines is remembered, so that what
/// the raising leaves unused can be erased.
class ExprBuilder {
public:
  /// The expression of `value` read at `map` (root coordinates -> the
  /// value's dimensions).
  const Expr *trace(Value value, AffineMap map);

  /// The expression a reduction's body reduces, in its iteration
  /// coordinates.
  const Expr *reducedOperand(linalg::LinalgOp op, Expr::Kind &kind);

  const SetVector<Operation *> &inlined() const { return ops; }

  /// Whether reductions become nodes (else leaves, read as tensors).
  bool expandReductions = true;

private:
  const Expr *make(Expr e);
  const Expr *constant(double c);
  void remember(Operation *op) { ops.insert(op); }

  /// A scalar of `op`'s body as an expression; null where the body does
  /// something the model does not express.
  const Expr *scalar(linalg::LinalgOp op, Value v, AffineMap map);

  /// What the body of a one-input reduction combines with its accumulator
  /// (max or sum), read at `iterations` (root -> iteration coordinates).
  const Expr *reductionBody(linalg::LinalgOp op, AffineMap iterations,
                            Expr::Kind &kind);

  /// A reduction of one input over one dimension, read at `map` (root ->
  /// the result's dimensions), which must leave out exactly one root
  /// dimension: the reduced one.
  const Expr *reduction(linalg::LinalgOp op, AffineMap map);

  std::deque<Expr> storage;
  SetVector<Operation *> ops;
};

//===----------------------------------------------------------------------===//
// The scores as a linear form
//===----------------------------------------------------------------------===//

/// `alpha * S + sum beta_k * B_k`: the scores, with S the QK^T contraction.
struct LinearScores {
  double alpha = 0;
  const Expr *scores = nullptr;
  SmallVector<std::pair<const Expr *, double>> biases;

  void scale(double factor) {
    alpha *= factor;
    for (auto &bias : biases)
      bias.second *= factor;
  }
};

FailureOr<LinearScores> linearScores(const Expr *e);

/// A contraction operand as `factor * source` read through a permutation.
struct ScaledSource {
  Value source;
  AffineMap map; // operand dimensions -> source dimensions
  double factor = 1;
};

FailureOr<ScaledSource> scaledSource(ExprBuilder &builder, Value operand);

} // namespace mlir::fa4::raise

#endif // FA4_TRANSFORMS_RAISE_SCOREEXPRESSIONS_H
