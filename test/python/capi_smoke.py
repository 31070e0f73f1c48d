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
    print(f"compiled: launch {'fa4.launch @gqa_causal_attention' in compiled.ir}, "
          f"binary {'gpu.binary @gqa_causal_attention' in compiled.ir}")
    # The kernels in memory: PTX, the cubin when ptxas is found, the manifest.
    (kernel,) = compiled.kernels
    # CHECK: kernel gqa_causal_attention sm_100a: ptx True, entry True
    print(f"kernel {kernel.name} {kernel.arch}: ptx {kernel.ptx.startswith('//')}, "
          f"entry {'.entry gqa_causal_attention' in kernel.ptx}")
    # CHECK: manifest: kernel gqa_causal_attention, 512 threads, kv stages 2, mbarriers 22, tmem 512
    m = kernel.manifest
    print(f"manifest: kernel {m['kernel']}, {m['block'][0]} threads, "
          f"kv stages {2 if 'kvStages = 2' in m['plan'] else '?'}, "
          f"mbarriers {m['mbarriers']}, tmem {m['tmem_columns']}")
    # CHECK: cubin matches the manifest: True
    print("cubin matches the manifest:",
          (kernel.cubin is None) == (m['files']['cubin'] is None))
    # All of its bytes, NULs included: a CUDA ELF (e_machine 190) whose
    # symbol table, far past the header, names the kernel.
    if kernel.cubin is not None:
        whole = (kernel.cubin[:4] == b"\x7fELF" and kernel.cubin[18:20] == b"\xbe\x00"
                 and b"gqa_causal_attention" in kernel.cubin[64:])
    else:
        whole = True
    # CHECK: cubin whole: True
    print("cubin whole:", whole)
    try:
        ctx.compile(EXAMPLE.read_text(), "head-dim=256")
    except fa4.MLIRError as err:
        # CHECK: fa4-compile failed
        # CHECK-SAME: cannot parse options 'head-dim=256'
        print(str(err).replace("\n", " "))
