# RUN: %python %s | FileCheck %s
"""fa4.runtime on kernels with a fused rotary embedding (RoPE), without a
GPU: hand-written manifests as fa4-compile writes them for sm_90a (the
operands cos_sin [P, R] f32 and positions [B, Sq] i32 last, the params
cos_sin, rope_positions = P and positions after the others, the `rope`
entry: start, columns, output), of a dense batch, of a paged KV cache, of
a kernel that rotates O back and of packed sequences (positions [total_q]
i32, after the sequence tables); what they compute and how they are
chosen (never for a problem without rope, nor a plain kernel for a rope
problem, nor another rope), the checks of the table and the positions
given, the parameters in order, a launch against the fake libcuda, and
manifests whose rope entry or operands break the conventions."""

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda  # noqa: E402  (the fake libcuda; torch is not installed)

from fa4 import runtime  # noqa: E402
from manifests import kvcache_manifest, print_refusals  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-rope-"))
atexit.register(shutil.rmtree, TMP, True)


def manifest(kernel, rope=(0, 128, False), seqused_k=False, **options):
    """A sm_90a kernel's manifest with `rope` (start, columns, output; None:
    none), paged with `page_size`, with seqused_k."""
    return kvcache_manifest(kernel, arch="sm_90a", rope=rope, seqused_k=seqused_k, **options)


for name, options in [("plain", dict(rope=None)),
                      ("rope", dict()),
                      ("rope_mla", dict(rope=(64, 64, True))),
                      ("rope_paged", dict(page_size=256, seqused_k=True)),
                      ("paged", dict(rope=None, page_size=256, seqused_k=True))]:
    (TMP / f"{name}.json").write_text(json.dumps(manifest(name, **options)))
    (TMP / f"{name}.cubin").write_bytes(b"\x7fELF")
directory = runtime.KernelDirectory(TMP)
for kernel in directory:
    print(repr(kernel), "| rope", kernel.rope)
print("errors", directory.errors)
# CHECK: <fa4 kernel paged sm_90a bf16 heads 32/8 head_dim 128 causal True seqused_k paged 256 scale 0.08838834764831845 lse True> | rope None
# CHECK-NEXT: <fa4 kernel plain sm_90a bf16 heads 32/8 head_dim 128 causal True scale 0.08838834764831845 lse True> | rope None
# CHECK-NEXT: <fa4 kernel rope sm_90a bf16 heads 32/8 head_dim 128 causal True rope start 0 columns 128 scale 0.08838834764831845 lse True> | rope Rope(start=0, columns=128, output=False)
# CHECK-NEXT: <fa4 kernel rope_mla sm_90a bf16 heads 32/8 head_dim 128 causal True rope start 64 columns 64 output scale 0.08838834764831845 lse True> | rope Rope(start=64, columns=64, output=True)
# CHECK-NEXT: <fa4 kernel rope_paged sm_90a bf16 heads 32/8 head_dim 128 causal True seqused_k paged 256 rope start 0 columns 128 scale 0.08838834764831845 lse True> | rope Rope(start=0, columns=128, output=False)
# CHECK-NEXT: errors []
rope = next(k for k in directory if k.name == "rope")
print("the operands' dimensions:", runtime._dimension_names("cos_sin", False),
      runtime._dimension_names("positions", False), "a tuple:", tuple(rope.rope),
      rope.rope.columns)
# CHECK-NEXT: the operands' dimensions: ('positions', 'rotary_dims') ('batch', 'seq_q') a tuple: (0, 128, False) 128

# The choice: a rope problem takes only a kernel of that rope (start,
# columns and output alike); a problem without rope never takes one.
problem = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
               arch="sm_90a")
for label, extra in [("plain", {}), ("rope False", dict(rope=False)),
                     ("rope", dict(rope=(0, 128, False))),
                     ("rope as a Rope", dict(rope=runtime.Rope(64, 64, True))),
                     ("paged", dict(seqused_k=True, page_size=256)),
                     ("paged rope", dict(seqused_k=True, page_size=256, rope=(0, 128, False)))]:
    print(f"{label}:", directory.find(**problem, **extra).name)
