/*===- fa4-capi-test.c - smoke test of the fa4 C API ----------------------===*/

// RUN: fa4-capi-test 2>&1 | FileCheck %s
// REQUIRES: capi

#include "fa4-c/Dialects.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  fprintf(stdout, "diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  fprintf(stdout, "\n");
  return mlirLogicalResultSuccess();
}

static const char *kValid =
    "func.func @f(%q: memref<1x128x8x64xf16>, %k: memref<1x256x2x64xf16>,\n"
    "             %v: memref<1x256x2x64xf16>, %o: memref<1x128x8x64xf16>) {\n"
    "  fa4.attention ins(%q, %k, %v : memref<1x128x8x64xf16>,\n"
    "      memref<1x256x2x64xf16>, memref<1x256x2x64xf16>)\n"
    "      outs(%o : memref<1x128x8x64xf16>) {causal}\n"
    "  return\n"
    "}\n";

// Three query heads cannot share two key/value heads.
static const char *kInvalid =
    "func.func @f(%q: memref<1x128x3x64xf16>, %k: memref<1x256x2x64xf16>,\n"
    "             %v: memref<1x256x2x64xf16>, %o: memref<1x128x3x64xf16>) {\n"
    "  fa4.attention ins(%q, %k, %v : memref<1x128x3x64xf16>,\n"
    "      memref<1x256x2x64xf16>, memref<1x256x2x64xf16>)\n"
    "      outs(%o : memref<1x128x3x64xf16>)\n"
    "  return\n"
    "}\n";

/// Prints what the caller gets of each kernel: its name and chip, whether
/// the PTX defines its entry, whether the cubin is an ELF image, and the
/// manifest.
static void printKernel(const Fa4CompiledKernel *kernel, void *userData) {
  int *count = (int *)userData;
  ++*count;
  char entry[128];
  snprintf(entry, sizeof entry, ".entry %.*s", (int)kernel->name.length,
           kernel->name.data);
  // A bounded search: the PTX is not NUL-terminated.
  int hasEntry = 0;
  size_t n = strlen(entry);
  for (size_t i = 0; i + n <= kernel->ptx.length && !hasEntry; ++i)
    hasEntry = memcmp(kernel->ptx.data + i, entry, n) == 0;
  int elf = kernel->cubin.length >= 4 &&
            memcmp(kernel->cubin.data, "\x7f" "ELF", 4) == 0;
  printf("kernel %.*s (%.*s): entry %d, cubin %s, manifest json %d\n",
         (int)kernel->name.length, kernel->name.data, (int)kernel->arch.length,
         kernel->arch.data, hasEntry,
         kernel->cubin.length == 0 ? "none" : (elf ? "elf" : "not elf"),
         kernel->manifest.length > 0 && kernel->manifest.data[0] == '{');
  printf("%.*s", (int)kernel->manifest.length, kernel->manifest.data);
}

int main(void) {
  // Diagnostics go to stderr, results to stdout, and the RUN line merges
  // them: stdout unbuffered, so that a full buffer flushed mid-line cannot
  // interleave the two.
  setvbuf(stdout, NULL, _IONBF, 0);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  fa4RegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);

  MlirDialectHandle handle = mlirGetDialectHandle__fa4__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  // CHECK: namespace: fa4
  printf("namespace: %.*s\n", (int)ns.length, ns.data);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kValid));
  // CHECK: valid module parsed: 1
  printf("valid module parsed: %d\n", !mlirModuleIsNull(module));
  MlirOperation op = mlirModuleGetOperation(module);
  // CHECK: valid module verifies: 1
  printf("valid module verifies: %d\n", mlirOperationVerify(op));
  // CHECK: fa4.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x128x8x64xf16>
  // CHECK-SAME: {causal}
  mlirOperationPrint(op, printToStdout, NULL);
  printf("\n");
  mlirModuleDestroy(module);

  // CHECK: diagnostic: 'fa4.attention' op query heads (3) must be a multiple of key/value heads (2)
  // CHECK: invalid module parsed: 0
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kInvalid));
  printf("invalid module parsed: %d\n", !mlirModuleIsNull(module));

  // The whole pipeline through the C API: the attention op becomes a launch
  // and a gpu.binary.
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kValid));
  MlirLogicalResult compiled =
      fa4CompileModule(module, mlirStringRefCreateFromCString("kv-stages=2"));
  // CHECK: compiled: 1
  printf("compiled: %d\n", mlirLogicalResultIsSuccess(compiled));
  // CHECK: fa4.launch @f_attention::@f_attention
  // CHECK: gpu.binary @f_attention
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  mlirModuleDestroy(module);

  // The kernels in memory: one per launch, with its PTX, cubin (when ptxas
  // is found) and manifest.
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kValid));
  int kernels = 0;
  compiled = fa4CompileModuleToKernels(
      module, mlirStringRefCreateFromCString("kv-stages=2"), printKernel,
      &kernels);
  // CHECK: kernel f_attention (sm_100a): entry 1, cubin {{elf|none}}, manifest json 1
  // CHECK: "kernel": "f_attention"
  // (Its static shape makes one two-stage tile: the plan interleaves the
  // softmax warpgroups over one Q stage, whose channels take 20 mbarriers.)
  // CHECK: "mbarriers": 20
  // CHECK: in memory: 1, 1 kernel(s)
  printf("in memory: %d, %d kernel(s)\n", mlirLogicalResultIsSuccess(compiled),
         kernels);
  mlirModuleDestroy(module);

  // CHECK: diagnostic: fa4-compile: cannot parse options 'no-such-option=1'
  // CHECK: bad options rejected: 1
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kValid));
  compiled = fa4CompileModule(
      module, mlirStringRefCreateFromCString("no-such-option=1"));
  printf("bad options rejected: %d\n", mlirLogicalResultIsFailure(compiled));
  mlirModuleDestroy(module);

  mlirContextDestroy(ctx);
  // CHECK: done
  printf("done\n");
  return 0;
}
