//===- FA4ToNVVM.h - lowering fa4 kernel ops to NVVM ------------*- C++ -*-===//

#ifndef FA4_CONVERSION_FA4TONVVM_FA4TONVVM_H
#define FA4_CONVERSION_FA4TONVVM_FA4TONVVM_H

namespace mlir {
class DialectRegistry;
class LLVMTypeConverter;
class RewritePatternSet;
} // namespace mlir

namespace mlir::fa4 {

/// Teaches `converter` the LLVM form of the fa4 types (`!fa4.tmem` becomes
/// `!llvm.ptr<6>`).
void populateFA4ToNVVMTypeConversions(LLVMTypeConverter &converter);

/// Teaches `converter` the LLVM form of the nvgpu types the kernels use
/// (mbarrier groups, tokens, TMA descriptors), as convert-nvgpu-to-nvvm
/// converts them.
void populateNVGPUTypeConversions(LLVMTypeConverter &converter);

/// Registers ConvertToLLVMPatternInterface models for fa4 and nvgpu, so that
/// convert-gpu-to-nvvm (and convert-to-llvm) lower both in one conversion.
void registerConvertFA4ToLLVMInterfaces(DialectRegistry &registry);

/// Adds the patterns that rewrite kernel-level fa4 ops into nvvm/llvm ops.
void populateFA4ToNVVMConversionPatterns(LLVMTypeConverter &converter,
                                         RewritePatternSet &patterns);

} // namespace mlir::fa4

#endif // FA4_CONVERSION_FA4TONVVM_FA4TONVVM_H
