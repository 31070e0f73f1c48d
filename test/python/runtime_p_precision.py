# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-compile="arch=sm_90a emit-dir=%t" -o /dev/null > /dev/null
# RUN: sed 's/@gqa_causal/@hilo/' %fa4_src_root/examples/attention.mlir > %t/hilo.mlir
# RUN: fa4-opt %t/hilo.mlir --fa4-compile="arch=sm_90a p-precision=hi_lo emit-dir=%t" -o /dev/null > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.runtime tells kernels of one problem apart by how their PV product
takes P (the plan's pPrecision): `find(p_precision=...)` picks the one
asked for, None either (the first by file name), and a directory without
the one asked for says why each kernel was rejected."""

import sys

from fa4 import runtime

directory = runtime.KernelDirectory(sys.argv[1])
print(sorted((k.name, k.p_precision) for k in directory))
# CHECK: [('gqa_causal_attention', 'single'), ('hilo_attention', 'hi_lo')]
problem = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
               arch="sm_90a")
for precision in ("single", "hi_lo", None):
    print(precision, directory.find(**problem, p_precision=precision).name)
# CHECK-NEXT: single gqa_causal_attention
# CHECK-NEXT: hi_lo hilo_attention
# CHECK-NEXT: None gqa_causal_attention

only_single = runtime.KernelDirectory(sys.argv[1])
only_single.kernels = [k for k in only_single.kernels if k.p_precision == "single"]
try:
    only_single.find(**problem, p_precision="hi_lo")
except LookupError as error:
    print(str(error).splitlines()[0])
    print(str(error).splitlines()[1])
# CHECK-NEXT: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True {{.*}} p_precision=hi_lo; candidates:
# CHECK-NEXT:   gqa_causal_attention (gqa_causal_attention.json): p_precision is single, not hi_lo
