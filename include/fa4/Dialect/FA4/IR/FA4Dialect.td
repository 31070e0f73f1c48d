//===- FA4Dialect.td - the fa4 dialect ---------------------*- tablegen -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4DIALECT_TD
#define FA4_DIALECT_FA4_IR_FA4DIALECT_TD

include "mlir/IR/OpBase.td"

def FA4_Dialect : Dialect {
  let name = "fa4";
  let cppNamespace = "::mlir::fa4";
  let summary = "FlashAttention kernels for NVIDIA Blackwell and Hopper";
  let description = [{
    The `fa4` dialect describes scaled dot-product attention and the levels
    through which it is compiled into warp-specialized GPU kernels:

    1. the semantic level (`fa4.attention`): what is computed, on memrefs;
    2. the plan: every configuration decision of one kernel in an attribute;
    3. a tiled single program over KV blocks;
    4. warp roles communicating through typed channels;
    5. concrete Tensor Memory and shared memory storage;
    6. the synchronization protocol (mbarriers, named barriers);
    7. upstream `nvvm`/`llvm` ops, then PTX and cubin.

    Each level is ordinary IR that can be printed, edited and parsed again.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class FA4_Op<string mnemonic, list<Trait> traits = []>
    : Op<FA4_Dialect, mnemonic, traits>;

#endif // FA4_DIALECT_FA4_IR_FA4DIALECT_TD
