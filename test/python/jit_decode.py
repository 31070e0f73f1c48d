# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit's family: 'decode' compiles sm_100a's swap-AB decode kernel
through libFA4CAPI.so (fa4-compile's family=decode), a problem of its own,
its kernel named ..._dec, its manifest's plan saying family = decode with a
Q tile of 32 rows (runtime.Kernel.family); None and 'prefill' are the
default problem, whose key is unchanged; sm_90a, other values and the
combinations the planner refuses are refused before compiling."""

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
decode = cache.kernel("bf16", 32, 8, 128, family="decode", lse=True, **problem)
default = cache.kernel("bf16", 32, 8, 128, lse=True, **problem)
print("compiled", cache.compiled, "| prefill is the default:",
      cache.kernel("bf16", 32, 8, 128, family="prefill", lse=True, **problem) is default,
      "compiled", cache.compiled)
# CHECK: compiled 2 | prefill is the default: True compiled 2

for kernel in (decode, default):
    plan = kernel.manifest.get("plan", "")
    written = json.loads((Path(kernel.source).parent / "problem.json").read_text())
    print(f"{kernel.name} family {kernel.family} threads "
          f"{kernel.manifest['block'][0]} rows per CTA "
          f"{kernel.manifest['grid']['query_rows_per_cta']} plan says "
          f"{'family = decode' in plan} problem {written.get('family')}")
# A 32-row Q tile of 4 packed heads: 8 positions; 256 threads (the softmax
# warpgroup and the producer warps).
# CHECK-NEXT: bf16_d128_h32x8_causal_lse_dec_attention family decode threads 256 rows per CTA 8 plan says True problem decode
# CHECK-NEXT: bf16_d128_h32x8_causal_lse_attention family prefill threads 512 rows per CTA 64 plan says False problem None

plain = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
             arch="sm_100a", window=[-1, 0], softcap=False, sink=False)
print("keys:", cache.key(plain) == Path(default.source).parent.name,
      cache.key(dict(plain, family="decode")) == Path(decode.source).parent.name)
# CHECK-NEXT: keys: True True

for label, call in [
        ("sm_90a", lambda: cache.kernel("bf16", 32, 8, 128, causal=True, arch="sm_90a",
                                        family="decode")),
        ("'split'", lambda: cache.kernel("bf16", 32, 8, 128, family="split", **problem)),
        ("Dv 64", lambda: cache.kernel("bf16", 32, 8, 64, family="decode", **problem)),
        ("e4m3", lambda: cache.kernel("e4m3", 32, 8, 128, family="decode", descale=True,
                                      **problem)),
        ("shared_key 4", lambda: cache.kernel("bf16", 32, 8, 128, family="decode",
                                              shared_key=4, **problem))]:
    try:
        call()
        print(f"{label}: compiled")
    except ValueError as err:
        print(f"{label}: ValueError: {err}")
print("compiled", cache.compiled)
# CHECK-NEXT: sm_90a: ValueError: family 'decode' is sm_100a's swap-AB kernel; sm_90a has none
# CHECK-NEXT: 'split': ValueError: family must be 'prefill', 'decode' or None, got 'split'
# CHECK-NEXT: Dv 64: ValueError: family 'decode' needs a value head dim of 128 or 256 (O^T is Dv / 128 MMA tiles), got 64
# CHECK-NEXT: e4m3: ValueError: family 'decode' does not combine with e4m3 inputs
# CHECK-NEXT: shared_key 4: ValueError: family 'decode' does not combine with shared_key=4
# CHECK-NEXT: compiled 2
