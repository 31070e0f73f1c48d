// RUN: fa4-opt %s -split-input-file -verify-diagnostics

func.func @f() {
  // expected-error @+1 {{a TMA endpoint can only produce}}
  %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <tma>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a channel has at least one stage, got 0}}
  %c = fa4.channel "c" : !fa4.channel<0> producer <mma> consumer <threads = 128>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a threads endpoint has 1 to 1024 threads, got 0}}
  %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <threads = 0>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{expected tma, mma or threads, got 'warps'}}
  %c = fa4.channel "c" : !fa4.channel<2> producer <warps> consumer <mma>
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 4 {
    fa4.role "a" warps [0, 4) registers 64 {
      // expected-error @+1 {{must be declared outside the roles that use it}}
      %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <threads = 128>
    }
  }
  return
}

// -----

func.func @f(%i: index) {
  %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <threads = 128>
  // expected-error @+1 {{must run inside a fa4.role}}
  fa4.channel.wait %c[%i] : !fa4.channel<2>
  return
}

// -----

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%d: !desc, %buf: !atom, %i: index) {
  %c0 = arith.constant 0 : index
  %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <threads = 128>
  fa4.warp_specialize warps 4 {
    fa4.role "a" warps [0, 1) registers 64 {
      // expected-error @+1 {{fills a slot of channel 'c', whose producer is not #fa4.endpoint<tma>}}
      fa4.tma.load %d[%c0, %c0] into %buf for %c[%i] : !desc, !atom, !fa4.channel<2>
    }
  }
  return
}

// -----

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
func.func @f(%d: !desc, %buf: memref<128x64xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %c = fa4.channel "c" : !fa4.channel<2> producer <tma> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "a" warps [0, 1) registers 64 {
      // expected-error @+1 {{loads into a static shared-memory buffer, got 'memref<128x64xbf16>'}}
      fa4.tma.load %d[%c0, %c0] into %buf for %c[%i] : !desc, memref<128x64xbf16>, !fa4.channel<2>
    }
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a named barrier connects two threads endpoints}}
  %c = fa4.channel "c" : !fa4.channel<1> producer <mma> consumer <threads = 128> {named_barrier = 1 : i32}
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a named barrier has no phase: the channel needs exactly one stage, got 2}}
  %c = fa4.channel "c" : !fa4.channel<2> producer <threads = 128> consumer <threads = 128> {named_barrier = 1 : i32}
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{named barrier id must be in [1, 15] (0 is gpu.barrier's), got 0}}
  %c = fa4.channel "c" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 0 : i32}
  return
}
