// RUN: fa4-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(fa4-align-shared-memory))" | FileCheck %s

// The dynamic shared memory symbol becomes an external declaration with the
// alignment fa4-allocate-smem recorded; other shared globals keep theirs.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global private @__mbarrier_0() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
module attributes {gpu.container_module} {
  gpu.module @kernels attributes {fa4.shared_alignment = 1024 : i64} {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global private @__mbarrier_0() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
  }
}

// -----

// Without the attribute (no fa4 layout) nothing changes.
// CHECK-LABEL: gpu.module @other
// CHECK: llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64}
module attributes {gpu.container_module} {
  gpu.module @other {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  }
}
