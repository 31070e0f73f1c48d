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

    # The whole compiler from Python: the attention op becomes a launch of a
    # compiled kernel.
    compiled = ctx.compile(EXAMPLE.read_text(), "kv-stages=2")
    # CHECK: compiled: launch True, binary True
    print(f"compiled: launch {'fa4.launch @gqa_causal_attention' in compiled}, "
          f"binary {'gpu.binary @gqa_causal_attention' in compiled}")
    try:
        ctx.compile(EXAMPLE.read_text(), "head-dim=256")
    except fa4.MLIRError as err:
        # CHECK: fa4-compile failed
        # CHECK-SAME: cannot parse options 'head-dim=256'
        print(str(err).replace("\n", " "))
