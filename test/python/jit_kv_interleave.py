# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit's kv_interleave: 2 compiles sm_100a's interleaved softmax
warpgroups through libFA4CAPI.so (fa4-compile's kv-interleave=2
q-stages=1), a problem of its own, its kernel named ..._q1_kvi2 and its
manifest's plan saying kvInterleave = 2 with one Q stage; the default
problem's key is unchanged; sm_90a, values other than None, 1 and 2, and
the combinations the plan verifier refuses are refused before compiling.
Then fa4.torch (the stand-in torch and the fake libcuda, no kernel
directory) compiling the interleaved variant for a few-tile sm_100a call
but not for a large one, a call asking for splits or an sm_90a device."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()

from fa4 import jit, runtime  # noqa: E402

root = Path(sys.argv[1])
os.environ["FA4_CACHE_DIR"] = str(root / "cache")
os.environ.pop("FA4_KERNEL_DIR", None)
cache = jit.KernelCache()
problem = dict(causal=True, arch="sm_100a")
interleaved = cache.kernel("bf16", 4, 2, 64, kv_interleave=2, **problem)
default = cache.kernel("bf16", 4, 2, 64, **problem)
print("compiled", cache.compiled, "with q_stages=1 the same:",
      cache.kernel("bf16", 4, 2, 64, kv_interleave=2, q_stages=1, **problem) is interleaved,
      "compiled", cache.compiled)
# CHECK: compiled 2 with q_stages=1 the same: True compiled 2


def describe(kernel):
    plan = kernel.manifest.get("plan", "")
    entry = Path(kernel.source).parent
    written = json.loads((entry / "problem.json").read_text())
    return (f"{kernel.name} kv_interleave {kernel.kv_interleave} q_stages {kernel.q_stages} "
            f"plan says {'kvInterleave = 2' in plan} problem {written.get('kv_interleave')} "
            f"{written.get('q_stages')}")


print(describe(interleaved))
print(describe(default))
print("entries apart:", Path(interleaved.source).parent != Path(default.source).parent)
# CHECK-NEXT: bf16_d64_h4x2_causal_q1_kvi2_attention kv_interleave 2 q_stages 1 plan says True problem 2 1
# CHECK-NEXT: bf16_d64_h4x2_causal_attention kv_interleave 1 q_stages 2 plan says False problem None None
# CHECK-NEXT: entries apart: True

# The default problem's key is unchanged (kv_interleave is in the problem
# only where set).
plain = dict(dtype="bf16", heads_q=4, heads_kv=2, head_dim=64, causal=True, lse=False,
             arch="sm_100a", window=[-1, 0], softcap=False, sink=False)
print("keys:", cache.key(plain) == Path(default.source).parent.name,
      cache.key(dict(plain, q_stages=1, kv_interleave=2))
      == Path(interleaved.source).parent.name)
# CHECK-NEXT: keys: True True

# 1 fixes no interleave (fa4-compile's kv-interleave=1): on sm_100a a
# problem of its own; on sm_90a, which never interleaves, the default one.
fixed = cache.kernel("bf16", 4, 2, 64, kv_interleave=1, **problem)
hopper = cache.kernel("bf16", 4, 2, 64, causal=True, arch="sm_90a")
print(describe(fixed), "| sm_90a 1 is the default:",
      cache.kernel("bf16", 4, 2, 64, causal=True, arch="sm_90a", kv_interleave=1) is hopper,
      "compiled", cache.compiled)
# CHECK-NEXT: bf16_d64_h4x2_causal_kvi1_attention kv_interleave 1 q_stages 2 plan says False problem 1 None | sm_90a 1 is the default: True compiled 4

for label, call in [
        ("sm_90a", lambda: cache.kernel("bf16", 4, 2, 64, causal=True, arch="sm_90a",
                                        kv_interleave=2)),
        ("3", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=3, **problem)),
        ("0", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=0, **problem)),
        ("'2'", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave="2", **problem)),
        ("True", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=True, **problem)),
        ("q_stages 2", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=2, q_stages=2,
                                            **problem)),
        ("kv_splits 2", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=2, kv_splits=2,
                                             **problem)),
        ("hi_lo", lambda: cache.kernel("bf16", 4, 2, 64, kv_interleave=2,
                                       p_precision="hi_lo", **problem))]:
    try:
        call()
        print(f"{label}: compiled")
    except ValueError as err:
        print(f"{label}: ValueError: {err}")
