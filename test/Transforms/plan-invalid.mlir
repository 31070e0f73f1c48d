// RUN: fa4-opt %s -split-input-file --fa4-plan -verify-diagnostics
// Plans that options make impossible are reported at the op.
// RUN: not fa4-opt %s -split-input-file --fa4-plan="q-stages=2 kv-stages=5" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not fa4-opt %s -split-input-file --fa4-plan="softmax-regs=240" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not fa4-opt %s -split-input-file --fa4-plan="pv-split=100" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="gqa-pack=3" 2>&1 | FileCheck %s --check-prefix=PACK
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_80" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" 2>&1 | FileCheck %s --check-prefix=HOPPER
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a softmax-regs=248" 2>&1 | FileCheck %s --check-prefix=HOPPER-REGS
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a pv-split=64" 2>&1 | FileCheck %s --check-prefix=HOPPER-SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a correction-regs=64" 2>&1 | FileCheck %s --check-prefix=HOPPER-CORRECTION
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a kv-stages=6" 2>&1 | FileCheck %s --check-prefix=HOPPER-SMEM
// RUN: not fa4-opt %s -split-input-file --fa4-plan="scheduler=random" 2>&1 | FileCheck %s --check-prefix=SCHED

// ARCH: fa4-plan: unknown arch 'sm_80' (expected sm_100a or sm_90a)
// SCHED: fa4-plan: unknown scheduler 'random' (expected linear, lpt or paired)
// The sm_90a plan and what it refuses.
// HOPPER-NOT: error: {{.*}}@mha
// HOPPER-NOT: head dim 256 is not supported
// HOPPER: error: 'fa4.attention' op head dim 96 is not supported on sm_90a (supported: 64, 128, 256)
// HOPPER: error: 'fa4.attention' op query/key head dim 128 and value head dim 64 differ; sm_90a kernels need them equal

// A plannable op for the option diagnostics.
func.func @mha(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
               %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
  // HOPPER-REGS: plan-invalid.mlir:[[@LINE+8]]:3: error: 'fa4.attention' op invalid plan: register budgets (2 x 248 consumer + 40 producer) x 128 threads need 68608 registers per CTA of 3 warpgroups, more than 65536
  // HOPPER-SPLIT: plan-invalid.mlir:[[@LINE+7]]:3: error: 'fa4.attention' op invalid plan: pvSplit must be 0 on sm_90a (P stays in registers, one PV wgmma), got 64
  // HOPPER-CORRECTION: plan-invalid.mlir:[[@LINE+6]]:3: error: 'fa4.attention' op invalid plan: correctionRegs must be 0 on sm_90a (no correction warpgroup), got 64
  // HOPPER-SMEM: plan-invalid.mlir:[[@LINE+5]]:3: error: 'fa4.attention' op invalid plan: plan needs 295936 bytes of shared memory (2 Q stages, 6 K/V stages, O staging), more than the 232448 available
  // SMEM: plan-invalid.mlir:[[@LINE+4]]:3: error: 'fa4.attention' op invalid plan: plan needs 265216 bytes of shared memory (2 Q stages, 5 K/V stages, O staging, statistics), more than the 232448 available
  // REGS: plan-invalid.mlir:[[@LINE+3]]:3: error: 'fa4.attention' op invalid plan: register budgets (2 x 240 softmax + 64 correction + 48 producer) x 128 threads need 75776 registers per CTA of 4 warpgroups, more than 65536
  // SPLIT: plan-invalid.mlir:[[@LINE+2]]:3: error: 'fa4.attention' op invalid plan: pvSplit must be a multiple of 16 in (0, blockN = 128), got 100
  // PACK: plan-invalid.mlir:[[@LINE+1]]:3: error: 'fa4.attention' op gqa-pack 3 must divide both the GQA ratio (1) and the 128-row Q tile
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>,
                    memref<1x256x4x128xbf16>) outs(%o : memref<1x256x4x128xbf16>)
  return
}

// -----

func.func @head_dim_256(%q: memref<1x256x4x256xbf16>, %k: memref<1x256x4x256xbf16>,
                        %v: memref<1x256x4x256xbf16>, %o: memref<1x256x4x256xbf16>) {
  // expected-error @+1 {{head dim 256 is not supported on sm_100a (supported: 64, 128)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x256xbf16>, memref<1x256x4x256xbf16>,
                    memref<1x256x4x256xbf16>) outs(%o : memref<1x256x4x256xbf16>)
  return
}

// -----

func.func @head_dim_96(%q: memref<1x256x4x96xbf16>, %k: memref<1x256x4x96xbf16>,
                       %v: memref<1x256x4x96xbf16>, %o: memref<1x256x4x96xbf16>) {
  // expected-error @+1 {{head dim 96 is not supported on sm_100a (supported: 64, 128)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x96xbf16>, memref<1x256x4x96xbf16>,
                    memref<1x256x4x96xbf16>) outs(%o : memref<1x256x4x96xbf16>)
  return
}

// -----

func.func @dv_differs(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                      %v: memref<1x256x4x64xbf16>, %o: memref<1x256x4x64xbf16>) {
  // expected-error @+1 {{query/key head dim 128 and value head dim 64 differ; sm_100a kernels need them equal}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>,
                    memref<1x256x4x64xbf16>) outs(%o : memref<1x256x4x64xbf16>)
  return
}

// -----

func.func @gqa_ratio_3(%q: memref<1x256x12x64xf16>, %k: memref<1x256x4x64xf16>,
                       %v: memref<1x256x4x64xf16>, %o: memref<1x256x12x64xf16>) {
  // expected-error @+1 {{GQA ratio 3 (12 query heads / 4 key/value heads) does not divide the 128-row Q tile, so its query heads cannot be packed; set gqa-pack to a divisor of both (1 disables packing)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x12x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x12x64xf16>)
  return
}

// -----

func.func @window(%q: memref<1x256x4x64xf16>, %k: memref<1x256x4x64xf16>,
                  %v: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  // expected-error @+1 {{sliding-window attention is not supported on sm_100a yet}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x4x64xf16>) {window = array<i64: 128, 0>}
  return
}

// -----

func.func @softcap(%q: memref<1x256x4x64xf16>, %k: memref<1x256x4x64xf16>,
                   %v: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  // expected-error @+1 {{softcap is not supported on sm_100a yet}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x4x64xf16>) {softcap = 30.0 : f32}
  return
}
