# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-compile="arch=sm_100a emit-dir=%t" -o /dev/null > /dev/null
# RUN: sed 's/@gqa_causal/@interleaved/' %fa4_src_root/examples/attention.mlir > %t/interleaved.mlir
# RUN: fa4-opt %t/interleaved.mlir --fa4-compile="arch=sm_100a kv-interleave=2 q-stages=1 emit-dir=%t" -o /dev/null > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.torch's choice of sm_100a's interleaved softmax warpgroups, against
the stand-in torch and the fake libcuda, over a directory the compiler
wrote with two kernels of one problem (GQA 32/8, D 128, bf16, causal, LSE,
sm_100a): two Q stages (`gqa_causal`, 64 query rows per work tile) and
kv-interleave=2 (`interleaved`, one Q stage, 32 rows). A call whose
two-stage work tiles (batch x 8 head blocks x ceil(Sq / 64)) are fewer
than the device's SMs launches the interleaved kernel, one with as many or
more the two-stage kernel, on the eager fast path (its remembered plans
keep the two apart) and on the checked path. Then, over directories of
stand-in manifests each holding a two-stage kernel and an interleaved one
sorted after it: a few-tile sm_100a call takes the interleaved one (the
control), while sm_90a, FP8 and P as hi + lo never ask for it."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()
os.environ["FA4_JIT"] = "0"
torch.cuda.capability = (10, 0)
torch.cuda.sm_count = 148   # a B200

import fa4.torch  # noqa: E402
from fa4 import runtime  # noqa: E402

KERNELS = Path(sys.argv[1])
os.environ["FA4_KERNEL_DIR"] = str(KERNELS)
directory = runtime.KernelDirectory(KERNELS)
print(sorted((k.name, k.q_stages, k.kv_interleave, k.query_rows_per_cta) for k in directory))
# CHECK: [('gqa_causal_attention', 2, 1, 64), ('interleaved_attention', 1, 2, 32)]

fake = FakeCuda()
runtime.set_driver(fake)
kinds = {tuple(kind for _, kind, _ in k.params) for k in directory}
print("one parameter list:", len(kinds) == 1)
fake.kinds = list(next(iter(kinds)))
# CHECK-NEXT: one parameter list: True

# Every find the kernel choice makes: the kv_interleave it asks for.
asked = []
_find = runtime.KernelDirectory.find


def find(self, *args, **kwargs):
    asked.append(kwargs.get("kv_interleave"))
    return _find(self, *args, **kwargs)


runtime.KernelDirectory.find = find


def launched():
    """The last launch's kernel and grid."""
    return " ".join(fake.launches[-1].split(" ")[:3])


k, v = tensor((2, 700, 8, 128)), tensor((2, 700, 8, 128))
# 2 x 8 x ceil(300 / 64) = 80 tiles; 2 x 8 x ceil(1000 / 64) = 256.
small, large = tensor((2, 300, 32, 128)), tensor((2, 1000, 32, 128))

# The eager fast path, the two sizes in turn with every other argument equal.
for label, q in [("small", small), ("large", large), ("small", small), ("large", large)]:
    count = len(fake.launches)
    out, lse = fa4.torch.attention(q, k, v, causal=True, return_lse=True)
    print(f"eager {label}:", launched(), len(fake.launches) - count, out.shape, lse.shape)
print("plans:", len(fa4.torch._plans), "asked:", asked)
# The interleaved kernel's grid: min(2 x 8 x ceil(300 / 32), 148 SMs).
# CHECK-NEXT: eager small: interleaved_attention grid 148 1 (2, 300, 32, 128) (2, 32, 300)
# CHECK-NEXT: eager large: gqa_causal_attention grid 148 1 (2, 1000, 32, 128) (2, 32, 1000)
# CHECK-NEXT: eager small: interleaved_attention grid 148 1
# CHECK-NEXT: eager large: gqa_causal_attention grid 148 1
# CHECK-NEXT: plans: 2 asked: [None, 2]

# The checked path (a window given as a list is not the fast path's plain
# options) chooses the same.
for label, q in [("large", large), ("small", small)]:
    fa4.torch.attention(q, k, v, causal=True, return_lse=True, window=[-1, -1])
    print(f"checked {label}:", launched())
# CHECK-NEXT: checked large: gqa_causal_attention grid 148
# CHECK-NEXT: checked small: interleaved_attention grid 148

