//===- RaiseAttention.cpp - attention in linalg to fa4.attention ----------===//
//
// fa4-raise-attention reads attention written in linalg on tensors as scalar
// expressions over the score domain (the dimensions of S = Q K^T): chains of
// elementwise ops are inlined into one expression tree whose leaves are the
// tensors they read, each with the map from score coordinates to its own,
// and reductions become nodes over one score dimension. The softmax, the
// scale and the biases are then matched on those trees, whatever split of
// generics, named ops and casts spelled them. The contractions give every
// dimension a role (batch, head, group, query, key, head dim) from which the
// operands are brought to fa4's [B, S, H, D] and the output back.
//
//===----------------------------------------------------------------------===//

#include "Layout.h"
#include "ScoreExpressions.h"

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"
#include "fa4/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>
#include <deque>

namespace mlir::fa4 {
#define GEN_PASS_DEF_FA4RAISEATTENTION
#include "fa4/Transforms/Passes.h.inc"
} // namespace mlir::fa4

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::raise;

namespace {

//===----------------------------------------------------------------------===//
// Dimension roles
//===----------------------------------------------------------------------===//

/// The roles of one attention: which iteration dimension of each
/// contraction is what.
struct Attention {
  linalg::LinalgOp qk, pv;
  ScaledSource q, k, v;
  Value output; // the value the raised op replaces
  // The roles of the score tensor's dimensions (S = Q K^T, also P's).
  SmallVector<Role> scoreRoles;
  // Batch dimensions of S in the order they collapse.
  SmallVector<unsigned> scoreBatch;
  unsigned scoreKey = 0;
  // Query heads per key/value head (the group loop's static size).
  int64_t groupSize = 1;
  LinearScores scores;
  bool base2 = false;
  // The contractions' operands and the roles of their loops.
  OpOperand *qOperand = nullptr, *kOperand = nullptr, *pOperand = nullptr,
            *vOperand = nullptr;
  SmallVector<std::optional<Role>> qkLoops, pvLoops;
  // The score dimension each loop stands for (none: the head dims).
  SmallVector<std::optional<unsigned>> qkScoreDims, pvScoreDims;
  // The casts and the division after P V, up to `output`.
  SmallVector<Operation *> tail;
  // Whether P looked like a softmax at all (what is worth a remark).
  bool attentionLike = false;
};

/// The role of each dimension of `operand` of `op`, from the roles of the
/// op's iteration dimensions.
SmallVector<Role> operandRoles(linalg::LinalgOp op, OpOperand *operand,
                               ArrayRef<std::optional<Role>> loopRoles) {
  SmallVector<Role> roles;
  for (AffineExpr e : op.getMatchingIndexingMap(operand).getResults())
    roles.push_back(*loopRoles[cast<AffineDimExpr>(e).getPosition()]);
  return roles;
}

class Raiser {
public:
  Raiser(RewriterBase &rewriter, DominanceInfo &dominance)
      : rewriter(rewriter), dominance(dominance) {}

  /// Raises the attention whose P V contraction is `pv`, or explains (as a
  /// remark) why not.
  LogicalResult raise(linalg::LinalgOp pv);

private:
  LogicalResult match(linalg::LinalgOp pv, Attention &a, ExprBuilder &builder,
                      std::string &why);
  LogicalResult matchProbabilities(const Expr *p, Attention &a,
                                   bool &normalized,
                                   const Expr *&unnormalized, std::string &why);
  void buildScoreRegion(Location loc, AttentionOp op, const Attention &a,
                        int64_t groupSize);

