// RUN: fa4-opt %s -split-input-file --fa4-assemble-manifest -verify-diagnostics

// A kernel that fa4-insert-barriers never saw: no mbarrier count.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-note @+1 {{the kernel}}
    gpu.func @k() kernel attributes {fa4.dynamic_smem_bytes = 4096 : i64, fa4.tmem_columns = 0 : i64} {
      gpu.return
    }
  }
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{kernel @m::@k has no 'fa4.mbarriers': run fa4-insert-barriers first}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [128, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 128 : i64}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// Without the manifest fa4-specialize writes there is nothing to complete.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{has no launch manifest (fa4-specialize writes it)}}
    fa4.launch @m::@k(%q, %q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// After gpu-module-to-binary the facts are gone with the kernel's IR.
module attributes {gpu.container_module} {
  gpu.binary @m [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{needs kernel @m::@k as a gpu.func or llvm.func to read its facts; assemble the manifest before gpu-module-to-binary}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// The facts complete the manifest, but fa4-specialize's entries are missing.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {fa4.dynamic_smem_bytes = 4096 : i64, fa4.mbarriers = 6 : i64, fa4.named_barriers = 1 : i64, fa4.roles = [{name = "load", warps = [0, 1], registers = 48 : i64}], fa4.tmem_columns = 0 : i64} {
      gpu.return
    }
  }
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest needs 'arch' (set by fa4-specialize)}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A role outside the block that the manifest declares.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {fa4.dynamic_smem_bytes = 4096 : i64, fa4.mbarriers = 6 : i64, fa4.named_barriers = 1 : i64, fa4.roles = [{name = "load", warps = [4, 5], registers = 48 : i64}], fa4.tmem_columns = 0 : i64} {
      gpu.return
    }
  }
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0].warps[1]' must be in [0, 4], got 5}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [128, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 128 : i64}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}
