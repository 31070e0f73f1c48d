// RUN: fa4-opt %s -split-input-file --fa4-plan -verify-diagnostics
// Plans that options make impossible are reported at the op.
// RUN: not fa4-opt %s -split-input-file --fa4-plan="q-stages=2 kv-stages=5" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not fa4-opt %s -split-input-file --fa4-plan="softmax-regs=240 kv-interleave=1" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not fa4-opt %s -split-input-file --fa4-plan="pv-split=100" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="gqa-pack=3" 2>&1 | FileCheck %s --check-prefix=PACK
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_80" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a" 2>&1 | FileCheck %s --check-prefix=HOPPER
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a softmax-regs=240 producer-regs=32" 2>&1 | FileCheck %s --check-prefix=HOPPER-REGS
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a pv-split=64" 2>&1 | FileCheck %s --check-prefix=HOPPER-SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a correction-regs=64" 2>&1 | FileCheck %s --check-prefix=HOPPER-CORRECTION
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a kv-stages=6" 2>&1 | FileCheck %s --check-prefix=HOPPER-SMEM
// RUN: not fa4-opt %s -split-input-file --fa4-plan="scheduler=random" 2>&1 | FileCheck %s --check-prefix=SCHED

// Huge values of every option are refused by the plan's ranges before any
// resource formula uses them (the shared-memory bytes of kv-stages =
// 2^63 - 1 used to overflow); values below "choose" are refused as options.
// RUN: not fa4-opt %s -split-input-file --fa4-plan="kv-stages=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-KV
// RUN: not fa4-opt %s -split-input-file --fa4-compile="kv-stages=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-KV
// RUN: not fa4-opt %s -split-input-file --fa4-plan="q-stages=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-Q
// RUN: not fa4-opt %s -split-input-file --fa4-plan="block-n=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-N
// RUN: not fa4-opt %s -split-input-file --fa4-plan="gqa-pack=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-PACK
// RUN: not fa4-opt %s -split-input-file --fa4-plan="softmax-regs=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-SOFTMAX
// RUN: not fa4-opt %s -split-input-file --fa4-plan="correction-regs=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-CORRECTION
// RUN: not fa4-opt %s -split-input-file --fa4-plan="producer-regs=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-PRODUCER
// RUN: not fa4-opt %s -split-input-file --fa4-plan="emulated-exp2=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-EXP2
// RUN: not fa4-opt %s -split-input-file --fa4-plan="pv-split=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-SPLIT
// RUN: not fa4-opt %s -split-input-file --fa4-plan="rescale-threshold=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-THRESHOLD
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a kv-stages=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-KV
// RUN: not fa4-opt %s -split-input-file --fa4-plan="block-n=96" 2>&1 | FileCheck %s --check-prefix=BLOCK-N
// RUN: not fa4-opt %s -split-input-file --fa4-plan="pv-split=48" 2>&1 | FileCheck %s --check-prefix=SPLIT48
// RUN: not fa4-opt %s -split-input-file --fa4-plan="kv-stages=-5" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fa4-opt %s -split-input-file --fa4-plan="emulated-exp2=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-EXP2
// RUN: not fa4-opt %s -split-input-file --fa4-plan="polynomial-tanh=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE-TANH
// RUN: not fa4-opt %s -split-input-file --fa4-plan="polynomial-tanh=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-TANH
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a polynomial-tanh=8" 2>&1 | FileCheck %s --check-prefix=TANH-NO-CAP