# CHECK-NEXT: plain: plain
# CHECK-NEXT: rope False: plain
# CHECK-NEXT: rope: rope
# CHECK-NEXT: rope as a Rope: rope_mla
# CHECK-NEXT: paged: paged
# CHECK-NEXT: paged rope: rope_paged
for label, extra in [("rope 64 columns", dict(rope=(0, 64, False))),
                     ("rope output", dict(rope=(0, 128, True))),
                     ("plain without lse", dict(lse=False))]:
    try:
        directory.find(**dict(problem, **extra))
        print(f"{label}: found")
    except LookupError as err:
        lines = str(err).splitlines()
        print(f"{label}:", lines[0].split(" for ")[1])
        print("\n".join(line.strip() for line in lines[1:]))
# CHECK-NEXT: rope 64 columns: dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=True arch=sm_90a window=(-1, 0) softcap=0.0 sink=False rope=Rope(start=0, columns=64, output=False); candidates:
# CHECK-NEXT: paged (paged.json): seqused_k is True, not False; paged is True, not False; rope is none, not start 0 columns 64
# CHECK-NEXT: plain (plain.json): rope is none, not start 0 columns 64
# CHECK-NEXT: rope (rope.json): rope is start 0 columns 128, not start 0 columns 64
# CHECK-NEXT: rope_mla (rope_mla.json): rope is start 64 columns 64 output, not start 0 columns 64
# CHECK-NEXT: rope_paged (rope_paged.json): seqused_k is True, not False; paged is True, not False; rope is start 0 columns 128, not start 0 columns 64
# CHECK-NEXT: rope output: dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=True arch=sm_90a window=(-1, 0) softcap=0.0 sink=False rope=Rope(start=0, columns=128, output=True); candidates:
# CHECK-NEXT: paged (paged.json): seqused_k is True, not False; paged is True, not False; rope is none, not start 0 columns 128 output
# CHECK-NEXT: plain (plain.json): rope is none, not start 0 columns 128 output
# CHECK-NEXT: rope (rope.json): rope is start 0 columns 128, not start 0 columns 128 output
# CHECK-NEXT: rope_mla (rope_mla.json): rope is start 64 columns 64 output, not start 0 columns 128 output
# CHECK-NEXT: rope_paged (rope_paged.json): seqused_k is True, not False; paged is True, not False; rope is start 0 columns 128, not start 0 columns 128 output
# CHECK-NEXT: plain without lse: dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=False arch=sm_90a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT: paged (paged.json): lse is True, not False; seqused_k is True, not False; paged is True, not False
# CHECK-NEXT: plain (plain.json): lse is True, not False
# CHECK-NEXT: rope (rope.json): lse is True, not False; rope is start 0 columns 128, not none
# CHECK-NEXT: rope_mla (rope_mla.json): lse is True, not False; rope is start 64 columns 64 output, not none
# CHECK-NEXT: rope_paged (rope_paged.json): lse is True, not False; seqused_k is True, not False; paged is True, not False; rope is start 0 columns 128, not none
print("not compared:", rope.mismatches(dtype="bf16"), "compared:", rope.mismatches(rope=None),
      rope.mismatches(rope=False), rope.mismatches(rope=(0, 128, False)))
for bad in ((0, 128), "yes", (0.5, 128, False)):
    try:
        rope.mismatches(rope=bad)
    except ValueError as err:
        print("bad rope:", err)
# CHECK-NEXT: not compared: [] compared: [] ['rope is start 0 columns 128, not none'] []
# CHECK-NEXT: bad rope: rope must be (start, columns, output) (integers and a bool) or None, got (0, 128)
# CHECK-NEXT: bad rope: rope must be (start, columns, output) (integers and a bool) or None, got 'yes'
# CHECK-NEXT: bad rope: rope must be (start, columns, output) (integers and a bool) or None, got (0.5, 128, False)

