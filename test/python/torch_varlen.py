# RUN: %python %s | FileCheck %s
"""fa4.torch.attention_varlen and fa4.flash_attn_varlen_func against the
stand-in torch and the fake libcuda: the choice of a packed-sequence kernel,
the tensor maps of packed tensors ((D, H, T, 1) from the tensor), the grid
bound, the parameters and their order, the results' layouts, the
paths that launch nothing, and what is refused."""

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
from fa4 import flash_attn_varlen_func, runtime  # noqa: E402
from manifests import print_refusals  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-varlen-"))
atexit.register(shutil.rmtree, TMP, True)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
torch_standin.write_kernel(TMP, "dense", "bf16", 4, 2, True, True)
torch_standin.write_kernel(TMP, "varlen_causal_lse", "bf16", 4, 2, True, True, varlen=True)
torch_standin.write_kernel(TMP, "varlen_seqused_sink", "bf16", 4, 2, False, False, sink=True,
                           varlen=True, seqused_k=True)
fake = FakeCuda()
runtime.set_driver(fake)
directory = runtime.KernelDirectory(TMP)
print("fa4.attention_varlen is fa4.torch.attention_varlen:",
      fa4.attention_varlen is fa4.torch.attention_varlen)
print([repr(k) for k in directory if k.varlen])
# CHECK: fa4.attention_varlen is fa4.torch.attention_varlen: True
# CHECK-NEXT: ['<fa4 kernel varlen_causal_lse sm_100a bf16 heads 4/2 head_dim 64 causal True varlen scale 0.125 lse True>', '<fa4 kernel varlen_seqused_sink sm_100a bf16 heads 4/2 head_dim 64 causal False sink varlen seqused_k scale 0.125 lse False>']


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


# Three sequences in 700 query rows and 900 keys.
q, k, v = tensor((700, 4, 64)), tensor((900, 2, 64)), tensor((900, 2, 64))
cu_q, cu_k = tensor((4,), torch.int32), tensor((4,), torch.int32)
expect("varlen_causal_lse")
out, lse = fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, causal=True, return_lse=True)
print("out", out.shape, out.dtype, "lse", lse.shape, lse.dtype)
launch = fake.launches[-1]
print(launch)
# CHECK-NEXT: out (700, 4, 64) torch.bfloat16 lse (4, 700) torch.float32
# tiles <= head_blocks * (ceil(700 / 256) + 3) = 4 * 6; sequence_bounds,
# total_q, total_kv; the tables last.
# CHECK-NEXT: varlen_causal_lse grid 24 stream 0x5000 params ['map of [[QB:0x[0-9a-f]+]]', 'map of [[KB:0x[0-9a-f]+]]', 'map of [[VB:0x[0-9a-f]+]]', 'map of [[OB:0x[0-9a-f]+]]', 4, 700, 900, 0.18033687{{[0-9]*}}, '[[L:0x[0-9a-f]+]]', '[[CQ:0x[0-9a-f]+]]', '[[CK:0x[0-9a-f]+]]', '[[OB]]']

# The packed maps: (D, H, T, 1) from the tensor's address.
for name, t in (("q", q), ("k", k), ("out", out)):
    print(name, "map of its address:", f"map of {t.data_ptr():#x}" in launch, "dims",
          fake.dims[t.data_ptr()], "strides", fake.strides[t.data_ptr()])
print("lse", f"{lse.data_ptr():#x}" in launch, "cu_seqlens, then O's rows",
      f"'{cu_q.data_ptr():#x}', '{cu_k.data_ptr():#x}', '{out.data_ptr():#x}']" in launch)
# CHECK-NEXT: q map of its address: True dims [64, 4, 700, 1] strides [128, 512, 512]
# CHECK-NEXT: k map of its address: True dims [64, 2, 900, 1] strides [128, 256, 256]
# CHECK-NEXT: out map of its address: True dims [64, 4, 700, 1] strides [128, 512, 512]
# CHECK-NEXT: lse True cu_seqlens, then O's rows True

# seqused_k and sinks: the kernel that takes them, the tables in order.
expect("varlen_seqused_sink")
used, sinks = tensor((3,), torch.int32), tensor((4,), torch.float32)
fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, seqused_k=used, sink=sinks)
print("seqused:", fake.launches[-1].split(" grid")[0],
      f"'{sinks.data_ptr():#x}', '{cu_q.data_ptr():#x}', '{cu_k.data_ptr():#x}', "
      f"'{used.data_ptr():#x}', " in fake.launches[-1])
