//===- ScoreExpressions.cpp - attention in linalg as expressions ----------===//

#include "ScoreExpressions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fa4::raise;

namespace mlir::fa4::raise {

bool same(const Expr *a, const Expr *b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind ||
      a->operands.size() != b->operands.size())
    return false;
  switch (a->kind) {
  case Expr::Kind::Leaf:
    return a->value == b->value && a->map == b->map;
  case Expr::Kind::Constant:
    return a->constant == b->constant;
  case Expr::Kind::ReduceMax:
  case Expr::Kind::ReduceSum:
  case Expr::Kind::Softmax:
    if (a->dim != b->dim)
      return false;
    break;
  default:
    break;
  }
  for (auto [x, y] : llvm::zip(a->operands, b->operands))
    if (!same(x, y))
      return false;
  return true;
}

std::optional<double> constantOf(Value value) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return constantOf(fill.getInputs()[0]);
  FloatAttr scalar;
  if (matchPattern(value, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseFPElementsAttr splat;
  if (matchPattern(value, m_Constant(&splat)) && splat.isSplat())
    return splat.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

bool contains(const Expr *e, std::initializer_list<Expr::Kind> kinds) {
  if (llvm::is_contained(kinds, e->kind))
    return true;
  return llvm::any_of(e->operands,
                      [&](const Expr *x) { return contains(x, kinds); });
}

bool isElementwise(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      !op.isAllParallelLoops() || !op.hasPureTensorSemantics())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  return op.getMatchingIndexingMap(init).isIdentity() &&
         !op.payloadUsesValueFromOperand(init);
}

bool isContraction(Value value) {
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  return op && op->getNumResults() == 1 && op.getNumDpsInputs() == 2 &&
         linalg::isaContractionOpInterface(op) && op.hasPureTensorSemantics();
}

FailureOr<LinearScores> linearScores(const Expr *e) {
  using Kind = Expr::Kind;
  switch (e->kind) {
  case Kind::Leaf: {
    LinearScores l;
    if (isContraction(e->value)) {
      l.alpha = 1;
      l.scores = e;
    } else {
      l.biases.push_back({e, 1.0});
    }
    return l;
  }
  case Kind::Neg: {
    FailureOr<LinearScores> l = linearScores(e->operands[0]);
    if (succeeded(l))
      l->scale(-1);
    return l;
  }
  case Kind::Add:
  case Kind::Sub: {
    FailureOr<LinearScores> x = linearScores(e->operands[0]);
    FailureOr<LinearScores> y = linearScores(e->operands[1]);
    if (failed(x) || failed(y))
      return failure();
    if (e->kind == Kind::Sub)
      y->scale(-1);
    if (x->scores && y->scores && !same(x->scores, y->scores))
      return failure();
    x->alpha += y->alpha;
    if (!x->scores)
      x->scores = y->scores;
    x->biases.append(y->biases);
    return x;
  }
  case Kind::Mul:
  case Kind::Div: {
    // Only by constants: a mask that multiplies the scores is not additive.
    const Expr *factor = e->operands[1];
    const Expr *other = e->operands[0];
    if (e->kind == Kind::Mul && factor->kind != Kind::Constant)
      std::swap(factor, other);
    if (factor->kind != Kind::Constant || factor->constant == 0.0)
      return failure();
    FailureOr<LinearScores> l = linearScores(other);
    if (succeeded(l))
      l->scale(e->kind == Kind::Mul ? factor->constant
                                    : 1.0 / factor->constant);
    return l;
  }
  default:
    return failure();
  }
}

FailureOr<ScaledSource> scaledSource(ExprBuilder &builder, Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  const Expr *e = builder.trace(
      operand, AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                 operand.getContext()));
  double factor = 1;
  while (e->kind == Expr::Kind::Mul || e->kind == Expr::Kind::Div) {
    const Expr *c = e->operands[1], *x = e->operands[0];
    if (e->kind == Expr::Kind::Mul && c->kind != Expr::Kind::Constant)
      std::swap(c, x);
    if (c->kind != Expr::Kind::Constant || c->constant == 0.0)
      return failure();
    factor *= e->kind == Expr::Kind::Mul ? c->constant : 1.0 / c->constant;
    e = x;
  }
  if (e->kind != Expr::Kind::Leaf || !e->map.isPermutation())
    return failure();
  return ScaledSource{e->value, e->map, factor};
}

const Expr *ExprBuilder::trace(Value value, AffineMap map) {
  if (std::optional<double> c = constantOf(value))
    return constant(*c);
  if (auto softmax = value.getDefiningOp<linalg::SoftmaxOp>()) {
    auto dim = dyn_cast<AffineDimExpr>(
        map.getResult(softmax.getDimension()));
    if (dim) {
      remember(softmax);
      return make({Expr::Kind::Softmax, {}, {}, 0, dim.getPosition(),
                   {trace(softmax.getInput(), map)}});
    }
  }
  if (auto op = value.getDefiningOp<linalg::LinalgOp>()) {
    if (isElementwise(op)) {
      auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
      if (const Expr *e = scalar(op, yield.getOperand(0), map)) {
        remember(op);
        return e;
      }
    } else if (const Expr *e = expandReductions ? reduction(op, map)
                                                : nullptr) {
      remember(op);
      return e;
    }
  }
  return make({Expr::Kind::Leaf, value, map, 0, 0, {}});
}

const Expr *ExprBuilder::reducedOperand(linalg::LinalgOp op, Expr::Kind &kind) {
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(op.getNumLoops(), op.getContext());
  return reductionBody(op, identity, kind);
}

const Expr *ExprBuilder::make(Expr e) {
  storage.push_back(std::move(e));
  return &storage.back();
}