# A decode launch over the paged cache: 4 batches of 2 new tokens, a table
# of 4096 positions of 128 columns (cos | sin).
paged = next(k for k in directory if k.name == "rope_paged")
operands = {"query": (0x10000000, (4, 2, 32, 128), "bf16"),
            "key": (0x20000000, (40, 256, 8, 128), "bf16"),
            "value": (0x30000000, (40, 256, 8, 128), "bf16"),
            "output": (0x40000000, (4, 2, 32, 128), "bf16"),
            "lse": (0x50000000, (4, 32, 2), "f32"),
            "seqused_k": (0x60000000, (4,), "i32"),
            "page_table": (0x70000000, (4, 9), "i32"),
            "cos_sin": (0x80000000, (4096, 128), "f32"),
            "positions": (0x90000000, (4, 2), "i32")}
for arg in paged.arguments(operands)[4:]:
    print(arg.name, arg.kind, arg.value if arg.kind != "pointer" else f"{arg.value:#x}")
print("grid", paged.grid(*paged.extent(operands), 132))
# CHECK-NEXT: batch i32 4
# CHECK-NEXT: seq_q i32 2
# CHECK-NEXT: seq_kv i32 256
# CHECK-NEXT: scale_log2 f32 0.12751743082459868
# CHECK-NEXT: lse pointer 0x50000000
# CHECK-NEXT: seqused_k pointer 0x60000000
# CHECK-NEXT: page_table pointer 0x70000000
# CHECK-NEXT: max_pages i32 9
# CHECK-NEXT: cos_sin pointer 0x80000000
# CHECK-NEXT: rope_positions i32 4096
# CHECK-NEXT: positions pointer 0x90000000
# CHECK-NEXT: grid (32, 1, 1)

# One position is a table of one row; contiguous strides given are taken.
print("one row:", [a.value for a in paged.arguments(dict(
    operands, cos_sin=(0x80000000, (1, 128), "f32", (128, 1)),
    positions=(0x90000000, (4, 2), "i32", (2, 1))))][-3:])
# CHECK-NEXT: one row: [2147483648, 1, 2415919104]

# Tensors that do not fit: each named, with what the kernel takes.
for label, change in [
        ("no table", {"cos_sin": None}),
        ("no positions", {"positions": None}),
        ("table element", {"cos_sin": (0x80000000, (4096, 128), "bf16")}),
        ("table rank", {"cos_sin": (0x80000000, (4096 * 128,), "f32")}),
        ("table columns", {"cos_sin": (0x80000000, (4096, 64), "f32")}),
        ("table without rows", {"cos_sin": (0x80000000, (0, 128), "f32")}),
        ("table strides", {"cos_sin": (0x80000000, (4096, 128), "f32", (256, 1))}),
        ("table transposed", {"cos_sin": (0x80000000, (4096, 128), "f32", (1, 4096))}),
        ("table 8-byte aligned", {"cos_sin": (0x80000008, (4096, 128), "f32")}),
        ("table 2-byte aligned", {"cos_sin": (0x80000002, (4096, 128), "f32")}),
        ("table past i32", {"cos_sin": (0x80000000, (2 ** 31, 128), "f32")}),
        ("positions element", {"positions": (0x90000000, (4, 2), "i64")}),
        ("positions rank", {"positions": (0x90000000, (8,), "i32")}),
        ("positions batch", {"positions": (0x90000000, (3, 2), "i32")}),
        ("positions rows", {"positions": (0x90000000, (4, 3), "i32")}),
        ("positions transposed", {"positions": (0x90000000, (2, 4), "i32")}),
        ("positions strides", {"positions": (0x90000000, (4, 2), "i32", (1, 4))}),
        ("positions alignment", {"positions": (0x90000002, (4, 2), "i32")})]:
    given = {name: value for name, value in dict(operands, **change).items()
             if value is not None}
    try:
        paged.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: no table: kernel rope_paged needs operand 'cos_sin' (it was compiled with a rotary embedding: cos_sin f32 [positions, 128] and positions i32 [batch, seq_q])