# CHECK-NEXT: seqused: varlen_seqused_sink True

# A dense problem never takes a packed kernel, nor a packed one a dense kernel.
expect("dense")
fa4.torch.attention(tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64)), tensor((2, 500, 2, 64)),
                    causal=True, return_lse=True)
print("dense:", fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: dense: dense
try:
    directory.find("bf16", 4, 2, 64, causal=True, varlen=True)
except LookupError as err:
    print("\n".join(sorted(line.strip() for line in str(err).splitlines()[1:])))
# CHECK-NEXT: dense (dense.json): lse is True, not False; varlen is False, not True
# CHECK-NEXT: varlen_causal_lse (varlen_causal_lse.json): lse is True, not False
# CHECK-NEXT: varlen_seqused_sink (varlen_seqused_sink.json): causal is False, not True; sink is True, not False; seqused_k is True, not False

# Nothing to launch: no query rows, no sequences; sequences without keys
# give O = 0 and LSE -inf without a launch.
launches = len(fake.launches)
expect("varlen_causal_lse")
empty, _ = fa4.torch.attention_varlen(tensor((0, 4, 64)), k, v, cu_q, cu_k, causal=True,
                                      return_lse=True)
none, _ = fa4.torch.attention_varlen(q, k, v, tensor((1,), torch.int32),
                                     tensor((1,), torch.int32), causal=True, return_lse=True)
keyless, keyless_lse = fa4.torch.attention_varlen(q, tensor((0, 2, 64)), tensor((0, 2, 64)),
                                                  cu_q, cu_k, causal=True, return_lse=True)
print("no launch:", len(fake.launches) == launches, empty.shape, none.shape,
      "no keys: O", keyless.filled, "LSE", keyless_lse.filled)
# CHECK-NEXT: no launch: True (0, 4, 64) (700, 4, 64) no keys: O 0.0 LSE -inf

bad = [
    ("q 4-D", lambda: fa4.torch.attention_varlen(tensor((1, 700, 4, 64)), k, v, cu_q, cu_k)),
    ("k/v", lambda: fa4.torch.attention_varlen(q, k, tensor((899, 2, 64)), cu_q, cu_k)),
    ("table dtype", lambda: fa4.torch.attention_varlen(q, k, v, tensor((4,), torch.float32),
                                                      cu_k)),
    ("table rank", lambda: fa4.torch.attention_varlen(q, k, v, tensor((4, 1), torch.int32),
                                                     cu_k)),
    ("table lengths", lambda: fa4.torch.attention_varlen(q, k, v, cu_q,
                                                        tensor((5,), torch.int32))),
    ("no bounds", lambda: fa4.torch.attention_varlen(q, k, v, tensor((0,), torch.int32),
                                                    tensor((0,), torch.int32))),
    ("seqused length", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k,
                                                         seqused_k=tensor((4,), torch.int32))),
    ("table device", lambda: fa4.torch.attention_varlen(
        q, k, v, tensor((4,), torch.int32, device=torch_standin.Device("cpu")), cu_k)),
    ("sink", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k,
                                               sink=tensor((2,), torch.float32))),
    ("no kernel", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, window=(8, 8))),
]
for label, call in bad:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: q 4-D: ValueError: q must be 3-D [total_q, Hq, D], got shape [1, 700, 4, 64]
# CHECK-NEXT: k/v: ValueError: k and v shapes differ: [900, 2, 64] and [899, 2, 64]
# CHECK-NEXT: table dtype: ValueError: cu_seqlens_q must be a 1-D torch.int32 tensor, got torch.float32 of shape [4]
# CHECK-NEXT: table rank: ValueError: cu_seqlens_q must be a 1-D torch.int32 tensor, got torch.int32 of shape [4, 1]
# CHECK-NEXT: table lengths: ValueError: cu_seqlens_q and cu_seqlens_k must each hold batch + 1 >= 1 offsets, got 4 and 5
# CHECK-NEXT: no bounds: ValueError: cu_seqlens_q and cu_seqlens_k must each hold batch + 1 >= 1 offsets, got 0 and 0
# CHECK-NEXT: seqused length: ValueError: seqused_k must hold one count per sequence (3), got 4
# CHECK-NEXT: table device: ValueError: cu_seqlens_q is on cpu, q on cuda:0
# CHECK-NEXT: sink: ValueError: sink must have shape [heads_q] = [4], got [2]
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}} window=(8, 8) softcap=0.0 sink=False varlen=True; candidates:

# The runtime checks the tables' lengths itself.
kernel = next(k for k in directory if k.name == "varlen_causal_lse")
operands = {"query": (0x100000, (700, 4, 64), "bf16"), "key": (0x200000, (900, 2, 64), "bf16"),
            "value": (0x300000, (900, 2, 64), "bf16"),
            "output": (0x400000, (700, 4, 64), "bf16"), "lse": (0x500000, (4, 700), "f32"),
            "cu_seqlens_q": (0x600000, (4,), "i32"), "cu_seqlens_k": (0x700000, (3,), "i32")}
for label, change in [
        ("lengths", {}),
        ("lse layout", {"cu_seqlens_k": (0x700000, (4,), "i32"),
                        "lse": (0x500000, (1, 4, 700), "f32")}),
        ("table element", {"cu_seqlens_k": (0x700000, (4,), "f32")}),
        ("strided output", {"cu_seqlens_k": (0x700000, (4,), "i32"),
                            "output": (0x400000, (700, 4, 64), "bf16", (512, 64, 1))})]:
    try:
        kernel.arguments(dict(operands, **change))
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: lengths: cu_seqlens_q and cu_seqlens_k must both hold batch + 1 >= 1 prefix sums, got 4 and 3 entries
# CHECK-NEXT: lse layout: lse: rank 3 (shape [1, 4, 700]), kernel varlen_causal_lse takes rank 2
# CHECK-NEXT: table element: cu_seqlens_k: element f32, kernel varlen_causal_lse takes i32
# CHECK-NEXT: strided output: output: a packed output must be contiguous, got strides [512, 64, 1]
print("grid", kernel.grid(3, 700, 148), kernel.grid(0, 700, 148), kernel.grid(3, 0, 148),
      kernel.grid(1000, 100000, 148), kernel.extent(dict(operands)))
# CHECK-NEXT: grid (24, 1, 1) (0, 1, 1) (0, 1, 1) (148, 1, 1) (3, 700)

# Manifests that mix the packed and dense conventions are refused.
import json  # noqa: E402
packed = json.loads((TMP / "varlen_causal_lse.json").read_text())
dense = json.loads((TMP / "dense.json").read_text())
print_refusals(packed, [
        ("dense map", lambda m: m["tensor_maps"][1].pop("varlen")),
        ("map rank", lambda m: m["tensor_maps"][0].update(box=[64, 1, 128])),
        ("no cu_seqlens_k", lambda m: m.update(operands=[o for o in m["operands"]
                                                         if o["name"] != "cu_seqlens_k"])),
        ("table element", lambda m: m["operands"][-1].update(element="i64")),
        ("query rank", lambda m: m["operands"][0].update(shape=[-1, -1, 4, 64])),
        ("dense lse", lambda m: m["operands"][4].update(shape=[-1, 4, -1]))])
dense["operands"].append({"name": "cu_seqlens_q", "element": "i32", "shape": [-1]})
try:
    runtime.Kernel(dense)
except runtime.ManifestError as err:
    print(f"tables in a dense manifest: {err}")
dense["operands"].pop()
dense["tensor_maps"][2]["varlen"] = True
try:
    runtime.Kernel(dense)
except runtime.ManifestError as err:
    print(f"packed map in a dense manifest: {err}")
# CHECK-NEXT: dense map: tensor_maps[1]: a dense map over 'key' under the persistent_varlen grid rule
# CHECK-NEXT: map rank: tensor_maps[0]: box [64, 1, 128] does not match the rank of 'query'
# CHECK-NEXT: no cu_seqlens_k: needs operand 'cu_seqlens_k'
# CHECK-NEXT: table element: operand 'cu_seqlens_k': element 'i64' is not one of ['i32']
# CHECK-NEXT: query rank: operand 'query' must have rank 3 ([total, heads, head_dim]), got 4
# CHECK-NEXT: dense lse: operand 'lse' must have rank 2 ([heads_q, total_q]), got 3
# CHECK-NEXT: tables in a dense manifest: sequence tables (cu_seqlens_q, ...) belong to the persistent_varlen grid rule, the manifest's is persistent
# CHECK-NEXT: packed map in a dense manifest: tensor_maps[2]: a packed map over 'value' under the persistent grid rule

