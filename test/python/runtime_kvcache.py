# RUN: %python %s | FileCheck %s
"""fa4.runtime on KV-cache kernels, without a GPU: hand-written manifests of
a paged kernel (K/V [pages, P, Hkv, D] read through page_table [B,
max_pages], with seqused_k) and of a dense one with seqused_k, as
fa4-compile writes them; what they compute and how they are chosen (never
for a plain problem, nor a plain kernel for theirs), the checks of the
tensors given (int32, contiguity, [B] and [B, max_pages] with B from the
query, the page size), the parameters in order, the paged tensor maps, the
grid, manifests that break the conventions, and a launch against the fake
libcuda."""

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
from torch_standin import FakeCuda  # noqa: E402  (the fake libcuda; torch is not installed)

from fa4 import runtime  # noqa: E402
from manifests import kvcache_manifest, print_refusals  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-kvcache-"))
atexit.register(shutil.rmtree, TMP, True)


def manifest(kernel, **options):
    """A sm_100a KV-cache kernel's manifest (manifests.kvcache_manifest)."""
    return kvcache_manifest(kernel, **options)


for name, options in [("plain", dict(seqused_k=False)),
                      ("seqused", dict()),
                      ("paged256", dict(page_size=256)),
                      ("paged256_all", dict(page_size=256, seqused_k=False)),
                      ("paged128", dict(page_size=128))]:
    (TMP / f"{name}.json").write_text(json.dumps(manifest(name, **options)))
    (TMP / f"{name}.cubin").write_bytes(b"\x7fELF")
directory = runtime.KernelDirectory(TMP)
for kernel in directory:
    print(repr(kernel), "| seqused_k", kernel.seqused_k, "paged", kernel.paged, "page_size",
          kernel.page_size, "kvcache", kernel.kvcache)
print("errors", directory.errors)
# CHECK: <fa4 kernel paged128 sm_100a bf16 heads 32/8 head_dim 128 causal True seqused_k paged 128 scale 0.08838834764831845 lse True> | seqused_k True paged True page_size 128 kvcache True
# CHECK-NEXT: <fa4 kernel paged256 sm_100a bf16 heads 32/8 head_dim 128 causal True seqused_k paged 256 scale 0.08838834764831845 lse True> | seqused_k True paged True page_size 256 kvcache True
# CHECK-NEXT: <fa4 kernel paged256_all sm_100a bf16 heads 32/8 head_dim 128 causal True paged 256 scale 0.08838834764831845 lse True> | seqused_k False paged True page_size 256 kvcache True
# CHECK-NEXT: <fa4 kernel plain sm_100a bf16 heads 32/8 head_dim 128 causal True scale 0.08838834764831845 lse True> | seqused_k False paged False page_size None kvcache False
# CHECK-NEXT: <fa4 kernel seqused sm_100a bf16 heads 32/8 head_dim 128 causal True seqused_k scale 0.08838834764831845 lse True> | seqused_k True paged False page_size None kvcache True
# CHECK-NEXT: errors []

# The choice: each problem its own kernel; a plain problem never takes a
# KV-cache kernel (nor the reverse).
problem = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
               arch="sm_100a")
for label, extra in [("plain", {}), ("seqused", dict(seqused_k=True)),
                     ("paged 256", dict(seqused_k=True, page_size=256)),
                     ("paged 256 all keys", dict(page_size=256)),
                     ("paged 128", dict(seqused_k=True, page_size=128))]:
    print(f"{label}:", directory.find(**problem, **extra).name)
# CHECK-NEXT: plain: plain
# CHECK-NEXT: seqused: seqused
# CHECK-NEXT: paged 256: paged256
# CHECK-NEXT: paged 256 all keys: paged256_all
# CHECK-NEXT: paged 128: paged128
for label, extra in [("paged 64", dict(seqused_k=True, page_size=64)),
                     ("plain without lse", dict(lse=False))]:
    try:
        directory.find(**dict(problem, **extra))
    except LookupError as err:
        lines = str(err).splitlines()
        print(f"{label}:", lines[0].split(" for ")[1])
        print("\n".join(line.strip() for line in lines[1:]))