// HUGE-KV: error: 'fa4.attention' op invalid plan: kvStages must be in [2, 16], got 9223372036854775807
// HUGE-Q: error: 'fa4.attention' op invalid plan: qStages must be in [1, 2] on sm_100a, got 9223372036854775807
// HUGE-N: error: 'fa4.attention' op invalid plan: blockN must be 64 or 128 on sm_100a, got 9223372036854775807
// HUGE-PACK: error: 'fa4.attention' op gqa-pack 9223372036854775807 must divide both the GQA ratio (1) and the 128-row Q tile
// HUGE-SOFTMAX: error: 'fa4.attention' op invalid plan: softmaxRegs must be a multiple of 8 in [24, 256], got 9223372036854775807
// HUGE-CORRECTION: error: 'fa4.attention' op invalid plan: correctionRegs must be a multiple of 8 in [24, 256], got 9223372036854775807
// HUGE-PRODUCER: error: 'fa4.attention' op invalid plan: producerRegs must be a multiple of 8 in [24, 256], got 9223372036854775807
// HUGE-EXP2: error: 'fa4.attention' op invalid plan: emulatedExp2 must be in [0, 16], got 9223372036854775807
// HUGE-SPLIT: error: 'fa4.attention' op invalid plan: pvSplit must be a multiple of 32 in (0, blockN = 128), got 9223372036854775807
// HUGE-THRESHOLD: error: 'fa4.attention' op invalid plan: rescaleThreshold must be in [0, 64], got 9223372036854775807
// fa4-specialize builds 64- and 128-key blocks and whole 32-column P
// fragments on sm_100a: the plan refuses anything else.
// BLOCK-N: error: 'fa4.attention' op invalid plan: blockN must be 64 or 128 on sm_100a, got 96
// SPLIT48: error: 'fa4.attention' op invalid plan: pvSplit must be a multiple of 32 in (0, blockN = 128), got 48
// NEGATIVE: error: fa4-plan: option kv-stages must be positive (0 chooses), got -5
// NEGATIVE-EXP2: error: fa4-plan: option emulated-exp2 must be non-negative (-1 chooses), got -2
// HUGE-TANH: error: 'fa4.attention' op invalid plan: polynomialTanh must be in [0, 16], got 9223372036854775807
// NEGATIVE-TANH: error: fa4-plan: option polynomial-tanh must be non-negative (-1 chooses), got -2
// The polynomial replaces a softcap's tanh: without a softcap it has nothing
// to replace.
// TANH-NO-CAP: error: 'fa4.attention' op plan's polynomialTanh = 8 applies to a softcap's tanh; this attention has no softcap

// ARCH: fa4-plan: unknown arch 'sm_80' (expected sm_100a or sm_90a)
// SCHED: fa4-plan: unknown scheduler 'random' (expected linear, lpt or paired)
// The sm_90a plan and what it refuses.
// HOPPER-NOT: error: {{.*}}@mha
// HOPPER-NOT: head dim 256
// HOPPER: error: 'fa4.attention' op value head dim 512 is not supported on sm_90a (supported: multiples of 16 up to 256): a consumer's 64-row O fragment takes 256 registers per thread, more than the 255 a thread has
// HOPPER: error: 'fa4.attention' op value head dim 320 is not supported on sm_90a (supported: multiples of 16 up to 256): P V is one wgmma whose N is Dv, at most 256 (splitting it over O's columns is not built)
// HOPPER: error: 'fa4.attention' op head dim 100 is not supported on sm_90a (supported: multiples of 16 up to 256)
// HOPPER: error: 'fa4.attention' op value head dim 72 is not supported on sm_90a (supported: multiples of 16 up to 256)

