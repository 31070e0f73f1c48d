#!/usr/bin/env python3
"""The installed wheel on the GPU machine: `import fa4` from the wheel alone
(no source tree on the path, no FA4_CAPI_LIB, no LLVM installed), kernels
compiled on first use into a fresh FA4_CACHE_DIR through the wheel's
self-contained libFA4CAPI.so, then launched and checked against a float64
reference; prints the first call's compile time per problem (the goal is
under a second) and the second process's load time from the cache.

  make wheel                                   # here: dist/fa4-*.whl
  # there, carrying dist/ (the wheel is git-ignored):
  python3 -m pip install -q --no-index --no-deps --target /tmp/site dist/fa4-*.whl
  cd /tmp && PYTHONPATH=/tmp/site python3 /path/to/wheel-check.py

PYTHONPATH here only stands for the environment pip would install into;
the script refuses to run from the source tree's package.
"""

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBLEMS = [  # (Hq, Hkv, D, Dv, causal, lse)
    (32, 8, 128, 128, True, True),
    (16, 16, 64, 64, False, False),
    (8, 2, 192, 128, True, False),
]


def child(cache):
    """One process: every problem compiled (or loaded) and checked."""
    import torch

    import fa4
    import fa4.torch
    from fa4 import capi

    package = Path(fa4.__file__).resolve().parent
    library = capi._default_library_path().resolve()
    assert library == package / "_lib" / "libFA4CAPI.so", library
    assert "python/fa4" not in str(package), f"fa4 imported from the source tree: {package}"
    failures = 0
    for heads_q, heads_kv, head_dim, head_dim_v, causal, lse in PROBLEMS:
        torch.manual_seed(0)
        q = torch.randn(2, 1000, heads_q, head_dim, dtype=torch.bfloat16, device="cuda")
        k = torch.randn(2, 1200, heads_kv, head_dim, dtype=torch.bfloat16, device="cuda")
        v = torch.randn(2, 1200, heads_kv, head_dim_v, dtype=torch.bfloat16, device="cuda")
        start = time.perf_counter()
        result = fa4.torch.attention(q, k, v, causal=causal, return_lse=lse)
        torch.cuda.synchronize()
        first = time.perf_counter() - start
        out = result[0] if lse else result
        # float64 reference, bottom-right causal.
        qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
        group = heads_q // heads_kv
        kd, vd = (t.repeat_interleave(group, dim=1) for t in (kd, vd))
        scores = qd @ kd.transpose(-1, -2) / math.sqrt(head_dim)
        if causal:
            rows = torch.arange(1000, device="cuda")[:, None] + 1200 - 1000
            scores.masked_fill_(torch.arange(1200, device="cuda")[None, :] > rows,
                                float("-inf"))
        reference = (scores.softmax(-1) @ vd).transpose(1, 2)
        error = ((out.double() - reference).norm() / reference.norm()).item()
        ok = error < 4 * 2.0 ** -8 and not torch.isnan(out).any().item()
        failures += not ok
        print(f"{'ok' if ok else 'FAIL'}: Hq {heads_q} Hkv {heads_kv} D {head_dim} Dv "
              f"{head_dim_v} causal {causal} lse {lse}: first call {first:.2f} s "
              f"(compiled {fa4.torch.jit_cache().compiled}), O rel-err {error:.2e}", flush=True)
    return failures


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(1 if child(sys.argv[2]) else 0)
    env = {key: value for key, value in os.environ.items() if key != "FA4_CAPI_LIB"}
    with tempfile.TemporaryDirectory() as cache:
        env["FA4_CACHE_DIR"] = cache
        status = 0
        for label in ("compiling", "from the cache"):
            print(f"-- a process {label}", flush=True)
            status |= subprocess.run([sys.executable, __file__, "--child", cache],
                                     env=env).returncode
    sys.exit(status)


if __name__ == "__main__":
    main()
