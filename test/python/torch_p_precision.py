# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/attention.mlir --fa4-compile="arch=sm_90a emit-dir=%t" -o /dev/null > /dev/null
# RUN: sed 's/@gqa_causal/@hilo/' %fa4_src_root/examples/attention.mlir > %t/hilo.mlir
# RUN: fa4-opt %t/hilo.mlir --fa4-compile="arch=sm_90a p-precision=hi_lo emit-dir=%t" -o /dev/null > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.torch's p_precision against the stand-in torch and the fake libcuda,
over a directory the compiler wrote with two kernels of one problem (GQA
32/8, D 128, bf16, causal, LSE, sm_90a): P rounded once (`gqa_causal`) and
P as hi + lo (`hilo`, fa4-compile's p-precision=hi_lo). 'hi_lo' launches
the hi_lo kernel and 'single' the single one, on the eager fast path (whose
remembered plans never hand one precision's call the other's kernel) and
on the checked path; None takes the directory's first; the precision
reaches the kernel choice of attention_with_kvcache and attention_varlen;
values other than None, 'single' and 'hi_lo', and 'hi_lo' with FP8
inputs, are refused."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()
os.environ["FA4_JIT"] = "0"
# An H100: the kernels are sm_90a's.
torch.cuda.capability = (9, 0)

import fa4.torch  # noqa: E402
from fa4 import runtime  # noqa: E402

KERNELS = Path(sys.argv[1])
os.environ["FA4_KERNEL_DIR"] = str(KERNELS)
directory = runtime.KernelDirectory(KERNELS)
print(sorted((k.name, k.p_precision) for k in directory))
# CHECK: [('gqa_causal_attention', 'single'), ('hilo_attention', 'hi_lo')]

fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
# Both kernels take the same parameters (four maps, batch, seq_q, seq_kv,
# the scale, LSE).
kinds = {tuple(kind for _, kind, _ in k.params) for k in directory}
print("one parameter list:", len(kinds) == 1)
fake.kinds = list(next(iter(kinds)))
# CHECK-NEXT: one parameter list: True


def launched():
    """The last launch's kernel."""
    return fake.launches[-1].split(" grid")[0]


# Equal tensors for every call (a prefill: 300 query rows, so that no
# one-Q-stage decode variant is looked for).
q, k, v = tensor((2, 300, 32, 128)), tensor((2, 700, 8, 128)), tensor((2, 700, 8, 128))

# The eager fast path, in sequence: each call's plan is its precision's.
for precision in ("hi_lo", "single", "hi_lo", None, "single", "hi_lo"):
    count = len(fake.launches)
    out, lse = fa4.torch.attention(q, k, v, causal=True, return_lse=True,
                                   p_precision=precision)
    print(f"eager {precision}:", launched(), len(fake.launches) - count, out.shape, lse.shape)
print("plans:", len(fa4.torch._plans))
# CHECK-NEXT: eager hi_lo: hilo_attention 1 (2, 300, 32, 128) (2, 32, 300)
# CHECK-NEXT: eager single: gqa_causal_attention 1 (2, 300, 32, 128) (2, 32, 300)
# CHECK-NEXT: eager hi_lo: hilo_attention 1
# CHECK-NEXT: eager None: gqa_causal_attention 1
# CHECK-NEXT: eager single: gqa_causal_attention 1
# CHECK-NEXT: eager hi_lo: hilo_attention 1
# CHECK-NEXT: plans: 3

# The checked path (a window given as a list is not the fast path's plain
# options), and attention_with_kvcache without tables (attention).
for precision in ("single", "hi_lo"):
    fa4.torch.attention(q, k, v, causal=True, return_lse=True, window=[-1, -1],
                        p_precision=precision)
    print(f"checked {precision}:", launched())
    fa4.torch.attention_with_kvcache(q, k, v, causal=True, return_lse=True,
                                     p_precision=precision)
    print(f"kvcache without tables {precision}:", launched())
print("plans:", len(fa4.torch._plans))
# CHECK-NEXT: checked single: gqa_causal_attention
# CHECK-NEXT: kvcache without tables single: gqa_causal_attention
# CHECK-NEXT: checked hi_lo: hilo_attention
# CHECK-NEXT: kvcache without tables hi_lo: hilo_attention
# CHECK-NEXT: plans: 3

# The precision reaches the kernel choice of a KV cache and of packed
# sequences (this directory has neither kernel: the lookup says what it
# looked for).
lengths = tensor((2,), torch.int32)
cu_q, cu_k = tensor((3,), torch.int32), tensor((3,), torch.int32)
for label, call in [
        ("kvcache", lambda: fa4.torch.attention_with_kvcache(
            q, k, v, cache_seqlens=lengths, causal=True, return_lse=True,
            p_precision="hi_lo")),
        ("varlen", lambda: fa4.torch.attention_varlen(
            tensor((600, 32, 128)), tensor((1400, 8, 128)), tensor((1400, 8, 128)), cu_q,
            cu_k, causal=True, return_lse=True, p_precision="hi_lo"))]:
    try:
        call()
        print(f"{label}: launched {launched()}")
    except LookupError as err:
        first = str(err).splitlines()[0]
        print(f"{label}: LookupError", "p_precision=hi_lo;" in first,
              "varlen=True" in first, "seqused_k=True" in first)
# CHECK-NEXT: kvcache: LookupError True False True
# CHECK-NEXT: varlen: LookupError True True False

# Values other than None, 'single' and 'hi_lo' are refused before any
# kernel is looked for, on every entry point and path.
count = len(fake.launches)
for label, call in [
        ("attention 'bf16'", lambda: fa4.torch.attention(q, k, v, p_precision="bf16")),
        ("attention 'HI_LO'", lambda: fa4.torch.attention(q, k, v, p_precision="HI_LO")),
        ("attention 1", lambda: fa4.torch.attention(q, k, v, p_precision=1)),
        ("attention True", lambda: fa4.torch.attention(q, k, v, p_precision=True)),
        ("attention list", lambda: fa4.torch.attention(q, k, v, p_precision=["hi_lo"])),
        ("checked 'double'", lambda: fa4.torch.attention(q, k, v, window=[-1, -1],
                                                        p_precision="double")),
        ("kvcache 'hi-lo'", lambda: fa4.torch.attention_with_kvcache(
            q, k, v, cache_seqlens=lengths, p_precision="hi-lo")),
        ("varlen 'lo'", lambda: fa4.torch.attention_varlen(
            tensor((600, 32, 128)), tensor((1400, 8, 128)), tensor((1400, 8, 128)), cu_q,
            cu_k, p_precision="lo"))]:
    try:
        call()
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: ValueError: {err}")
print("launched:", len(fake.launches) - count)
# CHECK-NEXT: attention 'bf16': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'bf16'
# CHECK-NEXT: attention 'HI_LO': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'HI_LO'
# CHECK-NEXT: attention 1: ValueError: p_precision must be 'single', 'hi_lo' or None, got 1
# CHECK-NEXT: attention True: ValueError: p_precision must be 'single', 'hi_lo' or None, got True
# CHECK-NEXT: attention list: ValueError: p_precision must be 'single', 'hi_lo' or None, got ['hi_lo']
# CHECK-NEXT: checked 'double': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'double'
# CHECK-NEXT: kvcache 'hi-lo': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'hi-lo'
# CHECK-NEXT: varlen 'lo': ValueError: p_precision must be 'single', 'hi_lo' or None, got 'lo'
# CHECK-NEXT: launched: 0

# FP8 inputs: 'hi_lo' is refused (the compiler takes P in two 16-bit parts
# only for 16-bit inputs); 'single' passes the check (and finds no FP8
# kernel here).
fp8 = torch.float8_e4m3fn
q8, k8 = tensor((2, 300, 32, 128), fp8), tensor((2, 700, 8, 128), fp8)
v8 = tensor((2, 8, 128, 700), fp8).permute(0, 3, 1, 2)
for precision in ("hi_lo", "single"):
    try:
        fa4.torch.attention(q8, k8, v8, causal=True, p_precision=precision)
        print(f"fp8 {precision}: launched {launched()}")
    except (ValueError, LookupError) as err:
        print(f"fp8 {precision}: {type(err).__name__}: {str(err).splitlines()[0][:100]}")
# CHECK-NEXT: fp8 hi_lo: ValueError: p_precision='hi_lo' takes P in two 16-bit parts, for 16-bit inputs; q is torch.float8_e4m3fn
# CHECK-NEXT: fp8 single: LookupError: no fa4 kernel in {{.*}} for dtype=e4m3

# Without the kernel of the precision asked for, none other is taken.
only_single = KERNELS / "only-single"
only_single.mkdir()
for suffix in (".json", ".cubin"):
    name = f"gqa_causal_attention{suffix}"
    (only_single / name).write_bytes((KERNELS / name).read_bytes())
try:
    fa4.torch.attention(q, k, v, causal=True, return_lse=True, kernel_dir=only_single,
                        p_precision="hi_lo")
    print("only single, hi_lo: launched", launched())
except LookupError as err:
    print("only single, hi_lo:", str(err).splitlines()[1])
fa4.torch.attention(q, k, v, causal=True, return_lse=True, kernel_dir=only_single)
print("only single, None:", launched())
# CHECK-NEXT: only single, hi_lo:   gqa_causal_attention (gqa_causal_attention.json): p_precision is single, not hi_lo
# CHECK-NEXT: only single, None: gqa_causal_attention
runtime.set_driver(None)