// A plannable op for the option diagnostics.
func.func @mha(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
               %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
  // HOPPER-REGS: plan-invalid.mlir:[[@LINE+8]]:3: error: 'fa4.attention' op invalid plan: register budgets (2 x 240 consumer + 32 producer) x 128 threads need 65536 registers per CTA of 3 warpgroups, more than the 64512 it is launched with (168 per thread; setmaxnreg only moves them between warpgroups)
  // HOPPER-SPLIT: plan-invalid.mlir:[[@LINE+7]]:3: error: 'fa4.attention' op invalid plan: pvSplit must be 0 on sm_90a (P stays in registers, one PV wgmma), got 64
  // HOPPER-CORRECTION: plan-invalid.mlir:[[@LINE+6]]:3: error: 'fa4.attention' op invalid plan: correctionRegs must be 0 on sm_90a (no correction warpgroup), got 64
  // HOPPER-SMEM: plan-invalid.mlir:[[@LINE+5]]:3: error: 'fa4.attention' op invalid plan: plan needs 295936 bytes of shared memory (2 Q stages, 6 K/V stages, O staging), more than the 232448 available
  // SMEM: plan-invalid.mlir:[[@LINE+4]]:3: error: 'fa4.attention' op invalid plan: plan needs 265216 bytes of shared memory (2 Q stages, 5 K/V stages, O staging, statistics), more than the 232448 available
  // REGS: plan-invalid.mlir:[[@LINE+3]]:3: error: 'fa4.attention' op invalid plan: register budgets (2 x 240 softmax + 64 correction + 48 producer) x 128 threads need 75776 registers per CTA of 4 warpgroups, more than the 65536 it is launched with (128 per thread; setmaxnreg only moves them between warpgroups)
  // SPLIT: plan-invalid.mlir:[[@LINE+2]]:3: error: 'fa4.attention' op invalid plan: pvSplit must be a multiple of 32 in (0, blockN = 128), got 100
  // PACK: plan-invalid.mlir:[[@LINE+1]]:3: error: 'fa4.attention' op gqa-pack 3 must divide both the GQA ratio (1) and the 128-row Q tile
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>,
                    memref<1x256x4x128xbf16>) outs(%o : memref<1x256x4x128xbf16>)
  return
}

// -----

// MLA's 512-wide latent as V: O alone would fill Tensor Memory.
func.func @value_head_dim_512(%q: memref<1x256x4x64xbf16>, %k: memref<1x256x4x64xbf16>,
                              %v: memref<1x256x4x512xbf16>, %o: memref<1x256x4x512xbf16>) {
  // expected-error @+1 {{value head dim 512 is not supported on sm_100a (supported: multiples of 16 up to 256): O alone takes 512 f32 TMEM columns, beside S's 64 more than the 512 of a CTA (splitting O over a CTA pair is not built)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xbf16>, memref<1x256x4x64xbf16>,
                    memref<1x256x4x512xbf16>) outs(%o : memref<1x256x4x512xbf16>)
  return
}

// -----

// A Dv that fits Tensor Memory but not one P V MMA's N.
func.func @value_head_dim_320(%q: memref<1x256x4x64xbf16>, %k: memref<1x256x4x64xbf16>,
                              %v: memref<1x256x4x320xbf16>, %o: memref<1x256x4x320xbf16>) {
  // expected-error @+1 {{value head dim 320 is not supported on sm_100a (supported: multiples of 16 up to 256): P V is one tcgen05 MMA whose N is Dv, at most 256 (splitting it over O's columns is not built)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x64xbf16>, memref<1x256x4x64xbf16>,
                    memref<1x256x4x320xbf16>) outs(%o : memref<1x256x4x320xbf16>)
  return
}

// -----

func.func @head_dim_100(%q: memref<1x256x4x100xbf16>, %k: memref<1x256x4x100xbf16>,
                        %v: memref<1x256x4x100xbf16>, %o: memref<1x256x4x100xbf16>) {
  // expected-error @+1 {{head dim 100 is not supported on sm_100a (supported: multiples of 16 up to 256)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x100xbf16>, memref<1x256x4x100xbf16>,
                    memref<1x256x4x100xbf16>) outs(%o : memref<1x256x4x100xbf16>)
  return
}

// -----

func.func @dv_unsupported(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                          %v: memref<1x256x4x72xbf16>, %o: memref<1x256x4x72xbf16>) {
  // expected-error @+1 {{value head dim 72 is not supported on sm_100a (supported: multiples of 16 up to 256)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>,
                    memref<1x256x4x72xbf16>) outs(%o : memref<1x256x4x72xbf16>)
  return
}

