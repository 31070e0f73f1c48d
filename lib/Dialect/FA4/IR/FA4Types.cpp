//===- FA4Types.cpp - fa4 types -------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Types.h"
#include "fa4/Dialect/FA4/IR/FA4Attrs.h"
#include "fa4/Dialect/FA4/IR/FA4Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fa4;

#define GET_TYPEDEF_CLASSES
#include "fa4/Dialect/FA4/IR/FA4Types.cpp.inc"

void FA4Dialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "fa4/Dialect/FA4/IR/FA4Types.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TmemType
//===----------------------------------------------------------------------===//

// !fa4.tmem<LANESxELEMENTSxTYPE>
Type TmemType::parse(AsmParser &parser) {
  SmallVector<int64_t, 2> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  if (shape.size() != 2) {
    parser.emitError(loc) << "expected lanes x elements x type, got "
                          << shape.size() << " dimensions";
    return {};
  }
  return TmemType::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), shape[0],
      shape[1], elementType);
}

void TmemType::print(AsmPrinter &printer) const {
  printer << "<" << getLanes() << "x" << getElements() << "x"
          << getElementType() << ">";
}

LogicalResult TmemType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t lanes, int64_t elements,
                               Type elementType) {
  if (lanes <= 0 || lanes > limits::kTmemLanes || lanes % 32 != 0)
    return emitError() << "TMEM lanes must be a multiple of 32 in [32, "
                       << limits::kTmemLanes << "], got " << lanes;
  if (!elementType.isF32() && !elementType.isBF16() && !elementType.isF16() &&
      !elementType.isInteger(32) && !isa<Float8E4M3FNType>(elementType))
    return emitError() << "TMEM element type must be f32, i32, f16, bf16 or "
                          "f8E4M3FN, got "
                       << elementType;
  unsigned bits = elementType.getIntOrFloatBitWidth();
  if (elements <= 0 || (elements * bits) % 32 != 0)
    return emitError() << "TMEM elements per lane must fill whole 32-bit "
                          "columns, got "
                       << elements << " x " << bits << " bits";
  if (elements * bits / 32 > limits::kTmemColumns)
    return emitError() << "TMEM region of " << elements * bits / 32
                       << " columns exceeds the " << limits::kTmemColumns
                       << " columns of Tensor Memory";
  return success();
}

LogicalResult ChannelType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t stages) {
  // Each stage has a full and an empty mbarrier in the 1024 bytes of shared
  // memory reserved for barriers.
  if (stages < 1 || stages > kMaxStages)
    return emitError() << "a channel has 1 to " << kMaxStages
                       << " stages (its mbarriers fit the "
                       << limits::kSmemReservedBytes
                       << "-byte barrier reserve), got " << stages;
  return success();
}
