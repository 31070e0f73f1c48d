# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit's shared_key: 4 (and 2) compiles sm_100a's shared keys through
libFA4CAPI.so (fa4-compile's shared-key=N), a problem of its own, its
kernel named ..._skN, its manifest's plan saying sharedKey = N with Q
stages of 128 / N rows (runtime.Kernel.shared_key); None and 1 are the
default problem, whose key is unchanged; sm_90a, other values and the
combinations the plan verifier refuses are refused before compiling."""

import json
import os
import sys
from pathlib import Path

from fa4 import jit, runtime

root = Path(sys.argv[1])
os.environ["FA4_CACHE_DIR"] = str(root / "cache")
os.environ.pop("FA4_KERNEL_DIR", None)
cache = jit.KernelCache()
problem = dict(causal=True, arch="sm_100a")
four = cache.kernel("bf16", 8, 2, 128, shared_key=4, **problem)
two = cache.kernel("bf16", 8, 2, 128, shared_key=2, **problem)
default = cache.kernel("bf16", 8, 2, 128, **problem)
print("compiled", cache.compiled, "| 1 is the default:",
      cache.kernel("bf16", 8, 2, 128, shared_key=1, **problem) is default,
      "compiled", cache.compiled)
# CHECK: compiled 3 | 1 is the default: True compiled 3


def describe(kernel):
    plan = kernel.manifest.get("plan", "")
    written = json.loads((Path(kernel.source).parent / "problem.json").read_text())
    rows = kernel.manifest["grid"]["query_rows_per_cta"]
    return (f"{kernel.name} shared_key {kernel.shared_key} rows per CTA {rows} "
            f"plan says {f'sharedKey = {kernel.shared_key}' in plan} "
            f"problem {written.get('shared_key')}")


for kernel in (four, two, default):
    print(describe(kernel))
# Two Q stages of 32 rows (4 packed heads: 8 positions each), of 64, of 128.
# CHECK-NEXT: bf16_d128_h8x2_causal_sk4_attention shared_key 4 rows per CTA 16 plan says True problem 4
# CHECK-NEXT: bf16_d128_h8x2_causal_sk2_attention shared_key 2 rows per CTA 32 plan says True problem 2
# CHECK-NEXT: bf16_d128_h8x2_causal_attention shared_key 1 rows per CTA 64 plan says False problem None

plain = dict(dtype="bf16", heads_q=8, heads_kv=2, head_dim=128, causal=True, lse=False,
             arch="sm_100a", window=[-1, 0], softcap=False, sink=False)
print("keys:", cache.key(plain) == Path(default.source).parent.name,
      cache.key(dict(plain, shared_key=4)) == Path(four.source).parent.name)
# CHECK-NEXT: keys: True True

for label, call in [
        ("sm_90a", lambda: cache.kernel("bf16", 8, 2, 128, causal=True, arch="sm_90a",
                                        shared_key=4)),
        ("3", lambda: cache.kernel("bf16", 8, 2, 128, shared_key=3, **problem)),
        ("'4'", lambda: cache.kernel("bf16", 8, 2, 128, shared_key="4", **problem)),
        ("Dv 96", lambda: cache.kernel("bf16", 8, 2, 96, shared_key=4, **problem)),
        ("kv_interleave 2", lambda: cache.kernel("bf16", 8, 2, 128, shared_key=4,
                                                 kv_interleave=2, **problem)),
        ("hi_lo", lambda: cache.kernel("bf16", 8, 2, 128, shared_key=4,
                                       p_precision="hi_lo", **problem)),
        ("e4m3", lambda: cache.kernel("e4m3", 8, 2, 128, shared_key=4, descale=True,
                                      **problem)),
        ("rope output", lambda: cache.kernel("bf16", 8, 2, 128, shared_key=4,
                                             rope=(64, 64, True), **problem))]:
    try:
        call()
        print(f"{label}: compiled")
    except ValueError as err:
        print(f"{label}: ValueError: {err}")
print("compiled", cache.compiled)
# CHECK-NEXT: sm_90a: ValueError: shared_key=4 needs sm_100a's weight-stationary MMA; sm_90a has none
# CHECK-NEXT: 3: ValueError: shared_key must be 1, 2 or 4 (or None: one thread per row), got 3
# CHECK-NEXT: '4': ValueError: shared_key must be 1, 2 or 4 (or None: one thread per row), got '4'
# CHECK-NEXT: Dv 96: ValueError: shared_key=4 needs a value head dim of 64, 128 or 256 (the N of the PV MMA), got 96
# CHECK-NEXT: kv_interleave 2: ValueError: shared_key=4 does not combine with kv_interleave=2
# CHECK-NEXT: hi_lo: ValueError: shared_key=4 does not combine with p_precision 'hi_lo'
# CHECK-NEXT: e4m3: ValueError: shared_key=4 does not combine with e4m3 inputs
# CHECK-NEXT: rope output: ValueError: shared_key=4 does not combine with a rope that rotates O back
# CHECK-NEXT: compiled 3
