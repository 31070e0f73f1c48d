# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit's p_precision: 'hi_lo' compiles a problem of its own through
libFA4CAPI.so (fa4-compile's p-precision=hi_lo), its entry apart from the
default one, its kernel named ..._hilo and its manifest's plan saying
pPrecision = hi_lo; 'single' is the default's entry; other values and
'hi_lo' with FP8 are refused before compiling. Then fa4.torch (the
stand-in torch and the fake libcuda) compiling the kernel of the precision
asked for on first use, and a one-Q-stage decode variant keeping the
precision of the directory's kernel it replaces."""

import json
import os
import re
import shutil
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
# A paged KV cache decoding on sm_90a.
problem = dict(causal=True, arch="sm_90a", seqused_k=True, page_size=128)
hilo = cache.kernel("bf16", 4, 2, 64, p_precision="hi_lo", **problem)
single = cache.kernel("bf16", 4, 2, 64, p_precision="single", **problem)
print("compiled", cache.compiled, "default is single:",
      cache.kernel("bf16", 4, 2, 64, **problem) is single, "compiled", cache.compiled)
# CHECK: compiled 2 default is single: True compiled 2


def describe(kernel):
    plan = re.search(r"pPrecision = \w+", kernel.manifest.get("plan", ""))
    entry = Path(kernel.source).parent
    written = json.loads((entry / "problem.json").read_text())
    return (f"{kernel.name} {kernel.p_precision} plan {plan.group(0) if plan else None} "
            f"entry {entry.name} problem {written.get('p_precision')}")


print(describe(hilo))
print(describe(single))
print("entries apart:", Path(hilo.source).parent != Path(single.source).parent)
# CHECK-NEXT: bf16_d64_h4x2_causal_seqused_paged128_hilo_attention hi_lo plan pPrecision = hi_lo entry [[HILO:[0-9a-f]+]] problem hi_lo
# CHECK-NEXT: bf16_d64_h4x2_causal_seqused_paged128_attention single plan None entry [[SINGLE:[0-9a-f]+]] problem None
# CHECK-NEXT: entries apart: True

# The default problem's key is unchanged (p_precision is in the problem
# only where it is 'hi_lo').
plain = dict(dtype="bf16", heads_q=4, heads_kv=2, head_dim=64, causal=True, lse=False,
             arch="sm_90a", window=[-1, 0], softcap=False, sink=False, seqused_k=True,
             page_size=128)
print("keys:", cache.key(plain) == Path(single.source).parent.name,
      cache.key(dict(plain, p_precision="hi_lo")) == Path(hilo.source).parent.name)
# CHECK-NEXT: keys: True True

for label, call in [
        ("'double'", lambda: cache.kernel("bf16", 4, 2, 64, p_precision="double", **problem)),
        ("True", lambda: cache.kernel("bf16", 4, 2, 64, p_precision=True, **problem)),
        ("e4m3 hi_lo", lambda: cache.kernel("e4m3", 4, 2, 64, causal=True, arch="sm_90a",
                                            p_precision="hi_lo"))]:
    try:
        call()
        print(f"{label}: compiled")
    except ValueError as err:
        print(f"{label}: ValueError: {err}")
print("compiled", cache.compiled)
# CHECK-NEXT: 'double': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'double'
# CHECK-NEXT: True: ValueError: p_precision must be 'single', 'hi_lo' or None, got True
# CHECK-NEXT: e4m3 hi_lo: ValueError: p_precision 'hi_lo' takes P in two 16-bit parts: e4m3 inputs have one 8-bit P
# CHECK-NEXT: compiled 2

# fa4.torch without a kernel directory (an sm_90a stand-in device): each
# precision's kernel, for a decode query the one-Q-stage variant of it.
import fa4.torch  # noqa: E402
torch.cuda.capability = (9, 0)
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in hilo.params]
q, pages = tensor((2, 1, 4, 64)), tensor((10, 128, 2, 64))
lengths, table = tensor((2,), torch.int32), tensor((2, 5), torch.int32)
print("two stages:", hilo.q_stages, single.q_stages)
for precision in ("hi_lo", None, "single", "hi_lo"):
    fa4.torch.attention_with_kvcache(q, pages, pages, lengths, table, causal=True,
                                     num_splits=1, p_precision=precision)
    print(f"jit {precision}:", fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: two stages: 2 2
# CHECK-NEXT: jit hi_lo: bf16_d64_h4x2_causal_seqused_paged128_q1_hilo_attention
# CHECK-NEXT: jit None: bf16_d64_h4x2_causal_seqused_paged128_q1_attention
# CHECK-NEXT: jit single: bf16_d64_h4x2_causal_seqused_paged128_q1_attention
# CHECK-NEXT: jit hi_lo: bf16_d64_h4x2_causal_seqused_paged128_q1_hilo_attention
print("compiled for fa4.torch:", sorted((k.name, k.p_precision)
                                        for k in fa4.torch.jit_cache()._kernels.values()),
      fa4.torch.jit_cache().compiled)
# CHECK-NEXT: compiled for fa4.torch: [('bf16_d64_h4x2_causal_seqused_paged128_attention', 'single'), ('bf16_d64_h4x2_causal_seqused_paged128_hilo_attention', 'hi_lo'), ('bf16_d64_h4x2_causal_seqused_paged128_q1_attention', 'single'), ('bf16_d64_h4x2_causal_seqused_paged128_q1_hilo_attention', 'hi_lo')] 2

# A directory holding only the hi_lo kernel (two Q stages): with
# p_precision None it is the problem's kernel, and the decode variant
# compiled for it is hi_lo too, not the default precision's.
only_hilo = root / "only-hilo"
only_hilo.mkdir()
for file in Path(hilo.source).parent.iterdir():
    if file.name != "problem.json":
        shutil.copy(file, only_hilo / file.name)
fa4.torch.attention_with_kvcache(q, pages, pages, lengths, table, causal=True, num_splits=1,
                                 kernel_dir=only_hilo)
print("directory's hi_lo, None:", fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: directory's hi_lo, None: bf16_d64_h4x2_causal_seqused_paged128_q1_hilo_attention
runtime.set_driver(None)
