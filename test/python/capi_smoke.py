# RUN: %python %s | FileCheck %s
# REQUIRES: capi
"""The Python package drives the compiler through libFA4CAPI.so with ctypes."""

from pathlib import Path

import fa4

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "attention.mlir"

with fa4.Context() as ctx:
    # CHECK: fa4.attention ins(%{{.*}} : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
    # CHECK-SAME: lse(%{{.*}} : memref<?x32x?xf32>) {causal}
    print(ctx.verify(EXAMPLE.read_text()))

    bad = EXAMPLE.read_text().replace("{causal}", "{causal, scale = -1.0 : f32}")
    try:
        ctx.verify(bad)
        print("accepted invalid input")
    except fa4.MLIRError as err:
        # CHECK: rejected: 1 diagnostic(s)
        # CHECK-NEXT: 'fa4.attention' op scale must be positive and finite, got -1.000000e+00
        print(f"rejected: {len(err.diagnostics)} diagnostic(s)")
        print(err.diagnostics[0])
