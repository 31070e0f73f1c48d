// RUN: fa4-opt %s -split-input-file --fa4-tile -verify-diagnostics

func.func @no_plan(%q: memref<1x128x1x64xf16>, %o: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{has no plan; run fa4-plan first}}
  fa4.attention ins(%q, %q, %q : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>) outs(%o : memref<1x128x1x64xf16>)
  return
}