# What a fuzzing campaign found: each refused with a ManifestError or a
# ValueError naming the value, never another exception.
print_refusals(packed, [
        ("infinite smem", lambda m: m.update(dynamic_smem_bytes=float("inf"))),
        ("huge f32 source", lambda m: m.update(scale_log2=10 ** 400)),
        ("packed map on a capture", lambda m: (m["operands"].append(
            {"name": "capture0", "element": "bf16", "shape": [64]}), m["tensor_maps"].append(
            {"operand": "capture0", "element": "bf16", "box": [64, 1], "swizzle": "128B",
             "varlen": True}))),
        ("window", lambda m: m.update(window=5)),
        ("arch", lambda m: m.update(arch=5)),
        ("scale", lambda m: m.update(scale="x")),
        ("files", lambda m: m.update(files=1.5)),
        ("block", lambda m: m.update(block=[-1, 0, 2 ** 40])),
        ("bool rows", lambda m: m["grid"].update(query_rows_per_cta=True))])
# CHECK-NEXT: infinite smem: malformed manifest: OverflowError: cannot convert float infinity to integer
# CHECK-NEXT: huge f32 source: malformed manifest: OverflowError: int too large to convert to float
# CHECK-NEXT: packed map on a capture: tensor_maps[4]: a packed map over 'capture0', which is not a packed [T, H, D] tensor
# CHECK-NEXT: window: 'window' must be [left, right] integers >= -1, got 5
# CHECK-NEXT: arch: 'arch' must be a non-empty string, got 5
# CHECK-NEXT: scale: 'scale' must be a positive, finite number, got 'x'
# CHECK-NEXT: files: 'files' must map kinds to file names, got 1.5
# CHECK-NEXT: block: block [-1, 0, 1099511627776]: each size must lie in [1, 1024]
# CHECK-NEXT: bool rows: the persistent_varlen grid rule needs a positive 'query_rows_per_cta'
good = dict(operands, cu_seqlens_k=(0x700000, (4,), "i32"))
for label, call in [
        ("infinite stride", lambda: kernel.arguments(
            dict(good, key=(0x200000, (900, 2, 64), "bf16", (float("inf"), 64, 1))))),
        ("fractional rows", lambda: kernel.arguments(
            dict(good, query=(0x100000, (700.9, 4, 64), "bf16")))),
        ("pointer past 2^64", lambda: kernel.arguments(
            dict(good, cu_seqlens_q=(2 ** 64 + 16, (4,), "i32")))),
        ("bool pointer", lambda: kernel.arguments(dict(good, cu_seqlens_q=(True, (4,), "i32")))),
        ("negative batch", lambda: kernel.grid(-5, 700, 148)),
        ("float rows", lambda: kernel.grid(3, 700.0, 148)),
        ("underflowing scale", lambda: kernel.arguments(good, scale=1e-50)),
        ("bool scale", lambda: kernel.arguments(good, scale=True)),
        ("infinite window", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k,
                                                              window=(float("inf"), -1))),
        ("string window", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k,
                                                            window="12")),
        ("string scale", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, scale="0.1")),
        ("list softcap", lambda: fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, softcap=[1])),
        ("bool max_seqlen", lambda: flash_attn_varlen_func(q, k, v, cu_q, cu_k, True, 5))]:
    try:
        call()
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: infinite stride: key: shape [900, 2, 64] and strides [inf, 64, 1] must be integers
# CHECK-NEXT: fractional rows: query: shape [700.9, 4, 64] and strides None must be integers
# CHECK-NEXT: pointer past 2^64: cu_seqlens_q: the device address must be an int in [0, 2^64), got 18446744073709551632
# CHECK-NEXT: bool pointer: cu_seqlens_q: the device address must be an int in [0, 2^64), got True
# CHECK-NEXT: negative batch: grid: batch must be a non-negative integer, got -5
# CHECK-NEXT: float rows: grid: seq_q must be a non-negative integer, got 700.0
# CHECK-NEXT: underflowing scale: scale_log2 = 1.4427e-50 (scale 1e-50) underflows the kernel's f32 argument
# CHECK-NEXT: bool scale: scale must be a real number, got True
# CHECK-NEXT: infinite window: window must be (left, right) integers, got (inf, -1)
# CHECK-NEXT: string window: window must be (left, right) integers, got '12'
# CHECK-NEXT: string scale: scale must be a real number, got '0.1'
# CHECK-NEXT: list softcap: softcap must be a real number, got [1]
# CHECK-NEXT: bool max_seqlen: max_seqlen_q must be a non-negative int, got True
(TMP / "zz_bytes.json").write_bytes(b'{"kernel": "\xff"}')
(TMP / "zz_nested.json").write_text("[" * 100000 + "]" * 100000)
print("unreadable manifests:", [(name, why.split(":")[0]) for name, why in
                                runtime.KernelDirectory(TMP).errors])
