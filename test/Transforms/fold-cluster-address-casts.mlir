// RUN: fa4-opt %s --pass-pipeline="builtin.module(gpu.module(fa4-fold-cluster-address-casts))" | FileCheck %s

// A shared address cast to shared::cluster (the TMA destination) becomes
// the same integer reinterpreted; casts to or from other spaces stay.
// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: (%[[S:.*]]: !llvm.ptr<3>, %[[G:.*]]: !llvm.ptr)
// CHECK-NOT: llvm.addrspacecast %[[S]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: %[[I:.*]] = llvm.ptrtoint %[[S]] : !llvm.ptr<3> to i64
// CHECK: %[[C:.*]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr<7>
// CHECK: %[[GEN:.*]] = llvm.addrspacecast %[[S]] : !llvm.ptr<3> to !llvm.ptr
// CHECK: %[[FROM:.*]] = llvm.addrspacecast %[[G]] : !llvm.ptr to !llvm.ptr<7>
// CHECK: llvm.insertvalue %[[C]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[GEN]], %{{.*}}[1]
// CHECK: llvm.insertvalue %[[FROM]], %{{.*}}[2]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @kernel(%s: !llvm.ptr<3>, %g: !llvm.ptr)
        -> !llvm.struct<(ptr<7>, ptr, ptr<7>)> {
      %c = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr<7>
      %gen = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
      %from = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<7>
      %u = llvm.mlir.undef : !llvm.struct<(ptr<7>, ptr, ptr<7>)>
      %0 = llvm.insertvalue %c, %u[0] : !llvm.struct<(ptr<7>, ptr, ptr<7>)>
      %1 = llvm.insertvalue %gen, %0[1] : !llvm.struct<(ptr<7>, ptr, ptr<7>)>
      %2 = llvm.insertvalue %from, %1[2] : !llvm.struct<(ptr<7>, ptr, ptr<7>)>
      llvm.return %2 : !llvm.struct<(ptr<7>, ptr, ptr<7>)>
    }
  }
}
