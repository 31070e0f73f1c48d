// RUN: fa4-opt %s --convert-fa4-to-nvvm | FileCheck %s
// RUN: fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=isa})" | FileCheck %s --check-prefix=PTX
// With ptxas, the same kernel must assemble for sm_100a.
// RUN: %if ptxas %{ fa4-opt %s --pass-pipeline="builtin.module(convert-fa4-to-nvvm, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm), convert-nvvm-to-llvm, reconcile-unrealized-casts, gpu-module-to-binary{format=bin toolkit=%cuda_toolkit})" | FileCheck %s --check-prefix=CUBIN %}

// One softmax warpgroup's use of Tensor Memory: allocate, read S, write P
// into the upper half of S as bf16, free.

// CHECK-LABEL: gpu.func @softmax_row
// CHECK: scf.if
// CHECK:   %[[SLOT:.*]] = llvm.getelementptr
// CHECK:   %[[COLS:.*]] = llvm.mlir.constant(512 : i32)
// CHECK:   nvvm.tcgen05.alloc %[[SLOT]], %[[COLS]] : !llvm.ptr<3>, i32
// CHECK:   nvvm.tcgen05.relinquish_alloc_permit
// CHECK: %[[ADDR:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[TMEM:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<6>
// P = columns [64, 128) of the allocation.
// CHECK: %[[C64:.*]] = llvm.mlir.constant(64 : i32)
// CHECK: %[[BASE:.*]] = llvm.ptrtoint %[[TMEM]]
// CHECK: %[[PINT:.*]] = llvm.add %[[BASE]], %[[C64]]
// CHECK: %[[P:.*]] = llvm.inttoptr %[[PINT]] : i32 to !llvm.ptr<6>
// The load: lane quarter of the warp, (tid.x / 32 mod 4) << 21.
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[WARP:.*]] = llvm.lshr %[[TID]]
// CHECK: %[[Q:.*]] = llvm.and %[[WARP]]
// CHECK: llvm.shl %[[Q]], %{{.*}}
// CHECK: %[[ROW:.*]] = nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<64xi32>
// CHECK: llvm.bitcast %[[ROW]] : vector<64xi32> to vector<64xf32>
// CHECK: nvvm.tcgen05.wait <load>
// The store: 64 bf16 packed into 32 registers, 32 columns into P.
// CHECK: %[[C32:.*]] = llvm.mlir.constant(32 : i32)
// CHECK: %[[OFF:.*]] = llvm.add %{{.*}}, %[[C32]]
// CHECK: %[[PBASE:.*]] = llvm.ptrtoint %[[P]]
// CHECK: %[[PKD:.*]] = llvm.bitcast %{{.*}} : vector<64xbf16> to vector<32xi32>
// CHECK: nvvm.tcgen05.st %{{.*}}, %[[PKD]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.wait <store>
// CHECK: nvvm.tcgen05.dealloc %[[TMEM]], %{{.*}} : !llvm.ptr<6>, i32
// CHECK-NOT: fa4.

// PTX: .target sm_100a
// PTX-SAME: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX-SAME: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// PTX-SAME: tcgen05.ld.sync.aligned.32x32b.x64.b32
// PTX-SAME: tcgen05.wait::ld.sync.aligned
// PTX-SAME: mul.rn.f32x2
// PTX-SAME: cvt.rn.bf16x2.f32
// PTX-SAME: tcgen05.st.sync.aligned.32x32b.x32.b32
// PTX-SAME: tcgen05.wait::st.sync.aligned
// PTX-SAME: tcgen05.dealloc.cta_group::1.sync.aligned.b32

// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    gpu.func @softmax_row(%scale: f32)
        workgroup(%slot : memref<1xi32, #gpu.address_space<workgroup>>)
        kernel attributes {nvvm.maxntid = array<i32: 128, 1, 1>} {
      %tid = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %warp = arith.divui %tid, %c32 : index
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %warp, %c0 : index
      scf.if %first {
        fa4.tmem.alloc 512 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
      %s = fa4.tmem.view %tmem[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
      %p = fa4.tmem.view %tmem[64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
      %row = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<64xf32>
      nvvm.tcgen05.wait <load>
      %splat = vector.broadcast %scale : f32 to vector<64xf32>
      %scaled = arith.mulf %row, %splat : vector<64xf32>
      %packed = arith.truncf %scaled : vector<64xf32> to vector<64xbf16>
      fa4.tmem.store %packed, %p[64] : vector<64xbf16>, !fa4.tmem<128x128xbf16>
      nvvm.tcgen05.wait <store>
      gpu.barrier
      scf.if %first {
        fa4.tmem.dealloc %tmem : !fa4.tmem<128x512xf32>
      }
      gpu.return
    }
  }
}