// -----

// What the kernel computes in 32 bits bounds the static sizes: its batch and
// length parameters and TMA coordinates (each size), the rows of whole work
// tiles, the number of work tiles and the LSE offsets.
func.func @seq_q_i32(%q: memref<1x4294967296x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                     %v: memref<1x256x4x128xbf16>, %o: memref<1x4294967296x4x128xbf16>) {
  // expected-error @+1 {{query dimension 1 (seq_q) is 4294967296, more than the kernel's 32-bit sizes and TMA coordinates hold (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<1x4294967296x4x128xbf16>, memref<1x256x4x128xbf16>,
                    memref<1x256x4x128xbf16>) outs(%o : memref<1x4294967296x4x128xbf16>)
  return
}

// -----

func.func @seq_q_rounded(%q: memref<1x2147483647x1x64xbf16>, %k: memref<1x256x1x64xbf16>,
                         %v: memref<1x256x1x64xbf16>, %o: memref<1x2147483647x1x64xbf16>) {
  // expected-error @+1 {{seq_q 2147483647 rounded up to whole work tiles of 256 query positions exceeds the kernel's 32-bit row coordinates (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<1x2147483647x1x64xbf16>, memref<1x256x1x64xbf16>,
                    memref<1x256x1x64xbf16>) outs(%o : memref<1x2147483647x1x64xbf16>)
  return
}

// -----

func.func @seq_kv_rounded(%q: memref<1x256x1x64xbf16>, %k: memref<1x2147483600x1x64xbf16>,
                          %v: memref<1x2147483600x1x64xbf16>, %o: memref<1x256x1x64xbf16>) {
  // expected-error @+1 {{seq_kv 2147483600 rounded up to whole blocks of 128 keys exceeds the kernel's 32-bit row coordinates (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x1x64xbf16>, memref<1x2147483600x1x64xbf16>,
                    memref<1x2147483600x1x64xbf16>) outs(%o : memref<1x256x1x64xbf16>)
  return
}

// -----

func.func @work_tiles(%q: memref<65536x65536x128x64xbf16>, %k: memref<65536x256x128x64xbf16>,
                      %v: memref<65536x256x128x64xbf16>, %o: memref<65536x65536x128x64xbf16>) {
  // expected-error @+1 {{batch x head blocks x query tiles = 65536 x 128 x 256 work tiles exceed the kernel's 32-bit tile count (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<65536x65536x128x64xbf16>, memref<65536x256x128x64xbf16>,
                    memref<65536x256x128x64xbf16>) outs(%o : memref<65536x65536x128x64xbf16>)
  return
}

// -----

func.func @lse_offsets(%q: memref<64x1048576x64x64xbf16>, %k: memref<64x256x64x64xbf16>,
                       %v: memref<64x256x64x64xbf16>, %o: memref<64x1048576x64x64xbf16>,
                       %lse: memref<64x64x1048576xf32>) {
  // expected-error @+1 {{LSE of batch x heads_q x seq_q = 64 x 64 x 1048576 elements exceeds the kernel's 32-bit LSE offsets (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<64x1048576x64x64xbf16>, memref<64x256x64x64xbf16>,
                    memref<64x256x64x64xbf16>) outs(%o : memref<64x1048576x64x64xbf16>)
                lse(%lse : memref<64x64x1048576xf32>)
  return
}

// -----

// A scale whose log2-scaled value (what the kernel takes, as an f32)
// overflows f32.
func.func @scale_log2(%q: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  // expected-error @+1 {{scale 3.000000e+38 times log2(e) is 4.328085e+38, more than an f32 holds (3.402823e+38): the kernel takes the scale in log2 units as an f32}}
  fa4.attention ins(%q, %q, %q : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x4x64xf16>) {scale = 3.0e38 : f32}
  return
}