print("compiled", cache.compiled)
# CHECK-NEXT: sm_90a: ValueError: kv_interleave=2 interleaves sm_100a's softmax warpgroups; sm_90a has none to interleave
# CHECK-NEXT: 3: ValueError: kv_interleave must be 1 or 2 (or None: the planner's choice), got 3
# CHECK-NEXT: 0: ValueError: kv_interleave must be 1 or 2 (or None: the planner's choice), got 0
# CHECK-NEXT: '2': ValueError: kv_interleave must be 1 or 2 (or None: the planner's choice), got '2'
# CHECK-NEXT: True: ValueError: kv_interleave must be 1 or 2 (or None: the planner's choice), got True
# CHECK-NEXT: q_stages 2: ValueError: kv_interleave=2 shares one Q tile between the softmax warpgroups: q_stages must be 1 or None, got 2
# CHECK-NEXT: kv_splits 2: ValueError: kv_interleave=2 does not combine with kv_splits=2
# CHECK-NEXT: hi_lo: ValueError: kv_interleave=2 does not combine with p_precision 'hi_lo'
# CHECK-NEXT: compiled 4

# fa4.torch without a kernel directory on an sm_100a stand-in device (148
# SMs): GQA 4/2 at D 64 packs both query heads of a KV head into a tile,
# 2 head blocks of 128 query rows per two-stage tile.
import fa4.torch  # noqa: E402
torch.cuda.capability, torch.cuda.sm_count = (10, 0), 148
fake = FakeCuda()
runtime.set_driver(fake)


def launched():
    return fake.launches[-1].split(" grid")[0]


k = tensor((2, 500, 2, 64))
# (The launches' parameters are not decoded: fake.kinds stays empty.)
# 2 x 2 x ceil(300 / 128) = 12 tiles; 64 x 2 x ceil(2000 / 128) = 2048.
for label, q, kk in [("small", tensor((2, 300, 4, 64)), k),
                     ("large", tensor((64, 2000, 4, 64)), tensor((64, 500, 2, 64)))]:
    fa4.torch.attention(q, kk, kk, causal=True)
    print(f"torch {label}:", launched())
# CHECK-NEXT: torch small: bf16_d64_h4x2_causal_q1_kvi2_attention
# CHECK-NEXT: torch large: bf16_d64_h4x2_causal_attention

# A paged KV cache decoding 2 sequences: a split asked for takes the split
# kernel, never the interleaved one; no split (asked for, or the rule's for
# this short cache) the interleaved one.
q, pages = tensor((2, 1, 4, 64)), tensor((10, 128, 2, 64))
lengths, table = tensor((2,), torch.int32), tensor((2, 5), torch.int32)
for splits in (2, 1, 0):
    try:
        fa4.torch.attention_with_kvcache(q, pages, pages, lengths, table, causal=True,
                                         num_splits=splits)
        print(f"kvcache num_splits={splits}:", launched())
    except (LookupError, RuntimeError, ValueError) as err:
        print(f"kvcache num_splits={splits}: {type(err).__name__}: {err}")
# CHECK-NEXT: kvcache num_splits=2: bf16_d64_h4x2_causal_seqused_paged128_split2_attention
# CHECK-NEXT: kvcache num_splits=1: bf16_d64_h4x2_causal_seqused_paged128_q1_kvi2_attention
# CHECK-NEXT: kvcache num_splits=0: bf16_d64_h4x2_causal_seqused_paged128_q1_kvi2_attention

# An sm_90a device: the few-tile call compiles no interleaved kernel. (The
# stand-in device changes arch: the choices made for cuda:0 are forgotten.)
torch.cuda.capability, torch.cuda.sm_count = (9, 0), 132
fa4.torch._plans.clear()
fa4.torch._chosen.clear()
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fa4.torch.attention(tensor((2, 300, 4, 64)), k, k, causal=True)
print("sm_90a small:", launched())
# CHECK-NEXT: sm_90a small: bf16_d64_h4x2_causal_attention
print("compiled for fa4.torch:", sorted((k.arch, k.name, k.kv_interleave)
                                        for k in fa4.torch.jit_cache()._kernels.values()))
# CHECK-NEXT: compiled for fa4.torch: [('sm_100a', 'bf16_d64_h4x2_causal_attention', 1), ('sm_100a', 'bf16_d64_h4x2_causal_q1_kvi2_attention', 2), ('sm_100a', 'bf16_d64_h4x2_causal_seqused_paged128_attention', 1), ('sm_100a', 'bf16_d64_h4x2_causal_seqused_paged128_q1_kvi2_attention', 2), ('sm_100a', 'bf16_d64_h4x2_causal_seqused_paged128_split2_attention', 1), ('sm_90a', 'bf16_d64_h4x2_causal_attention', 1)]
runtime.set_driver(None)
