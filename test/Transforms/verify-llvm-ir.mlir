// RUN: fa4-opt %s --fa4-verify-llvm-ir | FileCheck %s

// A kernel module in the LLVM and NVVM dialects whose LLVM IR is valid, with
// a value at the register-file limit (255 x 32 bits), passes unchanged.

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @k(%{{.*}}: vector<255xf32>, %{{.*}}: vector<16xf32>) -> vector<255xf32>
// CHECK: llvm.fptrunc %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: nvvm.barrier0
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  llvm.func @k(%wide: vector<255xf32>, %x: vector<16xf32>) -> vector<255xf32>
      attributes {nvvm.kernel} {
    %0 = llvm.fptrunc %x : vector<16xf32> to vector<16xbf16>
    nvvm.barrier0
    llvm.return %wide : vector<255xf32>
  }
}

// The targets fa4 compiles for: each chip with its own or a later PTX
// version, or the backend's default for the chip.

// CHECK-LABEL: gpu.module @sm90 [#nvvm.target<chip = "sm_90a", features = "+ptx80">]
gpu.module @sm90 [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// CHECK-LABEL: gpu.module @sm100 [#nvvm.target<chip = "sm_100a", features = "+ptx88">]
gpu.module @sm100 [#nvvm.target<chip = "sm_100a", features = "+ptx88">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// CHECK-LABEL: gpu.module @default [#nvvm.target<chip = "sm_100a">]
gpu.module @default [#nvvm.target<chip = "sm_100a">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}
