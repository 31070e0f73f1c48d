//===- BufferizableOpInterfaceImpl.cpp - fa4.attention on tensors ---------===//
//
// fa4.attention on tensors is a destination-style op: O (and LSE) are its
// inits, written and never read; Q, K, V, the sinks, the tables and the
// captures are read. Bufferizing it gives the memref form with the same
// attributes and regions; the regions' capture arguments become the
// captures' buffers and their tensor.extract / tensor.dim become
// memref.load / memref.dim.
//
// The memref form takes Q/K/V/O with a unit-stride head dimension and the
// other operands contiguous. A buffer that is not statically known to be so
// (a fully dynamic layout, say) is copied into one that is; for O and LSE
// the kernel writes a fresh buffer that is then copied into the
// destination, so that the result stays the destination's buffer.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/BufferizableOpInterfaceImpl.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/ScoreModifiers.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::fa4;

namespace {
/// Whether the memref form takes `type` for the operand `index`: Q, K, V and
/// O need a unit-stride innermost dimension, the rest contiguity; all live
/// in the default memory space.
bool isKernelBuffer(AttentionOp op, unsigned index, MemRefType type) {
  if (type.getMemorySpace())
    return false;
  if (index > op.getOutputMutable().getOperandNumber())
    return type.getLayout().isIdentity();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  // An FP8 V may also be key-major (sm_90a's PV wgmma reads it so).
  bool keyMajor = op.isFp8() &&
                  index == op.getValueMutable().getOperandNumber() &&
                  strides[op.getKeySequenceDim()] == 1;
  return strides.back() == 1 || keyMajor;
}

/// The type of the buffer the kernel gets for the operand `index` whose
/// buffer has `type`: that type, or the same shape contiguous.
MemRefType kernelBufferType(AttentionOp op, unsigned index, MemRefType type) {
  if (isKernelBuffer(op, index, type))
    return type;
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// The capture operand a block argument of a region stands for, or null.
OpOperand *captureOf(AttentionOp op, BlockArgument argument) {
  if (argument.getArgNumber() < kModifierCoordinates)
    return nullptr;
  unsigned index = argument.getArgNumber() - kModifierCoordinates;
  if (index >= op.getCaptures().size())
    return nullptr;
  return &op.getCapturesMutable()[index];
}

/// Gives the regions' capture arguments the buffers' types and turns their
/// tensor reads into memref reads.
LogicalResult bufferizeRegions(RewriterBase &rewriter, AttentionOp op,
                               ValueRange captureBuffers) {
  for (Region *region : {&op.getScoreMod(), &op.getMaskMod()}) {
    if (region->empty())
      continue;
    Block &body = region->front();
    for (auto [index, buffer] : llvm::enumerate(captureBuffers)) {
      BlockArgument argument = body.getArgument(kModifierCoordinates + index);
      argument.setType(buffer.getType());
      for (Operation *user : llvm::make_early_inc_range(argument.getUsers())) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(user);
        if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
          rewriter.replaceOpWithNewOp<memref::LoadOp>(extract, argument,
                                                      extract.getIndices());
        } else if (auto dim = dyn_cast<tensor::DimOp>(user)) {
          rewriter.replaceOpWithNewOp<memref::DimOp>(dim, argument,
                                                     dim.getIndex());
        } else if (auto toBuffer = dyn_cast<ToBufferOp>(user)) {
          // A read bufferized before this op saw the capture's own type.
          Value replacement = argument;
          if (toBuffer.getType() != argument.getType()) {
            if (!memref::CastOp::areCastCompatible(argument.getType(),
                                                   toBuffer.getType()))
              return toBuffer.emitOpError()
                     << "reads a capture as " << toBuffer.getType()
                     << ", but it bufferizes to " << argument.getType();
            replacement = memref::CastOp::create(rewriter, toBuffer.getLoc(),
                                                 toBuffer.getType(), argument);
          }
          rewriter.replaceOp(toBuffer, replacement);
        } else {
          return user->emitOpError()
                 << "reads a captured tensor in a way fa4.attention cannot "
                    "bufferize (only tensor.extract and tensor.dim)";
        }
      }
    }
  }
  return success();
}