# CHECK-NEXT: paged 64: dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=True arch=sm_100a window=(-1, 0) softcap=0.0 sink=False seqused_k=True page_size=64; candidates:
# CHECK-NEXT: paged128 (paged128.json): page_size is 128, not 64
# CHECK-NEXT: paged256 (paged256.json): page_size is 256, not 64
# CHECK-NEXT: paged256_all (paged256_all.json): seqused_k is False, not True; page_size is 256, not 64
# CHECK-NEXT: plain (plain.json): seqused_k is False, not True; paged is False, not True
# CHECK-NEXT: seqused (seqused.json): paged is False, not True
# CHECK-NEXT: plain without lse: dtype=bf16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=False arch=sm_100a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT: paged128 (paged128.json): lse is True, not False; seqused_k is True, not False; paged is True, not False
# CHECK-NEXT: paged256 (paged256.json): lse is True, not False; seqused_k is True, not False; paged is True, not False
# CHECK-NEXT: paged256_all (paged256_all.json): lse is True, not False; paged is True, not False
# CHECK-NEXT: plain (plain.json): lse is True, not False
# CHECK-NEXT: seqused (seqused.json): lse is True, not False; seqused_k is True, not False
paged = next(k for k in directory if k.name == "paged256")
print("not compared:", paged.mismatches(dtype="bf16"), "paged with varlen:", end=" ")
try:
    directory.find("bf16", 32, 8, 128, varlen=True, page_size=256)
except LookupError as err:
    print(str(err).splitlines()[0])
# CHECK-NEXT: not compared: [] paged with varlen: no fa4 kernel in {{.*}} varlen=True page_size=256; candidates:

# A decode launch: 4 batches of 2 new tokens, 40 pages of 256 keys, up to
# 9 pages (2304 keys) per batch.
operands = {"query": (0x10000000, (4, 2, 32, 128), "bf16"),
            "key": (0x20000000, (40, 256, 8, 128), "bf16"),
            "value": (0x30000000, (40, 256, 8, 128), "bf16"),
            "output": (0x40000000, (4, 2, 32, 128), "bf16"),
            "lse": (0x50000000, (4, 32, 2), "f32"),
            "seqused_k": (0x60000000, (4,), "i32"),
            "page_table": (0x70000000, (4, 9), "i32")}
for arg in paged.arguments(operands):
    print(arg.name, arg.kind, arg.value.describe() if arg.kind == "tensor_map" else arg.value)
print("grid", paged.grid(*paged.extent(operands), 132), "extent", paged.extent(operands))
# The key and value maps are (D, H, P, pages) over the pages.
# CHECK-NEXT: query_map tensor_map dims [128, 32, 2, 4], strides [256, 8192, 16384] B, box [64, 4, 32, 1], address 0x10000000
# CHECK-NEXT: key_map tensor_map dims [128, 8, 256, 40], strides [256, 2048, 524288] B, box [64, 1, 128, 1], address 0x20000000
# CHECK-NEXT: value_map tensor_map dims [128, 8, 256, 40], strides [256, 2048, 524288] B, box [64, 1, 128, 1], address 0x30000000
# CHECK-NEXT: output_map tensor_map dims [128, 32, 2, 4], strides [256, 8192, 16384] B, box [64, 4, 32, 1], address 0x40000000
# CHECK-NEXT: batch i32 4
# CHECK-NEXT: seq_q i32 2
# CHECK-NEXT: seq_kv i32 256
# CHECK-NEXT: scale_log2 f32 0.12751743082459868
# CHECK-NEXT: lse pointer 1342177280
# CHECK-NEXT: seqused_k pointer 1610612736
# CHECK-NEXT: page_table pointer 1879048192
# CHECK-NEXT: max_pages i32 9
# CHECK-NEXT: grid (32, 1, 1) extent (4, 2)

