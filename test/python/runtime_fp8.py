# RUN: %python %s | FileCheck %s
"""fa4.runtime on FP8 (e4m3) kernels, without a GPU: hand-written manifests
as docs/ARCHITECTURE.md (the FP8 manifest) has fa4-compile write them for sm_90a (Q, K, V
f8E4M3FN, O bf16 or f16, V's tensor map key-major, the descale operands
and parameters); what they compute and how they are chosen, the tensor-map
arguments (the key-major V's dims, strides and box in the map's order, data
type UINT8), the parameters in order, every check of the operands given, the
manifests that break the conventions, and a launch against the fake
libcuda."""

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
from torch_standin import FakeCuda, write_kernel  # noqa: E402  (the fake libcuda; torch is not installed)

from fa4 import runtime  # noqa: E402
from manifests import dense_params, print_refusals  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-fp8-"))
atexit.register(shutil.rmtree, TMP, True)


def manifest(kernel, heads_q=32, heads_kv=8, head_dim=128, descale=True, lse=True,
             output="bf16", causal=True):
    """An sm_90a FP8 kernel's manifest, as docs/ARCHITECTURE.md says fa4-compile will write it."""
    operands = [{"name": "query", "element": "f8E4M3FN",
                 "shape": [-1, -1, heads_q, head_dim]},
                {"name": "key", "element": "f8E4M3FN", "shape": [-1, -1, heads_kv, head_dim]},
                {"name": "value", "element": "f8E4M3FN",
                 "shape": [-1, -1, heads_kv, head_dim]},
                {"name": "output", "element": output, "shape": [-1, -1, heads_q, head_dim]}]
    params = dense_params()
    if lse:
        operands.append({"name": "lse", "element": "f32", "shape": [-1, heads_q, -1]})
        params.append({"kind": "pointer", "name": "lse", "source": "lse.data"})
    if descale:
        for name in ("q_descale", "k_descale", "v_descale"):
            operands.append({"name": name, "element": "f32", "shape": [-1, heads_kv]})
            params.append({"kind": "pointer", "name": name, "source": f"{name}.data"})
    pack = 2
    maps = [{"operand": "query", "operand_index": 0, "element": "e4m3",
             "box": [128, pack, 64 // pack, 1], "swizzle": "128B", "oob_fill": "zero"},
            {"operand": "key", "operand_index": 1, "element": "e4m3",
             "box": [128, 1, 128, 1], "swizzle": "128B", "oob_fill": "zero"},
            # Key-major: (seq_kv, heads_kv, head_dim_v, batch), box [block_n, 1, Dv, 1].
            {"operand": "value", "operand_index": 2, "element": "e4m3", "key_major": True,
             "box": [128, 1, head_dim, 1], "swizzle": "128B", "oob_fill": "zero"},
            {"operand": "output", "operand_index": 3, "element": output,
             "box": [64, pack, 64 // pack, 1], "swizzle": "128B", "oob_fill": "zero"}]
    return {"kernel": kernel, "arch": "sm_90a", "block": [384, 1, 1], "cluster": [1, 1, 1],
            "dynamic_smem_bytes": 180224, "programmatic_launch": True,
            "files": {"cubin": f"{kernel}.cubin"},
            "grid": {"rule": "persistent", "head_blocks": heads_q // pack,
                     "query_rows_per_cta": 64},
            "causal": causal, "scale": head_dim ** -0.5,
            "scale_log2": 1.4426950408889634 * head_dim ** -0.5,
            "operands": operands, "params": params, "tensor_maps": maps}


def bf16_manifest(kernel):
    """The same problem in bf16: everything as it was before FP8."""
    m = manifest(kernel, descale=False)
    for entry in m["operands"][:4] + m["tensor_maps"]:
        entry["element"] = "bf16"
    for entry in m["tensor_maps"]:
        entry["box"][0] = 64
        entry.pop("key_major", None)
    m["tensor_maps"][2]["box"] = [64, 1, 128, 1]
    return m


for name, m in [("e4m3_descale", manifest("e4m3_descale")),
                ("e4m3_plain", manifest("e4m3_plain", descale=False)),
                ("e4m3_f16", manifest("e4m3_f16", output="f16")),
                ("plain_bf16", bf16_manifest("plain_bf16"))]:
    (TMP / f"{name}.json").write_text(json.dumps(m))
    (TMP / f"{name}.cubin").write_bytes(b"\x7fELF")
directory = runtime.KernelDirectory(TMP)
for kernel in directory:
    print(repr(kernel), "| element", kernel.element, "output", kernel.output_element,
          "descale", kernel.descale, "key_major", kernel.key_major)
print("errors", directory.errors)
# The operands' MLIR spelling (f8E4M3FN) is the runtime's e4m3.
# CHECK: <fa4 kernel e4m3_descale sm_90a e4m3 output bf16 heads 32/8 head_dim 128 causal True descale key-major V scale 0.08838834764831845 lse True> | element e4m3 output bf16 descale True key_major True
# CHECK-NEXT: <fa4 kernel e4m3_f16 sm_90a e4m3 output f16 heads 32/8 head_dim 128 causal True descale key-major V scale 0.08838834764831845 lse True> | element e4m3 output f16 descale True key_major True
# CHECK-NEXT: <fa4 kernel e4m3_plain sm_90a e4m3 output bf16 heads 32/8 head_dim 128 causal True key-major V scale 0.08838834764831845 lse True> | element e4m3 output bf16 descale False key_major True
# CHECK-NEXT: <fa4 kernel plain_bf16 sm_90a bf16 heads 32/8 head_dim 128 causal True scale 0.08838834764831845 lse True> | element bf16 output bf16 descale False key_major False
# CHECK-NEXT: errors []

# The choice: dtype is the inputs' element, descale and output_dtype pick
# among the FP8 kernels; a bf16 problem never takes an FP8 kernel.
problem = dict(heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True, arch="sm_90a")
for label, extra in [("bf16", dict(dtype="bf16")),
                     ("e4m3 descale", dict(dtype="e4m3", descale=True)),
                     ("e4m3 without", dict(dtype="e4m3")),
                     ("e4m3 either", dict(dtype="e4m3", descale=None)),
                     ("e4m3 f16", dict(dtype="e4m3", descale=None, output_dtype="f16")),
                     ("MLIR spelling", dict(dtype="f8E4M3FN", descale=True,
                                            output_dtype="bf16"))]:
    print(f"{label}:", directory.find(**problem, **extra).name)
# CHECK-NEXT: bf16: plain_bf16
# CHECK-NEXT: e4m3 descale: e4m3_descale
# CHECK-NEXT: e4m3 without: e4m3_plain
# CHECK-NEXT: e4m3 either: e4m3_descale
# CHECK-NEXT: e4m3 f16: e4m3_f16
# CHECK-NEXT: MLIR spelling: e4m3_descale
for label, extra in [("f16 without descale", dict(dtype="e4m3", output_dtype="f16")),
                     ("f16 inputs", dict(dtype="f16"))]:
    try:
        directory.find(**problem, **extra)
    except LookupError as err:
        lines = str(err).splitlines()
        print(f"{label}:", lines[0].split(" for ")[1])
        print("\n".join(line.strip() for line in lines[1:]))
# CHECK-NEXT: f16 without descale: dtype=e4m3 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=True arch=sm_90a window=(-1, 0) softcap=0.0 sink=False output_dtype=f16; candidates:
# CHECK-NEXT: e4m3_descale (e4m3_descale.json): output_dtype is bf16, not f16; descale is True, not False
# CHECK-NEXT: e4m3_f16 (e4m3_f16.json): descale is True, not False
# CHECK-NEXT: e4m3_plain (e4m3_plain.json): output_dtype is bf16, not f16
# CHECK-NEXT: plain_bf16 (plain_bf16.json): dtype is bf16, not e4m3; output_dtype is bf16, not f16
# CHECK-NEXT: f16 inputs: dtype=f16 heads_q=32 heads_kv=8 head_dim=128 causal=True scale=0.08838834764831843 lse=True arch=sm_90a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT: e4m3_descale (e4m3_descale.json): dtype is e4m3, not f16; descale is True, not False
# CHECK-NEXT: e4m3_f16 (e4m3_f16.json): dtype is e4m3, not f16; descale is True, not False
# CHECK-NEXT: e4m3_plain (e4m3_plain.json): dtype is e4m3, not f16
# CHECK-NEXT: plain_bf16 (plain_bf16.json): dtype is bf16, not f16

# A launch's arguments: B 2, Sq 1000, Skv 1024. V key-major as a model keeps
# it: memory [B, Hkv, Dv, Skv] contiguous, seen as [B, Skv, Hkv, Dv].
kernel = next(k for k in directory if k.name == "e4m3_descale")
B, SQ, SKV, HQ, HKV, D = 2, 1000, 1024, 32, 8, 128
key_major = (HKV * D * SKV, 1, D * SKV, SKV)
operands = {"query": (0x10000000, (B, SQ, HQ, D), "e4m3"),
            "key": (0x20000000, (B, SKV, HKV, D), "e4m3"),
            "value": (0x30000000, (B, SKV, HKV, D), "e4m3", key_major),
            "output": (0x40000000, (B, SQ, HQ, D), "bf16"),
            "lse": (0x50000000, (B, HQ, SQ), "f32"),
            "q_descale": (0x60000000, (B, HKV), "f32"),
            "k_descale": (0x60000100, (B, HKV), "f32"),
            "v_descale": (0x60000200, (B, HKV), "f32")}
for index, arg in enumerate(kernel.arguments(operands)):
    value = arg.value
    if arg.kind == "tensor_map":
        value = f"{value.describe()}, data type {value.data_type}"
    elif arg.kind == "pointer":
        value = f"{value:#x}"
    print(index, arg.name, arg.kind, value)
# Q and K: (D, H, S, B) as always, one byte per element; V: (S, H, D, B),
# strides [stride_H, stride_D, stride_B] in bytes, box [block_n, 1, Dv, 1];
# the e4m3 maps UINT8 (0), O's BFLOAT16 (9). The descales follow the LSE.
# CHECK-NEXT: 0 query_map tensor_map dims [128, 32, 1000, 2], strides [128, 4096, 4096000] B, box [128, 2, 32, 1], address 0x10000000, data type 0
# CHECK-NEXT: 1 key_map tensor_map dims [128, 8, 1024, 2], strides [128, 1024, 1048576] B, box [128, 1, 128, 1], address 0x20000000, data type 0
# CHECK-NEXT: 2 value_map tensor_map dims [1024, 8, 128, 2], strides [131072, 1024, 1048576] B, box [128, 1, 128, 1], address 0x30000000, data type 0
# CHECK-NEXT: 3 output_map tensor_map dims [128, 32, 1000, 2], strides [256, 8192, 8192000] B, box [64, 2, 32, 1], address 0x40000000, data type 9
# CHECK-NEXT: 4 batch i32 2
# CHECK-NEXT: 5 seq_q i32 1000
# CHECK-NEXT: 6 seq_kv i32 1024
# CHECK-NEXT: 7 scale_log2 f32 0.12751743082459868
# CHECK-NEXT: 8 lse pointer 0x50000000
# CHECK-NEXT: 9 q_descale pointer 0x60000000
# CHECK-NEXT: 10 k_descale pointer 0x60000100
# CHECK-NEXT: 11 v_descale pointer 0x60000200

# The MLIR spelling is taken for operands too; a kernel without descale has
# no descale parameters.
spelled = {name: (op[0], op[1], "f8E4M3FN", *op[3:]) if op[2] == "e4m3" else op
           for name, op in operands.items()}
print("f8E4M3FN operands:", [a.value == b.value for a, b in zip(
    kernel.arguments(spelled), kernel.arguments(operands))].count(False), "differences")
plain = next(k for k in directory if k.name == "e4m3_plain")
plain_operands = {n: op for n, op in operands.items() if not n.endswith("_descale")}
print("without descale:", [a.name for a in plain.arguments(plain_operands)][7:])
# CHECK-NEXT: f8E4M3FN operands: 0 differences
# CHECK-NEXT: without descale: ['scale_log2', 'lse']

# A V of one key: its sequence stride does not matter; the others still do.
one_key = dict(operands, key=(0x20000000, (B, 1, HKV, D), "e4m3"),
               value=(0x30000000, (B, 1, HKV, D), "e4m3", (HKV * D * 16, 7, D * 16, 16)))
print("one key:", kernel.arguments(one_key)[2].value.describe())
# CHECK-NEXT: one key: dims [1, 8, 128, 2], strides [2048, 16, 16384] B, box [128, 1, 128, 1], address 0x30000000

# Operands that do not fit: each named, with what the kernel takes.
for label, change in [
        ("V not key-major", {"value": (0x30000000, (B, SKV, HKV, D), "e4m3")}),
        ("V keys not 16-byte strided", {"value": (0x30000000, (B, 1000, HKV, D), "e4m3",
                                                  (HKV * D * 1000, 1, D * 1000, 1000)),
                                        "key": (0x20000000, (B, 1000, HKV, D), "e4m3")}),
        ("V unaligned", {"value": (0x30000008, (B, SKV, HKV, D), "e4m3", key_major)}),
        ("V bf16", {"value": (0x30000000, (B, SKV, HKV, D), "bf16", key_major)}),
        ("query bf16", {"query": (0x10000000, (B, SQ, HQ, D), "bf16")}),
        ("output e4m3", {"output": (0x40000000, (B, SQ, HQ, D), "e4m3")}),
        ("no q_descale", {"q_descale": None}),
        ("descale heads", {"k_descale": (0x60000100, (B, 4), "f32")}),
        ("descale batch", {"v_descale": (0x60000200, (3, HKV), "f32")}),
        ("descale rank", {"q_descale": (0x60000000, (B * HKV,), "f32")}),
        ("descale element", {"q_descale": (0x60000000, (B, HKV), "bf16")}),
        ("descale strides", {"q_descale": (0x60000000, (B, HKV), "f32", (16, 1))}),
        ("descale unaligned", {"v_descale": (0x60000202, (B, HKV), "f32")}),
        ("descale on a plain kernel", None)]:
    target, given = kernel, {n: v for n, v in dict(operands, **(change or {})).items()
                             if v is not None}
    if change is None:
        target, given = plain, operands
    try:
        target.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: V not key-major: value: a key-major tensor map needs unit stride in the sequence dimension (dimension 1 of [B, S, H, D]: memory laid out [B, H, D, S]), got strides [1048576, 1024, 128, 1] for shape [2, 1024, 8, 128]
# CHECK-NEXT: V keys not 16-byte strided: value: TMA needs byte strides that are positive multiples of 16 below 2^40, got 1000 bytes for dimension 3 (strides [1024000, 1, 128000, 1000] elements of 1 byte; a key-major map)
# CHECK-NEXT: V unaligned: value: TMA needs a 16-byte aligned global address, got 0x30000008 (8 bytes past a 16-byte boundary)
# CHECK-NEXT: V bf16: value: element bf16, kernel e4m3_descale takes e4m3
# CHECK-NEXT: query bf16: query: element bf16, kernel e4m3_descale takes e4m3
# CHECK-NEXT: output e4m3: output: element e4m3, kernel e4m3_descale takes bf16
# CHECK-NEXT: no q_descale: kernel e4m3_descale needs operand 'q_descale' (it was compiled with descale: FP8 dequantization factors, f32 [batch, heads_kv]; ones for none)
# CHECK-NEXT: descale heads: k_descale: dimension 1 (heads_kv) is 4, kernel e4m3_descale takes 8
# CHECK-NEXT: descale batch: v_descale: shape [3, 8], expected [batch, heads_kv] = [2, 8]
# CHECK-NEXT: descale rank: q_descale: rank 1 (shape [16]), kernel e4m3_descale takes rank 2
# CHECK-NEXT: descale element: q_descale: element bf16, kernel e4m3_descale takes f32
# CHECK-NEXT: descale strides: q_descale: must be contiguous, got strides [16, 1]
# CHECK-NEXT: descale unaligned: v_descale: address 0x60000202 is not 4-byte aligned
# CHECK-NEXT: descale on a plain kernel: kernel e4m3_plain has no operand 'q_descale' (it takes query, key, value, output, lse)

# Manifests that break the conventions are refused when loaded.
good = manifest("k")
print_refusals(good, [
        ("key-major K", lambda m: m["tensor_maps"][1].update(key_major=True)),
        ("key_major not a boolean", lambda m: m["tensor_maps"][2].update(key_major=1)),
        ("key-major box of 3", lambda m: m["tensor_maps"][2].update(box=[128, 1, 128])),
        ("map element", lambda m: m["tensor_maps"][2].update(element="bf16",
                                                             box=[64, 1, 128, 1])),
        ("operand element", lambda m: m["operands"][2].update(element="f8E5M2")),
        ("K bf16", lambda m: m["operands"][1].update(element="bf16")),
        ("O e4m3", lambda m: (m["operands"][3].update(element="f8E4M3FN"),
                              m["tensor_maps"][3].update(element="e4m3", box=[128, 2, 32, 1]))),
        ("O f32", lambda m: m["operands"][3].update(element="f32")),
        ("one descale", lambda m: m["operands"].__delitem__(slice(-2, None))),
        ("descale element", lambda m: m["operands"][-1].update(element="f16")),
        ("descale rank", lambda m: m["operands"][-1].update(shape=[-1])),
        ("descale of bf16", lambda m: m.update(operands=bf16_manifest("b")["operands"]
                                               + m["operands"][5:],
                                               tensor_maps=bf16_manifest("b")["tensor_maps"])),
        ("inner box over the swizzle", lambda m: m["tensor_maps"][2].update(
            box=[256, 1, 128, 1]))])
# CHECK-NEXT: key-major K: tensor_maps[1]: a key-major map over 'key'; only V's (the B operand of P V) is
# CHECK-NEXT: key_major not a boolean: tensor map of 'value': key_major must be a boolean, got 1
# CHECK-NEXT: key-major box of 3: tensor map of 'value': a key-major map is over a [B, S, H, D] tensor (or a packed [T, H, D] one), a box of 4 sizes, got box [128, 1, 128]
# CHECK-NEXT: map element: tensor_maps[2]: element bf16, operand 'value' is e4m3
# CHECK-NEXT: operand element: operand 'value': element 'f8E5M2' is not one of ['bf16', 'e4m3', 'f16', 'f32']
# CHECK-NEXT: K bf16: operand 'key' is bf16, query e4m3: Q, K and V share an element
# CHECK-NEXT: O e4m3: operand 'output' is e4m3, query e4m3: the output is the inputs' element, bf16 or f16 for 8-bit inputs
# CHECK-NEXT: O f32: operand 'output' is f32, query e4m3: the output is the inputs' element, bf16 or f16 for 8-bit inputs
# CHECK-NEXT: one descale: descale operands: q_descale without k_descale, v_descale (a kernel takes all three or none)
# CHECK-NEXT: descale element: operand 'v_descale': element 'f16' is not one of ['f32']
# CHECK-NEXT: descale rank: operand 'v_descale' must have rank 2 ([batch, heads_kv]), got 1
# CHECK-NEXT: descale of bf16: descale operands (q_descale, k_descale, v_descale) dequantize 8-bit inputs; the query is bf16
# CHECK-NEXT: inner box over the swizzle: tensor map of 'value': the inner box of 256 bytes must be a multiple of 16 and fit the 128B swizzle

# The launch: parameters and tensor maps as the fake libcuda receives them.
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132   # an H100
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in kernel.params]
grid = kernel.launch(operands, stream=0x5000)
print(fake.launches[-1])
for name, address in (("query", 0x10000000), ("value", 0x30000000), ("output", 0x40000000)):
    print(f"{name} map: data type {fake.data_types[address]} dims {fake.dims[address]} "
          f"strides {fake.strides[address]} box {fake.boxes[address]}")
# CHECK-NEXT: e4m3_descale grid 132 stream 0x5000 params ['map of 0x10000000', 'map of 0x20000000', 'map of 0x30000000', 'map of 0x40000000', 2, 1000, 1024, 0.12751743{{[0-9]*}}, '0x50000000', '0x60000000', '0x60000100', '0x60000200']
# CHECK-NEXT: query map: data type 0 dims [128, 32, 1000, 2] strides [128, 4096, 4096000] box [128, 2, 32, 1]
# CHECK-NEXT: value map: data type 0 dims [1024, 8, 128, 2] strides [131072, 1024, 1048576] box [128, 1, 128, 1]
# CHECK-NEXT: output map: data type 9 dims [128, 32, 1000, 2] strides [256, 8192, 8192000] box [64, 2, 32, 1]

# Packed sequences: V key-major with rows of its own, sequence b's from
# align16(cu_seqlens_k[b]) + 16 b, so at least Tk + 16 B of them (3
# sequences: 1000 + 48); the descales one row per sequence.
write_kernel(TMP, "e4m3_varlen", "e4m3", 32, 8, True, True, head_dim=128, varlen=True,
             descale=True, arch="sm_90a")
packed = next(k for k in runtime.KernelDirectory(TMP) if k.name == "e4m3_varlen")
TQ, TK, SEQUENCES = 700, 1000, 3
rows = TK + 16 * SEQUENCES


def packed_operands(value_rows, descale_rows=SEQUENCES):
    pitch = -(-value_rows // 16) * 16   # TMA strides: multiples of 16 bytes
    return {"query": (0x10000000, (TQ, HQ, D), "e4m3"),
            "key": (0x20000000, (TK, HKV, D), "e4m3"),
            "value": (0x30000000, (value_rows, HKV, D), "e4m3", (1, D * pitch, pitch)),
            "output": (0x40000000, (TQ, HQ, D), "bf16"),
            "lse": (0x50000000, (HQ, TQ), "f32"),
            **{name: (0x60000000 + 0x100 * i, (descale_rows, HKV), "f32")
               for i, name in enumerate(runtime.DESCALES)},
            "cu_seqlens_q": (0x70000000, (SEQUENCES + 1,), "i32"),
            "cu_seqlens_k": (0x70000100, (SEQUENCES + 1,), "i32")}


print("packed V:", packed.arguments(packed_operands(rows))[2].value.describe())
# CHECK-NEXT: packed V: dims [1048, 8, 128, 1], strides [135168, 1056, 1056] B, box [128, 1, 128, 1], address 0x30000000
for label, given in [("V rows", packed_operands(rows - 1)),
                     ("V heads", dict(packed_operands(rows),
                                      value=(0x30000000, (rows, 4, D), "e4m3",
                                             (1, D * 1056, 1056)))),
                     ("descale batch", packed_operands(rows, descale_rows=2))]:
    try:
        packed.arguments(given)
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: V rows: value: 1047 rows; packed sequences read a key-major V from row align16(cu_seqlens_k[b]) + 16 b, so it needs at least total_k + 16 sequences = 1048 rows
# CHECK-NEXT: V heads: value: dimension 1 (heads) is 4, kernel e4m3_varlen takes 8
# CHECK-NEXT: descale batch: q_descale: shape [2, 8], expected [batch, heads_kv] = [3, 8] (batch: the sequences)
runtime.set_driver(None)