# CHECK-NEXT: no positions: kernel rope_paged needs operand 'positions' (it was compiled with a rotary embedding: cos_sin f32 [positions, 128] and positions i32 [batch, seq_q])
# CHECK-NEXT: table element: cos_sin: element bf16, kernel rope_paged takes f32
# CHECK-NEXT: table rank: cos_sin: rank 1 (shape [524288]), kernel rope_paged takes rank 2
# CHECK-NEXT: table columns: cos_sin: dimension 1 (rotary_dims) is 64, kernel rope_paged takes 128
# CHECK-NEXT: table without rows: cos_sin: shape [0, 128] has no rows; the kernel reads row clamp(position, 0, P - 1), so P must be at least 1
# CHECK-NEXT: table strides: cos_sin: must be contiguous, got strides [256, 1]
# CHECK-NEXT: table transposed: cos_sin: must be contiguous, got strides [1, 4096]
# CHECK-NEXT: table 8-byte aligned: cos_sin: address 0x80000008 is not 16-byte aligned (the kernel reads the table in 16-byte pieces)
# CHECK-NEXT: table 2-byte aligned: cos_sin: address 0x80000002 is not 16-byte aligned (the kernel reads the table in 16-byte pieces)
# CHECK-NEXT: table past i32: param 'rope_positions' = 2147483648 does not fit an i32
# CHECK-NEXT: positions element: positions: element i64, kernel rope_paged takes i32
# CHECK-NEXT: positions rank: positions: rank 1 (shape [8]), kernel rope_paged takes rank 2
# CHECK-NEXT: positions batch: positions: shape [3, 2], expected [batch, seq_q] = [4, 2] (query dimensions 0 and 1)
# CHECK-NEXT: positions rows: positions: shape [4, 3], expected [batch, seq_q] = [4, 2] (query dimensions 0 and 1)
# CHECK-NEXT: positions transposed: positions: shape [2, 4], expected [batch, seq_q] = [4, 2] (query dimensions 0 and 1)
# CHECK-NEXT: positions strides: positions: must be contiguous, got strides [1, 4]
# CHECK-NEXT: positions alignment: positions: address 0x90000002 is not 4-byte aligned

# A kernel without rope takes no table, and the rope kernel of a dense
# batch none of the cache's.
plain = next(k for k in directory if k.name == "plain")
dense_operands = {name: operands[name] for name in ("query", "output", "lse")}
dense_operands.update(key=(0x20000000, (4, 3000, 8, 128), "bf16"),
                      value=(0x30000000, (4, 3000, 8, 128), "bf16"))
for label, kernel, given in [
        ("plain given a table", plain, dict(dense_operands, cos_sin=operands["cos_sin"],
                                            positions=operands["positions"])),
        ("dense rope given a page table", rope, dict(dense_operands,
                                                     cos_sin=operands["cos_sin"],
                                                     positions=operands["positions"],
                                                     page_table=operands["page_table"]))]:
    try:
        kernel.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: plain given a table: kernel plain has no operand 'cos_sin' (it takes query, key, value, output, lse)
# CHECK-NEXT: dense rope given a page table: kernel rope has no operand 'page_table' (it takes query, key, value, output, lse, cos_sin, positions)

# The launch: parameters as the fake libcuda receives them; a second
# table (another P) is another launch.
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in paged.params]
paged.launch(operands, stream=0x5000)
print(fake.launches[-1])
paged.launch(dict(operands, cos_sin=(0x88000000, (131072, 128), "f32")), stream=0x5000)
print(fake.launches[-1].split(", ")[-3:], "attributes", fake.attributes[-1])
# CHECK-NEXT: rope_paged grid 32 stream 0x5000 params ['map of 0x10000000', 'map of 0x20000000', 'map of 0x30000000', 'map of 0x40000000', 4, 2, 256, 0.12751743{{[0-9]*}}, '0x50000000', '0x60000000', '0x70000000', 9, '0x80000000', 4096, '0x90000000']
# CHECK-NEXT: ["'0x88000000'", '131072', "'0x90000000']"] attributes [(6, 1)]
dense = dict(dense_operands, cos_sin=(0x80000000, (64, 64), "f32"),
             positions=(0x90000000, (4, 2), "i32"))
mla = next(k for k in directory if k.name == "rope_mla")
fake.kinds = [kind for _, kind, _ in mla.params]
mla.launch(dense, stream=0x5000)
print(fake.launches[-1].split(" params ")[0], fake.launches[-1].split(", ")[-5:])
# CHECK-NEXT: rope_mla grid 32 stream 0x5000 ['0.12751743{{[0-9]*}}', "'0x50000000'", "'0x80000000'", '64', "'0x90000000']"]
runtime.set_driver(None)

