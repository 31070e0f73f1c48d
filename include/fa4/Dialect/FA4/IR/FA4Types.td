//===- FA4Types.td - fa4 types -----------------------------*- tablegen -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4TYPES_TD
#define FA4_DIALECT_FA4_IR_FA4TYPES_TD

include "fa4/Dialect/FA4/IR/FA4Dialect.td"
include "mlir/IR/AttrTypeBase.td"

def FA4_TmemType : TypeDef<FA4_Dialect, "Tmem"> {
  let mnemonic = "tmem";
  let summary = "a region of Tensor Memory";
  let description = [{
    A rectangle of Tensor Memory (sm_100a): `lanes` TMEM lanes (rows) and
    `elements` values of `elementType` per lane, starting at some column of
    the CTA's TMEM allocation. A lane holds 32-bit columns; 16-bit elements
    are packed two per column, so `!fa4.tmem<128x128xbf16>` spans 64
    columns. The value is the TMEM address of the region (lane 0, first
    column); views of one allocation alias.

    ```mlir
    !fa4.tmem<128x512xf32>    // a whole 512-column allocation
    !fa4.tmem<128x128xbf16>   // P: a 16-bit view of 64 columns
    ```
  }];
  let parameters = (ins "int64_t":$lanes, "int64_t":$elements,
                        "Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// 32-bit TMEM columns the region spans.
    int64_t getNumColumns() const {
      return getElements() * getElementType().getIntOrFloatBitWidth() / 32;
    }
  }];
}

#endif // FA4_DIALECT_FA4_IR_FA4TYPES_TD
