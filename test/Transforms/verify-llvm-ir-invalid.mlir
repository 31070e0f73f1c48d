// RUN: fa4-opt %s -split-input-file --fa4-verify-llvm-ir -verify-diagnostics

// The LLVM dialect accepts an fptrunc between vectors of different lengths;
// LLVM IR does not, and the NVPTX backend would fail on it.
// expected-error @+1 {{'gpu.module' op translates to invalid LLVM IR, which the NVPTX backend cannot compile: invalid cast opcode for cast from '<16 x float>' to '<32 x bfloat>': %2 = fptrunc <16 x float> %0 to <32 x bfloat>}}
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  llvm.func @k(%x: vector<16xf32>) attributes {nvvm.kernel} {
    %0 = llvm.fptrunc %x : vector<16xf32> to vector<32xbf16>
    llvm.return
  }
}

// -----

// A splat of 2^31 floats would take the translation 8 GiB.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  llvm.func @k() attributes {nvvm.kernel} {
    // expected-error @+1 {{result #0 of type 'vector<2147483648xf32>' holds 68719476736 bits, more than a thread's 255 32-bit registers (8160 bits)}}
    %0 = llvm.mlir.constant(dense<0.0> : vector<2147483648xf32>) : vector<2147483648xf32>
    llvm.return
  }
}

// -----

// The element count times the width does not fit in 64 bits.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  // expected-error @+1 {{block argument #0 of type 'vector<9223372036854775807xf32>' holds more than 2^64 bits}}
  llvm.func @k(%x: vector<9223372036854775807xf32>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// One register over: 256 x i32.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  llvm.func @k(%p: !llvm.ptr<3>) attributes {nvvm.kernel} {
    // expected-error @+1 {{result #0 of type '!llvm.array<256 x i32>' holds 8192 bits}}
    %0 = llvm.load %p : !llvm.ptr<3> -> !llvm.array<256 x i32>
    llvm.return
  }
}

// -----

// Still in the GPU dialect: nothing to translate yet.
// expected-error @+1 {{'gpu.module' op does not translate to LLVM IR (lower every op to the LLVM and NVVM dialects first)}}
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  // expected-error @+2 {{unsupported GPU operation: gpu.func}}
  // expected-error @+1 {{LLVM Translation failed for operation: gpu.func}}
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// The NVPTX backend only warns about a PTX version it does not know, then
// compiles for its default version, without mbarriers: instruction
// selection would end the process.
// expected-error @+1 {{'gpu.module' op targets #nvvm.target<chip = "sm_90a", features = "+ptx99">, whose features are not one PTX version the NVPTX backend knows ("+ptxNN")}}
gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx99">] {
  llvm.func @k(%p: !llvm.ptr<3>) attributes {nvvm.kernel} {
    %c = llvm.mlir.constant(1 : i32) : i32
    nvvm.mbarrier.init %p, %c : !llvm.ptr<3>, i32
    llvm.return
  }
}

// -----

// A chip where a feature belongs.
// expected-error @+1 {{'gpu.module' op targets #nvvm.target<chip = "sm_100a", features = "sm_100a">, whose features are not one PTX version the NVPTX backend knows ("+ptxNN")}}
gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "sm_100a">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// A PTX version older than the chip: a fatal backend error.
// expected-error @+1 {{'gpu.module' op targets #nvvm.target<chip = "sm_100a", features = "+ptx80">, but sm_100a needs PTX 8.6 or later}}
gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx80">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'gpu.module' op targets #nvvm.target<chip = "sm_90a", features = "+ptx70">, but sm_90a needs PTX 8.0 or later}}
gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx70">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'gpu.module' op targets #nvvm.target<chip = "sm_80">, but fa4's kernels compile for sm_100a or sm_90a}}
gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'gpu.module' op targets #nvvm.target<triple = "nvptx-nvidia-cuda", chip = "sm_90a">, but fa4's kernels compile for the "nvptx64-nvidia-cuda" triple}}
gpu.module @kernels [#nvvm.target<triple = "nvptx-nvidia-cuda", chip = "sm_90a">] {
  llvm.func @k() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// An inline asm whose output constraints do not match its result struct
// (a wgmma with its accumulator struct cut down, as the fuzzer made it):
// LLVM's verifier accepts it, its parser does not, and the NVPTX backend
// would crash on it.
// expected-error @+1 {{'gpu.module' op translates to invalid LLVM IR, which the NVPTX backend cannot compile: number of output constraints does not match number of return struct elements}}
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  llvm.func @k() attributes {nvvm.kernel} {
    %0 = llvm.inline_asm has_side_effects "mov.b32 $0, 1;\0A\09mov.b32 $1, 2;", "=r,=r" : () -> !llvm.struct<(i32)>
    llvm.return
  }
}