# Manifests whose rope breaks the conventions are refused when loaded.
def packed(m, positions):
    """`m` made a packed-sequence kernel's (over its paged cache), its
    positions operand of shape `positions`."""
    m["grid"].update(rule="persistent_varlen")
    for i in (0, 3):
        m["operands"][i].update(shape=m["operands"][i]["shape"][1:])
    m["operands"][4].update(shape=[32, -1])
    m["operands"][-1].update(shape=positions)
    m["operands"].extend({"name": n, "element": "i32", "shape": [-1]}
                         for n in ("cu_seqlens_q", "cu_seqlens_k"))
    for t in m["tensor_maps"]:
        if t["operand"] in ("query", "output"):
            t.update(box=t["box"][:3] + [1], varlen=True)


good = manifest("k", page_size=256, seqused_k=True)
print("good:", runtime.Kernel(good).rope)
print_refusals(good, [
        ("no rope entry", lambda m: m.pop("rope")),
        ("entry without operands", lambda m: (m["operands"].pop(), m["operands"].pop(),
                                              m["params"].pop(), m["params"].pop(),
                                              m["params"].pop())),
        ("no positions", lambda m: (m["operands"].pop(), m["params"].pop())),
        ("entry a list", lambda m: m.update(rope=[0, 128, False])),
        ("no output", lambda m: m["rope"].pop("output")),
        ("output an int", lambda m: m["rope"].update(output=1)),
        ("start a float", lambda m: m["rope"].update(start=0.0)),
        ("columns not the table's", lambda m: m["rope"].update(columns=64)),
        ("dynamic columns", lambda m: (m["rope"].update(columns=-1),
                                       m["operands"][-2].update(shape=[-1, -1]))),
        ("columns 12", lambda m: (m["rope"].update(columns=12),
                                  m["operands"][-2].update(shape=[-1, 12]))),
        ("start 4", lambda m: m["rope"].update(start=4)),
        ("start -8", lambda m: m["rope"].update(start=-8)),
        ("past the head dim", lambda m: m["rope"].update(start=8)),
        ("table element", lambda m: m["operands"][-2].update(element="bf16")),
        ("table rank", lambda m: m["operands"][-2].update(shape=[-1, 2, 64])),
        ("positions element", lambda m: m["operands"][-1].update(element="i64")),
        ("positions rank", lambda m: m["operands"][-1].update(shape=[-1])),
        ("rope_positions source", lambda m: m["params"][-2].update(source="cos_sin.shape[2]")),
        ("fp8", lambda m: ([o.update(element="f8E4M3FN") for o in m["operands"][:3]],
                           [t.update(element="e4m3") for t in m["tensor_maps"][:3]],
                           m["tensor_maps"][2].update(key_major=True, box=[128, 1, 128, 1]))),
        ("packed sequences, positions [B, Sq]", lambda m: packed(m, [-1, -1])),
        ("packed sequences, positions [total_q]", lambda m: packed(m, [-1]))])
