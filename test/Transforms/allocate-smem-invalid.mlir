// RUN: fa4-opt %s -split-input-file --fa4-allocate-smem -verify-diagnostics

// Three 100 KB buffers live at once exceed the 227 KB of a CTA.
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    // expected-note @+2 {{buffer 'a' takes bytes [0, 102400)}}
    // expected-error @+1 {{needs 307200 bytes of shared memory, more than the 232448 a CTA can use}}
    gpu.func @too_big() workgroup(%a : memref<102400xi8, #gpu.address_space<workgroup>> {fa4.name = "a"},
                                  // expected-note @+1 {{buffer 'b' takes bytes [102400, 204800)}}
                                  %b : memref<102400xi8, #gpu.address_space<workgroup>> {fa4.name = "b"},
        // expected-note @+1 {{buffer 'c' takes bytes [204800, 307200)}}
        %c : memref<102400xi8, #gpu.address_space<workgroup>> {fa4.name = "c"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %i = arith.constant 1 : i8
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          memref.store %i, %a[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
          memref.store %i, %b[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
          memref.store %i, %c[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
          %x = memref.load %a[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
          %y = memref.load %b[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
          %z = memref.load %c[%c0] : memref<102400xi8, #gpu.address_space<workgroup>>
        }
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    // expected-error @+1 {{workgroup attribution #0: 'fa4.alignment' must be a power of two in [1, 1024] bytes, got 48}}
    gpu.func @alignment() workgroup(%a : memref<64xi8, #gpu.address_space<workgroup>> {fa4.name = "a", fa4.alignment = 48})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    // expected-error @+1 {{workgroup attribution #0 must be a static, contiguous memref of integers or floats to be placed in dynamic shared memory, got 'memref<4x4xf32, strided<[8, 1]>, #gpu.address_space<workgroup>>'}}
    gpu.func @strided() workgroup(%a : memref<4x4xf32, strided<[8, 1]>, #gpu.address_space<workgroup>>)
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      gpu.return
    }
  }
}