// -----

// A softcap over a tiny scale: the cap in raw-score units overflows f32.
func.func @softcap_raw(%q: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  // expected-error @+1 {{softcap 1.000000e+30 over the scale 1.000000e-10 is 1.000000e+40, more than an f32 holds (3.402823e+38): the kernel takes the cap in raw-score units as an f32}}
  fa4.attention ins(%q, %q, %q : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x4x64xf16>) {scale = 1.0e-10 : f32, softcap = 1.0e30 : f32}
  return
}

// -----

// TMA describes Q, K, V and O with byte strides that are multiples of 16:
// a head stride of 65 elements is not one.
func.func @head_stride(%q: memref<1x256x4x64xbf16, strided<[?, 4160, 65, 1]>>,
                       %k: memref<1x256x4x64xbf16>, %o: memref<1x256x4x64xbf16>) {
  // expected-error @+1 {{query stride 65 of dimension 2 (heads_q) is 130 bytes, which a TMA descriptor cannot describe (a multiple of 16 bytes below 2^40)}}
  fa4.attention ins(%q, %k, %k : memref<1x256x4x64xbf16, strided<[?, 4160, 65, 1]>>,
                    memref<1x256x4x64xbf16>, memref<1x256x4x64xbf16>) outs(%o : memref<1x256x4x64xbf16>)
  return
}

// -----

func.func @batch_stride(%q: memref<2x256x4x64xbf16>, %k: memref<2x256x4x64xbf16>,
                        %o: memref<2x256x4x64xbf16, strided<[549755813888, 256, 64, 1]>>) {
  // expected-error @+1 {{output stride 549755813888 of dimension 0 (batch) is 1099511627776 bytes, which a TMA descriptor cannot describe (a multiple of 16 bytes below 2^40)}}
  fa4.attention ins(%q, %k, %k : memref<2x256x4x64xbf16>, memref<2x256x4x64xbf16>,
                    memref<2x256x4x64xbf16>) outs(%o : memref<2x256x4x64xbf16, strided<[549755813888, 256, 64, 1]>>)
  return
}

// -----

func.func @base_offset(%q: memref<1x256x4x64xbf16>, %k: memref<1x256x4x64xbf16, strided<[65536, 256, 64, 1], offset: 4>>,
                       %o: memref<1x256x4x64xbf16>) {
  // expected-error @+1 {{key offset 4 is 8 bytes, not a multiple of the 16 bytes a TMA base address needs}}
  fa4.attention ins(%q, %k, %q : memref<1x256x4x64xbf16>, memref<1x256x4x64xbf16, strided<[65536, 256, 64, 1], offset: 4>>,
                    memref<1x256x4x64xbf16>) outs(%o : memref<1x256x4x64xbf16>)
  return
}

// -----

func.func @lse_strided(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>,
                       %lse: memref<1x1x128xf32, strided<[512, 256, 1]>>) {
  // expected-error @+1 {{the kernel writes LSE to a contiguous [B, Hq, Sq] tensor, got 'memref<1x1x128xf32, strided<[512, 256, 1]>>'}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>,
                    memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
                lse(%lse : memref<1x1x128xf32, strided<[512, 256, 1]>>)
  return
}

// -----

func.func @sink_offset(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>,
                       %s: memref<1xf32, strided<[1], offset: 3>>) {
  // expected-error @+1 {{the kernel reads the sinks from a contiguous [Hq] tensor, got 'memref<1xf32, strided<[1], offset: 3>>'}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>,
                    memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
                sink(%s : memref<1xf32, strided<[1], offset: 3>>)
  return
}

// -----