const Expr *ExprBuilder::constant(double c) {
  return make({Expr::Kind::Constant, {}, {}, c, 0, {}});
}

const Expr *ExprBuilder::scalar(linalg::LinalgOp op, Value v, AffineMap map) {
  if (auto argument = dyn_cast<BlockArgument>(v)) {
    if (argument.getOwner() != op.getBlock())
      return nullptr;
    OpOperand *operand = op.getMatchingOpOperand(argument);
    if (op.isDpsInit(operand))
      return nullptr;
    if (!isa<RankedTensorType>(operand->get().getType())) {
      std::optional<double> c = constantOf(operand->get());
      return c ? constant(*c) : nullptr;
    }
    return trace(operand->get(),
                 op.getMatchingIndexingMap(operand).compose(map));
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return nullptr;
  if (def->getBlock() != op.getBlock()) {
    std::optional<double> c = constantOf(v);
    return c ? constant(*c) : nullptr;
  }
  if (std::optional<double> c = constantOf(v))
    return constant(*c);
  // Casts only round; the kernel computes in f32 throughout.
  if (isa<arith::ExtFOp, arith::TruncFOp>(def))
    return scalar(op, def->getOperand(0), map);
  auto unary = [&](Expr::Kind kind) -> const Expr * {
    const Expr *x = scalar(op, def->getOperand(0), map);
    return x ? make({kind, {}, {}, 0, 0, {x}}) : nullptr;
  };
  auto binary = [&](Expr::Kind kind) -> const Expr * {
    const Expr *x = scalar(op, def->getOperand(0), map);
    const Expr *y = x ? scalar(op, def->getOperand(1), map) : nullptr;
    return y ? make({kind, {}, {}, 0, 0, {x, y}}) : nullptr;
  };
  if (isa<arith::AddFOp>(def))
    return binary(Expr::Kind::Add);
  if (isa<arith::SubFOp>(def))
    return binary(Expr::Kind::Sub);
  if (isa<arith::MulFOp>(def))
    return binary(Expr::Kind::Mul);
  if (isa<arith::DivFOp>(def))
    return binary(Expr::Kind::Div);
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    return binary(Expr::Kind::Max);
  if (isa<arith::NegFOp>(def))
    return unary(Expr::Kind::Neg);
  if (isa<math::ExpOp>(def))
    return unary(Expr::Kind::Exp);
  if (isa<math::Exp2Op>(def))
    return unary(Expr::Kind::Exp2);
  return nullptr;
}

const Expr *ExprBuilder::reductionBody(linalg::LinalgOp op,
                                       AffineMap iterations,
                                       Expr::Kind &kind) {
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2)
    return nullptr;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    kind = Expr::Kind::ReduceMax;
  else if (isa<arith::AddFOp>(combine))
    kind = Expr::Kind::ReduceSum;
  else
    return nullptr;
  BlockArgument accumulator = op.getRegionOutputArgs()[0];
  // The neutral start: a sum from 0, a max from below every finite score.
  std::optional<double> start = constantOf(op.getDpsInitOperand(0)->get());
  // A max from at most the lowest finite value of its type.
  auto type = dyn_cast<FloatType>(
      getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
  if (!start || !type)
    return nullptr;
  double lowest =
      -APFloat::getLargest(type.getFloatSemantics()).convertToDouble();
  if (kind == Expr::Kind::ReduceSum ? *start != 0.0 : *start > lowest)
    return nullptr;
  for (unsigned side : {0u, 1u})
    if (combine->getOperand(side) == accumulator)
      return scalar(op, combine->getOperand(1 - side), iterations);
  return nullptr;
}

const Expr *ExprBuilder::reduction(linalg::LinalgOp op, AffineMap map) {
  if (op->getNumResults() != 1 || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      !op.hasPureTensorSemantics())
    return nullptr;
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  // The result keeps every loop but the reduced one, in any order, with
  // unit dimensions read at 0 (keepdim).
  AffineMap result = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  MLIRContext *ctx = op.getContext();
  SmallVector<std::optional<unsigned>> loopAt(result.getNumResults());
  llvm::SmallBitVector kept(op.getNumLoops());
  for (auto [p, e] : llvm::enumerate(result.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      loopAt[p] = dim.getPosition();
      kept.set(dim.getPosition());
    } else if (!isa<AffineConstantExpr>(e) ||
               cast<AffineConstantExpr>(e).getValue() != 0) {
      return nullptr;
    }
  }
  if (kept.count() + 1 != op.getNumLoops() || kept.test(reduced[0]))
    return nullptr;
  // Where each kept loop is in root coordinates; the reduced loop is the
  // one root dimension the read leaves out.
  SmallVector<AffineExpr> iterations(op.getNumLoops());
  llvm::SmallBitVector used(map.getNumDims());
  for (unsigned p = 0; p < loopAt.size(); ++p) {
    if (!loopAt[p])
      continue;
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(p));
    if (!dim)
      return nullptr;
    iterations[*loopAt[p]] = dim;
    used.set(dim.getPosition());
  }
  if (used.count() + 1 != map.getNumDims())
    return nullptr;
  unsigned rootReduced = used.find_first_unset();
  iterations[reduced[0]] = getAffineDimExpr(rootReduced, ctx);
  AffineMap iterationMap = AffineMap::get(map.getNumDims(), 0, iterations, ctx);
  Expr::Kind kind;
  const Expr *operand = reductionBody(op, iterationMap, kind);
  if (!operand)
    return nullptr;
  return make({kind, {}, {}, 0, rootReduced, {operand}});
}

} // namespace mlir::fa4::raise