# CHECK-NEXT: unreadable manifests: [('zz_bytes.json', 'not JSON'), ('zz_nested.json', 'not JSON')]

# flash_attn_varlen_func: flash-attn 2's signature over attention_varlen.
expect("varlen_causal_lse")
out, softmax_lse, s_dmask = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 400, 500,
                                                   causal=True, window_size=(-1, 5),
                                                   return_attn_probs=True)
print("flash_attn_varlen_func:", out.shape, softmax_lse.shape, s_dmask,
      fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: flash_attn_varlen_func: (700, 4, 64) (4, 700) None varlen_causal_lse
expect("varlen_seqused_sink")
flash_attn_varlen_func(q, k, v, cu_q, cu_k, 400, 500, seqused_k=used, sink=sinks)
print("flash-attn 3's seqused_k:", fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: flash-attn 3's seqused_k: varlen_seqused_sink
# Packed sequences over a paged cache: K and V pages [10, 256, 2, 64], a
# page-table row per sequence; K's and V's maps are the cache's.
PAGED = TMP / "paged"
PAGED.mkdir()
torch_standin.write_kernel(PAGED, "varlen_paged", "bf16", 4, 2, True, False, varlen=True,
                           page_size=256)
fake.kinds = [kind for _, kind, _ in next(iter(runtime.KernelDirectory(PAGED))).params]
pages, table = tensor((10, 256, 2, 64)), tensor((3, 5), torch.int32)
flash_attn_varlen_func(q, pages, pages, cu_q, cu_k, 400, 500, causal=True,
                       block_table=table, kernel_dir=str(PAGED))
launch = fake.launches[-1]
print("paged:", launch.split(" grid")[0], "page map dims", fake.dims[pages.data_ptr()],
      "table then max_pages last", launch.endswith(f"'{table.data_ptr():#x}', 5]"))
fa4.torch.attention_varlen(q, pages, pages, cu_q, cu_k, causal=True, page_table=table,
                           kernel_dir=str(PAGED))
again = fake.launches[-1]
print("attention_varlen paged:", again.split(" grid")[0],
      f"map of {pages.data_ptr():#x}" in again,
      again.endswith(f"'{table.data_ptr():#x}', 5]"))
# CHECK-NEXT: paged: varlen_paged page map dims [64, 2, 256, 10] table then max_pages last True
# CHECK-NEXT: attention_varlen paged: varlen_paged True True
# CHECK-NEXT: packed k with a table: ValueError: k must be 4-D [num_pages, page_size, Hkv, D], got shape [900, 2, 64]
# CHECK-NEXT: table rows: ValueError: page_table must be [B, max_pages] with B = 3 (the sequences), got shape [2, 5]
for label, call in [
        ("packed k with a table", lambda: fa4.torch.attention_varlen(
            q, k, v, cu_q, cu_k, causal=True, page_table=table, kernel_dir=str(PAGED))),
        ("table rows", lambda: fa4.torch.attention_varlen(
            q, pages, pages, cu_q, cu_k, causal=True,
            page_table=tensor((2, 5), torch.int32), kernel_dir=str(PAGED)))]:
    try:
        call()
        print(label + ": accepted")
    except (TypeError, ValueError) as err:
        print(f"{label}: {type(err).__name__}: {err}")
runtime.set_driver(None)
