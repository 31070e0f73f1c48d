# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-compile="arch=sm_100a emit-dir=%t" -o /dev/null > /dev/null
# RUN: sed 's/@gqa_causal/@interleaved/' %fa4_src_root/examples/attention.mlir > %t/interleaved.mlir
# RUN: fa4-opt %t/interleaved.mlir --fa4-compile="arch=sm_100a kv-interleave=2 q-stages=1 emit-dir=%t" -o /dev/null > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.runtime tells kernels of one problem apart by whether sm_100a's
softmax warpgroups are interleaved over one Q tile (the plan's
kvInterleave): `Kernel.kv_interleave` (1 where the plan does not say),
`find(kv_interleave=...)` picks the one asked for, None either (the first
by file name), and a directory without the one asked for says why each
kernel was rejected."""

import sys

from fa4 import runtime

directory = runtime.KernelDirectory(sys.argv[1])
for kernel in directory:
    print(kernel.name, "kv_interleave", kernel.kv_interleave, "q_stages", kernel.q_stages,
          "query_rows_per_cta", kernel.query_rows_per_cta, "head_blocks", kernel.head_blocks,
          "plan says", "kvInterleave = 2" in kernel.manifest["plan"])
# CHECK: gqa_causal_attention kv_interleave 1 q_stages 2 query_rows_per_cta 64 head_blocks 8 plan says False
# CHECK-NEXT: interleaved_attention kv_interleave 2 q_stages 1 query_rows_per_cta 32 head_blocks 8 plan says True

problem = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
               arch="sm_100a")
for interleave in (2, 1, None):
    print("kv_interleave", interleave, directory.find(**problem, kv_interleave=interleave).name)
# CHECK-NEXT: kv_interleave 2 interleaved_attention
# CHECK-NEXT: kv_interleave 1 gqa_causal_attention
# CHECK-NEXT: kv_interleave None gqa_causal_attention

# Positional arguments keep their order (kv_interleave is find's last).
print("positional", directory.find("bf16", 32, 8, 128, True, None, True, "sm_100a").name)
# CHECK-NEXT: positional gqa_causal_attention

# The mismatches of each kernel against the other's interleave.
for kernel in directory:
    print(kernel.name, kernel.mismatches(**problem, kv_interleave=2),
          kernel.mismatches(**problem, kv_interleave=1))
# CHECK-NEXT: gqa_causal_attention ['kv_interleave is 1, not 2'] []
# CHECK-NEXT: interleaved_attention [] ['kv_interleave is 2, not 1']

two_stages = runtime.KernelDirectory(sys.argv[1])
two_stages.kernels = [k for k in two_stages.kernels if k.kv_interleave == 1]
try:
    two_stages.find(**problem, kv_interleave=2)
except LookupError as error:
    print(str(error).splitlines()[0])
    print(str(error).splitlines()[1])
# CHECK-NEXT: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True {{.*}} kv_interleave=2; candidates:
# CHECK-NEXT:   gqa_causal_attention (gqa_causal_attention.json): kv_interleave is 1, not 2

# A problem that does not ask says nothing of the interleave.
try:
    two_stages.find(**dict(problem, lse=False))
except LookupError as error:
    print("asked nothing:", "kv_interleave=" in str(error), "lse is True" in str(error))
# CHECK-NEXT: asked nothing: False True
