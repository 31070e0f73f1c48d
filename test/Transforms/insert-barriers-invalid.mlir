// RUN: fa4-opt %s -split-input-file --fa4-insert-barriers -verify-diagnostics
// The pass records barrier counts in the launch manifests of the module, so
// it runs on the module, not nested in a kernel's gpu.module.
// RUN: not fa4-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(fa4-insert-barriers))" 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: Can't add pass 'FA4InsertBarriers' restricted to 'builtin.module' on a PassManager intended to run on 'gpu.module'

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>

// A TMA commit must account for the loads of its slot.
func.func @commit_without_load(%i: index) {
  %kv = fa4.channel "kv" : !fa4.channel<2> producer <tma> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "load" warps [0, 1) registers 64 {
      // expected-error @+1 {{commits a TMA slot of channel 'kv' with no fa4.tma.load of that slot before it in its block}}
      fa4.channel.commit %kv[%i] : !fa4.channel<2>
    }
  }
  return
}

// -----

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>

// Loads of another slot do not count.
func.func @load_of_other_slot(%d: !desc, %buf: !atom, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %kv = fa4.channel "kv" : !fa4.channel<2> producer <tma> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "load" warps [0, 1) registers 64 {
      fa4.tma.load %d[%c0, %c0] into %buf for %kv[%j] : !desc, !atom, !fa4.channel<2>
      // expected-error @+1 {{commits a TMA slot of channel 'kv' with no fa4.tma.load of that slot before it in its block}}
      fa4.channel.commit %kv[%i] : !fa4.channel<2>
    }
  }
  return
}

// -----

!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!atom = memref<128x64xbf16, #gpu.address_space<workgroup>>

// A load no commit announces would never complete its barrier phase.
func.func @load_without_commit(%d: !desc, %buf: !atom, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{has fa4.tma.load ops not committed by a fa4.channel.commit}}
  %kv = fa4.channel "kv" : !fa4.channel<2> producer <tma> consumer <mma>
  fa4.warp_specialize warps 4 {
    fa4.role "load" warps [0, 1) registers 64 {
      // expected-note @+1 {{this load}}
      fa4.tma.load %d[%c0, %c0] into %buf for %kv[%i] : !desc, !atom, !fa4.channel<2>
    }
  }
  return
}

// -----

// The mbarriers of a kernel live in the 1024 bytes plans reserve for them:
// three channels of 64 stages need 384 (3072 bytes).
gpu.module @m {
  // expected-error @+1 {{needs 384 mbarriers (3072 bytes), more than the 1024 bytes of shared memory reserved for barriers}}
  gpu.func @k(%i: index) kernel {
    %a = fa4.channel "a" : !fa4.channel<64> producer <mma> consumer <threads = 128>
    %b = fa4.channel "b" : !fa4.channel<64> producer <mma> consumer <threads = 128>
    %c = fa4.channel "c" : !fa4.channel<64> producer <mma> consumer <threads = 128>
    fa4.warp_specialize warps 4 {
      fa4.role "r" warps [0, 4) registers 64 {
        fa4.channel.wait %a[%i] : !fa4.channel<64>
        fa4.channel.release %a[%i] : !fa4.channel<64>
        fa4.channel.wait %b[%i] : !fa4.channel<64>
        fa4.channel.release %b[%i] : !fa4.channel<64>
        fa4.channel.wait %c[%i] : !fa4.channel<64>
        fa4.channel.release %c[%i] : !fa4.channel<64>
      }
    }
    gpu.return
  }
}
