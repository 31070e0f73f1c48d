// RUN: split-file %s %t
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="softcap-ceiling=20" | FileCheck %s --check-prefix=SET
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="arch=sm_90a softcap-ceiling=0" | FileCheck %s --check-prefix=OFF
// RUN: fa4-opt %t/bf16.mlir --fa4-plan="softcap-ceiling=0" | FileCheck %s --check-prefix=OFF
// RUN: not fa4-opt %t/bf16.mlir --fa4-plan="softcap-ceiling=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fa4-opt %t/bf16.mlir --fa4-plan="softcap-ceiling=49" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not fa4-opt %t/bf16.mlir --fa4-plan="softcap-ceiling=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: fa4-opt %t/refused.mlir -split-input-file --fa4-plan="softcap-ceiling=10" -verify-diagnostics
// RUN: fa4-opt %t/refused.mlir -split-input-file --fa4-plan="arch=sm_90a softcap-ceiling=10" -verify-diagnostics

// The softcap ceiling as a plan option: a value of 1 to 48 (log2 units)
// is taken as given, 0 turns it off.
// SET: softcapCeiling = 20{{[,>]}}
// OFF-NOT: softcapCeiling
// NEGATIVE: error: fa4-plan: option softcap-ceiling must be non-negative (-1 chooses), got -2
// LARGE: error: 'fa4.attention' op invalid plan: softcapCeiling must be in [1, 48], got 49
// HUGE: error: 'fa4.attention' op invalid plan: softcapCeiling must be in [1, 48], got 9223372036854775807

//--- bf16.mlir
func.func @capped(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                  %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>)
                outs(%o : memref<1x256x4x128xbf16>) {causal, softcap = 30.0 : f32}
  return
}

//--- refused.mlir
// f16 P leaves its normal range below 2^-14: a ceiling of at most 7.
func.func @f16(%q: memref<1x256x4x128xf16>, %k: memref<1x256x4x128xf16>,
               %v: memref<1x256x4x128xf16>, %o: memref<1x256x4x128xf16>) {
  // expected-error @+1 {{plan's softcapCeiling = 10 exceeds f16's 7: P = 2^(s - B) down to 2^-20 would leave f16's normal range (2^-14)}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xf16>, memref<1x256x4x128xf16>, memref<1x256x4x128xf16>)
                outs(%o : memref<1x256x4x128xf16>) {softcap = 3.0 : f32}
  return
}

// -----

// Without a softcap there is no ceiling.
func.func @uncapped(%q: memref<1x256x4x128xbf16>, %k: memref<1x256x4x128xbf16>,
                    %v: memref<1x256x4x128xbf16>, %o: memref<1x256x4x128xbf16>) {
  // expected-error @+1 {{plan's softcapCeiling = 10 bounds a softcap's scores; this attention has no softcap}}
  fa4.attention ins(%q, %k, %v : memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>, memref<1x256x4x128xbf16>)
                outs(%o : memref<1x256x4x128xbf16>) {causal}
  return
}

// -----

// FP8 P (e4m3) keeps the running maximum.
func.func @fp8(%q: memref<?x?x8x128xf8E4M3FN>, %k: memref<?x?x2x128xf8E4M3FN>,
               %v: memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x8x128xbf16>,
               %qd: memref<?x2xf32>, %kd: memref<?x2xf32>, %vd: memref<?x2xf32>) {
  // expected-error @+1 {{invalid plan: softcapCeiling does not apply to FP8 operands (e4m3 P's normals end at 2^-6)}}
  fa4.attention ins(%q, %k, %v : memref<?x?x8x128xf8E4M3FN>, memref<?x?x2x128xf8E4M3FN>,
                    memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                outs(%o : memref<?x?x8x128xbf16>)
                descale(%qd, %kd, %vd : memref<?x2xf32>, memref<?x2xf32>, memref<?x2xf32>) {causal, softcap = 3.0 : f32}
  return
}
