// The driver knows the fa4 dialect and every upstream dialect and pass the
// pipeline needs.
// RUN: fa4-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// DIALECTS: Available Dialects:
// DIALECTS-SAME: arith
// DIALECTS-SAME: fa4
// DIALECTS-SAME: func
// DIALECTS-SAME: gpu
// DIALECTS-SAME: llvm
// DIALECTS-SAME: math
// DIALECTS-SAME: memref
// DIALECTS-SAME: nvvm
// DIALECTS-SAME: scf
// DIALECTS-SAME: vector

// RUN: fa4-opt --help | FileCheck %s --check-prefix=PASSES
// PASSES-DAG: --convert-gpu-to-nvvm
// PASSES-DAG: --convert-nvvm-to-llvm
// PASSES-DAG: --convert-scf-to-cf
// PASSES-DAG: --gpu-module-to-binary
// PASSES-DAG: --nvvm-attach-target
// PASSES-DAG: --reconcile-unrealized-casts

// fa4-compile takes fa4-plan's and fa4-emit-kernels' options, declared once
// in Passes.td: the same flags with the same help.
// RUN: fa4-opt --help | FileCheck %s --check-prefix=COMPILE
// COMPILE:      --fa4-plan -   Choose the kernel plan
// COMPILE-NEXT:   --arch=<string> - Target architecture (sm_100a or sm_90a)
// COMPILE-NEXT:   --block-m=<long> - Rows of a Q tile of the decode family: 16 or 32, a multiple of gqa-pack (0: choose; prefill tiles take theirs from the target)
// COMPILE-NEXT:   --block-n=<long> - Rows of a K/V block: 128 on sm_100a; on sm_90a a multiple of 16 from 16 to 128
// COMPILE:      --fa4-compile -   Compile fa4.attention
// COMPILE-NEXT:   --arch=<string> - Target architecture (sm_100a or sm_90a)
// COMPILE-NEXT:   --block-m=<long> - Rows of a Q tile of the decode family: 16 or 32, a multiple of gqa-pack (0: choose; prefill tiles take theirs from the target)
// COMPILE-NEXT:   --block-n=<long> - Rows of a K/V block: 128 on sm_100a; on sm_90a a multiple of 16 from 16 to 128
// COMPILE:        --rescale-threshold=<long> - Row-max growth (log2 units) tolerated before rescaling O (-1: choose)

// The NVVM target and the LLVM IR translations are registered: a tcgen05
// kernel reaches PTX through upstream gpu-module-to-binary.
// RUN: fa4-opt %s --convert-nvvm-to-llvm --reconcile-unrealized-casts \
// RUN:   --gpu-module-to-binary="format=isa" | FileCheck %s --check-prefix=PTX
// PTX: gpu.binary @kernels
// PTX-SAME: .target sm_100a
// PTX-SAME: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX-SAME: tcgen05.dealloc.cta_group::1.sync.aligned.b32

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
    llvm.func @tmem_roundtrip(%slot: !llvm.ptr<3>) attributes {gpu.kernel, nvvm.kernel} {
      %cols = llvm.mlir.constant(32 : i32) : i32
      nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
      %base = llvm.load %slot : !llvm.ptr<3> -> i32
      %addr = llvm.inttoptr %base : i32 to !llvm.ptr<6>
      nvvm.tcgen05.dealloc %addr, %cols : !llvm.ptr<6>, i32
      llvm.return
    }
  }
}
