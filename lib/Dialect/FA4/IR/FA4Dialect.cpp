//===- FA4Dialect.cpp - the fa4 dialect -----------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Dialect.h"
#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/Dialect/FA4/IR/Targets.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fa4;

#include "fa4/Dialect/FA4/IR/FA4OpsDialect.cpp.inc"

void FA4Dialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "fa4/Dialect/FA4/IR/FA4Ops.cpp.inc"
      >();
}

/// `fa4.alignment` and `fa4.shared_alignment` are byte alignments of shared
/// memory: a power of two up to the 128-byte swizzle's 1024-byte pattern
/// (no buffer needs more, and larger values would only waste the space).
static LogicalResult verifyAlignment(function_ref<InFlightDiagnostic()> error,
                                     StringRef name, Attribute value) {
  auto alignment = dyn_cast<IntegerAttr>(value);
  if (!alignment || !alignment.getType().isSignlessInteger(64))
    return error() << "'" << name << "' must be an i64 integer, got " << value;
  int64_t bytes = alignment.getInt();
  if (bytes <= 0 || bytes > 1024 || !llvm::isPowerOf2_64(bytes))
    return error() << "'" << name
                   << "' must be a power of two in [1, 1024] bytes, got "
                   << bytes;
  return success();
}

static LogicalResult verifyName(function_ref<InFlightDiagnostic()> error,
                                Attribute value) {
  auto name = dyn_cast<StringAttr>(value);
  if (!name || name.getValue().empty())
    return error() << "'fa4.name' must be a non-empty string, got " << value;
  return success();
}

/// The workgroup attributions of an fa4 kernel are its shared-memory buffers
/// before placement; gpu.func keeps their attributes to itself, so the
/// kernel's plan attribute is where they are checked.
static LogicalResult verifyWorkgroupAttributions(gpu::GPUFuncOp kernel) {
  for (unsigned index = 0, e = kernel.getNumWorkgroupAttributions();
       index < e; ++index) {
    auto error = [&] {
      return kernel.emitOpError() << "workgroup attribution #" << index << ": ";
    };
    // A buffer holds at least one byte and fits the shared memory of a CTA
    // (its size computed without overflow).
    auto type = dyn_cast<MemRefType>(
        kernel.getWorkgroupAttributions()[index].getType());
    if (type && type.hasStaticShape() && type.getElementType().isIntOrFloat()) {
      std::optional<int64_t> bytes = getStaticSizeInBytes(type);
      if (!bytes || *bytes > limits::kSmemBytes)
        return error() << type << " needs "
                       << (bytes ? std::to_string(*bytes) : "more than 2^63")
                       << " bytes, more than the " << limits::kSmemBytes
                       << " bytes of shared memory a CTA can use";
      if (*bytes == 0)
        return error() << type << " holds no bytes";
    }
    DictionaryAttr attrs = kernel.getworkgroupAttributionAttrs(index);
    if (!attrs)
      continue;
    for (NamedAttribute attr : attrs) {
      StringRef name = attr.getName().getValue();
      if (!name.starts_with("fa4."))
        continue;
      if (name == "fa4.name") {
        if (failed(verifyName(error, attr.getValue())))
          return failure();
      } else if (name == "fa4.alignment") {
        if (failed(verifyAlignment(error, name, attr.getValue())))
          return failure();
      } else {
        return error() << "unknown fa4 attribute '" << name << "'";
      }
    }
  }
  return success();
}

/// gpu.func's own verifier refuses a workgroup attribution count larger
/// than its entry block allows, but reads a negative one as a huge count
/// and indexes past the block's arguments; it is refused before that
/// verifier runs.
static LogicalResult verifyAttributionCount(gpu::GPUFuncOp kernel) {
  auto count = kernel->getAttrOfType<IntegerAttr>(
      kernel.getNumWorkgroupAttributionsAttrName());
  if (!count || !count.getValue().isNegative())
    return success();
  SmallString<24> text;
  count.getValue().toStringSigned(text);
  return kernel.emitOpError() << "declares " << text
                              << " workgroup attributions";
}

/// A kernel's plan names the chip it was tiled for; the #nvvm.target its
/// gpu.module compiles it for must be that chip, or the NVPTX backend meets
/// instructions the chip lacks (tcgen05 on sm_90a) or a layout planned for
/// another chip.
static LogicalResult verifyPlanTarget(Operation *kernel, PlanAttr plan) {
  StringRef arch = stringifyArch(plan.getArch());
  for (StringRef chip : enclosingNvvmChips(kernel))
    if (chip != arch)
      return kernel->emitOpError()
             << "is planned for " << arch << " but its gpu.module targets \""
             << chip << "\"";
  return success();
}

LogicalResult FA4Dialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto error = [&] { return op->emitOpError(); };
  if (name == getPlanAttrHelper().getName()) {
    auto plan = dyn_cast<PlanAttr>(attr.getValue());
    if (!plan)
      return error() << "'fa4.plan' must be a #fa4.plan, got "
                     << attr.getValue();
    // The GPU-to-NVVM conversion carries the plan over to the llvm.func.
    if (isa<LLVM::LLVMFuncOp>(op))
      return failure(failed(verifyPlanTarget(op, plan)) ||
                     failed(verifyRegisterValues(op)));
    auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
    if (!kernel || !kernel.isKernel())
      return error() << "'fa4.plan' belongs on a gpu.func kernel";
    if (failed(verifyPlanTarget(kernel, plan)))
      return failure();
    // Dialect attributes are verified before the op they are on: the
    // gpu.func must hold (its signature, its attribution counts against its
    // block arguments) before its attributions are read.
    if (failed(verifyAttributionCount(kernel)) ||
        failed(op->getName().getRegisteredInfo()->verifyInvariants(op)))
      return failure();
    if (failed(verifyWorkgroupAttributions(kernel)))
      return failure();
    return verifyRegisterValues(kernel);
  }
  if (name == getNameAttrHelper().getName())
    return verifyName(error, attr.getValue());
  if (name == getSharedAlignmentAttrHelper().getName()) {
    if (!isa<gpu::GPUModuleOp>(op))
      return error() << "'fa4.shared_alignment' belongs on a gpu.module";
    return verifyAlignment(error, name, attr.getValue());
  }
  for (auto [key, setBy] : LaunchOp::getKernelFacts()) {
    if (name.drop_front(strlen("fa4.")) != key)
      continue;
    auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
    if (!isa<LLVM::LLVMFuncOp>(op) && !(kernel && kernel.isKernel()))
      return error() << "'" << name << "' belongs on a gpu.func kernel";
    return LaunchOp::verifyKernelFact(key, attr.getValue(), error);
  }
  if (name == getAlignmentAttrHelper().getName())
    return error() << "'fa4.alignment' belongs on a workgroup attribution of "
                      "an fa4 kernel";
  return error() << "unknown fa4 attribute '" << name << "'";
}

LogicalResult FA4Dialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  return op->emitOpError() << "unknown fa4 argument attribute '"
                           << attr.getName().getValue() << "' on argument #"
                           << argIndex;
}
