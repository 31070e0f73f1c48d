// RUN: fa4-opt %s -split-input-file --fa4-allocate-tmem -verify-diagnostics
// RUN: not fa4-opt %s -split-input-file --fa4-plan --fa4-tile --fa4-specialize --fa4-allocate-tmem="alias=false" 2>&1 | FileCheck %s --check-prefix=FA4

// Without P over S the FA4 plan (2 Q stages, head dim 128) needs 640
// columns; the error lists where each buffer went.
// FA4: error: 'gpu.func' op needs 640 Tensor Memory columns, more than the 512 of an SM
// FA4: note: buffer 's0' takes columns [0, 128)
// FA4: note: buffer 's1' takes columns [128, 256)
// FA4: note: buffer 'o0' takes columns [256, 384)
// FA4: note: buffer 'o1' takes columns [384, 512)
// FA4: note: buffer 'p0' takes columns [512, 576)
// FA4: note: buffer 'p1' takes columns [576, 640)
func.func @fa4(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x16x128xbf16>,
               %v: memref<?x?x16x128xbf16>, %o: memref<?x?x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>)
                outs(%o : memref<?x?x16x128xbf16>)
  return
}

// -----

// Buffers live at once that do not fit.
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    // expected-error @+1 {{needs 768 Tensor Memory columns, more than the 512 of an SM}}
    gpu.func @too_many() kernel {
      // expected-note @+1 {{buffer 'a' takes columns [0, 256)}}
      %a = fa4.tmem.buffer "a" : !fa4.tmem<128x256xf32>
      // expected-note @+1 {{buffer 'b' takes columns [256, 512)}}
      %b = fa4.tmem.buffer "b" : !fa4.tmem<128x256xf32>
      // expected-note @+1 {{buffer 'c' takes columns [512, 768)}}
      %c = fa4.tmem.buffer "c" : !fa4.tmem<128x256xf32>
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          %x = fa4.tmem.load %a[0] : !fa4.tmem<128x256xf32> -> vector<32xf32>
          %y = fa4.tmem.load %b[0] : !fa4.tmem<128x256xf32> -> vector<32xf32>
          %z = fa4.tmem.load %c[0] : !fa4.tmem<128x256xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
        }
      }
      gpu.return
    }
  }
}

// -----

// A kernel that allocates Tensor Memory itself cannot also have buffers
// placed.
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @owned() workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>) kernel {
      %a = fa4.tmem.buffer "a" : !fa4.tmem<128x128xf32>
      // expected-error @+1 {{allocates Tensor Memory in a kernel whose buffers fa4-allocate-tmem places}}
      fa4.tmem.alloc 128 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// Buffers belong to kernels.
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    // expected-error @+1 {{declares Tensor Memory buffers but is not a kernel}}
    gpu.func @helper() {
      %a = fa4.tmem.buffer "a" : !fa4.tmem<128x128xf32>
      gpu.return
    }
  }
}

// -----

func.func @host() {
  // expected-error @+1 {{must be declared in a gpu.func kernel}}
  %a = fa4.tmem.buffer "a" : !fa4.tmem<128x128xf32>
  return
}
