//===- RegisterValues.cpp - values a thread can hold ----------------------===//
//
// A kernel value (an op result or block argument of vector, integer, float
// or LLVM aggregate type) lives in a thread's registers. One wider than the
// register file cannot be any kernel's, and lowering or translating it
// makes upstream code allocate without bound, so it is refused where it is
// defined: by the kernel's fa4.plan check while the kernel is a gpu.func or
// llvm.func, and by fa4-verify-llvm-ir for any kernel module.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {

/// A thread holds at most 255 32-bit registers; a wider value cannot be a
/// register value of any kernel.
constexpr uint64_t kRegisterFileBits = 255 * 32;

/// The bits a value of `type` occupies, saturating at UINT64_MAX (shapes are
/// user input: vector<9223372036854775807xf32> must not overflow).
uint64_t valueBits(Type type) {
  if (type.isIntOrFloat())
    return type.getIntOrFloatBitWidth();
  if (isa<IndexType, LLVM::LLVMPointerType>(type))
    return 64;
  if (auto vector = dyn_cast<VectorType>(type)) {
    uint64_t bits = valueBits(vector.getElementType());
    for (int64_t dim : vector.getShape())
      bits = llvm::SaturatingMultiply(bits, static_cast<uint64_t>(dim));
    return bits;
  }
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type))
    return llvm::SaturatingMultiply(valueBits(array.getElementType()),
                                    array.getNumElements());
  if (auto structure = dyn_cast<LLVM::LLVMStructType>(type)) {
    if (structure.isOpaque())
      return 0;
    uint64_t bits = 0;
    for (Type field : structure.getBody())
      bits = llvm::SaturatingAdd(bits, valueBits(field));
    return bits;
  }
  return 0;
}

} // namespace

LogicalResult mlir::fa4::verifyRegisterValues(Operation *root) {
  auto check = [](Value value, Operation *at,
                  const std::string &what) -> LogicalResult {
    uint64_t bits = valueBits(value.getType());
    if (bits <= kRegisterFileBits)
      return success();
    InFlightDiagnostic diag = at->emitOpError() << what << " of type "
                                                << value.getType() << " holds ";
    if (bits == UINT64_MAX)
      diag << "more than 2^64 bits";
    else
      diag << bits << " bits";
    return diag << ", more than a thread's 255 32-bit registers ("
                << kRegisterFileBits << " bits)";
  };
  WalkResult result = root->walk([&](Operation *op) {
    for (OpResult value : op->getResults())
      if (failed(check(value, op, "result #" + std::to_string(
                                      value.getResultNumber()))))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg, op, "block argument #" +
                                        std::to_string(arg.getArgNumber()))))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

