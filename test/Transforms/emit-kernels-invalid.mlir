// RUN: fa4-opt %s -split-input-file --fa4-emit-kernels="emit-dir=%t" -verify-diagnostics
// RUN: not fa4-opt %s -split-input-file --fa4-emit-kernels 2>&1 | FileCheck %s --check-prefix=NODIR

// NODIR: fa4-emit-kernels: emit-dir is required

// A launch whose kernel was not compiled to a binary.
module attributes {gpu.container_module} {
  gpu.module @missing {
    gpu.func @missing() kernel {
      gpu.return
    }
  }
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{kernel @missing has no gpu.binary; run gpu-module-to-binary first}}
    fa4.launch @missing::@missing(%q, %q, %q, %q) {manifest = {kernel = "missing", arch = "sm_100a"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A binary that holds a cubin instead of PTX.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, bin = "\00">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{needs the PTX of @k (gpu-module-to-binary{format=isa})}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A manifest without the kernel's name.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest needs the strings 'kernel' and 'arch'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {arch = "sm_100a"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A kernel whose shared memory was never placed: the manifest has no size.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest needs 'dynamic_smem_bytes' (set by fa4-allocate-smem)}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {}, roles = [], mbarriers = 30, named_barriers = 2, tmem_columns = 512}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}