# CHECK-NEXT: good: Rope(start=0, columns=128, output=False)
# CHECK-NEXT: no rope entry: operands 'cos_sin', 'positions' without a 'rope' entry (start, columns, output)
# CHECK-NEXT: entry without operands: 'rope' needs operands 'cos_sin' [positions, rotary_dims] and 'positions' [batch, seq_q] ([total_q] packed); the manifest lists neither
# CHECK-NEXT: no positions: 'rope' needs operands 'cos_sin' [positions, rotary_dims] and 'positions' [batch, seq_q] ([total_q] packed); the manifest lists 'cos_sin'
# CHECK-NEXT: entry a list: 'rope' must be {start, columns: integers, output: a boolean}, got [0, 128, False]
# CHECK-NEXT: no output: 'rope' must be {start, columns: integers, output: a boolean}, got {'columns': 128, 'start': 0}
# CHECK-NEXT: output an int: 'rope' must be {start, columns: integers, output: a boolean}, got {'columns': 128, 'output': 1, 'start': 0}
# CHECK-NEXT: start a float: 'rope' must be {start, columns: integers, output: a boolean}, got {'columns': 128, 'output': False, 'start': 0.0}
# CHECK-NEXT: columns not the table's: rope columns 64 is not cos_sin's dimension 1 (rotary_dims), 128
# CHECK-NEXT: dynamic columns: rope start 0 and columns -1 must be multiples of 8, columns positive (pairs are rotated four at a time)
# CHECK-NEXT: columns 12: rope start 0 and columns 12 must be multiples of 8, columns positive (pairs are rotated four at a time)
# CHECK-NEXT: start 4: rope start 4 and columns 128 must be multiples of 8, columns positive (pairs are rotated four at a time)
# CHECK-NEXT: start -8: rope start -8 and columns 128 must be multiples of 8, columns positive (pairs are rotated four at a time)
# CHECK-NEXT: past the head dim: rope rotates columns [8, 136) of query, whose head dim is 128
# CHECK-NEXT: table element: operand 'cos_sin': element 'bf16' is not one of ['f32']
# CHECK-NEXT: table rank: operand 'cos_sin' must have rank 2 ([positions, rotary_dims]), got 3
# CHECK-NEXT: positions element: operand 'positions': element 'i64' is not one of ['i32']
# CHECK-NEXT: positions rank: operand 'positions' must have rank 2 ([batch, seq_q]), got 1
# CHECK-NEXT: rope_positions source: param 'rope_positions': no operand dimension cos_sin.shape[2]
# CHECK-NEXT: fp8: rope rotates 16-bit queries; the query is e4m3
# CHECK-NEXT: packed sequences, positions [B, Sq]: operand 'positions' must have rank 1 ([total_q]), got 2
# CHECK-NEXT: packed sequences, positions [total_q]: accepted

# With output, O's head dim bounds the rotated columns too.
narrow = manifest("k", head_dim_v=96, rope=(64, 64, True))
print_refusals(narrow, [("output past O's head dim", lambda m: None),
                        ("without output", lambda m: m["rope"].update(output=False))])
# CHECK-NEXT: output past O's head dim: rope rotates columns [64, 128) of output, whose head dim is 96
# CHECK-NEXT: without output: accepted

# Packed sequences: positions [total_q] i32, one per packed query row (the
# kernel reads positions[cu_seqlens_q[b] + i]), the rope's params after
# the sequence tables and O's rows; chosen as a dense batch's are.
PACKED = TMP / "packed"
PACKED.mkdir()
for name, options in [("varlen", {}), ("rope_varlen", dict(rope=(0, 128, False))),
                      ("rope_varlen_out", dict(rope=(64, 64, True)))]:
    torch_standin.write_kernel(PACKED, name, "bf16", 32, 8, True, True, head_dim=128,
                               varlen=True, arch="sm_90a", query_rows=64, **options)
packed_kernels = runtime.KernelDirectory(PACKED)
for kernel in packed_kernels:
    print(repr(kernel), "| rope", kernel.rope, kernel.operands.get("positions"))
print("packed positions:", runtime._dimension_names("positions", True), "errors",
      packed_kernels.errors)
# CHECK-NEXT: <fa4 kernel rope_varlen sm_90a bf16 heads 32/8 head_dim 128 causal True varlen rope start 0 columns 128 scale 0.0883883476483184{{[0-9]}} lse True> | rope Rope(start=0, columns=128, output=False) ('i32', (-1,))
# CHECK-NEXT: <fa4 kernel rope_varlen_out sm_90a bf16 heads 32/8 head_dim 128 causal True varlen rope start 64 columns 64 output scale 0.0883883476483184{{[0-9]}} lse True> | rope Rope(start=64, columns=64, output=True) ('i32', (-1,))
# CHECK-NEXT: <fa4 kernel varlen sm_90a bf16 heads 32/8 head_dim 128 causal True varlen scale 0.0883883476483184{{[0-9]}} lse True> | rope None None
# CHECK-NEXT: packed positions: ('total_q',) errors []
packed_problem = dict(problem, varlen=True)
for label, extra in [("varlen", {}), ("varlen rope", dict(rope=(0, 128, False))),
                     ("varlen rope output", dict(rope=(64, 64, True)))]:
    print(f"{label}:", packed_kernels.find(**packed_problem, **extra).name)
