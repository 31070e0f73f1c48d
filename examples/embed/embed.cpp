//===- embed.cpp - fa4 inside another compiler ----------------------------===//
//
// Builds `func.func @attention` around one fa4.attention (causal GQA, 16
// query heads over 4 KV heads, head dim 128, bf16, dynamic batch and
// lengths) with the C++ API, compiles it for sm_100a and sm_90a with
// compileKernels, and prints what it gets back in memory for each kernel:
// the entry point and size of its PTX, its cubin (when ptxas is found) and
// its launch manifest. Exits non-zero when anything fails.
//
//===----------------------------------------------------------------------===//

#include "fa4/Dialect/FA4/IR/FA4Ops.h"
#include "fa4/InitAll.h"
#include "fa4/Transforms/Kernels.h"
#include "fa4/Transforms/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// A module with one function computing attention on its memref arguments.
static OwningOpRef<ModuleOp> buildAttention(MLIRContext &context) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  int64_t dyn = ShapedType::kDynamic;
  Type bf16 = b.getBF16Type();
  auto queries = MemRefType::get({dyn, dyn, 16, 128}, bf16);
  auto keys = MemRefType::get({dyn, dyn, 4, 128}, bf16);
  auto function = func::FuncOp::create(
      loc, "attention", b.getFunctionType({queries, keys, keys, queries}, {}));
  module->push_back(function);
  Block *body = function.addEntryBlock();
  b.setInsertionPointToStart(body);
  mlir::fa4::AttentionOp::create(b, loc, body->getArgument(0),
                                 body->getArgument(1), body->getArgument(2),
                                 body->getArgument(3),
                                 /*lse=*/Value(), /*sink=*/Value(),
                                 /*captures=*/ValueRange(),
                                 /*causal=*/true,
                                 /*window=*/nullptr, /*scale=*/nullptr,
                                 /*softcap=*/nullptr, /*plan=*/nullptr);
  func::ReturnOp::create(b, loc);
  return module;
}

static bool compileFor(MLIRContext &context, StringRef arch) {
  OwningOpRef<ModuleOp> module = buildAttention(context);
  if (failed(verify(*module)))
    return false;
  // The options fa4-opt --fa4-compile takes, as a string or set one by one.
  auto options =
      mlir::fa4::CompileOptions::createFromString(("arch=" + arch).str());
  if (!options)
    return false;
  FailureOr<std::vector<mlir::fa4::CompiledKernel>> kernels =
      mlir::fa4::compileKernels(*module, *options);
  if (failed(kernels))
    return false;
  for (const mlir::fa4::CompiledKernel &kernel : *kernels) {
    StringRef ptx = kernel.ptx;
    size_t entry = ptx.find(".entry ");
    StringRef name = entry == StringRef::npos
                         ? StringRef("?")
                         : ptx.substr(entry + 7).take_until(
                               [](char c) { return c == '('; });
    llvm::outs() << kernel.arch << ": " << kernel.name << " entry " << name
                 << ", " << ptx.size() << " bytes of PTX, "
                 << (kernel.cubin.empty() ? "no cubin" : "a cubin") << ", "
                 << (StringRef(kernel.manifestJson).contains("\"tmem_columns\"")
                         ? "a complete manifest"
                         : "an incomplete manifest")
                 << "\n";
  }
  return !kernels->empty();
}

int main() {
  DialectRegistry registry;
  ::fa4::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  for (StringRef arch : {"sm_100a", "sm_90a"})
    if (!compileFor(context, arch)) {
      llvm::errs() << "fa4-embed-example: compiling for " << arch
                   << " failed\n";
      return 1;
    }
  return 0;
}
