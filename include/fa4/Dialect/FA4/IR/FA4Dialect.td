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
  // The discardable attributes passes hand to each other. Each is checked
  // where it may appear by verifyOperationAttribute /
  // verifyRegionArgAttribute; any other `fa4.*` attribute is an error.
  //   fa4.plan             the kernel's plan, on an fa4 kernel (gpu.func,
  //                        then llvm.func); its arch is the chip of the
  //                        gpu.module's #nvvm.target
  //   fa4.name             a buffer's or barrier group's name, on the op
  //                        that makes it or on a workgroup attribution
  //   fa4.alignment        a workgroup attribution's byte alignment
  //   fa4.shared_alignment the dynamic shared memory's byte alignment, on
  //                        the gpu.module
  // and the kernel facts, each recorded on the kernel (gpu.func, then the
  // llvm.func it becomes) by the pass that decides it and copied into the
  // launch manifests by fa4-assemble-manifest:
  //   fa4.tmem_columns       the Tensor Memory allocation (fa4-allocate-tmem)
  //   fa4.dynamic_smem_bytes the dynamic shared memory (fa4-allocate-smem)
  //   fa4.mbarriers          mbarriers created (fa4-insert-barriers)
  //   fa4.named_barriers     named barrier ids used (fa4-insert-barriers)
  //   fa4.roles              the roles as lowered: name, warps, registers
  //                          (fa4-lower-warp-specialize)
  let discardableAttrs = (ins
    "::mlir::fa4::PlanAttr":$plan,
    "::mlir::StringAttr":$name,
    "::mlir::IntegerAttr":$alignment,
    "::mlir::IntegerAttr":$shared_alignment,
    "::mlir::IntegerAttr":$tmem_columns,
    "::mlir::IntegerAttr":$dynamic_smem_bytes,
    "::mlir::IntegerAttr":$mbarriers,
    "::mlir::IntegerAttr":$named_barriers,
    "::mlir::ArrayAttr":$roles
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
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
