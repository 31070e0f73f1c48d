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
    are packed two per column, e4m3 (`f8E4M3FN`) four, so
    `!fa4.tmem<128x128xbf16>` spans 64 columns and
    `!fa4.tmem<128x128xf8E4M3FN>` 32. The value is the TMEM address of the region (lane 0, first
    column); views of one allocation alias.

    ```mlir
    !fa4.tmem<128x512xf32>    // a whole 512-column allocation
    !fa4.tmem<128x128xbf16>   // P: a 16-bit view of 64 columns
    !fa4.tmem<128x128xf8E4M3FN> // FP8 P: 32 columns
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

def FA4_ChannelType : TypeDef<FA4_Dialect, "Channel"> {
  let mnemonic = "channel";
  let summary = "a ring of slots handed from a producer role to a consumer role";
  let description = [{
    A channel has `stages` slots used round-robin: the i-th hand-off uses slot
    `i mod stages`. Before barrier insertion it only orders producer and
    consumer; `fa4-insert-barriers` gives every slot a full and an empty
    mbarrier. A channel has 1 to 64 stages: its two mbarrier groups fit the
    1024 bytes of shared memory reserved for barriers.

    ```mlir
    !fa4.channel<3>
    ```
  }];
  let parameters = (ins "int64_t":$stages);
  let assemblyFormat = "`<` $stages `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kMaxStages = 64;
  }];
}

#endif // FA4_DIALECT_FA4_IR_FA4TYPES_TD