// Between rescales P grows to 2^rescaleThreshold; P is rounded to f16 here.
// RUN: not fa4-opt %s -split-input-file --fa4-plan="rescale-threshold=16" 2>&1 | FileCheck %s --check-prefix=THRESHOLD-F16
func.func @threshold_f16(%q: memref<1x256x4x64xf16>, %o: memref<1x256x4x64xf16>) {
  // THRESHOLD-F16: plan-invalid.mlir:[[@LINE+1]]:3: error: 'fa4.attention' op rescaleThreshold 16 lets probabilities grow to 2^16, past the largest f16 (65504) that P is rounded to; at most 15 with f16
  fa4.attention ins(%q, %q, %q : memref<1x256x4x64xf16>, memref<1x256x4x64xf16>,
                    memref<1x256x4x64xf16>) outs(%o : memref<1x256x4x64xf16>)
  return
}

// -----

// Packed sequences: the LSE is [Hq, total_q], contiguous.
func.func @packed_lse_strided(%q: memref<?x2x64xf16>, %o: memref<?x2x64xf16>,
                              %lse: memref<2x?xf32, strided<[?, 1]>>,
                              %cu: memref<3xi32>) {
  // expected-error @+1 {{the kernel writes LSE to a contiguous [Hq, Tq] tensor, got 'memref<2x?xf32, strided<[?, 1]>>'}}
  fa4.attention ins(%q, %q, %q : memref<?x2x64xf16>, memref<?x2x64xf16>,
                    memref<?x2x64xf16>) outs(%o : memref<?x2x64xf16>)
                lse(%lse : memref<2x?xf32, strided<[?, 1]>>)
                varlen(%cu, %cu : memref<3xi32>, memref<3xi32>)
  return
}

// -----

// The packed rows are a TMA coordinate: at most 2^31 - 1.
func.func @packed_rows(%q: memref<2147483648x1x64xf16>, %k: memref<?x1x64xf16>,
                       %cu: memref<?xi32>) {
  // expected-error @+1 {{query dimension 0 (total_q) is 2147483648, more than the kernel's 32-bit sizes and TMA coordinates hold (2147483647)}}
  fa4.attention ins(%q, %k, %k : memref<2147483648x1x64xf16>, memref<?x1x64xf16>,
                    memref<?x1x64xf16>) outs(%q : memref<2147483648x1x64xf16>)
                varlen(%cu, %cu : memref<?xi32>, memref<?xi32>)
  return
}

// -----

// The persistent schedule numbers head blocks x (ceil(Tq / rows) + B) tiles
// in 32 bits: 2^16 heads of 2^24 packed rows over 2^20 sequences do not fit.
func.func @packed_tiles(%q: memref<16777216x65536x64xf16>, %k: memref<?x65536x64xf16>,
                        %cu: memref<1048577xi32>) {
  // expected-error @+1 {{head blocks x (query tiles of 16777216 packed rows + sequences) exceed the kernel's 32-bit tile count (2147483647)}}
  fa4.attention ins(%q, %k, %k : memref<16777216x65536x64xf16>, memref<?x65536x64xf16>,
                    memref<?x65536x64xf16>) outs(%q : memref<16777216x65536x64xf16>)
                varlen(%cu, %cu : memref<1048577xi32>, memref<1048577xi32>)
  return
}

// -----

// The packed LSE of head h, row i is at h * Tq + i, in 32 bits.
func.func @packed_lse_offsets(%q: memref<16777216x256x64xf16>, %k: memref<?x256x64xf16>,
                              %lse: memref<256x16777216xf32>, %cu: memref<?xi32>) {
  // expected-error @+1 {{LSE of heads_q x total_q = 256 x 16777216 elements exceeds the kernel's 32-bit LSE offsets (2147483647)}}
  fa4.attention ins(%q, %k, %k : memref<16777216x256x64xf16>, memref<?x256x64xf16>,
                    memref<?x256x64xf16>) outs(%q : memref<16777216x256x64xf16>)
                lse(%lse : memref<256x16777216xf32>)
                varlen(%cu, %cu : memref<?xi32>, memref<?xi32>)
  return
}
