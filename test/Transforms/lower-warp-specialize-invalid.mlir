// RUN: fa4-opt %s -split-input-file --fa4-lower-warp-specialize -verify-diagnostics

func.func @host() {
  // expected-error @+1 {{must be inside a gpu.func kernel}}
  fa4.warp_specialize warps 4 {
  }
  return
}

// -----

gpu.module @kernels {
  gpu.func @k() kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
    // expected-error @+1 {{needs nvvm.maxntid = array<i32: 512, 1, 1> on @k, which declares array<i32: 128, 1, 1>}}
    fa4.warp_specialize warps 16 {
    }
    gpu.return
  }
}