# Tensors that do not fit: each named, with what the kernel takes.
for label, change in [
        ("no page table", {"page_table": None}),
        ("no seqused_k", {"seqused_k": None}),
        ("page size", {"key": (0x20000000, (40, 128, 8, 128), "bf16"),
                       "value": (0x30000000, (40, 128, 8, 128), "bf16")}),
        ("value pages", {"value": (0x30000000, (41, 256, 8, 128), "bf16")}),
        ("table element", {"page_table": (0x70000000, (4, 9), "f32")}),
        ("table rank", {"page_table": (0x70000000, (36,), "i32")}),
        ("table rows", {"page_table": (0x70000000, (3, 9), "i32")}),
        ("table strides", {"page_table": (0x70000000, (4, 9), "i32", (16, 1))}),
        ("table alignment", {"page_table": (0x70000002, (4, 9), "i32")}),
        ("too many keys", {"page_table": (0x70000000, (4, 2 ** 23), "i32")}),
        ("seqused_k element", {"seqused_k": (0x60000000, (4,), "i64")}),
        ("seqused_k length", {"seqused_k": (0x60000000, (5,), "i32")}),
        ("seqused_k strides", {"seqused_k": (0x60000000, (4,), "i32", (2,))}),
        ("key heads", {"key": (0x20000000, (40, 256, 4, 128), "bf16"),
                       "value": (0x30000000, (40, 256, 4, 128), "bf16")}),
        ("unaligned page", {"key": (0x20000000, (40, 256, 8, 128), "bf16",
                                    (262148, 1024, 128, 1)),
                            "value": (0x30000000, (40, 256, 8, 128), "bf16",
                                      (262148, 1024, 128, 1))})]:
    given = {name: value for name, value in dict(operands, **change).items()
             if value is not None}
    try:
        paged.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: no page table: kernel paged256 needs operand 'page_table' (it reads K and V through a page table)
# CHECK-NEXT: no seqused_k: kernel paged256 needs operand 'seqused_k' (it was compiled with seqused_k, the keys each batch uses)
# CHECK-NEXT: page size: key: dimension 1 (page_size) is 128, kernel paged256 takes 256
# CHECK-NEXT: value pages: key shape [40, 256, 8, 128] and value shape [41, 256, 8, 128] differ
# CHECK-NEXT: table element: page_table: element f32, kernel paged256 takes i32
# CHECK-NEXT: table rank: page_table: rank 1 (shape [36]), kernel paged256 takes rank 2
# CHECK-NEXT: table rows: page_table: 3 rows for a batch of 4 (query dimension 0); it must be [batch, max_pages]
# CHECK-NEXT: table strides: page_table: must be contiguous, got strides [16, 1]
# CHECK-NEXT: table alignment: page_table: address 0x70000002 is not 4-byte aligned
# CHECK-NEXT: too many keys: page_table: 8388608 pages of 256 keys are more keys than the kernel's 32-bit positions hold
# CHECK-NEXT: seqused_k element: seqused_k: element i64, kernel paged256 takes i32
# CHECK-NEXT: seqused_k length: seqused_k: 5 entries for a batch of 4 (query dimension 0)
# CHECK-NEXT: seqused_k strides: seqused_k: must be contiguous, got strides [2]
# CHECK-NEXT: key heads: key: dimension 2 (heads) is 4, kernel paged256 takes 8
# CHECK-NEXT: unaligned page: key: TMA needs byte strides that are positive multiples of 16 below 2^40, got 524296 bytes for dimension 0 (strides [262148, 1024, 128, 1] elements of 2 bytes)

# The dense cache: K/V [B, Skv, Hkv, D] share the query's batch; seqused_k [B].
dense = next(k for k in directory if k.name == "seqused")
dense_operands = {"query": (0x10000000, (4, 2, 32, 128), "bf16"),
                  "key": (0x20000000, (4, 3000, 8, 128), "bf16"),
                  "value": (0x30000000, (4, 3000, 8, 128), "bf16"),
                  "output": (0x40000000, (4, 2, 32, 128), "bf16"),
                  "lse": (0x50000000, (4, 32, 2), "f32"),
                  "seqused_k": (0x60000000, (4,), "i32")}