  RewriterBase &rewriter;
  DominanceInfo &dominance;

public:
  /// Ops raising erased, which later candidates must not touch.
  DenseSet<Operation *> erasedOps;
};

/// P as softmax over the key dimension of the scores: `normalized` unless
/// the division by the sum is left for after P V (then `unnormalized` is
/// the numerator, to be matched there).
LogicalResult Raiser::matchProbabilities(const Expr *p, Attention &a,
                                         bool &normalized,
                                         const Expr *&unnormalized,
                                         std::string &why) {
  using Kind = Expr::Kind;
  const Expr *scores = nullptr;
  unsigned key = 0;
  normalized = true;
  if (p->kind == Kind::Softmax) {
    scores = p->operands[0];
    key = p->dim;
  } else {
    const Expr *numerator = p;
    if (p->kind == Kind::Div) {
      const Expr *sum = p->operands[1];
      if (sum->kind != Kind::ReduceSum ||
          !same(sum->operands[0], p->operands[0])) {
        why = "P is a quotient, but not of exponentials by their sum";
        return failure();
      }
      numerator = p->operands[0];
    } else {
      normalized = false;
    }
    if (numerator->kind != Kind::Exp && numerator->kind != Kind::Exp2) {
      why = "P is not a softmax of the scores";
      return failure();
    }
    a.base2 = numerator->kind == Kind::Exp2;
    const Expr *shifted = numerator->operands[0];
    if (shifted->kind != Kind::Sub ||
        shifted->operands[1]->kind != Kind::ReduceMax ||
        !same(shifted->operands[1]->operands[0], shifted->operands[0])) {
      why = "the softmax does not subtract the row maximum before the "
            "exponential (unstabilized: it overflows where fa4 does not)";
      return failure();
    }
    scores = shifted->operands[0];
    key = shifted->operands[1]->dim;
    if (p->kind == Kind::Div && p->operands[1]->dim != key) {
      why = "the softmax's sum and maximum reduce different dimensions";
      return failure();
    }
    if (!normalized)
      unnormalized = numerator;
  }
  FailureOr<LinearScores> linear = linearScores(scores);
  if (failed(linear) || !linear->scores) {
    why = "the scores are not a scale of Q K^T plus additive biases";
    return failure();
  }
  if (!(linear->alpha > 0) || !std::isfinite(linear->alpha)) {
    why = "the scale of the scores is not positive and finite";
    return failure();
  }
  if (!linear->scores->map.isIdentity()) {
    why = "the scores are read through a permutation";
    return failure();
  }
  a.scores = *linear;
  a.scoreKey = key;
  return success();
}

LogicalResult Raiser::match(linalg::LinalgOp pv, Attention &a,
                            ExprBuilder &builder, std::string &why) {
  a.pv = pv;
  FailureOr<linalg::ContractionDimensions> pvDims =
      linalg::inferContractionDims(pv);
  if (failed(pvDims) || pvDims->k.size() != 1 || pvDims->n.size() != 1) {
    why = "not a contraction over one dimension";
    return failure();
  }
  // P is the operand with the reduced dimension among the m dimensions'
  // company: try both.
  bool normalized = true;
  const Expr *unnormalized = nullptr;
  OpOperand *pOperand = nullptr, *vOperand = nullptr;
  std::string firstWhy;
  for (unsigned side : {0u, 1u}) {
    OpOperand *candidate = pv.getDpsInputOperand(side);
    auto type = dyn_cast<RankedTensorType>(candidate->get().getType());
    if (!type)
      continue;
    const Expr *p = builder.trace(
        candidate->get(),
        AffineMap::getMultiDimIdentityMap(type.getRank(), pv.getContext()));
    std::string candidateWhy;
    a.attentionLike |= contains(p, {Expr::Kind::Exp, Expr::Kind::Exp2,
                                    Expr::Kind::Softmax});
    if (succeeded(matchProbabilities(p, a, normalized, unnormalized,
                                     candidateWhy))) {
      pOperand = candidate;
      vOperand = pv.getDpsInputOperand(1 - side);
      break;
    }
    if (firstWhy.empty() || side == 0)
      firstWhy = candidateWhy;
  }
  if (!pOperand) {
    why = firstWhy;
    return failure();
  }

  a.qk = cast<linalg::LinalgOp>(a.scores.scores->value.getDefiningOp());
  FailureOr<linalg::ContractionDimensions> qkDims =
      linalg::inferContractionDims(a.qk);
  if (failed(qkDims) || qkDims->k.size() != 1) {
    why = "Q K^T does not contract exactly one dimension (the head dim)";
    return failure();
  }
  AffineMap scoreMap =
      a.qk.getMatchingIndexingMap(a.qk.getDpsInitOperand(0));
  if (!scoreMap.isProjectedPermutation()) {
    why = "Q K^T's result is not a projection of its iteration dimensions";
    return failure();
  }
  unsigned keyLoop = scoreMap.getDimPosition(a.scoreKey);
  // Q is the operand without the key dimension.
  bool keyIsN = llvm::is_contained(qkDims->n, keyLoop);
  bool keyIsM = llvm::is_contained(qkDims->m, keyLoop);
  if (!keyIsN && !keyIsM) {
    why = "the softmax reduces a dimension that is not a key dimension of Q "
          "K^T";
    return failure();
  }
  ArrayRef<unsigned> queryLoops = keyIsN ? qkDims->m : qkDims->n;
  ArrayRef<unsigned> keyLoops = keyIsN ? qkDims->n : qkDims->m;
  if (keyLoops.size() != 1 || queryLoops.empty() || queryLoops.size() > 2) {
    why = "Q K^T has more than one key dimension or more than two query "
          "dimensions";
    return failure();
  }
  OpOperand *qOperand = a.qk.getDpsInputOperand(keyIsN ? 0 : 1);
  OpOperand *kOperand = a.qk.getDpsInputOperand(keyIsN ? 1 : 0);
  FailureOr<ScaledSource> q = scaledSource(builder, qOperand->get());
  FailureOr<ScaledSource> k = scaledSource(builder, kOperand->get());
  FailureOr<ScaledSource> v = scaledSource(builder, vOperand->get());
  if (failed(q) || failed(k) || failed(v) || v->factor != 1.0) {
    why = "Q, K or V is not a (scaled) tensor read through a permutation";
    return failure();
  }
  a.q = *q;
  a.k = *k;
  a.v = *v;
  a.qOperand = qOperand;
  a.kOperand = kOperand;
  a.pOperand = pOperand;
  a.vOperand = vOperand;
  // A factor on Q or K scales Q K^T only, not the biases added to it.
  a.scores.alpha *= q->factor * k->factor;

  // Roles of Q K^T's loops.
  SmallVector<int64_t> sizes = a.qk.getStaticLoopRanges();
  SmallVector<std::optional<Role>> loopRoles(a.qk.getNumLoops());
  loopRoles[qkDims->k[0]] = Role::HeadDim;
  loopRoles[keyLoops[0]] = Role::Key;
  unsigned queryLoop = queryLoops[0];
  if (queryLoops.size() == 2) {
    // Rows are independent: which of two query dimensions is the sequence
    // only matters for what must be static (the group).
    unsigned other = queryLoops[1];
    bool firstStatic = !ShapedType::isDynamic(sizes[queryLoop]);
    bool secondStatic = !ShapedType::isDynamic(sizes[other]);
    if (firstStatic && (!secondStatic || sizes[other] > sizes[queryLoop]))
      std::swap(queryLoop, other);
    if (ShapedType::isDynamic(sizes[other])) {
      why = "two dynamic query dimensions (at most one, the sequence)";
      return failure();
    }
    loopRoles[other] = Role::Group;
    a.groupSize = sizes[other];
  }
  loopRoles[queryLoop] = Role::Query;
  // Batch loops in Q's order; the last static one is the head.
  SmallVector<unsigned> batchLoops;
  AffineMap qMap = a.qk.getMatchingIndexingMap(qOperand);
  for (unsigned s = 0, e = a.q.map.getNumResults(); s < e; ++s) {
    unsigned loop = qMap.getDimPosition(a.q.map.getDimPosition(s));
    if (llvm::is_contained(qkDims->batch, loop))
      batchLoops.push_back(loop);
  }
  // Without a group, batch loops that all come before the sequence in Q
  // and in K collapse into fa4's batch with one head: a reshape, no
  // transpose. Otherwise the last static batch loop is the head.
  auto batchFirst = [&](const ScaledSource &source, OpOperand *operand,
                        unsigned sequenceLoop) {
    AffineMap map = a.qk.getMatchingIndexingMap(operand);
    for (unsigned s = 0, e = source.map.getNumResults(); s < e; ++s) {
      unsigned loop = map.getDimPosition(source.map.getDimPosition(s));
      if (loop == sequenceLoop)
        return true;
      if (!llvm::is_contained(qkDims->batch, loop))
        return false;
    }
    return false;
  };
  std::optional<unsigned> headLoop;
  if (queryLoops.size() == 2 || !batchFirst(*q, qOperand, queryLoop) ||
      !batchFirst(*k, kOperand, keyLoops[0]))
    for (unsigned loop : llvm::reverse(batchLoops))
      if (!ShapedType::isDynamic(sizes[loop])) {
        headLoop = loop;
        break;
      }
  for (unsigned loop : batchLoops)
    loopRoles[loop] = loop == headLoop ? Role::Head : Role::Batch;
  if (llvm::count_if(batchLoops, [&](unsigned loop) {
        return ShapedType::isDynamic(sizes[loop]);
      }) > 1) {
    why = "more than one dynamic batch dimension";
    return failure();
  }
  if (loopRoles[qkDims->k[0]] != Role::HeadDim ||
      llvm::any_of(loopRoles, [](auto r) { return !r; })) {
    why = "Q K^T has dimensions of no role";
    return failure();
  }

  // The score tensor's dimensions.
  a.scoreRoles.clear();
  a.scoreBatch.clear();
  for (unsigned t = 0; t < scoreMap.getNumResults(); ++t)
    a.scoreRoles.push_back(*loopRoles[scoreMap.getDimPosition(t)]);
  for (unsigned loop : batchLoops)
    if (loop != headLoop)
      a.scoreBatch.push_back(scoreMap.getResultPosition(
          getAffineDimExpr(loop, pv.getContext())).value());
  // The order the operands' batch dimensions collapse in.
  llvm::sort(a.scoreBatch);

  // P V: P's dimensions are the scores', the key one contracted.
  AffineMap pMap = pv.getMatchingIndexingMap(pOperand);
  SmallVector<std::optional<Role>> pvRoles(pv.getNumLoops());
  SmallVector<std::optional<unsigned>> pvScoreDim(pv.getNumLoops());
  for (unsigned t = 0; t < pMap.getNumResults(); ++t) {
    unsigned loop = cast<AffineDimExpr>(pMap.getResult(t)).getPosition();
    pvRoles[loop] = a.scoreRoles[t];
    pvScoreDim[loop] = t;
  }
  if (pvDims->k[0] != cast<AffineDimExpr>(pMap.getResult(a.scoreKey))
                          .getPosition()) {
    why = "P V does not contract the key dimension";
    return failure();
  }
  pvRoles[pvDims->n[0]] = Role::ValueDim;
  if (llvm::any_of(pvRoles, [](auto r) { return !r; })) {
    why = "P V has dimensions of no role";
    return failure();
  }
  a.qkLoops = loopRoles;
  a.pvLoops = pvRoles;
  a.pvScoreDims = pvScoreDim;
  a.qkScoreDims.assign(a.qk.getNumLoops(), std::nullopt);
  for (unsigned t = 0; t < scoreMap.getNumResults(); ++t)
    a.qkScoreDims[scoreMap.getDimPosition(t)] = t;
  // K and V are read alike: the same roles, the key and head dimension
  // aside.
  SmallVector<Role> vRoles = operandRoles(pv, vOperand, pvRoles);
  SmallVector<Role> kRoles = operandRoles(a.qk, kOperand, loopRoles);
  auto without = [](SmallVector<Role> roles, Role dim) {
    llvm::erase(roles, dim);
    return roles;
  };
  if (without(vRoles, Role::ValueDim) != without(kRoles, Role::HeadDim) ||
      llvm::is_contained(vRoles, Role::Group) ||
      llvm::is_contained(vRoles, Role::Query)) {
    why = "V is not indexed like K";
    return failure();
  }

  // The output: P V, then casts, and the division by the sum if P was not
  // normalized.
  Value current = pv->getResult(0);
  while (current.hasOneUse()) {
    auto user = dyn_cast<linalg::LinalgOp>(*current.getUsers().begin());
    if (!user || !isElementwise(user))
      break;
    auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
    if (resultType.getShape() !=
        cast<RankedTensorType>(current.getType()).getShape())
      break;
    ExprBuilder local;
    local.expandReductions = false;
    const Expr *e = local.trace(
        user->getResult(0),
        AffineMap::getMultiDimIdentityMap(resultType.getRank(),
                                          pv.getContext()));
    auto isCurrent = [&](const Expr *x) {
      return x->kind == Expr::Kind::Leaf && x->value == current &&
             x->map.isIdentity();
    };
    if (isCurrent(e)) {
      a.tail.push_back(user);
      current = user->getResult(0);
      continue;
    }
    if (normalized || e->kind != Expr::Kind::Div ||
        !isCurrent(e->operands[0]) ||
        e->operands[1]->kind != Expr::Kind::Leaf)
      break;
    // The divisor: the sum over the keys of P's numerator, broadcast along
    // the value dimension.
    Value sum = e->operands[1]->value;
    auto reduction = sum.getDefiningOp<linalg::LinalgOp>();
    Expr::Kind kind;
    const Expr *reduced =
        reduction && reduction.getNumDpsInputs() == 1 &&
                reduction.getNumReductionLoops() == 1 &&
                reduction.getNumLoops() == pMap.getNumResults()
            ? builder.reducedOperand(reduction, kind)
            : nullptr;
    SmallVector<unsigned> reducedLoops;
    if (reduction)
      reduction.getReductionDims(reducedLoops);
    if (!reduced || kind != Expr::Kind::ReduceSum ||
        !same(reduced, unnormalized) || reducedLoops[0] != a.scoreKey) {
      why = "P V is divided by something other than the sum of P";
      return failure();
    }
    // Each dimension of the sum must be the output dimension of the same
    // role.
    AffineMap sumResult =
        reduction.getMatchingIndexingMap(reduction.getDpsInitOperand(0));
    AffineMap outputMap = pv.getMatchingIndexingMap(pv.getDpsInitOperand(0));
    AffineMap divisorMap = e->operands[1]->map;
    for (unsigned p = 0; p < sumResult.getNumResults(); ++p) {
      auto sumDim = dyn_cast<AffineDimExpr>(sumResult.getResult(p));
      if (!sumDim)
        continue; // a kept unit dimension
      auto divisorDim = dyn_cast<AffineDimExpr>(divisorMap.getResult(p));
      if (!divisorDim) {
        why = "the sum divides P V along the wrong dimensions";
        return failure();
      }
      // The output dimension that divisor dimension p reads must be the
      // score dimension the sum kept there (not merely one of its role).
      unsigned outputLoop = outputMap.getDimPosition(divisorDim.getPosition());
      if (pvScoreDim[outputLoop] != sumDim.getPosition()) {
        why = "the sum divides P V along the wrong dimensions";
        return failure();
      }
    }
    builder.trace(sum, sumResult); // remembered for erasure
    a.tail.push_back(user);
    normalized = true;
    current = user->getResult(0);
  }
  if (!normalized) {
    why = "P is never divided by its sum";
    return failure();
  }
  a.output = current;
  return success();
}

void Raiser::buildScoreRegion(Location loc, AttentionOp op,
                              const Attention &a, int64_t groupSize) {
  // Natural units: base-2 scores are ln 2 times smaller.
  double unit = a.base2 ? std::log(2.0) : 1.0;
  OpBuilder::InsertionGuard guard(rewriter);
  Region &region = op.getScoreMod();
  Block *body = rewriter.createBlock(&region);
  Type f32 = rewriter.getF32Type(), index = rewriter.getIndexType();
  for (Type type : {f32, index, index, index, index})
    body->addArgument(type, loc);
  for (Value capture : op.getCaptures())
    body->addArgument(capture.getType(), loc);
  rewriter.setInsertionPointToStart(body);
  Value batch = body->getArgument(kModifierBatch);
  Value head = body->getArgument(kModifierHead);
  Value query = body->getArgument(kModifierQuery);
  Value key = body->getArgument(kModifierKey);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // fa4's head h is group member h mod G of key/value head h / G.
  Value group = zero;
  if (groupSize > 1) {
    Value size = arith::ConstantIndexOp::create(rewriter, loc, groupSize);
    group = arith::RemUIOp::create(rewriter, loc, head, size);
    head = arith::DivUIOp::create(rewriter, loc, head, size);
  }
  // fa4's batch is the scores' batch dimensions collapsed, outermost first.
  DenseMap<unsigned, Value> batchIndex;
  auto scoresType = cast<RankedTensorType>(a.qk->getResult(0).getType());
  Value rest = batch;
  for (unsigned t : llvm::reverse(ArrayRef<unsigned>(a.scoreBatch))) {
    if (t == a.scoreBatch.front()) {
      batchIndex[t] = rest;
      break;
    }
    Value size =
        arith::ConstantIndexOp::create(rewriter, loc, scoresType.getDimSize(t));
    batchIndex[t] = arith::RemUIOp::create(rewriter, loc, rest, size);
    rest = arith::DivUIOp::create(rewriter, loc, rest, size);
  }
  Value score = body->getArgument(kModifierScore);
  for (auto [index, bias] : llvm::enumerate(a.scores.biases)) {
    SmallVector<Value> indices;
    for (AffineExpr e : bias.first->map.getResults()) {
      if (isa<AffineConstantExpr>(e)) {
        indices.push_back(zero);
        continue;
      }
      unsigned t = cast<AffineDimExpr>(e).getPosition();
      switch (a.scoreRoles[t]) {
      case Role::Batch:
        indices.push_back(batchIndex.lookup(t));
        break;
      case Role::Head:
        indices.push_back(head);
        break;
      case Role::Group:
        indices.push_back(group);
        break;
      case Role::Query:
        indices.push_back(query);
        break;
      default:
        indices.push_back(key);
      }
    }
    Value element = tensor::ExtractOp::create(
        rewriter, loc, body->getArgument(kModifierCoordinates + index),
        indices);
    if (element.getType() != f32)
      element = arith::ExtFOp::create(rewriter, loc, f32, element);
    double factor = bias.second * unit;
    if (factor != 1.0)
      element = arith::MulFOp::create(
          rewriter, loc, element,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getF32FloatAttr(factor)));
    score = arith::AddFOp::create(rewriter, loc, score, element);
  }
  YieldOp::create(rewriter, loc, score);
}

