// RUN: fa4-opt %s -split-input-file --fa4-allocate-smem | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-allocate-smem="alias=false" | FileCheck %s --check-prefix=NOALIAS

// Largest first, each at its alignment (1024 for swizzled tiles, 16 by
// default): "tile" (16 KB) at 0, "ring" (8 KB) at 16384, "small" at 24576,
// 24676 bytes in all. No two share: "tile" and "ring" belong to different
// roles, and role "a" still reads "small" after writing "ring". The
// attributions become views of the dynamic shared memory and the kernel
// records the size for its launch manifest.
// CHECK-LABEL: gpu.func @layout()
// CHECK-NOT: workgroup(
// CHECK-SAME: kernel
// CHECK-SAME: fa4.dynamic_smem_bytes = 24676 : i64
// CHECK: fa4.role "a"
// CHECK-DAG: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[OFFSET:.*]] = arith.constant 16384 : index
// CHECK-DAG: memref.view %[[SMEM]][%[[OFFSET]]][] {fa4.name = "ring"} : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x4096xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: arith.constant 24576 : index
// CHECK-DAG: {fa4.name = "small"}
// CHECK: fa4.role "b"
// CHECK: arith.constant 0 : index
// CHECK-NEXT: {fa4.name = "tile"}
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    fa4.launch @m::@layout(%q, %q, %q, %q) {manifest = {kernel = "layout"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @layout() workgroup(%small : memref<25xf32, #gpu.address_space<workgroup>> {fa4.name = "small"},
                                 %ring : memref<2x4096xi8, #gpu.address_space<workgroup>> {fa4.name = "ring", fa4.alignment = 1024},
                                 %tile : memref<64x64xf32, #gpu.address_space<workgroup>> {fa4.name = "tile", fa4.alignment = 1024})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      %i = arith.constant 1 : i8
      fa4.warp_specialize warps 8 {
        fa4.role "a" warps [0, 4) registers 128 {
          memref.store %f, %small[%c0] : memref<25xf32, #gpu.address_space<workgroup>>
          memref.store %i, %ring[%c0, %c0] : memref<2x4096xi8, #gpu.address_space<workgroup>>
          %x = memref.load %small[%c0] : memref<25xf32, #gpu.address_space<workgroup>>
        }
        fa4.role "b" warps [4, 8) registers 128 {
          memref.store %f, %tile[%c0, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
        }
      }
      gpu.return
    }
  }
}

// -----

// One elected thread writes "first" and is done with it before it writes
// "second": both take offset 0. Without sharing, "second" follows at 16
// bytes.
// CHECK-LABEL: gpu.func @share
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "first"}
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "second"}
// NOALIAS-LABEL: gpu.func @share
// NOALIAS-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "first"}
// NOALIAS-DAG: memref.view %{{.*}}[%c16{{(_[0-9]+)?}}][] {fa4.name = "second"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @share() workgroup(%first : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "first"},
                                %second : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "second"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      fa4.warp_specialize warps 4 {
        fa4.role "a" warps [0, 1) registers 128 {
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
            memref.store %f, %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            memref.store %f, %second[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// The same in all threads of a warpgroup: one thread's program order does
// not order another thread's accesses, so nothing is shared.
// CHECK-LABEL: gpu.func @threads
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "first"}
// CHECK-DAG: memref.view %{{.*}}[%c16{{(_[0-9]+)?}}][] {fa4.name = "second"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @threads() workgroup(%first : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "first"},
                                  %second : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "second"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      fa4.warp_specialize warps 4 {
        fa4.role "a" warps [0, 4) registers 128 {
          memref.store %f, %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          memref.store %f, %second[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        }
      }
      gpu.return
    }
  }
}

// -----

// A TMA store may still read "a" after `nvvm.cp.async.bulk.wait_group 1` (one bulk
// group may remain pending), so "b" cannot share "a"; a buffer passed
// through arith.select ("c") is not followed and shares nothing. "d" may
// share "b": "b" is written, never read, and done with before "d".
// CHECK-LABEL: gpu.func @store_wait
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "a"}
// CHECK-DAG: memref.view %{{.*}}[%c16384{{(_[0-9]+)?}}][] {fa4.name = "b"}
// CHECK-DAG: memref.view %{{.*}}[%c32768{{(_[0-9]+)?}}][] {fa4.name = "c"}
// CHECK-DAG: memref.view %{{.*}}[%c16384{{(_[0-9]+)?}}][] {fa4.name = "d"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @store_wait(%desc: !nvgpu.tensormap.descriptor<tensor = memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>, %p: i1)
        workgroup(%a : memref<1x32x4x64xbf16, #gpu.address_space<workgroup>> {fa4.name = "a"},
                  %b : memref<1x32x4x64xbf16, #gpu.address_space<workgroup>> {fa4.name = "b"},
                  %c : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "c"},
                  %d : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "d"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %x = arith.constant 1.0 : bf16
      %f = arith.constant 1.0 : f32
      fa4.warp_specialize warps 4 {
        fa4.role "store" warps [0, 1) registers 128 {
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
            nvgpu.tma.async.store %a to %desc[%c0, %c0, %c0, %c0] : memref<1x32x4x64xbf16, #gpu.address_space<workgroup>> -> !nvgpu.tensormap.descriptor<tensor = memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
            nvvm.cp.async.bulk.commit.group
            nvvm.cp.async.bulk.wait_group 1 {read}
            memref.store %x, %b[%c0, %c0, %c0, %c0] : memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>
            %either = arith.select %p, %c, %c : memref<4xf32, #gpu.address_space<workgroup>>
            memref.store %f, %either[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            memref.store %f, %d[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            %y = memref.load %either[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// Kernels without a plan keep their attributions (upstream lowers them to
// static shared memory).
// CHECK-LABEL: gpu.func @foreign
// CHECK-SAME: workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>)
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @foreign() workgroup(%a : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// The other branch of an elected conditional runs in 31 threads.
// CHECK-LABEL: gpu.func @smem_else
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "first"}
// CHECK-DAG: memref.view %{{.*}}[%c16{{(_[0-9]+)?}}][] {fa4.name = "second"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @smem_else() workgroup(%first : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "first"},
                                %second : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "second"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %f = arith.constant 1.0 : f32
      fa4.warp_specialize warps 4 {
        fa4.role "a" warps [0, 1) registers 128 {
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
          } else {
            memref.store %f, %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            %x = memref.load %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            memref.store %x, %second[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// In a role of four warps, `nvvm.elect.sync` picks a thread in each warp.
// CHECK-LABEL: gpu.func @smem_4warps
// CHECK-DAG: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] {fa4.name = "first"}
// CHECK-DAG: memref.view %{{.*}}[%c16{{(_[0-9]+)?}}][] {fa4.name = "second"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @smem_4warps() workgroup(%first : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "first"},
                                %second : memref<4xf32, #gpu.address_space<workgroup>> {fa4.name = "second"})
        kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %f = arith.constant 1.0 : f32
      fa4.warp_specialize warps 4 {
        fa4.role "a" warps [0, 4) registers 128 {
          %leader = nvvm.elect.sync -> i1
          scf.if %leader {
            memref.store %f, %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            %x = memref.load %first[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
            memref.store %x, %second[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          }
        }
      }
      gpu.return
    }
  }
}
