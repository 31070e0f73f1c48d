// RUN: fa4-opt %s -split-input-file --convert-fa4-to-nvvm -verify-diagnostics

// Tensor Memory does not exist on Hopper.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @k() workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel {
      // expected-error @+1 {{'fa4.tmem.alloc' op needs tcgen05 (sm_100a or sm_101a), but gpu.module @kernels targets sm_90a}}
      fa4.tmem.alloc 32 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// wgmma exists on sm_90a only.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
    gpu.func @k(%a: memref<4x64x64xbf16, #gpu.address_space<workgroup>>, %b: memref<4x64x64xbf16, #gpu.address_space<workgroup>>) kernel {
      // expected-error @+1 {{'fa4.wgmma' op needs wgmma (sm_90a), but gpu.module @kernels targets sm_100a}}
      %s = fa4.wgmma %a, %b b_major(k) : memref<4x64x64xbf16, #gpu.address_space<workgroup>>, memref<4x64x64xbf16, #gpu.address_space<workgroup>> -> vector<32xf32>
      gpu.return
    }
  }
}

// -----

// The upstream ops that kernels use check their targets themselves.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
    gpu.func @k() kernel {
      // expected-error @+1 {{'nvvm.wgmma.commit.group.sync.aligned' op is not supported on sm_100a}}
      nvvm.wgmma.commit.group.sync.aligned
      gpu.return
    }
  }
}

// -----

// The semantic op is not lowered by this pass; it stays for the kernel
// pipeline and produces no error.
func.func @semantic(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
  return
}

// -----

// A TMEM buffer that fa4-allocate-tmem never placed has no address.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
    gpu.func @k() kernel {
      // expected-error @+2 {{has no columns yet; run fa4-allocate-tmem before the NVVM conversion}}
      // expected-error @+1 {{failed to legalize operation 'fa4.tmem.buffer'}}
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %row = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
      gpu.return
    }
  }
}
