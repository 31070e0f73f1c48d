// RUN: fa4-opt %s -split-input-file -verify-diagnostics

func.func @f() {
  // expected-error @+1 {{a TMA endpoint can only produce}}
  %c = fa4.channel "c" : !fa4.channel<2> producer <mma> consumer <tma>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a channel has 1 to 64 stages (its mbarriers fit the 1024-byte barrier reserve), got 0}}
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
  // expected-error @+1 {{expected tma, mma, threads or cluster, got 'warps'}}
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

// -----

func.func @f() {
  // expected-error @+1 {{a channel has 1 to 64 stages (its mbarriers fit the 1024-byte barrier reserve), got 9223372036854775807}}
  %c = fa4.channel "c" : !fa4.channel<9223372036854775807> producer <tma> consumer <mma>
  return
}

// -----

// A hardware barrier serves one channel.
func.func @f() {
  // expected-note @+1 {{channel 'a'}}
  %a = fa4.channel "a" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 3 : i32}
  // expected-error @+1 {{uses named barrier 3, which channel 'a' already uses}}
  %b = fa4.channel "b" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128> {named_barrier = 3 : i32}
  return
}

// -----

// The ops on one named barrier agree on its thread count.
func.func @f() {
  // expected-note @+1 {{the earlier op}}
  fa4.named_barrier.arrive 2, 256 threads
  // expected-error @+1 {{counts 128 threads on named barrier 2, which an earlier op counts with 256; a barrier has one thread count}}
  fa4.named_barrier.sync 2, 128 threads
  return
}

// -----

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
func.func @f(%d: !desc, %buf: memref<4611686018427387904x4xbf16, #gpu.address_space<workgroup>>, %i: index) {
  %c0 = arith.constant 0 : index
  %c = fa4.channel "c" : !fa4.channel<2> producer <tma> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "a" warps [0, 1) registers 64 {
      // expected-error @+1 {{loads into a buffer of more than 2^63 bytes; a TMA load fills 1 to 232448 bytes of shared memory}}
      fa4.tma.load %d[%c0, %c0] into %buf for %c[%i] : !desc, memref<4611686018427387904x4xbf16, #gpu.address_space<workgroup>>, !fa4.channel<2>
    }
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a cluster endpoint has 2 to 8 CTAs, got 16}}
  %c = fa4.channel "c" : !fa4.channel<1> producer <cluster = 16> consumer <cluster = 16>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{a cluster endpoint pairs with a cluster endpoint of the same CTAs, got producer #fa4.endpoint<cluster = 4> and consumer #fa4.endpoint<threads = 32>}}
  %c = fa4.channel "c" : !fa4.channel<1> producer <cluster = 4> consumer <threads = 32>
  return
}

// -----

!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @f(%g: !group) {
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{barrier index 2 is outside the group's 2}}
  fa4.mbarrier.arrive_cluster %g[%c2], 4 ctas : !group
  return
}

// -----

!group = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @f(%g: !group, %i: index) {
  // expected-error @+1 {{a cluster has 2 to 8 CTAs, got 1}}
  fa4.mbarrier.arrive_cluster %g[%i], 1 ctas : !group
  return
}

// -----

func.func @f(%b: memref<2x64xf32>, %i: index) {
  // expected-error @+1 {{reaches shared memory: the buffer must be in the workgroup address space}}
  %v = fa4.dsmem.load %b[%i, %i], rank %i : memref<2x64xf32>, vector<4xf32>
  return
}

// -----

func.func @f(%b: memref<2x64xf32, #gpu.address_space<workgroup>>, %i: index) {
  // expected-error @+1 {{moves 32 bytes: one access moves 4, 8 or 16}}
  %v = fa4.dsmem.load %b[%i, %i], rank %i : memref<2x64xf32, #gpu.address_space<workgroup>>, vector<8xf32>
  return
}

// -----

func.func @f(%b: memref<2x64xbf16, #gpu.address_space<workgroup>>, %v: vector<4xf32>, %i: index) {
  // expected-error @+1 {{moves 'vector<4xf32>' but the buffer holds 'bf16'}}
  fa4.dsmem.store %v, %b[%i, %i], rank %i : vector<4xf32>, memref<2x64xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @f(%b: memref<2x2xf32, #gpu.address_space<workgroup>>, %i: index) {
  // expected-error @+1 {{moves 4 elements, more than the buffer's innermost dimension of 2}}
  %v = fa4.dsmem.load %b[%i, %i], rank %i : memref<2x2xf32, #gpu.address_space<workgroup>>, vector<4xf32>
  return
}