LogicalResult Raiser::raise(linalg::LinalgOp pv) {
  Attention a;
  ExprBuilder builder;
  std::string why;
  auto refuse = [&](const Twine &reason) {
    if (a.attentionLike)
      pv.emitRemark() << "not raised to fa4.attention: " << reason;
    return failure();
  };
  if (failed(match(pv, a, builder, why)))
    return refuse(why);

  auto qType = cast<RankedTensorType>(a.q.source.getType());
  Type element = qType.getElementType();
  if (!element.isF16() && !element.isBF16())
    return refuse("Q is not f16 or bf16");
  auto outputType = cast<RankedTensorType>(a.output.getType());
  if (cast<RankedTensorType>(a.k.source.getType()).getElementType() !=
          element ||
      cast<RankedTensorType>(a.v.source.getType()).getElementType() !=
          element ||
      outputType.getElementType() != element)
    return refuse("K, V and the output are not of Q's element type");
  for (auto [bias, beta] : a.scores.biases) {
    auto type = dyn_cast<RankedTensorType>(bias->value.getType());
    if (!type || !isa<FloatType>(type.getElementType()) ||
        !(type.getElementType().isF16() || type.getElementType().isBF16() ||
          type.getElementType().isF32()))
      return refuse("a bias is not a tensor of f16, bf16 or f32");
    for (AffineExpr e : bias->map.getResults()) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!isa<AffineDimExpr>(e) && !(c && c.getValue() == 0))
        return refuse("a bias is read through a map other than a "
                      "broadcast");
    }
    auto scoresType = cast<RankedTensorType>(a.qk->getResult(0).getType());
    for (unsigned t : ArrayRef<unsigned>(a.scoreBatch).drop_front(
             a.scoreBatch.empty() ? 0 : 1))
      if (scoresType.isDynamicDim(t))
        return refuse("a bias over batch dimensions whose inner sizes are "
                      "dynamic");
  }
  Operation *anchor = a.output.getDefiningOp();
  SmallVector<Value> sources = {a.q.source, a.k.source, a.v.source};
  for (auto [bias, beta] : a.scores.biases)
    sources.push_back(bias->value);
  for (Value source : sources)
    if (!dominance.properlyDominates(source, anchor))
      return refuse("an operand is defined after the attention's result");

  // Roles of each source's dimensions.
  auto sourceRoles = [&](linalg::LinalgOp op, const ScaledSource &source,
                         OpOperand *operand,
                         ArrayRef<std::optional<Role>> loopRoles) {
    SmallVector<Role> byOperand = operandRoles(op, operand, loopRoles);
    SmallVector<Role> roles(byOperand.size());
    for (unsigned s = 0; s < roles.size(); ++s)
      roles[s] = byOperand[source.map.getDimPosition(s)];
    return roles;
  };
  SmallVector<Role> qRoles = sourceRoles(a.qk, a.q, a.qOperand, a.qkLoops);
  SmallVector<Role> kRoles = sourceRoles(a.qk, a.k, a.kOperand, a.qkLoops);
  SmallVector<Role> vRoles = sourceRoles(a.pv, a.v, a.vOperand, a.pvLoops);
  // K and V stored alike: a K read as written (not transposed, its keys
  // contracted against Q's head dim) is not attention's.
  SmallVector<Role> kAsV(kRoles);
  llvm::replace(kAsV, Role::HeadDim, Role::ValueDim);
  if (kAsV != vRoles)
    return refuse("K and V are not stored in the same layout (is K "
                  "transposed for Q K^T?)");
  // Per source dimension, the score dimension it is (what orders batches).
  auto sourceKeys = [&](linalg::LinalgOp op, const ScaledSource *source,
                        OpOperand *operand,
                        ArrayRef<std::optional<unsigned>> loopKeys) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<unsigned> keys;
    for (unsigned d = 0; d < map.getNumResults(); ++d) {
      unsigned t = source ? source->map.getDimPosition(d) : d;
      keys.push_back(loopKeys[map.getDimPosition(t)].value_or(~0u));
    }
    return keys;
  };
  SmallVector<unsigned> qKeys =
      sourceKeys(a.qk, &a.q, a.qOperand, a.qkScoreDims);
  SmallVector<unsigned> kKeys =
      sourceKeys(a.qk, &a.k, a.kOperand, a.qkScoreDims);
  SmallVector<unsigned> vKeys =
      sourceKeys(a.pv, &a.v, a.vOperand, a.pvScoreDims);
  SmallVector<unsigned> outputKeys =
      sourceKeys(a.pv, nullptr, a.pv.getDpsInitOperand(0), a.pvScoreDims);
  SmallVector<Role> outputRoles =
      operandRoles(a.pv, a.pv.getDpsInitOperand(0), a.pvLoops);
  if (outputType.getRank() != static_cast<int64_t>(outputRoles.size()))
    return refuse("the output is reshaped after P V");

  int64_t groupSize = a.groupSize;
  // Head counts and head dims shape the kernel: static in every operand.
  for (auto [name, source, roles] :
       {std::tuple<StringRef, Value, ArrayRef<Role>>{"Q", a.q.source, qRoles},
        {"K", a.k.source, kRoles},
        {"V", a.v.source, vRoles}}) {
    auto type = cast<RankedTensorType>(source.getType());
    for (auto [d, role] : llvm::enumerate(roles))
      if (type.isDynamicDim(d) &&
          llvm::is_contained({Role::Head, Role::Group, Role::HeadDim,
                              Role::ValueDim},
                             role))
        return refuse(Twine(name) + " has a dynamic head count or head dim "
                                    "(dimension " +
                      Twine(d) + ")");
  }

  // The output's sizes: static where any operand fixes them, else those of
  // Q's dimension of the same score dimension.
  SmallVector<int64_t> pvSizes = a.pv.getStaticLoopRanges();
  AffineMap outputMap = a.pv.getMatchingIndexingMap(a.pv.getDpsInitOperand(0));
  SmallVector<int64_t> staticResultSizes;
  SmallVector<std::optional<unsigned>> resultFromQ;
  for (unsigned d = 0; d < outputRoles.size(); ++d) {
    staticResultSizes.push_back(pvSizes[outputMap.getDimPosition(d)]);
    auto same = llvm::find(qKeys, outputKeys[d]);
    resultFromQ.push_back(same == qKeys.end()
                              ? std::nullopt
                              : std::optional<unsigned>(same - qKeys.begin()));
    if (ShapedType::isDynamic(staticResultSizes.back()) && !resultFromQ.back())
      return refuse("the output has a dynamic size that Q does not have");
  }

  Location loc = pv.getLoc();
  rewriter.setInsertionPoint(anchor);
  Value q = toFa4Layout(rewriter, loc, a.q.source, qRoles, qKeys, Role::Query,
                        Role::HeadDim);
  Value k = toFa4Layout(rewriter, loc, a.k.source, kRoles, kKeys, Role::Key,
                        Role::HeadDim);
  Value v = toFa4Layout(rewriter, loc, a.v.source, vRoles, vKeys, Role::Key,
                        Role::ValueDim);
  auto qShape = cast<RankedTensorType>(q.getType());
  auto vShape = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> outputSizes = {
      tensor::getMixedSize(rewriter, loc, q, 0),
      tensor::getMixedSize(rewriter, loc, q, 1),
      rewriter.getIndexAttr(qShape.getDimSize(2)),
      rewriter.getIndexAttr(vShape.getDimSize(3))};
  Value init = tensor::EmptyOp::create(rewriter, loc, outputSizes, element);
  SmallVector<Value> captures;
  for (auto [bias, beta] : a.scores.biases)
    captures.push_back(bias->value);
  double scale = a.scores.alpha * (a.base2 ? std::log(2.0) : 1.0);
  float scale32 = static_cast<float>(scale);
  if (!std::isfinite(scale32) || !(scale32 > 0))
    return refuse("the scale is not a positive finite f32");
  auto raised = AttentionOp::create(
      rewriter, loc, TypeRange{init.getType()}, q, k, v, init,
      /*lse=*/Value(), /*sink=*/Value(), /*qDescale=*/Value(),
      /*kDescale=*/Value(), /*vDescale=*/Value(), /*cuSeqlensQ=*/Value(),
      /*cuSeqlensK=*/Value(), /*sequsedK=*/Value(), /*pageTable=*/Value(),
      /*cosSin=*/Value(), /*positions=*/Value(), captures,
      /*causal=*/nullptr, /*window=*/nullptr, rewriter.getF32FloatAttr(scale32),
      /*softcap=*/nullptr, /*rope_start=*/nullptr, /*rope_output=*/nullptr,
      /*plan=*/nullptr);
  if (!captures.empty())
    buildScoreRegion(loc, raised, a, groupSize);
  SmallVector<OpFoldResult> resultSizes;
  for (auto [d, size] : llvm::enumerate(staticResultSizes))
    resultSizes.push_back(
        ShapedType::isDynamic(size)
            ? tensor::getMixedSize(rewriter, loc, a.q.source, *resultFromQ[d])
            : OpFoldResult(rewriter.getIndexAttr(size)));
  Value result = fromFa4Layout(rewriter, loc, raised->getResult(0), outputRoles,
                               outputKeys, resultSizes, outputType);
  rewriter.replaceAllUsesWith(a.output, result);

  // Erase what only the attention used.
  SetVector<Operation *> candidates = builder.inlined();
  candidates.insert(a.tail.begin(), a.tail.end());
  candidates.insert(a.pv);
  candidates.insert(a.qk);
  bool progress = true;
  while (progress) {
    progress = false;
    for (Operation *op : candidates) {
      if (!op->use_empty() || !isOpTriviallyDead(op))
        continue;
      erasedOps.insert(op);
      rewriter.eraseOp(op);
      candidates.remove(op);
      progress = true;
      break;
    }
  }
  return success();
}

struct FA4RaiseAttentionPass
    : public fa4::impl::FA4RaiseAttentionBase<FA4RaiseAttentionPass> {
  void runOnOperation() override {
    // P V candidates: contractions on tensors, last first, so that an
    // attention is raised from its P V before its Q K^T is tried.
    SmallVector<linalg::LinalgOp> contractions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 1 && isContraction(op->getResult(0)))
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    Raiser raiser(rewriter, dominance);
    for (linalg::LinalgOp op : llvm::reverse(contractions))
      if (!raiser.erasedOps.contains(op))
        (void)raiser.raise(op);
  }
};

} // namespace