print("dense:", [(a.name, a.value) for a in dense.arguments(dense_operands)[4:]])
for label, change in [("batch", {"key": (0x20000000, (3, 3000, 8, 128), "bf16"),
                                 "value": (0x30000000, (3, 3000, 8, 128), "bf16")}),
                      ("seqused_k length", {"seqused_k": (0x60000000, (3,), "i32")}),
                      ("a page table", {"page_table": (0x70000000, (4, 9), "i32")})]:
    try:
        dense.arguments(dict(dense_operands, **change))
        print(f"dense {label}: accepted")
    except ValueError as err:
        print(f"dense {label}: {err}")
# CHECK-NEXT: dense: [('batch', 4), ('seq_q', 2), ('seq_kv', 3000), ('scale_log2', 0.12751743082459868), ('lse', 1342177280), ('seqused_k', 1610612736)]
# CHECK-NEXT: dense batch: batch: query has 4, key 3
# CHECK-NEXT: dense seqused_k length: seqused_k: 3 entries for a batch of 4 (query dimension 0)
# CHECK-NEXT: dense a page table: kernel seqused has no operand 'page_table' (it takes query, key, value, output, lse, seqused_k)

# Manifests that break the conventions are refused when loaded.
good = manifest("k", page_size=256)
print_refusals(good, [
        ("dynamic page size", lambda m: [m["operands"][i].update(shape=[-1, -1, 8, 128])
                                         for i in (1, 2)]),
        ("page size 96", lambda m: [m["operands"][i].update(shape=[-1, 96, 8, 128])
                                    for i in (1, 2)]),
        ("value page size", lambda m: m["operands"][2].update(shape=[-1, 128, 8, 128])),
        ("table element", lambda m: m["operands"][-1].update(element="i64")),
        ("table rank", lambda m: m["operands"][-1].update(shape=[-1])),
        ("max_pages source", lambda m: m["params"][-1].update(source="page_table.shape[2]")),
        ("packed over pages, K's map packed", lambda m: (
            m["grid"].update(rule="persistent_varlen"),
            [m["operands"][i].update(shape=m["operands"][i]["shape"][1:]) for i in (0, 3)],
            m["operands"][4].update(shape=[32, -1]),
            m["operands"].extend({"name": n, "element": "i32", "shape": [-1]}
                                 for n in ("cu_seqlens_q", "cu_seqlens_k")),
            [t.update(box=t["box"][:3] + [1], varlen=True) for t in m["tensor_maps"]])),
        ("cu_seqlens in a dense cache", lambda m: m["operands"].append(
            {"name": "cu_seqlens_k", "element": "i32", "shape": [-1]}))])
# CHECK-NEXT: dynamic page size: paged K/V needs a static power-of-two page size as key dimension 1 (page_size), got -1
# CHECK-NEXT: page size 96: paged K/V needs a static power-of-two page size as key dimension 1 (page_size), got 96
# CHECK-NEXT: value page size: value's page size 128 is not key's, 256
# CHECK-NEXT: table element: operand 'page_table': element 'i64' is not one of ['i32']
# CHECK-NEXT: table rank: operand 'page_table' must have rank 2 ([batch, max_pages]), got 1
# CHECK-NEXT: max_pages source: param 'max_pages': no operand dimension page_table.shape[2]
# CHECK-NEXT: packed over pages, K's map packed: tensor_maps[1]: a packed map over 'key' under the persistent_varlen grid rule (paged K/V)
# CHECK-NEXT: cu_seqlens in a dense cache: sequence tables (cu_seqlens_q, ...) belong to the persistent_varlen grid rule, the manifest's is persistent

# The launch: parameters as the fake libcuda receives them.
fake = FakeCuda()
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in paged.params]
paged.launch(operands, stream=0x5000)
print(fake.launches[-1])
print("page map dims", fake.dims[0x20000000], "strides", fake.strides[0x20000000])
# CHECK-NEXT: paged256 grid 32 stream 0x5000 params ['map of 0x10000000', 'map of 0x20000000', 'map of 0x30000000', 'map of 0x40000000', 4, 2, 256, 0.12751743{{[0-9]*}}, '0x50000000', '0x60000000', '0x70000000', 9]
# CHECK-NEXT: page map dims [128, 8, 256, 40] strides [256, 2048, 524288]
runtime.set_driver(None)