# The device's SM count (torch's device properties) decides: 80 tiles fill
# 80 SMs (two stages), not 81.
for sms in (80, 81):
    torch.cuda.sm_count = sms
    fa4.torch._plans.clear()
    fa4.torch.attention(small, k, v, causal=True, return_lse=True)
    print(f"{sms} SMs:", launched().split(" grid")[0])
torch.cuda.sm_count = 148
# CHECK-NEXT: 80 SMs: gqa_causal_attention
# CHECK-NEXT: 81 SMs: interleaved_attention

# p_precision 'single' (these kernels' own) still takes the variant.
fa4.torch._plans.clear()
fa4.torch.attention(small, k, v, causal=True, return_lse=True, p_precision="single")
print("single:", launched())
# CHECK-NEXT: single: interleaved_attention grid 148

# A directory without the interleaved kernel: the two-stage one, and the
# variant is not looked for again.
only_two = KERNELS / "only-two-stages"
only_two.mkdir()
for suffix in (".json", ".cubin"):
    name = f"gqa_causal_attention{suffix}"
    (only_two / name).write_bytes((KERNELS / name).read_bytes())
asked.clear()
for _ in range(2):
    fa4.torch.attention(small, k, v, causal=True, return_lse=True, window=[-1, -1],
                        kernel_dir=only_two)
    print("only two stages:", launched())
print("asked:", asked, "unavailable:", sum(key[0] == str(only_two) for key in fa4.torch._unavailable))
# CHECK-NEXT: only two stages: gqa_causal_attention grid 80
# CHECK-NEXT: only two stages: gqa_causal_attention grid 80
# CHECK-NEXT: asked: [None, 2] unavailable: 1

# Stand-in manifests: per case a two-stage kernel and an interleaved one
# (sorted after it) of one problem, GQA 4/2, D 64; a call of 2 x 4 x
# ceil(300 / 256) = 8 tiles.
fp8 = torch.float8_e4m3fn
CASES = [
    # label, arch, element, p_precision of both kernels, the call's p_precision
    ("sm_100a control", "sm_100a", "bf16", None, None),
    ("sm_90a", "sm_90a", "bf16", None, None),
    ("sm_100a fp8", "sm_100a", "e4m3", None, None),
    ("sm_100a hi_lo", "sm_100a", "bf16", "hi_lo", "hi_lo"),
    ("sm_100a hi_lo, None", "sm_100a", "bf16", "hi_lo", None),
]
for label, arch, element, precision, asked_precision in CASES:
    path = KERNELS / label.replace(" ", "_").replace(",", "")
    path.mkdir()
    torch_standin.write_kernel(path, "a_two_stages", element, 4, 2, False, False, arch=arch,
                               q_stages=2, p_precision=precision)
    torch_standin.write_kernel(path, "b_interleaved", element, 4, 2, False, False, arch=arch,
                               q_stages=1, kv_interleave=2, query_rows=128,
                               p_precision=precision)
    kernel = runtime.KernelDirectory(path).find(element, 4, 2, 64, arch=arch)
    # A fresh driver (it remembers the device's capability and SMs).
    fake = FakeCuda()
    runtime.set_driver(fake)
    fake.kinds = [kind for _, kind, _ in kernel.params]
    torch.cuda.capability = fake.capability = (10, 0) if arch == "sm_100a" else (9, 0)
    torch.cuda.sm_count = fake.sm_count = 148 if arch == "sm_100a" else 132
    dtype = fp8 if element == "e4m3" else torch.bfloat16
    q, kk = tensor((2, 300, 4, 64), dtype), tensor((2, 500, 2, 64), dtype)
    # FP8 kernels read V key-major.
    vv = (tensor((2, 2, 64, 500), dtype).permute(0, 3, 1, 2) if element == "e4m3"
          else tensor((2, 500, 2, 64), dtype))
    asked.clear()
    fa4.torch.attention(q, kk, vv, kernel_dir=str(path), p_precision=asked_precision)
    print(f"{label}:", launched().split(" grid")[0], "asked:", asked)
# CHECK-NEXT: sm_100a control: b_interleaved asked: [None, 2]
# CHECK-NEXT: sm_90a: a_two_stages asked: [None]
# CHECK-NEXT: sm_100a fp8: a_two_stages asked: [None]
# CHECK-NEXT: sm_100a hi_lo: a_two_stages asked: [None]
# CHECK-NEXT: sm_100a hi_lo, None: a_two_stages asked: [None]
runtime.set_driver(None)
