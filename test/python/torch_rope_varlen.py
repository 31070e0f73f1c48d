# RUN: %python %s | FileCheck %s
"""fa4.torch.attention_varlen's rotary embedding (rope_cos_sin, rope_positions
int32 [total_q], rope_start, rope_output) against the stand-in torch and
the fake libcuda: the packed-sequence kernel of that rope chosen (never a
plain one for a rope call, a rope kernel for a plain call, another rope or
a dense kernel), the table's, P's and the positions' parameters after the
sequence tables (and a paged cache's), the eager plan and the checked
path, flash_attn_varlen_func forwarding the arguments, the checks of the
positions ([total_q], not [B, Sq]), the kernel compiled on demand with
the rope, its fa4.attention text, and reference_varlen rotating each
sequence at its own slice of the positions."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()
os.environ["FA4_JIT"] = "0"

import fa4  # noqa: E402
from fa4 import flash_attn_varlen_func, jit, runtime  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-torch-rope-varlen-"))
atexit.register(shutil.rmtree, TMP, True)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
torch.cuda.capability = (9, 0)
hopper = dict(arch="sm_90a", query_rows=64)
torch_standin.write_kernel(TMP, "varlen", "bf16", 4, 2, True, True, varlen=True, **hopper)
torch_standin.write_kernel(TMP, "rope_varlen", "bf16", 4, 2, True, True, varlen=True,
                           rope=(0, 64, False), **hopper)
torch_standin.write_kernel(TMP, "rope_varlen_out", "bf16", 4, 2, True, True, varlen=True,
                           rope=(32, 32, True), **hopper)
torch_standin.write_kernel(TMP, "rope_varlen_paged", "bf16", 4, 2, True, True, varlen=True,
                           page_size=256, rope=(0, 64, False), **hopper)
torch_standin.write_kernel(TMP, "rope_dense", "bf16", 4, 2, True, True, rope=(0, 64, False),
                           **hopper)
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
directory = runtime.KernelDirectory(TMP)
print("errors", directory.errors)
# CHECK: errors []


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


def launched():
    return fake.launches[-1].split(" grid")[0]


def tail(count):
    """The last `count` parameters of the last launch."""
    return ", ".join(fake.launches[-1].split(" params [")[1][:-1].split(", ")[-count:])


def pointer(t):
    return f"'{t.data_ptr():#x}'"


# Three sequences in 700 packed query rows and 900 keys, a position per row.
q, k = tensor((700, 4, 64)), tensor((900, 2, 64))
cu_q, cu_k = tensor((4,), torch.int32), tensor((4,), torch.int32)
table, positions = tensor((4096, 64), torch.float32), tensor((700,), torch.int32)
expect("rope_varlen")
out, lse = fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True,
                                      rope_cos_sin=table, rope_positions=positions)
print("rope:", launched(), out.shape, lse.shape)
print("tables, O's rows, table, P, positions:", tail(6) == ", ".join(
    [pointer(cu_q), pointer(cu_k), pointer(out), pointer(table), "4096", pointer(positions)]))
# CHECK-NEXT: rope: rope_varlen (700, 4, 64) (4, 700)
# CHECK-NEXT: tables, O's rows, table, P, positions: True
expect("varlen")
fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True)
print("without rope:", launched(), "no table:", pointer(table) not in fake.launches[-1])
# CHECK-NEXT: without rope: varlen no table: True

# rope_start and rope_output choose too; R is the table's columns.
expect("rope_varlen_out")
fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True,
                           rope_cos_sin=tensor((100, 32), torch.float32),
                           rope_positions=positions, rope_start=32, rope_output=True)
print("start 32, output:", launched(), tail(3).split(", ")[1])
# CHECK-NEXT: start 32, output: rope_varlen_out 100

# The eager plan: a repeated call makes no new plan; other positions of
# the same shape launch anew with it.
torch_standin.caching_allocator()
expect("rope_varlen")
q5, positions5 = tensor((500, 4, 64)), tensor((500,), torch.int32)
for label, given in (("first", positions5), ("again", positions5),
                     ("other positions", tensor((500,), torch.int32))):
    plans = len(fa4.torch._plans)
    fa4.torch.attention_varlen(q5, k, k, cu_q, cu_k, causal=True, return_lse=True,
                               rope_cos_sin=table, rope_positions=given)
    print(f"{label}:", launched(), tail(1) == pointer(given), "new plans",
          len(fa4.torch._plans) - plans)
# CHECK-NEXT: first: rope_varlen True new plans 1
# CHECK-NEXT: again: rope_varlen True new plans 0
# CHECK-NEXT: other positions: rope_varlen True new plans 0

# The checked path (options of other types: the op's kernel, its rope
# arguments after the FP8 ones and page_table) launches the same; strided
# positions are copied.
expect("rope_varlen")
strided = tensor((700,), torch.int32, strides=(2,))
fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True,
                           window=[-1, 0], rope_cos_sin=table, rope_positions=strided)
print("checked path:", launched(), tail(3).split(", ")[:2] == [pointer(table), "4096"],
      "positions copied:", pointer(strided) not in fake.launches[-1])
# CHECK-NEXT: checked path: rope_varlen True positions copied: True

# Over a paged cache: the page table and max_pages, then the rope's.
pages, page_table = tensor((40, 256, 2, 64)), tensor((3, 9), torch.int32)
for label, window in (("eager", (-1, -1)), ("checked", [-1, -1])):
    expect("rope_varlen_paged")
    fa4.torch.attention_varlen(q, pages, pages, cu_q, cu_k, causal=True, return_lse=True,
                               window=window, page_table=page_table, rope_cos_sin=table,
                               rope_positions=positions)
    print(f"paged {label}:", launched(), tail(5) == ", ".join(
        [pointer(page_table), "9", pointer(table), "4096", pointer(positions)]))
# CHECK-NEXT: paged eager: rope_varlen_paged True
# CHECK-NEXT: paged checked: rope_varlen_paged True

# flash_attn_varlen_func forwards the rope arguments.
expect("rope_varlen")
result, softmax_lse, _ = flash_attn_varlen_func(
    q, k, k, cu_q, cu_k, 300, 400, causal=True, return_attn_probs=True, rope_cos_sin=table,
    rope_positions=positions)
print("flash_attn_varlen_func:", launched(), tail(1) == pointer(positions))
expect("rope_varlen_out")
flash_attn_varlen_func(q, k, k, cu_q, cu_k, 300, 400, causal=True, return_attn_probs=True,
                       rope_cos_sin=tensor((100, 32), torch.float32), rope_positions=positions,
                       rope_start=32, rope_output=True)
print("flash_attn_varlen_func output:", launched())
# CHECK-NEXT: flash_attn_varlen_func: rope_varlen True
# CHECK-NEXT: flash_attn_varlen_func output: rope_varlen_out

# No query rows: nothing is launched.
count = len(fake.launches)
empty, _ = fa4.torch.attention_varlen(tensor((0, 4, 64)), k, k, cu_q, cu_k, causal=True,
                                      return_lse=True, rope_cos_sin=table,
                                      rope_positions=tensor((0,), torch.int32))
print("no rows:", empty.shape, len(fake.launches) == count)
# CHECK-NEXT: no rows: (0, 4, 64) True

cases = [
    ("positions [B, Sq]", dict(rope_cos_sin=table,
                               rope_positions=tensor((3, 300), torch.int32))),
    ("positions [total_q - 1]", dict(rope_cos_sin=table,
                                     rope_positions=tensor((699,), torch.int32))),
    ("positions dtype", dict(rope_cos_sin=table,
                             rope_positions=tensor((700,), torch.float32))),
    ("table alone", dict(rope_cos_sin=table)),
    ("positions alone", dict(rope_positions=positions)),
    ("start without a table", dict(rope_start=32)),
    ("output without a table", dict(rope_output=True)),
    ("table rank", dict(rope_cos_sin=tensor((4096,), torch.float32),
                        rope_positions=positions)),
    ("past the head dim", dict(rope_cos_sin=table, rope_positions=positions,
                               rope_start=8)),
    ("grad", dict(rope_cos_sin=tensor((4096, 64), torch.float32, requires_grad=True),
                  rope_positions=positions)),
    ("no kernel", dict(rope_cos_sin=tensor((4096, 16), torch.float32),
                       rope_positions=positions)),
]
for label, kwargs in cases:
    try:
        fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True,
                                   **kwargs)
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError, RuntimeError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
        if isinstance(err, LookupError):
            print("\n".join(sorted(line.strip() for line in str(err).splitlines()[1:])))
# CHECK-NEXT: positions [B, Sq]: ValueError: rope_positions must be a torch.int32 tensor [total_q], got torch.int32 of shape [3, 300]
# CHECK-NEXT: positions [total_q - 1]: ValueError: rope_positions must be [total_q] = [700] (a position per packed query row), got [699]
# CHECK-NEXT: positions dtype: ValueError: rope_positions must be a torch.int32 tensor [total_q], got torch.float32 of shape [700]
# CHECK-NEXT: table alone: ValueError: rope_cos_sin and rope_positions go together: pass both or neither
# CHECK-NEXT: positions alone: ValueError: rope_cos_sin and rope_positions go together: pass both or neither
# CHECK-NEXT: start without a table: ValueError: rope_start=32 and rope_output=False need rope_cos_sin and rope_positions
# CHECK-NEXT: output without a table: ValueError: rope_start=0 and rope_output=True need rope_cos_sin and rope_positions
# CHECK-NEXT: table rank: ValueError: rope_cos_sin must be a torch.float32 tensor [P, R], got torch.float32 of shape [4096]
# CHECK-NEXT: past the head dim: ValueError: rope rotates columns [8, 72) of q, past the head dim 64
# CHECK-NEXT: grad: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad, and its gradient would silently stop here; call it under torch.no_grad() or on detached tensors
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=True scale=0.125 lse=True arch=sm_90a window=(-1, 0) softcap=0.0 sink=False varlen=True rope=Rope(start=0, columns=16, output=False); candidates:
# CHECK-NEXT: rope_dense (rope_dense.json): varlen is False, not True; rope is start 0 columns 64, not start 0 columns 16
# CHECK-NEXT: rope_varlen (rope_varlen.json): rope is start 0 columns 64, not start 0 columns 16
# CHECK-NEXT: rope_varlen_out (rope_varlen_out.json): rope is start 32 columns 32 output, not start 0 columns 16
# CHECK-NEXT: rope_varlen_paged (rope_varlen_paged.json): paged is True, not False; rope is start 0 columns 64, not start 0 columns 16
# CHECK-NEXT: varlen (varlen.json): rope is none, not start 0 columns 16

# A dense call with rope never takes a packed kernel, and packed
# positions are refused there.
expect("rope_dense")
fa4.torch.attention(tensor((3, 300, 4, 64)), tensor((3, 500, 2, 64)), tensor((3, 500, 2, 64)),
                    causal=True, return_lse=True, rope_cos_sin=table,
                    rope_positions=tensor((3, 300), torch.int32))
print("dense:", launched())
try:
    fa4.torch.attention(tensor((3, 300, 4, 64)), tensor((3, 500, 2, 64)),
                        tensor((3, 500, 2, 64)), rope_cos_sin=table,
                        rope_positions=tensor((900,), torch.int32))
except ValueError as err:
    print("dense given [total_q]:", err)
# CHECK-NEXT: dense: rope_dense
# CHECK-NEXT: dense given [total_q]: rope_positions must be a torch.int32 tensor [B, Sq], got torch.int32 of shape [900]

# Without a kernel directory the rope kernel of packed sequences is
# compiled on demand: fa4.jit is asked for varlen and the rope.
asked = []


class Cache:
    def kernel(self, *args, **options):
        asked.append({n: options[n] for n in ("varlen", "seqused_k", "page_size", "rope")})
        return next(k for k in directory if k.name == "rope_varlen_out")


os.environ.pop("FA4_KERNEL_DIR")
os.environ["FA4_JIT"] = "1"
fa4.torch._jit.append(Cache())
expect("rope_varlen_out")
fa4.torch.attention_varlen(q, k, k, cu_q, cu_k, causal=True, return_lse=True,
                           rope_cos_sin=tensor((100, 32), torch.float32),
                           rope_positions=positions, rope_start=32, rope_output=True)
print("jit:", asked, launched())
# CHECK-NEXT: jit: [{'varlen': True, 'seqused_k': False, 'page_size': None, 'rope': Rope(start=32, columns=32, output=True)}] rope_varlen_out

# The fa4.attention it compiles: positions memref<?xi32>, after the
# sequence tables.
print(jit.module_text("packed", "bf16", 64, 4, 2, True, True, varlen=True, seqused_k=True,
                      rope=(32, 32, True)))
print(jit.kernel_name("bf16", 64, 4, 2, True, True, varlen=True, seqused_k=True,
                      rope=(32, 32, True)))
# CHECK-NEXT: func.func @packed(%q: memref<?x4x64xbf16>, %k: memref<?x2x64xbf16>, %v: memref<?x2x64xbf16>, %o: memref<?x4x64xbf16>, %lse: memref<4x?xf32>, %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %used_k: memref<?xi32>, %cos_sin: memref<?x32xf32>, %positions: memref<?xi32>) {
# CHECK-NEXT: fa4.attention ins(%q, %k, %v : memref<?x4x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x4x64xbf16>) lse(%lse : memref<4x?xf32>) varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) seqused_k(%used_k : memref<?xi32>) rope(%cos_sin, %positions : memref<?x32xf32>, memref<?xi32>) {causal, rope_start = 32 : i64, rope_output}
# CHECK-NEXT: return
# CHECK-NEXT: }
# CHECK: bf16_d64_h4x2_causal_varlen_seqused_rope32x32o_lse
print(jit.module_text("paged", "bf16", 64, 4, 2, False, False, varlen=True, page_size=256,
                      rope=(0, 64, False)).splitlines()[1])
# CHECK-NEXT: fa4.attention ins(%q, %k, %v : memref<?x4x64xbf16>, memref<?x256x2x64xbf16>, memref<?x256x2x64xbf16>) outs(%o : memref<?x4x64xbf16>) varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) paged(%page_table : memref<?x?xi32>) rope(%cos_sin, %positions : memref<?x64xf32>, memref<?xi32>)
runtime.set_driver(None)


# reference_varlen: sequence b's rows rotated at positions[cu_q[b]:cu_q[b +
# 1]] (`reference` per sequence, recorded here: the stand-in has no data).
class Named(torch_standin.Tensor):
    """A tensor whose indexing says what it indexed, with host values."""

    def __init__(self, name, shape, values=None, dtype=torch.bfloat16):
        super().__init__(shape, dtype, torch_standin.cuda0)
        self.name, self.values = name, values

    def __getitem__(self, index):
        parts = index if isinstance(index, tuple) else (index,)
        return self.name + "[" + ", ".join(
            "None" if p is None else f"{p.start}:{p.stop}" if isinstance(p, slice) else str(p)
            for p in parts) + "]"

    def tolist(self):
        return list(self.values)


calls = []


def recorded(q, k, v, causal, scale, dtype, window, softcap, sink, *descales, **rope):
    calls.append(f"q {q} k {k} rope {rope}")
    return tensor((1, 1, 4, 64)), tensor((1, 4, 1))


fa4.torch.reference = recorded
packed_q, packed_k = Named("q", (12, 4, 64)), Named("k", (20, 2, 64))
starts_q = Named("cu_q", (4,), [0, 5, 5, 12], torch.int32)
starts_k = Named("cu_k", (4,), [0, 7, 9, 20], torch.int32)
fa4.torch.reference_varlen(packed_q, packed_k, packed_k, starts_q, starts_k, causal=True,
                           rope_cos_sin="table", rope_positions=Named("positions", (12,)),
                           rope_start=32, rope_output=True)
fa4.torch.reference_varlen(packed_q, packed_k, packed_k, starts_q, starts_k)
print("\n".join(calls))
# CHECK-NEXT: q q[None, 0:5] k k[None, 0:7] rope {'rope_cos_sin': 'table', 'rope_positions': 'positions[None, 0:5]', 'rope_start': 32, 'rope_output': True}
# CHECK-NEXT: q q[None, 5:12] k k[None, 9:20] rope {'rope_cos_sin': 'table', 'rope_positions': 'positions[None, 5:12]', 'rope_start': 32, 'rope_output': True}
# CHECK-NEXT: q q[None, 0:5] k k[None, 0:7] rope {}
# CHECK-NEXT: q q[None, 5:12] k k[None, 9:20] rope {}
