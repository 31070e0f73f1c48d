//===- ScoreStage.cpp - the key-tail and causal score stage ---------------===//

#include "ScoreStage.h"

using namespace mlir;
using namespace mlir::fa4;
using namespace mlir::fa4::specialize;

ScoreStage::~ScoreStage() = default;

Value ScoreStage::scale(Value scores, Value scale) {
  return arith::MulFOp::create(b, scores, scale);
}

namespace {
/// Query row i sees keys [0, limit(i)): Skv, or when causal (bottom-right
/// aligned) the keys up to its diagonal i + Skv - Sq. Stages that change
/// one step (the scaling, say) derive from it.
class KeyLimitStage : public ScoreStage {
public:
  using ScoreStage::ScoreStage;

  Value tileBlocks(Value position) override {
    if (!shape.causal)
      return kernel.kvBlocks;
    // Blocks up to the diagonal of the tile's last row; the blocks after it
    // are fully masked and skipped.
    Value lastRow = add(position, shape.positionsPerWorkTile() - 1);
    return div(add(keyLimit(lastRow), shape.plan.getBlockN() - 1),
               shape.plan.getBlockN());
  }

  RowKeys rowKeys(Value position) override { return {keyLimit(position)}; }

  Value visibleKeys(const RowKeys &row, Value firstKey) override {
    return arith::IndexCastOp::create(
        b, b.getI32Type(), arith::SubIOp::create(b, row.limit, firstKey));
  }

  Value keyMask(Value columns, Value visible) override {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, columns,
                                 visible);
  }

  Value blockNeedsMask(const RowKeys &fewest, Value block) override {
    Value blockEnd = mul(add(block, 1), shape.plan.getBlockN());
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, blockEnd,
                                 fewest.limit);
  }

  Value unmaskedBlocks(const RowKeys &fewest, Value blocks) override {
    // Block n is unmasked while (n + 1) blockN <= limit.
    return arith::MinUIOp::create(b, div(fewest.limit, shape.plan.getBlockN()),
                                  blocks);
  }

protected:
  /// The last key (exclusive) query `position` may see.
  Value keyLimit(Value position) {
    if (!shape.causal)
      return kernel.seqKv;
    // Bottom-right aligned: query i sees keys j <= i + Skv - Sq.
    Value limit = arith::SubIOp::create(b, add(add(position, kernel.seqKv), 1),
                                        kernel.seqQ);
    return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, limit, idx(0)),
                                  kernel.seqKv);
  }
};
} // namespace

std::unique_ptr<ScoreStage>
specialize::createScoreStage(KernelBuilder &kernel) {
  return std::make_unique<KeyLimitStage>(kernel);
}