struct AttentionOpInterface
    : public BufferizableOpInterface::ExternalModel<AttentionOpInterface,
                                                    AttentionOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    // O and LSE are written whole and never read.
    return !cast<AttentionOp>(op).isDpsInit(&operand);
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return cast<AttentionOp>(op).isDpsInit(&operand);
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto attention = cast<AttentionOp>(op);
    if (attention.isDpsInit(&operand))
      return {{attention.getTiedOpResult(&operand), BufferRelation::Equivalent}};
    AliasingValueList aliases;
    if (attention.getCaptures().empty())
      return aliases;
    unsigned first = attention.getCaptures().getBeginOperandIndex();
    unsigned index = operand.getOperandNumber();
    if (index < first)
      return aliases;
    // A capture is the same buffer as its argument in each region.
    for (Region *region : {&attention.getScoreMod(), &attention.getMaskMod()})
      if (!region->empty())
        aliases.addAlias({region->front().getArgument(kModifierCoordinates +
                                                      index - first),
                          BufferRelation::Equivalent});
    return aliases;
  }

  AliasingOpOperandList getAliasingOpOperands(Operation *op, Value value,
                                              const AnalysisState &) const {
    auto attention = cast<AttentionOp>(op);
    if (auto result = dyn_cast<OpResult>(value))
      return {{attention.getDpsInitOperand(result.getResultNumber()),
               BufferRelation::Equivalent}};
    if (OpOperand *capture = captureOf(attention, cast<BlockArgument>(value)))
      return {{capture, BufferRelation::Equivalent}};
    return {};
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    auto attention = cast<AttentionOp>(op);
    // A result is its destination's buffer.
    if (auto result = dyn_cast<OpResult>(value))
      return bufferization::getBufferType(
          attention.getDpsInitOperand(result.getResultNumber())->get(),
          options, state, invocationStack);
    // A region argument is the buffer the kernel reads the capture from.
    OpOperand *capture = captureOf(attention, cast<BlockArgument>(value));
    if (!capture)
      return op->emitOpError() << "has no buffer for " << value;
    FailureOr<BufferLikeType> type = bufferization::getBufferType(
        capture->get(), options, state, invocationStack);
    if (failed(type))
      return failure();
    auto memref = dyn_cast<MemRefType>(*type);
    if (!memref)
      return op->emitOpError() << "captures " << capture->get().getType()
                               << " as " << *type << ", not a memref";
    return cast<BufferLikeType>(
        kernelBufferType(attention, capture->getOperandNumber(), memref));
  }

  bool isWritable(Operation *, Value value, const AnalysisState &) const {
    // The regions only read their captures.
    return isa<OpResult>(value);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attention = cast<AttentionOp>(op);
    Location loc = op->getLoc();
    SmallVector<Value> operands;
    // Fresh buffers the kernel writes O / LSE to, and their destinations.
    SmallVector<std::pair<Value, Value>> copiesOut;
    SmallVector<Value> destinations;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      auto type = cast<MemRefType>(buffer->getType());
      unsigned index = operand.getOperandNumber();
      bool init = attention.isDpsInit(&operand);
      if (init)
        destinations.push_back(*buffer);
      if (isKernelBuffer(attention, index, type)) {
        operands.push_back(*buffer);
        continue;
      }
      MemRefType contiguous = kernelBufferType(attention, index, type);
      if (!init) {
        FailureOr<Value> copy =
            castOrReallocMemRefValue(rewriter, *buffer, contiguous, options);
        if (failed(copy))
          return op->emitOpError() << "cannot bring operand #" << index << " ("
                                   << type << ") into the " << contiguous
                                   << " the kernel reads";
        operands.push_back(*copy);
        continue;
      }
      SmallVector<Value> sizes;
      for (unsigned i = 0, e = type.getRank(); i < e; ++i)
        if (type.isDynamicDim(i))
          sizes.push_back(memref::DimOp::create(rewriter, loc, *buffer, i));
      FailureOr<Value> fresh =
          options.createAlloc(rewriter, loc, contiguous, sizes);
      if (failed(fresh))
        return failure();
      operands.push_back(*fresh);
      copiesOut.push_back({*fresh, *buffer});
    }

    // The buffer of an optional operand (null where absent).
    auto operandAt = [&](OpOperand *operand) -> Value {
      return operand ? operands[operand->getOperandNumber()] : Value();
    };
    auto optionalOperand = [&](MutableOperandRange range) -> OpOperand * {
      return range.empty() ? nullptr : &range[0];
    };
    ValueRange captures = ValueRange(operands).take_back(
        attention.getCaptures().size());
    auto bufferized = AttentionOp::create(
        rewriter, loc, TypeRange(), operands[0], operands[1], operands[2],
        operands[3], operandAt(optionalOperand(attention.getLseMutable())),
        operandAt(optionalOperand(attention.getSinkMutable())),
        operandAt(optionalOperand(attention.getQDescaleMutable())),
        operandAt(optionalOperand(attention.getKDescaleMutable())),
        operandAt(optionalOperand(attention.getVDescaleMutable())),
        operandAt(optionalOperand(attention.getCuSeqlensQMutable())),
        operandAt(optionalOperand(attention.getCuSeqlensKMutable())),
        operandAt(optionalOperand(attention.getSequsedKMutable())),
        operandAt(optionalOperand(attention.getPageTableMutable())),
        operandAt(optionalOperand(attention.getCosSinMutable())),
        operandAt(optionalOperand(attention.getPositionsMutable())), captures,
        attention.getCausalAttr(), attention.getWindowAttr(),
        attention.getScaleAttr(), attention.getSoftcapAttr(),
        attention.getRopeStartAttr(), attention.getRopeOutputAttr(),
        attention.getPlanAttr());
    bufferized->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(attention.getScoreMod(),
                                bufferized.getScoreMod(),
                                bufferized.getScoreMod().end());
    rewriter.inlineRegionBefore(attention.getMaskMod(), bufferized.getMaskMod(),
                                bufferized.getMaskMod().end());
    if (failed(bufferizeRegions(rewriter, bufferized, captures)))
      return failure();
    for (auto [fresh, destination] : copiesOut)
      if (failed(options.createMemCpy(rewriter, loc, fresh, destination)))
        return failure();
    replaceOpWithBufferizedValues(rewriter, op, destinations);
    return success();
  }
};
} // namespace

void mlir::fa4::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FA4Dialect *) {
    AttentionOp::attachInterface<AttentionOpInterface>(*ctx);
  });
}
