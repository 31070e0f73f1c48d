// RUN: fa4-opt %s --fa4-synchronize="arch=sm_100a p-precision=hi_lo" -o %t.sm100a.mlir
// RUN: %python %S/plant-bug.py drop-tmem-wait softmax0 store < %t.sm100a.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=STORE
// RUN: fa4-opt %s --fa4-synchronize="arch=sm_90a p-precision=hi_lo" -o %t.sm90a.mlir
// RUN: %python %S/plant-bug.py set-wgmma-wait consumer0 3 1 < %t.sm90a.mlir \
// RUN:   | not fa4-sim --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=CHAIN
// The unchanged kernels pass.
// RUN: fa4-sim %t.sm100a.mlir --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK
// RUN: fa4-sim %t.sm90a.mlir --batch 1 --seq-q 300 --seq-kv 333 --seed 2 | FileCheck %s --check-prefix=OK

// P as hi + lo with two planted bugs. sm_100a: the softmax's wait for its
// TMEM stores before it hands the first part of P to the MMA warp deleted,
// so the MMAs of hi (columns 0-15 of S) and lo (16-31) may read them before
// they land. sm_90a: the consumer's wait for the block's chained product
// (hi's wgmma, then lo's into the same registers) leaves the group in
// flight, so it returns lo's result while it may still run.

// STORE: seed 2: FAIL
// STORE: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns 0-7 ('s0'): write by {{.*}}role softmax0{{.*}}(fa4.tmem.store) and read by the MMA issued by {{.*}}role mma{{.*}}(fa4.mma) are not ordered by any barrier
// STORE: race on TMEM lanes {{[0-9]+}}-{{[0-9]+}}, columns 16-23 ('s0'): write by {{.*}}role softmax0{{.*}}(fa4.tmem.store) and read by the MMA issued by {{.*}}role mma{{.*}}(fa4.mma) are not ordered by any barrier
// CHAIN: seed 2: FAIL
// CHAIN: error: {{.*}}fa4.wgmma.wait: returns the result of the fa4.wgmma at {{.*}}, which may still run: its commit group is not among those a wait for at most 1 pending groups completes
// OK: seed 2: ok: @attention_attention {{.*}} D=64 bf16 causal,

func.func @attention(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x8x64xbf16>) {causal}
  return
}
