# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit: kernels compiled on demand through libFA4CAPI.so into a cache
directory: keys, reuse across caches, processes compiling the same problem
at once, and the errors of a refused problem or a missing compiler."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from fa4 import MLIRError, capi, jit

root = Path(sys.argv[1])
cache = jit.KernelCache(root / "cache")
problem = dict(dtype="f16", heads_q=4, heads_kv=2, head_dim=64, causal=False, lse=True,
               arch="sm_90a", window=[100, 7], softcap=True, sink=True)
print("key stable:", cache.key(problem) == jit.KernelCache(root / "other").key(problem),
      "heads matter:", cache.key(problem) != cache.key(dict(problem, heads_q=8)))
# Another build of the compiler (other bytes) keys other entries.
copy = root / "libFA4CAPI-copy.so"
copy.write_bytes(capi._default_library_path().read_bytes() + b"\0")
print("compiler matters:", cache.key(problem) != jit.KernelCache(library=copy).key(problem))
# CHECK: key stable: True heads matter: True
# CHECK-NEXT: compiler matters: True

kernel = cache.kernel("f16", 4, 2, 64, lse=True, arch="sm_90a", window=(100, 7), softcap=True,
                      sink=True)
entry = root / "cache" / cache.key(problem)
print(kernel.name, kernel.arch, kernel.window, bool(kernel.softcap), kernel.sink, kernel.lse,
      "compiled", cache.compiled, "in", "seconds" if cache.last_compile_seconds > 0 else "?")
print("entry:", sorted(p.suffix for p in entry.iterdir()))
# CHECK-NEXT: f16_d64_h4x2_window100x7_softcap1_sink_lse_attention sm_90a (100, 7) True True True compiled 1 in seconds
# CHECK-NEXT: entry: ['.cubin', '.json', '.json', '.ptx']

# The same object answers from memory, another from the directory.
again = jit.KernelCache(root / "cache")
print("reuse:", cache.kernel("f16", 4, 2, 64, lse=True, arch="sm_90a", window=(100, 7),
                             softcap=True, sink=True) is kernel,
      again.kernel("f16", 4, 2, 64, lse=True, arch="sm_90a", window=(100, 7), softcap=True,
                   sink=True).name == kernel.name, "compiled", cache.compiled, again.compiled)
# CHECK-NEXT: reuse: True True compiled 1 0

# Packed sequences: a problem of its own (the dense problem's key and entry
# are unchanged), compiled with the tables and LSE [Hq, Tq].
packed = cache.kernel("bf16", 8, 2, 64, causal=True, lse=True, arch="sm_90a", varlen=True,
                      seqused_k=True)
print(packed.name, packed.varlen, packed.seqused_k, packed.operands["lse"][1],
      "compiled", cache.compiled)
# CHECK-NEXT: bf16_d64_h8x2_causal_varlen_seqused_lse_attention True True (8, -1) compiled 2

# V with its own head dim (Dqk 192, Dv 128): a problem of its own, V and O
# [.., 128] in the manifest, the scale 1/sqrt(Dqk); Dv equal to Dqk is the
# plain problem's key.
wide = cache.kernel("bf16", 4, 4, 192, causal=True, lse=True, arch="sm_100a", head_dim_v=128)
print(wide.name, wide.head_dim, wide.head_dim_v, wide.operands["output"][1],
      "compiled", cache.compiled)
plain = dict(dtype="bf16", heads_q=4, heads_kv=4, head_dim=64, causal=False, lse=False)
print("dv keys:", cache.key(dict(plain, head_dim_v=128)) != cache.key(plain))
# CHECK-NEXT: bf16_d192v128_h4x4_causal_lse_attention 192 128 (-1, -1, 4, 128) compiled 3
# CHECK-NEXT: dv keys: True

# Q stages as asked (sm_90a decode): a problem of its own, the plan's
# qStages in the manifest; 1 to 3 on sm_90a, 1 or 2 on sm_100a.
single = cache.kernel("bf16", 8, 2, 64, causal=True, arch="sm_90a", q_stages=1)
print(single.name, single.q_stages, single.query_rows_per_cta, "compiled", cache.compiled)
for arch, stages in (("sm_90a", 4), ("sm_100a", 3)):
    try:
        cache.kernel("bf16", 8, 2, 64, causal=True, arch=arch, q_stages=stages)
    except ValueError as err:
        print(f"q_stages {stages}:", err)
# CHECK-NEXT: bf16_d64_h8x2_causal_q1_attention 1 16 compiled 4
# CHECK-NEXT: q_stages 4: q_stages must be 1, 2 or 3 on sm_90a (or None: the planner's choice), got 4
# CHECK-NEXT: q_stages 3: q_stages must be 1 or 2 on sm_100a (or None: the planner's choice), got 3

# Processes that compile one problem at once: each gets the kernel, one
# entry stays, no staging directory is left.
script = ("import sys; from fa4 import jit; "
          "k = jit.KernelCache(sys.argv[1]).kernel('bf16', 2, 1, 64, causal=True, "
          "arch='sm_100a'); print(k.name)")
shared = root / "shared"
procs = [subprocess.Popen([sys.executable, "-c", script, str(shared)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) for _ in range(3)]
results = [p.communicate() for p in procs]
print("concurrent:", [out.strip() for out, _ in results], [p.returncode for p in procs],
      "entries", len(list(shared.iterdir())))
# CHECK-NEXT: concurrent: ['bf16_d64_h2x1_causal_attention', 'bf16_d64_h2x1_causal_attention', 'bf16_d64_h2x1_causal_attention'] [0, 0, 0] entries 1

# A problem the compiler refuses, and no compiler.
try:
    cache.kernel("bf16", 4, 4, 512, arch="sm_100a")
except MLIRError as err:
    print("refused:", err.diagnostics[0].split(": error: ")[-1])
try:
    jit.KernelCache(root / "none", library=root / "missing.so").kernel("bf16", 4, 4, 64)
except RuntimeError as err:
    print("no compiler:", str(err).replace(str(root), "ROOT"))
# CHECK-NEXT: refused: {{.*}}head dim 512 is not supported on sm_100a
# CHECK-NEXT: no compiler: fa4 cannot compile kernels on demand: no C API library at ROOT/missing.so (set FA4_CAPI_LIB): No such file or directory
