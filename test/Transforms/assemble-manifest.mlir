// RUN: fa4-opt %s --fa4-assemble-manifest | FileCheck %s

// The facts recorded on the kernel (a gpu.func here; an llvm.func after the
// NVVM conversion reads the same) join the manifest that fa4-specialize
// wrote, which is then complete.

// CHECK-LABEL: func.func @host
// CHECK: fa4.launch @m::@k
// CHECK-SAME: dynamic_smem_bytes = 4096 : i64
// CHECK-SAME: kernel = "k"
// CHECK-SAME: mbarriers = 6 : i64
// CHECK-SAME: named_barriers = 1 : i64
// CHECK-SAME: roles = [{name = "load", registers = 48 : i64, warps = [0, 1]}]
// CHECK-SAME: tmem_columns = 0 : i64
// CHECK-LABEL: func.func @lowered
// CHECK: fa4.launch @l::@k
// CHECK-SAME: mbarriers = 2 : i64
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {fa4.dynamic_smem_bytes = 4096 : i64, fa4.mbarriers = 6 : i64, fa4.named_barriers = 1 : i64, fa4.roles = [{name = "load", warps = [0, 1], registers = 48 : i64}], fa4.tmem_columns = 0 : i64} {
      gpu.return
    }
  }
  gpu.module @l {
    llvm.func @k() attributes {gpu.kernel, fa4.dynamic_smem_bytes = 4096 : i64, fa4.mbarriers = 2 : i64, fa4.named_barriers = 0 : i64, fa4.roles = [{name = "load", warps = [0, 1], registers = 48 : i64}], fa4.tmem_columns = 32 : i64} {
      llvm.return
    }
  }
  func.func @host(%q: memref<1x128x1x64xf16>) {
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [128, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 128 : i64}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  func.func @lowered(%q: memref<1x128x1x64xf16>) {
    fa4.launch @l::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [128, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 128 : i64}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}
