//===- ScoreStage.cpp - the key-window and softcap score stages -----------===//

#include "ScoreStage.h"
#include "WorkSchedule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

ScoreStage::~ScoreStage() = default;

SmallVector<Value>
ScoreStage::Ceiling::onEachSide(ImplicitLocOpBuilder &b, TypeRange types,
                                function_ref<SmallVector<Value>(Value)> body) {
  if (!bound)
    return body(Value());
  auto sides = scf::IfOp::create(b, types, usable, /*addThenBlock=*/true,
                                 /*addElseBlock=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(sides.thenBlock());
  scf::YieldOp::create(b, body(bound));
  b.setInsertionPointToStart(sides.elseBlock());
  scf::YieldOp::create(b, body(Value()));
  return sides.getResults();
}

Value ScoreStage::outerScale(Value descale) {
  if (!descale)
    return kernel.scaleLog2;
  return arith::MulFOp::create(b, kernel.scaleLog2, descale);
}

namespace {
/// Query row i sees keys [lower(i), limit(i)) of [0, Skv): the window
/// around its bottom-right diagonal d = i + Skv - Sq, [d - left, d + right]
/// with either side unbounded (causal: right = 0, no window: both). Stages
/// that change one step (the scaling, say) derive from it.
///
/// The kernel computes in 32 bits. Sizes are below 2^31 - 256 and bounded
/// window sides at most that (fa4-tile), so d and Sq - i fit; d - left and
/// d + right + 1 may not, and are formed so that no intermediate overflows.
class KeyWindowStage : public ScoreStage {
public:
  explicit KeyWindowStage(KernelBuilder &kernel) : ScoreStage(kernel) {
    std::tie(left, right) = shape.window;
  }

  KvBlocks tileBlocks(const Tile &tile) override {
    int64_t blockN = shape.plan.getBlockN();
    // From the block of the first row's first key to the block of the last
    // row's last key; the blocks outside are fully masked and skipped.
    Value first = idx(0), end = tile.kvBlocks;
    if (left >= 0)
      first = div(lowerKey(tile, tile.position), blockN);
    if (right >= 0) {
      Value lastRow = add(tile.position, shape.positionsPerWorkTile() - 1);
      end = div(add(keyLimit(tile, lastRow), blockN - 1), blockN);
    }
    return {first, sub(end, first)};
  }

  RowKeys rowKeys(const Tile &tile, Value position) override {
    return {left >= 0 ? lowerKey(tile, position) : Value(),
            keyLimit(tile, position)};
  }

  VisibleKeys visibleKeys(const RowKeys &row, Value firstKey) override {
    auto relative = [&](Value key) {
      return arith::IndexCastOp::create(b, b.getI32Type(), sub(key, firstKey));
    };
    return {row.lower ? relative(row.lower) : Value(), relative(row.limit)};
  }

  Value maskScores(Value scores, Value columns, const VisibleKeys &visible,
                   Value masked) override {
    if (!visible.low)
      return arith::SelectOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::slt, columns,
                                visible.high),
          scores, masked);
    // low <= c < high as one unsigned compare, c - low < max(high - low,
    // 0): a compare and a select per element rather than two each (the
    // 232-register sm_90a consumer spills less).
    Value width = arith::MaxSIOp::create(
        b, arith::SubIOp::create(b, visible.high, visible.low),
        arith::ConstantOp::create(b, b.getZeroAttr(columns.getType())));
    Value offset = arith::SubIOp::create(b, columns, visible.low);
    return arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, offset, width),
        scores, masked);
  }

  Value blockNeedsMask(const RowKeys &first, const RowKeys &last,
                       Value block) override {
    int64_t blockN = shape.plan.getBlockN();
    Value blockEnd = mul(add(block, 1), blockN);
    Value masked = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                         blockEnd, first.limit);
    if (!last.lower)
      return masked;
    Value before = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                         mul(block, blockN), last.lower);
    return arith::OrIOp::create(b, masked, before);
  }

  std::pair<Value, Value> unmaskedBlocks(const RowKeys &first,
                                         const RowKeys &last,
                                         const KvBlocks &blocks) override {
    int64_t blockN = shape.plan.getBlockN();
    Value end = add(blocks.first, blocks.count);
    // Block n is unmasked while lower(last) <= n blockN and (n + 1) blockN
    // <= limit(first).
    Value begin = blocks.first;
    if (last.lower)
      begin = arith::MinUIOp::create(
          b,
          arith::MaxUIOp::create(
              b, div(add(last.lower, blockN - 1), blockN), begin),
          end);
    Value unmaskedEnd =
        arith::MinUIOp::create(b, div(first.limit, blockN), end);
    return {begin, arith::MaxUIOp::create(b, unmaskedEnd, begin)};
  }

  bool masksLeadingBlocks() const override { return left >= 0; }

protected:
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value smax(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value smin(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }

  /// The end (exclusive) of the keys query `position` sees:
  /// clamp(d + right + 1, 0, Skv); for right > 0 as Skv - clamp(Sq - i - 1 -
  /// right, 0, Skv). (With right 0, d + 1 fits and wrapping intermediates
  /// do no harm.)
  Value keyLimit(const Tile &tile, Value position) {
    Value seqQ = tile.seqQ, seqKv = tile.seqKv;
    if (right < 0)
      return seqKv;
    if (right == 0) {
      Value limit = sub(add(add(position, seqKv), 1), seqQ);
      return smin(smax(limit, idx(0)), seqKv);
    }
    Value beyond = sub(sub(seqQ, position), idx(1 + right));
    return sub(seqKv, smin(smax(beyond, idx(0)), seqKv));
  }

  /// The first key query `position` sees: clamp(d - left, 0, Skv) as
  /// max(d, 0) - min(left, max(d, 0)).
  Value lowerKey(const Tile &tile, Value position) {
    Value diagonal = smax(sub(add(position, tile.seqKv), tile.seqQ), idx(0));
    return smin(sub(diagonal, smin(idx(left), diagonal)), tile.seqKv);
  }

  int64_t left, right;
};

/// Softcapping, `c tanh(s / c)` on the raw scores (c the cap over the
/// scale), in the log2 units of the softmax: (scale c) tanh(s / c). The
/// roles take maxima on tanh(s / c) and fold scale c into the exponent's
/// FMA: one multiply and the tanh per score beyond the plain stage (FP8:
/// the descale factor joins the multiply, s d / c).
class SoftcapStage final : public KeyWindowStage {
public:
  SoftcapStage(KernelBuilder &kernel) : KeyWindowStage(kernel) {}

  Value transform(Value scores, FragmentCoordsFn, Value descale) override {
    auto type = cast<VectorType>(scores.getType());
    Value factor = arith::DivFOp::create(b, f32(1.0f), kernel.softcap);
    if (descale)
      factor = arith::MulFOp::create(b, factor, descale);
    Value inverse = vector::BroadcastOp::create(b, type, factor);
    Value y = arith::MulFOp::create(b, scores, inverse);
    int64_t lanes = shape.tanhOnFma;
    if (lanes == 0)
      return hardwareTanh(y);
    // Where every |y| of the warp's fragments is at most 1, `lanes` of
    // every 16 elements take the polynomial (FMA pipe), the rest MUFU. The
    // bound is checked on y's extremes (llvm.fabs would become a libdevice
    // call in GPU-to-NVVM; y^2 would keep a second fragment live).
    auto extreme = [&](vector::CombiningKind kind) {
      return vector::ReductionOp::create(b, kind, y);
    };
    Value large = warpAny(arith::OrIOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::UGT,
                              extreme(vector::CombiningKind::MAXIMUMF),
                              f32(1.0f)),
        arith::CmpFOp::create(b, arith::CmpFPredicate::ULT,
                              extreme(vector::CombiningKind::MINIMUMF),
                              f32(-1.0f))));
    auto split = scf::IfOp::create(b, TypeRange{type}, large,
                                   /*addThenBlock=*/true,
                                   /*addElseBlock=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(split.thenBlock());
    scf::YieldOp::create(b, ValueRange{hardwareTanh(y)});
    b.setInsertionPointToStart(split.elseBlock());
    scf::YieldOp::create(b, ValueRange{splitTanh(y, lanes)});
    b.setInsertionPointAfter(split);
    return split.getResult(0);
  }
  Value outerScale(Value) override {
    return arith::MulFOp::create(b, kernel.scaleLog2, kernel.softcap);
  }

  /// The cap itself: tanh is at most 1, so no score exceeds B = scale c
  /// (c the cap in raw-score units: B = c log2(e) for the op's softcap c),
  /// and P = 2^(score - B) is at least 2^-2B. The plan's ceiling bounds B
  /// where that floor keeps P's precision (fa4-plan: bf16 48, f16 7).
  Ceiling ceiling() override {
    if (!shape.softcapCeiling)
      return {};
    Value bound = outerScale(Value());
    return {bound, arith::CmpFOp::create(
                       b, arith::CmpFPredicate::OLE, bound,
                       f32(static_cast<float>(shape.softcapCeiling)))};
  }

private:
  /// The hardware approximation (tanh.approx.f32, a MUFU op): the LLVM
  /// intrinsic with afn lowers to it. math.tanh would become a libdevice
  /// call in GPU-to-NVVM.
  Value hardwareTanh(Value y) {
    return LLVM::TanhOp::create(
        b, y.getType(), y,
        LLVM::FastmathFlagsAttr::get(ctx, LLVM::FastmathFlags::afn));
  }

  /// tanh(y) for |y| <= 1 on the FMA pipe: y + y^3 p(y^2), p the minimax
  /// quadratic of the relative error (2^-13.3 in f32 arithmetic, below
  /// tanh.approx.f32's 2^-11).
  Value polynomialTanh(Value y) {
    auto type = cast<VectorType>(y.getType());
    auto splat = [&](float c) {
      return vector::BroadcastOp::create(b, type, f32(c));
    };
    Value u = arith::MulFOp::create(b, y, y);
    Value p =
        LLVM::FMAOp::create(b, splat(-0.0274197099f), u, splat(0.120271348f));
    p = LLVM::FMAOp::create(b, p, u, splat(-0.331331965f));
    Value cube = arith::MulFOp::create(b, y, u);
    return LLVM::FMAOp::create(b, cube, p, y);
  }

  /// tanh of `y` (|y| <= 1) with elements i % 16 < lanes on the polynomial
  /// and the others on MUFU.
  Value splitTanh(Value y, int64_t lanes) {
    auto type = cast<VectorType>(y.getType());
    int64_t n = type.getNumElements();
    SmallVector<int64_t> onFma, onMufu;
    for (int64_t i = 0; i < n; ++i)
      (i % 16 < lanes ? onFma : onMufu).push_back(i);
    if (onMufu.empty())
      return polynomialTanh(y);
    Value fma = polynomialTanh(vector::ShuffleOp::create(b, y, y, onFma));
    Value mufu = hardwareTanh(vector::ShuffleOp::create(b, y, y, onMufu));
    // Back in fragment order: the shuffle's second operand counts on from
    // the first's size.
    SmallVector<int64_t> back(n);
    for (auto [position, i] : llvm::enumerate(onFma))
      back[i] = position;
    for (auto [position, i] : llvm::enumerate(onMufu))
      back[i] = onFma.size() + position;
    return vector::ShuffleOp::create(b, fma, mufu, back);
  }
};
} // namespace

std::unique_ptr<ScoreStage>
specialize::createScoreStage(KernelBuilder &kernel) {
  std::unique_ptr<ScoreStage> stage;
  if (kernel.getShape().softcap)
    stage = std::make_unique<SoftcapStage>(kernel);
  else
    stage = std::make_unique<KeyWindowStage>(kernel);
  if (kernel.getShape().modifier)
    return createModifierStage(kernel, std::move(stage));
  return stage;
}
