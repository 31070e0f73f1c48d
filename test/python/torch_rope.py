# RUN: %python %s | FileCheck %s
"""fa4.torch's rotary embedding arguments (rope_cos_sin, rope_positions,
rope_start, rope_output) against the stand-in torch and the fake libcuda:
attention, attention_with_kvcache and flash_attn_with_kvcache choose the
kernel of the rope (never a plain one for a rope call, nor a rope kernel
for a plain call, nor another rope), the table's and the positions'
pointers and P among the parameters, a strided table copied, the repeated
eager call, the checked path, the call that launches nothing, and every
check of the arguments."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import Device, FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()
os.environ["FA4_JIT"] = "0"

import fa4  # noqa: E402
from fa4 import flash_attn_with_kvcache, runtime  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-torch-rope-"))
atexit.register(shutil.rmtree, TMP, True)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
torch.cuda.capability = (9, 0)
hopper = dict(arch="sm_90a", query_rows=64)
torch_standin.write_kernel(TMP, "plain", "bf16", 4, 2, True, False, **hopper)
torch_standin.write_kernel(TMP, "rope", "bf16", 4, 2, True, False, rope=(0, 64, False),
                           **hopper)
torch_standin.write_kernel(TMP, "rope_out", "bf16", 4, 2, True, False, rope=(32, 32, True),
                           **hopper)
torch_standin.write_kernel(TMP, "rope_paged", "bf16", 4, 2, True, True, seqused_k=True,
                           page_size=256, rope=(0, 64, False), **hopper)
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
directory = runtime.KernelDirectory(TMP)


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


def launched():
    return fake.launches[-1].split(" grid")[0]


def rope_params():
    """The last three parameters: the table, P, the positions."""
    return fake.launches[-1].split(", ")[-3:]


q, k = tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64))
table, positions = tensor((4096, 64), torch.float32), tensor((2, 300), torch.int32)
expect("rope")
out = fa4.torch.attention(q, k, k, causal=True, rope_cos_sin=table, rope_positions=positions)
print("rope:", launched(), out.shape, rope_params(),
      rope_params() == [f"'{table.data_ptr():#x}'", "4096",
                        f"'{positions.data_ptr():#x}']"])
expect("plain")
fa4.torch.attention(q, k, k, causal=True)
print("without rope:", launched())
# CHECK: rope: rope (2, 300, 4, 64) ["'{{0x[0-9a-f]+}}'", '4096', "'{{0x[0-9a-f]+}}']"] True
# CHECK-NEXT: without rope: plain

# rope_start and rope_output choose too; R is the table's columns.
expect("rope_out")
fa4.torch.attention(q, k, k, causal=True, rope_cos_sin=tensor((100, 32), torch.float32),
                    rope_positions=positions, rope_start=32, rope_output=True)
print("start 32, output:", launched(), rope_params()[1])
# CHECK-NEXT: start 32, output: rope_out 100

# The checked path (options of other types: the op's kernel with the rope
# arguments after the FP8 ones) launches the same.
expect("rope")
fa4.torch.attention(q, k, k, causal=True, window=[-1, 0], rope_cos_sin=table,
                    rope_positions=positions)
print("checked path:", launched(), rope_params()[1])
# CHECK-NEXT: checked path: rope 4096

# A table or positions that are not contiguous are copied.
expect("rope")
strided_table = tensor((4096, 64), torch.float32, strides=(128, 1))
strided_positions = tensor((2, 300), torch.int32, strides=(1, 2))
fa4.torch.attention(q, k, k, causal=True, rope_cos_sin=strided_table,
                    rope_positions=strided_positions)
print("copied:", f"{strided_table.data_ptr():#x}" not in fake.launches[-1],
      f"{strided_positions.data_ptr():#x}" not in fake.launches[-1])
# CHECK-NEXT: copied: True True

# Decoding against a paged cache: the tables, then the rope's.
expect("rope_paged")
q4, pages = tensor((3, 4, 4, 64)), tensor((40, 256, 2, 64))
lengths, page_table = tensor((3,), torch.int32), tensor((3, 9), torch.int32)
steps = tensor((3, 4), torch.int32)
out, lse = fa4.torch.attention_with_kvcache(q4, pages, pages, cache_seqlens=lengths,
                                            page_table=page_table, causal=True,
                                            return_lse=True, rope_cos_sin=table,
                                            rope_positions=steps)
print("kvcache:", launched(), lse.shape, fake.launches[-1].split(", ")[-6:-3], rope_params())
expect("rope_paged")
fa4.flash_attn_with_kvcache(q4, pages, pages, cache_seqlens=lengths, block_table=page_table,
                            causal=True, return_softmax_lse=True, rope_cos_sin=table,
                            rope_positions=steps)
print("flash_attn_with_kvcache:", launched(), rope_params()[1])
# CHECK-NEXT: kvcache: rope_paged (3, 4, 4) ["'{{0x[0-9a-f]+}}'", "'{{0x[0-9a-f]+}}'", '9'] ["'{{0x[0-9a-f]+}}'", '4096', "'{{0x[0-9a-f]+}}']"]
# CHECK-NEXT: flash_attn_with_kvcache: rope_paged 4096

# A repeated call: one cuCtxGetCurrent and one cuLaunchKernelEx; other
# positions launch anew with the same plan.
torch_standin.caching_allocator()
q5, steps5 = tensor((3, 5, 4, 64)), tensor((3, 5), torch.int32)
for label, given in (("first", steps5), ("again", steps5),
                     ("other positions", tensor((3, 5), torch.int32))):
    plans = len(fa4.torch._plans)
    fake.calls.clear()
    fa4.torch.attention_with_kvcache(q5, pages, pages, lengths, page_table, causal=True,
                                     return_lse=True, rope_cos_sin=table, rope_positions=given)
    print(f"{label}:", " ".join(fake.calls[-3:]), "new plans", len(fa4.torch._plans) - plans)
# CHECK-NEXT: first: {{.*}}cuLaunchKernelEx new plans 1
# CHECK-NEXT: again: cuCtxGetCurrent cuLaunchKernelEx new plans 0
# CHECK-NEXT: other positions: cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx new plans 0

# No query rows: nothing is launched.
count = len(fake.launches)
empty = fa4.torch.attention(tensor((2, 0, 4, 64)), k, k, causal=True, rope_cos_sin=table,
                            rope_positions=tensor((2, 0), torch.int32))
print("no rows:", empty.shape, len(fake.launches) == count)
# CHECK-NEXT: no rows: (2, 0, 4, 64) True

cpu = Device("cpu")
f16 = torch.float16
cases = [
    ("table alone", dict(rope_cos_sin=table)),
    ("positions alone", dict(rope_positions=positions)),
    ("start without a table", dict(rope_start=32)),
    ("output without a table", dict(rope_output=True)),
    ("table dtype", dict(rope_cos_sin=tensor((4096, 64), f16), rope_positions=positions)),
    ("table rank", dict(rope_cos_sin=tensor((4096,), torch.float32),
                        rope_positions=positions)),
    ("table type", dict(rope_cos_sin=[[1.0] * 64], rope_positions=positions)),
    ("table device", dict(rope_cos_sin=tensor((4096, 64), torch.float32, device=cpu),
                          rope_positions=positions)),
    ("table rows", dict(rope_cos_sin=tensor((0, 64), torch.float32),
                        rope_positions=positions)),
    ("table columns", dict(rope_cos_sin=tensor((4096, 12), torch.float32),
                           rope_positions=positions)),
    ("positions dtype", dict(rope_cos_sin=table, rope_positions=tensor((2, 300), f16))),
    ("positions shape", dict(rope_cos_sin=table,
                             rope_positions=tensor((2, 299), torch.int32))),
    ("positions batch", dict(rope_cos_sin=table,
                             rope_positions=tensor((1, 300), torch.int32))),
    ("start 4", dict(rope_cos_sin=table, rope_positions=positions, rope_start=4)),
    ("start float", dict(rope_cos_sin=table, rope_positions=positions, rope_start=8.0)),
    ("output int", dict(rope_cos_sin=table, rope_positions=positions, rope_output=1)),
    ("past the head dim", dict(rope_cos_sin=table, rope_positions=positions,
                               rope_start=8)),
    ("no kernel", dict(rope_cos_sin=tensor((4096, 16), torch.float32),
                       rope_positions=positions)),
]
for label, kwargs in cases:
    try:
        fa4.torch.attention(q, k, k, causal=True, **kwargs)
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
        if isinstance(err, LookupError):
            print("\n".join(sorted(line.strip() for line in str(err).splitlines()[1:])))
# CHECK-NEXT: table alone: ValueError: rope_cos_sin and rope_positions go together: pass both or neither
# CHECK-NEXT: positions alone: ValueError: rope_cos_sin and rope_positions go together: pass both or neither
# CHECK-NEXT: start without a table: ValueError: rope_start=32 and rope_output=False need rope_cos_sin and rope_positions
# CHECK-NEXT: output without a table: ValueError: rope_start=0 and rope_output=True need rope_cos_sin and rope_positions
# CHECK-NEXT: table dtype: ValueError: rope_cos_sin must be a torch.float32 tensor [P, R], got torch.float16 of shape [4096, 64]
# CHECK-NEXT: table rank: ValueError: rope_cos_sin must be a torch.float32 tensor [P, R], got torch.float32 of shape [4096]
# CHECK-NEXT: table type: TypeError: rope_cos_sin must be a torch.Tensor, got list
# CHECK-NEXT: table device: ValueError: rope_cos_sin is on cpu, q on cuda:0
# CHECK-NEXT: table rows: ValueError: rope_cos_sin must hold at least one position, got shape [0, 64]
# CHECK-NEXT: table columns: ValueError: rope_start (0) and rope_cos_sin's columns R (12) must be multiples of 8, R positive: the kernel rotates pairs four at a time
# CHECK-NEXT: positions dtype: ValueError: rope_positions must be a torch.int32 tensor [B, Sq], got torch.float16 of shape [2, 300]
# CHECK-NEXT: positions shape: ValueError: rope_positions must be [B, Sq] = [2, 300] (q's), got [2, 299]
# CHECK-NEXT: positions batch: ValueError: rope_positions must be [B, Sq] = [2, 300] (q's), got [1, 300]
# CHECK-NEXT: start 4: ValueError: rope_start (4) and rope_cos_sin's columns R (64) must be multiples of 8, R positive: the kernel rotates pairs four at a time
# CHECK-NEXT: start float: TypeError: rope_start must be an int, got float
# CHECK-NEXT: output int: TypeError: rope_output must be a bool, got int
# CHECK-NEXT: past the head dim: ValueError: rope rotates columns [8, 72) of q, past the head dim 64
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=True scale=0.125 lse=False arch=sm_90a window=(-1, 0) softcap=0.0 sink=False rope=Rope(start=0, columns=16, output=False); candidates:
# CHECK-NEXT: plain (plain.json): rope is none, not start 0 columns 16
# CHECK-NEXT: rope (rope.json): rope is start 0 columns 64, not start 0 columns 16
# CHECK-NEXT: rope_out (rope_out.json): rope is start 32 columns 32 output, not start 0 columns 16
# CHECK-NEXT: rope_paged (rope_paged.json): lse is True, not False; seqused_k is True, not False; paged is True, not False; rope is start 0 columns 64, not start 0 columns 16

# With rope_output, V's (and O's) head dim bounds the columns; FP8 queries
# are rotated before they are quantized; the table requires no grad.
narrow_v = tensor((2, 500, 2, 48))
table32 = tensor((100, 32), torch.float32)
fp8 = torch.float8_e4m3fn
grad_table = tensor((100, 32), torch.float32, requires_grad=True)
for label, call in [
        ("output past Dv", lambda: fa4.torch.attention(
            q, k, narrow_v, rope_cos_sin=table32, rope_positions=positions, rope_start=32,
            rope_output=True)),
        ("fp8", lambda: fa4.torch.attention(
            tensor((2, 300, 4, 64), fp8), tensor((2, 500, 2, 64), fp8),
            tensor((2, 2, 64, 500), fp8).permute(0, 3, 1, 2), rope_cos_sin=table32,
            rope_positions=positions)),
        ("grad", lambda: fa4.torch.attention(q, k, k, causal=True, rope_cos_sin=grad_table,
                                             rope_positions=positions)),
        ("kvcache table alone", lambda: fa4.torch.attention_with_kvcache(
            q4, pages, pages, lengths, page_table, rope_cos_sin=table))]:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, RuntimeError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: output past Dv: ValueError: rope rotates columns [32, 64) of q and O, past the head dim 48
# CHECK-NEXT: fp8: ValueError: rope rotates 16-bit queries; q is torch.float8_e4m3fn (rotate the queries before quantizing them)
# CHECK-NEXT: grad: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad, and its gradient would silently stop here; call it under torch.no_grad() or on detached tensors
# CHECK-NEXT: kvcache table alone: ValueError: rope_cos_sin and rope_positions go together: pass both or neither
runtime.set_driver(None)
