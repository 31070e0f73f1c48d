// RUN: fa4-opt %s -split-input-file --fa4-tile --fa4-specialize -verify-diagnostics

// Tiled programs edited into something else are refused where they differ.
// Here P V accumulates into O before its rescale.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: O must be rescaled by the correction before P V accumulates into it}}
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %arg7 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// A work tile of one Q tile under a plan of two Q stages.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        // expected-error @+1 {{disagrees with the kernel's plan: a work tile must span qStages Q tiles}}
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 128
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// Without the rescale of O.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: 0 'fa4.tile.rescale' ops, expected 1}}
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %17 = fa4.tile.matmul %probabilities, %13 acc %arg7 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    // expected-error @+1 {{holds a tiled program but no fa4.plan}}
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// V in another element type than Q, K and O.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    // expected-error @+1 {{needs one element type for Q, K, V and P, got 'f16' and 'bf16'}}
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xbf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xbf16> -> tensor<128x64xbf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// K read at the query rows instead of block by block.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            // expected-error @+1 {{K must be read block by block at the KV head of the work tile's query heads}}
            %12 = fa4.tile.load %arg1[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// O accumulated from 1 instead of 0.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<1.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          // expected-error @+1 {{O and the row sums must start at 0 and the row maxima at -inf}}
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// K and V with a dynamic head count: the K/V head of a tile is unknown.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    // expected-error @+1 {{needs static head counts with Q, O and LSE heads a multiple of the K and V heads}}
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x?x64xf16>, %arg2: memref<?x?x?x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x?x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x?x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x?x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// O stored for the first Q tile only.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %cst = arith.constant dense<0.000000e+00> : tensor<128xf32>
      %cst_0 = arith.constant dense<0xFF800000> : tensor<128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %c2 = arith.constant 2 : index
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %dim_2 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %dim_3 = memref.dim %arg1, %c1 : memref<?x?x2x64xf16>
      %0 = arith.addi %dim_2, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      scf.for %arg4 = %c0 to %3 step %c1 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg4 of (%1, %dim) scheduler  linear head_blocks 2 heads 1 positions 256
        scf.for %arg5 = %c0 to %c2 step %c1 {
          %4 = arith.muli %arg5, %c128 : index
          %5 = arith.addi %position, %4 : index
          %6 = fa4.tile.load %arg0[%batchIndex, %5, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %7 = arith.addi %dim_3, %c127 : index
          %8 = arith.divui %7, %c128 : index
          %9:3 = scf.for %arg6 = %c0 to %8 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst_0, %arg9 = %cst) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %11 = arith.muli %arg6, %c128 : index
            %12 = fa4.tile.load %arg1[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %13 = fa4.tile.load %arg2[%batchIndex, %11, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %14 = fa4.tile.matmul %6, %12 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %15 = fa4.tile.mask %14 rows %5 keys %11 lengths (%dim_2, %dim_3) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %15, %arg8, %arg9 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %16 = fa4.tile.rescale %arg7 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %17 = fa4.tile.matmul %probabilities, %13 acc %16 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %17, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %10 = fa4.tile.normalize %9#0 by %9#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          %first = arith.cmpi eq, %arg5, %c0 : index
          scf.if %first {
            // expected-error @+1 {{it must run once per Q tile, next to the Q load}}
            fa4.tile.store %10, %arg3[%batchIndex, %5, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// The sinks are read at another head than the tile's.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<2xf32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x?x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg5 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg5 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg6 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %5 = arith.muli %arg6, %c128 : index
          %6 = arith.addi %position, %5 : index
          %7 = fa4.tile.load %arg0[%batchIndex, %6, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %8 = arith.addi %6, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %9 = arith.addi %dim_2, %c127_10 : index
          %10 = arith.divui %9, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %11:3 = scf.for %arg7 = %c0_14 to %10 step %c1_13 iter_args(%arg8 = %cst, %arg9 = %cst_11, %arg10 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %13 = arith.muli %arg7, %c128_15 : index
            %14 = fa4.tile.load %arg1[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %15 = fa4.tile.load %arg2[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.matmul %7, %14 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %17 = fa4.tile.mask %16 rows %6 keys %13 lengths (%dim_0, %dim_2) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax_16, %newSum_17, %correction = fa4.tile.softmax %17, %arg9, %arg10 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %18 = fa4.tile.rescale %arg8 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %19 = fa4.tile.matmul %probabilities, %15 acc %18 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %19, %newMax_16, %newSum_17 : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: the sinks must be read at the work tile's heads}}
          %result, %newMax, %newSum = fa4.tile.sink %arg4[%c0] to %11#0, %11#1, %11#2 heads 1 : memref<2xf32>, tensor<128x64xf32>, tensor<128xf32>
          %12 = fa4.tile.normalize %result by %newSum : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %12, %arg3[%batchIndex, %6, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// O normalized without the sinks joined.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<2xf32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x?x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg5 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg5 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg6 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %5 = arith.muli %arg6, %c128 : index
          %6 = arith.addi %position, %5 : index
          %7 = fa4.tile.load %arg0[%batchIndex, %6, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %8 = arith.addi %6, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %9 = arith.addi %dim_2, %c127_10 : index
          %10 = arith.divui %9, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %11:3 = scf.for %arg7 = %c0_14 to %10 step %c1_13 iter_args(%arg8 = %cst, %arg9 = %cst_11, %arg10 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %13 = arith.muli %arg7, %c128_15 : index
            %14 = fa4.tile.load %arg1[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %15 = fa4.tile.load %arg2[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.matmul %7, %14 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %17 = fa4.tile.mask %16 rows %6 keys %13 lengths (%dim_0, %dim_2) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax_16, %newSum_17, %correction = fa4.tile.softmax %17, %arg9, %arg10 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %18 = fa4.tile.rescale %arg8 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %19 = fa4.tile.matmul %probabilities, %15 acc %18 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %19, %newMax_16, %newSum_17 : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %result, %newMax, %newSum = fa4.tile.sink %arg4[%firstHead] to %11#0, %11#1, %11#2 heads 1 : memref<2xf32>, tensor<128x64xf32>, tensor<128xf32>
          // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: O must be normalized by the final sums and stored}}
          %12 = fa4.tile.normalize %11#0 by %newSum : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %12, %arg3[%batchIndex, %6, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// The sinks joined to the initial maxima instead of the KV loop's.
module attributes {gpu.container_module} {
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x?x2x64xf16>, %arg2: memref<?x?x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<2xf32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x?x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg5 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg5 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg6 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %5 = arith.muli %arg6, %c128 : index
          %6 = arith.addi %position, %5 : index
          %7 = fa4.tile.load %arg0[%batchIndex, %6, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %8 = arith.addi %6, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %9 = arith.addi %dim_2, %c127_10 : index
          %10 = arith.divui %9, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %11:3 = scf.for %arg7 = %c0_14 to %10 step %c1_13 iter_args(%arg8 = %cst, %arg9 = %cst_11, %arg10 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %13 = arith.muli %arg7, %c128_15 : index
            %14 = fa4.tile.load %arg1[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %15 = fa4.tile.load %arg2[%batchIndex, %13, %4] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.matmul %7, %14 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %17 = fa4.tile.mask %16 rows %6 keys %13 lengths (%dim_0, %dim_2) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax_16, %newSum_17, %correction = fa4.tile.softmax %17, %arg9, %arg10 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %18 = fa4.tile.rescale %arg8 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %19 = fa4.tile.matmul %probabilities, %15 acc %18 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %19, %newMax_16, %newSum_17 : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: the sinks join the KV loop's O, maxima and sums}}
          %result, %newMax, %newSum = fa4.tile.sink %arg4[%firstHead] to %11#0, %cst_11, %11#2 heads 1 : memref<2xf32>, tensor<128x64xf32>, tensor<128xf32>
          %12 = fa4.tile.normalize %result by %newSum : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %12, %arg3[%batchIndex, %6, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}

// -----

// K read through the page table, V not.
module attributes {gpu.container_module} {
  func.func @f(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) {
    fa4.launch @f_attention::@f_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) : memref<?x?x2x64xf16>, memref<?x128x2x64xf16>, memref<?x128x2x64xf16>, memref<?x?x2x64xf16>, memref<?xi32>, memref<?x?xi32>
    return
  }
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x128x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg6 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg6 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        %5 = fa4.tile.keys %arg1[%batchIndex] seqused_k %arg4 : memref<?xi32> pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16>
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg7 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %6 = arith.muli %arg7, %c128 : index
          %7 = arith.addi %position, %6 : index
          %8 = fa4.tile.load %arg0[%batchIndex, %7, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %9 = arith.addi %7, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %10 = arith.addi %5, %c127_10 : index
          %11 = arith.divui %10, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %12:3 = scf.for %arg8 = %c0_14 to %11 step %c1_13 iter_args(%arg9 = %cst, %arg10 = %cst_11, %arg11 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %14 = arith.muli %arg8, %c128_15 : index
            // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: K and V must be read through the page table the keys are counted with}}
            %15 = fa4.tile.load %arg1[%batchIndex, %14, %4] heads 1 pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.load %arg2[%batchIndex, %14, %4] heads 1 : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %17 = fa4.tile.matmul %8, %15 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %18 = fa4.tile.mask %17 rows %7 keys %14 lengths (%dim_0, %5) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %18, %arg10, %arg11 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %19 = fa4.tile.rescale %arg9 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %20 = fa4.tile.matmul %probabilities, %16 acc %19 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %20, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %13 = fa4.tile.normalize %12#0 by %12#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %13, %arg3[%batchIndex, %7, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}


// -----

// The mask bounds keys by K's size, not by the batch's keys.
module attributes {gpu.container_module} {
  func.func @f(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) {
    fa4.launch @f_attention::@f_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) : memref<?x?x2x64xf16>, memref<?x128x2x64xf16>, memref<?x128x2x64xf16>, memref<?x?x2x64xf16>, memref<?xi32>, memref<?x?xi32>
    return
  }
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x128x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg6 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg6 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        %5 = fa4.tile.keys %arg1[%batchIndex] seqused_k %arg4 : memref<?xi32> pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16>
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg7 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %6 = arith.muli %arg7, %c128 : index
          %7 = arith.addi %position, %6 : index
          %8 = fa4.tile.load %arg0[%batchIndex, %7, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %9 = arith.addi %7, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %10 = arith.addi %5, %c127_10 : index
          %11 = arith.divui %10, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %12:3 = scf.for %arg8 = %c0_14 to %11 step %c1_13 iter_args(%arg9 = %cst, %arg10 = %cst_11, %arg11 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %14 = arith.muli %arg8, %c128_15 : index
            %15 = fa4.tile.load %arg1[%batchIndex, %14, %4] heads 1 pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.load %arg2[%batchIndex, %14, %4] heads 1 pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %17 = fa4.tile.matmul %8, %15 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: the mask must cover Q's rows and the K tile's keys with the lengths of Q and K}}
            %18 = fa4.tile.mask %17 rows %7 keys %14 lengths (%dim_0, %dim_2) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %18, %arg10, %arg11 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %19 = fa4.tile.rescale %arg9 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %20 = fa4.tile.matmul %probabilities, %16 acc %19 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %20, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %13 = fa4.tile.normalize %12#0 by %12#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %13, %arg3[%batchIndex, %7, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}


// -----

// The keys counted at another batch than the tile's.
module attributes {gpu.container_module} {
  func.func @f(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) {
    fa4.launch @f_attention::@f_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) : memref<?x?x2x64xf16>, memref<?x128x2x64xf16>, memref<?x128x2x64xf16>, memref<?x?x2x64xf16>, memref<?xi32>, memref<?x?xi32>
    return
  }
  gpu.module @f_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @f_attention(%arg0: memref<?x?x2x64xf16>, %arg1: memref<?x128x2x64xf16>, %arg2: memref<?x128x2x64xf16>, %arg3: memref<?x?x2x64xf16>, %arg4: memref<?xi32>, %arg5: memref<?x?xi32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 64, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x2x64xf16>
      %c1 = arith.constant 1 : index
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x2x64xf16>
      %c1_1 = arith.constant 1 : index
      %dim_2 = memref.dim %arg1, %c1_1 : memref<?x128x2x64xf16>
      %c256 = arith.constant 256 : index
      %c255 = arith.constant 255 : index
      %0 = arith.addi %dim_0, %c255 : index
      %1 = arith.divui %0, %c256 : index
      %c2 = arith.constant 2 : index
      %2 = arith.muli %dim, %c2 : index
      %3 = arith.muli %2, %1 : index
      %c1_3 = arith.constant 1 : index
      %c0_4 = arith.constant 0 : index
      scf.for %arg6 = %c0_4 to %3 step %c1_3 {
        %batchIndex, %firstHead, %position = fa4.tile.coords %arg6 of (%1, %dim) scheduler linear head_blocks 2 heads 1 positions 256
        %c1_5 = arith.constant 1 : index
        %4 = arith.divui %firstHead, %c1_5 : index
        // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: the keys must be counted in K at the work tile's batch}}
        %5 = fa4.tile.keys %arg1[%firstHead] seqused_k %arg4 : memref<?xi32> pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16>
        %c1_6 = arith.constant 1 : index
        %c2_7 = arith.constant 2 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg7 = %c0_8 to %c2_7 step %c1_6 {
          %c128 = arith.constant 128 : index
          %6 = arith.muli %arg7, %c128 : index
          %7 = arith.addi %position, %6 : index
          %8 = fa4.tile.load %arg0[%batchIndex, %7, %firstHead] heads 1 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
          %c127 = arith.constant 127 : index
          %9 = arith.addi %7, %c127 : index
          %c128_9 = arith.constant 128 : index
          %c127_10 = arith.constant 127 : index
          %10 = arith.addi %5, %c127_10 : index
          %11 = arith.divui %10, %c128_9 : index
          %cst = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
          %cst_11 = arith.constant dense<0xFF800000> : tensor<128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : tensor<128xf32>
          %c1_13 = arith.constant 1 : index
          %c0_14 = arith.constant 0 : index
          %12:3 = scf.for %arg8 = %c0_14 to %11 step %c1_13 iter_args(%arg9 = %cst, %arg10 = %cst_11, %arg11 = %cst_12) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
            %c128_15 = arith.constant 128 : index
            %14 = arith.muli %arg8, %c128_15 : index
            %15 = fa4.tile.load %arg1[%batchIndex, %14, %4] heads 1 pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %16 = fa4.tile.load %arg2[%batchIndex, %14, %4] heads 1 pages %arg5 : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
            %17 = fa4.tile.matmul %8, %15 transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
            %18 = fa4.tile.mask %17 rows %7 keys %14 lengths (%dim_0, %5) heads 1 : tensor<128x128xf32>
            %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %18, %arg10, %arg11 scale_log2 0.18033688011112042 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
            %19 = fa4.tile.rescale %arg9 by %correction : tensor<128x64xf32>, tensor<128xf32>
            %20 = fa4.tile.matmul %probabilities, %16 acc %19 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
            scf.yield %20, %newMax, %newSum : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
          }
          %13 = fa4.tile.normalize %12#0 by %12#2 : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x64xf16>
          fa4.tile.store %13, %arg3[%batchIndex, %7, %firstHead] heads 1 : tensor<128x64xf16> -> memref<?x?x2x64xf16>
        }
      }
      gpu.return
    }
  }
}


// -----

// Packed sequences over a paged cache count their keys with fa4.tile.keys
// from the sequence table: not from cu_seqlens_q.
module attributes {gpu.container_module} {
  func.func @paged_varlen(%arg0: memref<?x8x128xbf16>, %arg1: memref<?x64x2x128xbf16>, %arg2: memref<?x64x2x128xbf16>, %arg3: memref<?x8x128xbf16>, %arg4: memref<?xi32>, %arg5: memref<?xi32>, %arg6: memref<?xi32>, %arg7: memref<?x?xi32>) {
    fa4.launch @paged_varlen_attention::@paged_varlen_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<?x8x128xbf16>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?x?xi32>
    return
  }
  gpu.module @paged_varlen_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @paged_varlen_attention(%arg0: memref<?x8x128xbf16>, %arg1: memref<?x64x2x128xbf16>, %arg2: memref<?x64x2x128xbf16>, %arg3: memref<?x8x128xbf16>, %arg4: memref<?xi32>, %arg5: memref<?xi32>, %arg6: memref<?xi32>, %arg7: memref<?x?xi32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 64, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg4, %c0 : memref<?xi32>
      %c-1 = arith.constant -1 : index
      %0 = arith.addi %dim, %c-1 : index
      %c1 = arith.constant 1 : index
      %c0_0 = arith.constant 0 : index
      scf.for %arg8 = %c0_0 to %0 step %c1 {
        %1:4 = fa4.tile.sequence %arg8 of %arg4, %arg5 : memref<?xi32>, memref<?xi32> (%arg0, %arg1, %arg2, %arg3 : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<?x8x128xbf16>) -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c0_1 = arith.constant 0 : index
        %dim_2 = memref.dim %1#0, %c0_1 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c1_3 = arith.constant 1 : index
        %dim_4 = memref.dim %1#0, %c1_3 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c1_5 = arith.constant 1 : index
        %dim_6 = memref.dim %1#1, %c1_5 : memref<?x64x2x128xbf16>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %2 = arith.addi %dim_4, %c63 : index
        %3 = arith.divui %2, %c64 : index
        %c2 = arith.constant 2 : index
        %4 = arith.muli %dim_2, %c2 : index
        %5 = arith.muli %4, %3 : index
        %c1_7 = arith.constant 1 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg9 = %c0_8 to %5 step %c1_7 {
          %batchIndex, %firstHead, %position = fa4.tile.coords %arg9 of (%3, %dim_2) scheduler lpt head_blocks 2 heads 4 positions 64
          %c4 = arith.constant 4 : index
          %6 = arith.divui %firstHead, %c4 : index
          // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: packed sequences count their keys with fa4.tile.sequence, or over a paged cache with fa4.tile.keys from the same cu_seqlens_k (and seqused_k)}}
          %7 = fa4.tile.keys %1#1[%batchIndex] seqused_k %arg6 : memref<?xi32> pages %arg7 : memref<?x?xi32> cu_seqlens_k %arg4 : memref<?xi32> : memref<?x64x2x128xbf16>
          %c1_9 = arith.constant 1 : index
          %c2_10 = arith.constant 2 : index
          %c0_11 = arith.constant 0 : index
          scf.for %arg10 = %c0_11 to %c2_10 step %c1_9 {
            %c32 = arith.constant 32 : index
            %8 = arith.muli %arg10, %c32 : index
            %9 = arith.addi %position, %8 : index
            %10 = fa4.tile.load %1#0[%batchIndex, %9, %firstHead] heads 4 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>> -> tensor<128x128xbf16>
            %c31 = arith.constant 31 : index
            %11 = arith.addi %9, %c31 : index
            %12 = arith.addi %11, %7 : index
            %c1_12 = arith.constant 1 : index
            %13 = arith.addi %12, %c1_12 : index
            %14 = arith.subi %13, %dim_4 : index
            %c0_13 = arith.constant 0 : index
            %15 = arith.maxsi %14, %c0_13 : index
            %16 = arith.minsi %15, %7 : index
            %c128 = arith.constant 128 : index
            %c127 = arith.constant 127 : index
            %17 = arith.addi %16, %c127 : index
            %18 = arith.divui %17, %c128 : index
            %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
            %cst_14 = arith.constant dense<0xFF800000> : tensor<128xf32>
            %cst_15 = arith.constant dense<0.000000e+00> : tensor<128xf32>
            %c1_16 = arith.constant 1 : index
            %c0_17 = arith.constant 0 : index
            %19:3 = scf.for %arg11 = %c0_17 to %18 step %c1_16 iter_args(%arg12 = %cst, %arg13 = %cst_14, %arg14 = %cst_15) -> (tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>) {
              %c128_18 = arith.constant 128 : index
              %21 = arith.muli %arg11, %c128_18 : index
              %22 = fa4.tile.load %1#1[%batchIndex, %21, %6] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
              %23 = fa4.tile.load %1#2[%batchIndex, %21, %6] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
              %24 = fa4.tile.matmul %10, %22 transpose_b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
              %25 = fa4.tile.mask %24 rows %9 keys %21 lengths (%dim_4, %7) heads 4 causal : tensor<128x128xf32>
              %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %25, %arg13, %arg14 scale_log2 0.12751743082459868 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
              %26 = fa4.tile.rescale %arg12 by %correction : tensor<128x128xf32>, tensor<128xf32>
              %27 = fa4.tile.matmul %probabilities, %23 acc %26 : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
              scf.yield %27, %newMax, %newSum : tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>
            }
            %20 = fa4.tile.normalize %19#0 by %19#2 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
            fa4.tile.store %20, %1#3[%batchIndex, %9, %firstHead] heads 4 : tensor<128x128xbf16> -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// ... and apply seqused_k once, in fa4.tile.keys.
module attributes {gpu.container_module} {
  func.func @paged_varlen(%arg0: memref<?x8x128xbf16>, %arg1: memref<?x64x2x128xbf16>, %arg2: memref<?x64x2x128xbf16>, %arg3: memref<?x8x128xbf16>, %arg4: memref<?xi32>, %arg5: memref<?xi32>, %arg6: memref<?xi32>, %arg7: memref<?x?xi32>) {
    fa4.launch @paged_varlen_attention::@paged_varlen_attention(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<?x8x128xbf16>, memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?x?xi32>
    return
  }
  gpu.module @paged_varlen_attention [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @paged_varlen_attention(%arg0: memref<?x8x128xbf16>, %arg1: memref<?x64x2x128xbf16>, %arg2: memref<?x64x2x128xbf16>, %arg3: memref<?x8x128xbf16>, %arg4: memref<?xi32>, %arg5: memref<?xi32>, %arg6: memref<?xi32>, %arg7: memref<?x?xi32>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 4, scheduler = lpt, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 64, rescaleThreshold = 8>} {
      %c0 = arith.constant 0 : index
      %dim = memref.dim %arg4, %c0 : memref<?xi32>
      %c-1 = arith.constant -1 : index
      %0 = arith.addi %dim, %c-1 : index
      %c1 = arith.constant 1 : index
      %c0_0 = arith.constant 0 : index
      scf.for %arg8 = %c0_0 to %0 step %c1 {
        %1:4 = fa4.tile.sequence %arg8 of %arg4, %arg5 : memref<?xi32>, memref<?xi32> seqused_k %arg6 : memref<?xi32> (%arg0, %arg1, %arg2, %arg3 : memref<?x8x128xbf16>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<?x8x128xbf16>) -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>, memref<?x64x2x128xbf16>, memref<?x64x2x128xbf16>, memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c0_1 = arith.constant 0 : index
        %dim_2 = memref.dim %1#0, %c0_1 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c1_3 = arith.constant 1 : index
        %dim_4 = memref.dim %1#0, %c1_3 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
        %c1_5 = arith.constant 1 : index
        %dim_6 = memref.dim %1#1, %c1_5 : memref<?x64x2x128xbf16>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %2 = arith.addi %dim_4, %c63 : index
        %3 = arith.divui %2, %c64 : index
        %c2 = arith.constant 2 : index
        %4 = arith.muli %dim_2, %c2 : index
        %5 = arith.muli %4, %3 : index
        %c1_7 = arith.constant 1 : index
        %c0_8 = arith.constant 0 : index
        scf.for %arg9 = %c0_8 to %5 step %c1_7 {
          %batchIndex, %firstHead, %position = fa4.tile.coords %arg9 of (%3, %dim_2) scheduler lpt head_blocks 2 heads 4 positions 64
          %c4 = arith.constant 4 : index
          %6 = arith.divui %firstHead, %c4 : index
          // expected-error @+1 {{is not the FA4 forward program fa4-specialize builds: packed sequences count their keys with fa4.tile.sequence, or over a paged cache with fa4.tile.keys from the same cu_seqlens_k (and seqused_k)}}
          %7 = fa4.tile.keys %1#1[%batchIndex] seqused_k %arg6 : memref<?xi32> pages %arg7 : memref<?x?xi32> cu_seqlens_k %arg5 : memref<?xi32> : memref<?x64x2x128xbf16>
          %c1_9 = arith.constant 1 : index
          %c2_10 = arith.constant 2 : index
          %c0_11 = arith.constant 0 : index
          scf.for %arg10 = %c0_11 to %c2_10 step %c1_9 {
            %c32 = arith.constant 32 : index
            %8 = arith.muli %arg10, %c32 : index
            %9 = arith.addi %position, %8 : index
            %10 = fa4.tile.load %1#0[%batchIndex, %9, %firstHead] heads 4 : memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>> -> tensor<128x128xbf16>
            %c31 = arith.constant 31 : index
            %11 = arith.addi %9, %c31 : index
            %12 = arith.addi %11, %7 : index
            %c1_12 = arith.constant 1 : index
            %13 = arith.addi %12, %c1_12 : index
            %14 = arith.subi %13, %dim_4 : index
            %c0_13 = arith.constant 0 : index
            %15 = arith.maxsi %14, %c0_13 : index
            %16 = arith.minsi %15, %7 : index
            %c128 = arith.constant 128 : index
            %c127 = arith.constant 127 : index
            %17 = arith.addi %16, %c127 : index
            %18 = arith.divui %17, %c128 : index
            %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
            %cst_14 = arith.constant dense<0xFF800000> : tensor<128xf32>
            %cst_15 = arith.constant dense<0.000000e+00> : tensor<128xf32>
            %c1_16 = arith.constant 1 : index
            %c0_17 = arith.constant 0 : index
            %19:3 = scf.for %arg11 = %c0_17 to %18 step %c1_16 iter_args(%arg12 = %cst, %arg13 = %cst_14, %arg14 = %cst_15) -> (tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>) {
              %c128_18 = arith.constant 128 : index
              %21 = arith.muli %arg11, %c128_18 : index
              %22 = fa4.tile.load %1#1[%batchIndex, %21, %6] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
              %23 = fa4.tile.load %1#2[%batchIndex, %21, %6] heads 1 pages %arg7 : memref<?x?xi32> : memref<?x64x2x128xbf16> -> tensor<128x128xbf16>
              %24 = fa4.tile.matmul %10, %22 transpose_b : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
              %25 = fa4.tile.mask %24 rows %9 keys %21 lengths (%dim_4, %7) heads 4 causal : tensor<128x128xf32>
              %probabilities, %newMax, %newSum, %correction = fa4.tile.softmax %25, %arg13, %arg14 scale_log2 0.12751743082459868 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
              %26 = fa4.tile.rescale %arg12 by %correction : tensor<128x128xf32>, tensor<128xf32>
              %27 = fa4.tile.matmul %probabilities, %23 acc %26 : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
              scf.yield %27, %newMax, %newSum : tensor<128x128xf32>, tensor<128xf32>, tensor<128xf32>
            }
            %20 = fa4.tile.normalize %19#0 by %19#2 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
            fa4.tile.store %20, %1#3[%batchIndex, %9, %firstHead] heads 4 : tensor<128x128xbf16> -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>
          }
        }
      }
      gpu.return
    }
  }
}
