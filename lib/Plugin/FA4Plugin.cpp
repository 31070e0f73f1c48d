//===- FA4Plugin.cpp - fa4 as an mlir-opt plugin --------------------------===//
//
// One shared library with both plugin entry points, so that an upstream
// mlir-opt built against the same libMLIR.so parses fa4 IR and runs the fa4
// passes and pipelines:
//
//   mlir-opt --load-dialect-plugin=FA4Plugin.so \
//            --load-pass-plugin=FA4Plugin.so in.mlir --fa4-synchronize
//
// One library rather than two: the fa4 dialect must exist once in the
// process, and both entry points share it.
//
//===----------------------------------------------------------------------===//

#include "fa4/Conversion/Passes.h"
#include "fa4/InitAll.h"
#include "fa4/Transforms/Passes.h"
#include "fa4/Transforms/Pipeline.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

/// The fa4 dialect and everything its pipeline needs registered: the
/// interfaces and external models fa4 attaches to upstream dialects and the
/// LLVM IR translations.
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FA4", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            ::fa4::registerAllDialects(*registry);
          }};
}

/// fa4's own passes and the fa4-synchronize/fa4-compile pipelines; the host
/// tool registers the upstream passes itself.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FA4", LLVM_VERSION_STRING, []() {
            mlir::fa4::registerFA4Passes();
            mlir::fa4::registerFA4ConversionPasses();
            mlir::fa4::registerCompilePipeline();
          }};
}
