// RUN: fa4-opt %s --fa4-plan="polynomial-tanh=4" --fa4-tile --fa4-specialize | FileCheck %s
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a polynomial-tanh=8" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=HOPPER
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a polynomial-tanh=16" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=ALL
// RUN: fa4-opt %s --fa4-plan="arch=sm_90a" --fa4-tile --fa4-specialize | FileCheck %s --check-prefix=NONE

// The softcap's tanh from an FMA polynomial for `polynomial-tanh` of every
// 16 scores (y = s / c): the fragment's extremes, one warp vote whether any
// |y| passes 1, MUFU tanh for the whole fragment if so, else the polynomial
// y + y^3 p(y^2) (a multiply, two FMAs, a multiply, an FMA) for the chosen
// elements and MUFU tanh for the rest, put back in fragment order.

// sm_100a: the softmax warpgroup's 32-column chunks, 4 of every 16 on the
// FMA pipe: elements 0-3 and 16-19 of each chunk.
// CHECK: fa4.role "softmax0"
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-DAG: %[[MIN:.*]] = vector.reduction <minimumf>, %[[Y]] : vector<32xf32> into f32
// CHECK-DAG: %[[MAX:.*]] = vector.reduction <maximumf>, %[[Y]] : vector<32xf32> into f32
// CHECK-DAG: %[[ABOVE:.*]] = arith.cmpf ugt, %[[MAX]], %[[ONE:.*]] : f32
// CHECK-DAG: %[[BELOW:.*]] = arith.cmpf ult, %[[MIN]], %{{.*}} : f32
// CHECK: %[[OUT:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK: %[[LARGE:.*]] = nvvm.vote.sync  any %{{.*}}, %[[OUT]] -> i1
// CHECK: scf.if %[[LARGE]] -> (vector<32xf32>) {
// CHECK-NEXT: %[[T:.*]] = llvm.intr.tanh(%[[Y]]) {fastmathFlags = #llvm.fastmath<afn>} : (vector<32xf32>) -> vector<32xf32>
// CHECK-NEXT: scf.yield %[[T]] : vector<32xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[FY:.*]] = vector.shuffle %[[Y]], %[[Y]] [0, 1, 2, 3, 16, 17, 18, 19] : vector<32xf32>, vector<32xf32>
// CHECK-NEXT: %[[U:.*]] = arith.mulf %[[FY]], %[[FY]] : vector<8xf32>
// The minimax coefficients of p, highest first.
// CHECK-NEXT: arith.constant 0.120271347 : f32
// CHECK: arith.constant -0.0274197105 : f32
// CHECK: %[[P1:.*]] = llvm.intr.fma(%{{.*}}, %[[U]], %{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: arith.constant -0.331331968 : f32
// CHECK: %[[P2:.*]] = llvm.intr.fma(%[[P1]], %[[U]], %{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: %[[CUBE:.*]] = arith.mulf %[[FY]], %[[U]] : vector<8xf32>
// CHECK: %[[POLY:.*]] = llvm.intr.fma(%[[CUBE]], %[[P2]], %[[FY]]) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: %[[MY:.*]] = vector.shuffle %[[Y]], %[[Y]] [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<32xf32>, vector<32xf32>
// CHECK: %[[MT:.*]] = llvm.intr.tanh(%[[MY]]) {fastmathFlags = #llvm.fastmath<afn>} : (vector<24xf32>) -> vector<24xf32>
// CHECK: %[[BACK:.*]] = vector.shuffle %[[POLY]], %[[MT]] [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<8xf32>, vector<24xf32>
// CHECK-NEXT: scf.yield %[[BACK]] : vector<32xf32>
// CHECK: fa4.role "softmax1"

// sm_90a: the consumer's 64-element fragment, 8 of every 16 on the FMA pipe.
// HOPPER: fa4.role "consumer0"
// HOPPER: %[[LARGE:.*]] = nvvm.vote.sync  any
// HOPPER: scf.if %[[LARGE]] -> (vector<64xf32>) {
// HOPPER-NEXT: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<64xf32>) -> vector<64xf32>
// HOPPER: } else {
// HOPPER-NEXT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 32, 33, 34, 35, 36, 37, 38, 39, 48, 49, 50, 51, 52, 53, 54, 55] : vector<64xf32>, vector<64xf32>
// HOPPER-COUNT-3: llvm.intr.fma({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// HOPPER: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<32xf32>) -> vector<32xf32>

// All 16: no MUFU tanh where the warp is within the cap.
// ALL: scf.if %{{.*}} -> (vector<64xf32>) {
// ALL-NEXT: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<64xf32>) -> vector<64xf32>
// ALL: } else {
// ALL-NOT: llvm.intr.tanh
// ALL-COUNT-3: llvm.intr.fma({{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// ALL-NEXT: scf.yield

// Without the option (the plan's default) the kernel takes MUFU tanh only.
// NONE-NOT: polynomialTanh
// NONE-NOT: nvvm.vote.sync  any {{.*}} -> i1
// NONE: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (vector<64xf32>) -> vector<64xf32>
// NONE-NOT: llvm.intr.fma
func.func @capped(%q: memref<?x?x8x128xbf16>, %k: memref<?x?x2x128xbf16>, %v: memref<?x?x2x128xbf16>,
                  %o: memref<?x?x8x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>)
                outs(%o : memref<?x?x8x128xbf16>) {causal, softcap = 30.0 : f32}
  return
}
