// RUN: fa4-opt %s -split-input-file --fa4-plan -verify-diagnostics
// Plans that options make impossible are reported at the op.
// RUN: not fa4-opt %s -split-input-file --fa4-plan="q-stages=2 kv-stages=5" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not fa4-opt %s -split-input-file --fa4-plan="softmax-regs=240" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not fa4-opt %s -split-input-file --fa4-plan="pv-split=100" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="gqa-pack=3" 2>&1 | FileCheck %s --check-prefix=PACK
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_80" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" 2>&1 | FileCheck %s --check-prefix=HOPPER
// RUN: not fa4-opt %s -split-input-file --fa4-plan="scheduler=random" 2>&1 | FileCheck %s --check-prefix=SCHED

// ARCH: fa4-plan: unknown arch 'sm_80' (expected sm_100a)
// HOPPER: 'fa4.attention' op cannot be planned for sm_90a: only the sm_100a pipeline exists so far
// SCHED: fa4-plan: unknown scheduler 'random' (expected linear or lpt)

// A plannable op for the option diagnostics.
func.func @mha(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
               %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
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