# CHECK-NEXT: varlen: varlen
# CHECK-NEXT: varlen rope: rope_varlen
# CHECK-NEXT: varlen rope output: rope_varlen_out
try:
    packed_kernels.find(**packed_problem, rope=(0, 64, False))
except LookupError as err:
    print("\n".join(line.strip() for line in str(err).splitlines()[1:]))
# CHECK-NEXT: rope_varlen (rope_varlen.json): rope is start 0 columns 128, not start 0 columns 64
# CHECK-NEXT: rope_varlen_out (rope_varlen_out.json): rope is start 64 columns 64 output, not start 0 columns 64
# CHECK-NEXT: varlen (varlen.json): rope is none, not start 0 columns 64
try:
    packed_kernels.find(**problem, rope=(0, 128, False))
except LookupError as err:
    print("dense rope:", " | ".join(line.strip() for line in str(err).splitlines()[1:]))
# CHECK-NEXT: dense rope: rope_varlen (rope_varlen.json): varlen is True, not False | rope_varlen_out (rope_varlen_out.json): varlen is True, not False; rope is start 64 columns 64 output, not start 0 columns 128 | varlen (varlen.json): varlen is True, not False; rope is none, not start 0 columns 128

# Three sequences in 700 packed query rows; the table, P and the positions
# are the last parameters.
rope_varlen = next(k for k in packed_kernels if k.name == "rope_varlen")
packed_operands = {"query": (0x10000000, (700, 32, 128), "bf16"),
                   "key": (0x20000000, (900, 8, 128), "bf16"),
                   "value": (0x30000000, (900, 8, 128), "bf16"),
                   "output": (0x40000000, (700, 32, 128), "bf16"),
                   "lse": (0x50000000, (32, 700), "f32"),
                   "cu_seqlens_q": (0x60000000, (4,), "i32"),
                   "cu_seqlens_k": (0x68000000, (4,), "i32"),
                   "cos_sin": (0x80000000, (4096, 128), "f32"),
                   "positions": (0x90000000, (700,), "i32")}
print([f"{a.name}={a.value:#x}" if a.kind == "pointer" else f"{a.name}={a.value}"
       for a in rope_varlen.arguments(packed_operands)[4:]])
# CHECK-NEXT: ['sequence_bounds=4', 'total_q=700', 'total_kv=900', 'scale_log2=0.12751743{{[0-9]*}}', 'lse=0x50000000', 'cu_seqlens_q=0x60000000', 'cu_seqlens_k=0x68000000', 'output_rows=0x40000000', 'cos_sin=0x80000000', 'rope_positions=4096', 'positions=0x90000000']
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in rope_varlen.params]
rope_varlen.launch(packed_operands, stream=0x5000)
print(fake.launches[-1].split(", ")[-4:])
runtime.set_driver(None)
# CHECK-NEXT: ["'0x40000000'", "'0x80000000'", '4096', "'0x90000000']"]

# Positions of a dense batch, or of another count of rows, are refused.
for label, change in [
        ("no positions", {"positions": None}),
        ("positions [B, Sq]", {"positions": (0x90000000, (3, 300), "i32")}),
        ("positions [total_q - 1]", {"positions": (0x90000000, (699,), "i32")}),
        ("positions [total_k]", {"positions": (0x90000000, (900,), "i32")}),
        ("positions strided", {"positions": (0x90000000, (700,), "i32", (2,))})]:
    given = {name: value for name, value in dict(packed_operands, **change).items()
             if value is not None}
    try:
        rope_varlen.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: no positions: kernel rope_varlen needs operand 'positions' (it was compiled with a rotary embedding: cos_sin f32 [positions, 128] and positions i32 [total_q])
# CHECK-NEXT: positions [B, Sq]: positions: rank 2 (shape [3, 300]), kernel rope_varlen takes rank 1
# CHECK-NEXT: positions [total_q - 1]: positions: shape [699], expected [total_q] = [700] (a position per packed query token)
# CHECK-NEXT: positions [total_k]: positions: shape [900], expected [total_q] = [700] (a position per packed query token)
# CHECK-NEXT: positions strided: positions: must be contiguous, got strides [2]
