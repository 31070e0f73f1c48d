# RUN: %python %s | FileCheck %s
"""FP8 (e4m3) through fa4.torch.attention and flash_attn_func, against the
stand-in torch and the fake libcuda: torch.float8_e4m3fn q, k, v give a
bfloat16 O (float16 with out_dtype); a key-major V (unit-stride Skv) is read
in place and any other V is copied into that layout (padded to 16 bytes of
keys) on every call; flash-attn 3's q/k/v_descale reach the kernel's
descale parameters, and where the kernel takes them but the caller gave
none (or only some), ones do; the kernel chosen, the checks of the
descales and of what FP8 is not (packed sequences, KV caches), the eager
fast path and the checked path."""

import atexit
import os
import shutil
import sys
import tempfile
import weakref
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import Device, FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()
os.environ["FA4_JIT"] = "0"
# An H100: the FP8 kernels are sm_90a's.
torch.cuda.capability = (9, 0)
ones_made = []
torch.ones = lambda shape, dtype=None, device=None: (
    ones_made.append(tuple(shape)), torch_standin._full(shape, 1.0, dtype, device))[1]

import fa4.torch  # noqa: E402
from fa4 import flash_attn_func, runtime  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-torch-fp8-"))
atexit.register(shutil.rmtree, TMP, True)
for name, *args, options in [
        ("fp8_causal_descale_lse", "e4m3", 4, 2, True, True, {"descale": True}),
        ("fp8_f16", "e4m3", 4, 2, False, False, {"output": "f16"}),
        ("fp8_plain", "e4m3", 4, 2, False, False, {}),
        ("plain_bf16", "bf16", 4, 2, False, False, {}),
        ("fp8_paged_descale", "e4m3", 4, 2, True, False,
         {"descale": True, "seqused_k": True, "page_size": 256}),
        ("fp8_varlen_descale", "e4m3", 4, 2, True, True, {"descale": True, "varlen": True})]:
    torch_standin.write_kernel(TMP, name, *args, arch="sm_90a", **options)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
directory = runtime.KernelDirectory(TMP)
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fp8 = torch.float8_e4m3fn


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


def launched():
    """The last launch's kernel and its parameters after the tensor maps."""
    kernel, params = fake.launches[-1].split(" grid ")[0], fake.launches[-1].split("params ")[1]
    return f"{kernel} {params}"


B, SQ, SKV, HQ, HKV, D = 2, 300, 512, 4, 2, 64
q, k = tensor((B, SQ, HQ, D), fp8), tensor((B, SKV, HKV, D), fp8)
# V as the kernels read it: memory [B, Hkv, D, Skv], seen as [B, Skv, Hkv, D].
v_t = tensor((B, HKV, D, SKV), fp8)
v = v_t.permute(0, 3, 1, 2)
descales = [tensor((B, HKV), torch.float32) for _ in range(3)]
print("key-major V:", v.shape, v.stride())
# CHECK: key-major V: (2, 512, 2, 64) (65536, 1, 32768, 512)

# Causal with LSE and the descales: the descale kernel; V read in place (its
# map over V's own address: (S, H, D, B) with V's strides), O bfloat16; the
# descales' pointers after the LSE's.
expect("fp8_causal_descale_lse")
out, lse = fa4.torch.attention(q, k, v, causal=True, return_lse=True, q_descale=descales[0],
                               k_descale=descales[1], v_descale=descales[2])
print("out", out.shape, out.dtype, "lse", lse.shape, lse.dtype)
print(launched())
print("descales last:", fake.launches[-1].endswith(
    ", ".join(f"'{t.data_ptr():#x}'" for t in descales) + "]"),
      "lse before them:", f"'{lse.data_ptr():#x}', '{descales[0].data_ptr():#x}'"
      in fake.launches[-1])
print("value map: address is V's", v.data_ptr() in fake.dims, "dims", fake.dims[v.data_ptr()],
      "strides", fake.strides[v.data_ptr()], "box", fake.boxes[v.data_ptr()], "data type",
      fake.data_types[v.data_ptr()])
print("data types: q", fake.data_types[q.data_ptr()], "k", fake.data_types[k.data_ptr()],
      "out", fake.data_types[out.data_ptr()])
# CHECK-NEXT: out (2, 300, 4, 64) torch.bfloat16 lse (2, 4, 300) torch.float32
# CHECK-NEXT: fp8_causal_descale_lse ['map of [[Q:0x[0-9a-f]+]]', 'map of [[K:0x[0-9a-f]+]]', 'map of [[V:0x[0-9a-f]+]]', 'map of [[O:0x[0-9a-f]+]]', 2, 300, 512, 0.18033{{[0-9]*}}, '[[L:0x[0-9a-f]+]]', '[[QD:0x[0-9a-f]+]]', '[[KD:0x[0-9a-f]+]]', '[[VD:0x[0-9a-f]+]]']
# CHECK-NEXT: descales last: True lse before them: True
# CHECK-NEXT: value map: address is V's True dims [512, 2, 64, 2] strides [32768, 512, 65536] box [128, 1, 64, 1] data type 0
# CHECK-NEXT: data types: q 0 k 0 out 9

# The kernel takes descales, the caller gives none (or some): ones, one
# [B, Hkv] float32 tensor for all that are missing.
del ones_made[:]
out, lse = fa4.torch.attention(q, k, v, causal=True, return_lse=True)
params = fake.launches[-1].split("params ")[1].strip("[]").split(", ")
print("no descales: ones made", ones_made, "the three pointers one:", len(set(params[-3:])) == 1)
del ones_made[:]
fa4.torch.attention(q, k, v, causal=True, return_lse=True, k_descale=descales[1])
params = fake.launches[-1].split("params ")[1].strip("[]").split(", ")
print("k_descale only: ones made", ones_made, "k's given:",
      params[-2] == f"'{descales[1].data_ptr():#x}'", "q's and v's one:", params[-3] == params[-1])
# CHECK-NEXT: no descales: ones made [(2, 2)] the three pointers one: True
# CHECK-NEXT: k_descale only: ones made [(2, 2)] k's given: True q's and v's one: True

# A V that is not key-major (contiguous [B, Skv, Hkv, D], Skv 500: not a
# multiple of 16 bytes) is copied: memory [B, Hkv, D, 512], the map's Skv
# 500; the kernel without descale takes a problem without them.
expect("fp8_plain")
k500, v500 = tensor((B, 500, HKV, D), fp8), tensor((B, 500, HKV, D), fp8)
out = fa4.torch.attention(q, k500, v500)
value_map = fake.launches[-1].split("params ")[1].split("', '")[2].split("map of ")[1]
address = int(value_map, 16)
print("copied V:", out.dtype, "map over V's address:", v500.data_ptr() == address, "dims",
      fake.dims[address], "strides", fake.strides[address], "params",
      launched().split("', ")[-1])
# CHECK-NEXT: copied V: torch.bfloat16 map over V's address: False dims [500, 2, 64, 2] strides [32768, 512, 65536] params 2, 300, 500, 0.18033{{[0-9]*}}]
print("copy of V:", fa4.torch._key_major_copy(v500).copied is v500,
      fa4.torch._key_major_copy(v500).stride(), fa4.torch._key_major_in_place(v500),
      fa4.torch._key_major_in_place(v), "one key:", fa4.torch._key_major_in_place(
          tensor((B, 1, HKV, D), fp8, strides=(2048, 7, 1024, 16))))
# CHECK-NEXT: copy of V: True (65536, 1, 32768, 512) False True one key: True

# The copy of V and the ones live until the launch is enqueued (freed
# earlier, the caching allocator could hand their memory to an allocation
# written before the kernel reads them), on the fast and the checked path.
made = []
key_major_copy, descale_operands = fa4.torch._key_major_copy, fa4.torch._descale_operands


def recording_copy(t, *tables):
    copy = key_major_copy(t, *tables)
    made.append(weakref.ref(copy))
    return copy


def recording_descales(*args):
    ones = descale_operands(*args)
    made.append(weakref.ref(ones))
    return ones


fa4.torch._key_major_copy, fa4.torch._descale_operands = recording_copy, recording_descales
alive = []
launch = fake.cuLaunchKernelEx
fake.cuLaunchKernelEx = lambda *args: (alive.append([r() is not None for r in made]),
                                       launch(*args))[1]
expect("fp8_causal_descale_lse")
for window in ((-1, -1), [-1, -1]):
    made.clear()
    fa4.torch.attention(q, k500, v500, causal=True, return_lse=True, window=window)
print("alive at the launch:", alive, "after:", [r() is not None for r in made])
fa4.torch._key_major_copy, fa4.torch._descale_operands = key_major_copy, descale_operands
del fake.cuLaunchKernelEx
# CHECK-NEXT: alive at the launch: {{\[}}[True, True], [True, True]] after: [False, False]

# out_dtype float16: the kernel whose O is f16.
expect("fp8_f16")
out = fa4.torch.attention(q, k, v, out_dtype=torch.float16)
print("out_dtype:", out.dtype, launched().split(" ")[0], "output map data type",
      fake.data_types[out.data_ptr()])
# CHECK-NEXT: out_dtype: torch.float16 fp8_f16 output map data type 6

# Repeated calls take the eager fast path: the same plan, and a fresh copy of
# a V that is not key-major on each call (its contents may have changed).
expect("fp8_plain")
plans = len(fa4.torch._plans)
maps = set()
for _ in range(2):
    fa4.torch.attention(q, k500, v500)
    maps.add(fake.launches[-1].split("', '")[2])
print("repeated: new plans", len(fa4.torch._plans) - plans, "value maps", len(maps))
# CHECK-NEXT: repeated: new plans 0 value maps 2

# The checked path (a window that is a list, not a tuple, skips the fast
# path) launches the same.
expect("fp8_causal_descale_lse")
fa4.torch.attention(q, k, v, causal=True, return_lse=True, q_descale=descales[0],
                    k_descale=descales[1], v_descale=descales[2])
fast = fake.launches[-1].split("params ")[1].split(", ", 4)[4]
fa4.torch.attention(q, k, v, causal=True, return_lse=True, q_descale=descales[0],
                    k_descale=descales[1], v_descale=descales[2], window=[-1, -1])
print("checked path: same scalars and pointers but the outputs':",
      fake.launches[-1].split("params ")[1].split(", ", 4)[4].split(", ")[:4]
      == fast.split(", ")[:4], fake.launches[-1].endswith(fast.split(", ", 5)[5]))
# CHECK-NEXT: checked path: same scalars and pointers but the outputs': True True

# flash_attn_func: flash-attn 3's keyword descales; FP8's key-major V (not
# unit-stride in its head dim) is not copied as a strided head dim would be.
out, softmax_lse, _ = flash_attn_func(q, k, v, causal=True, return_attn_probs=True,
                                      q_descale=descales[0], k_descale=descales[1],
                                      v_descale=descales[2])
print("flash_attn_func:", out.dtype, launched().split(" ")[0], "V in place:",
      v.data_ptr() == int(fake.launches[-1].split("', '")[2].split("map of ")[1], 16),
      "descales:", fake.launches[-1].endswith(
          ", ".join(f"'{t.data_ptr():#x}'" for t in descales) + "]"))
# CHECK-NEXT: flash_attn_func: torch.bfloat16 fp8_causal_descale_lse V in place: True descales: True

# A paged cache of 256-key pages with lengths: V's pages key-major
# (memory [pages, Hkv, D, 256]) read in place; descales [B, Hkv].
expect("fp8_paged_descale")
pages_k = tensor((5, 256, HKV, D), fp8)
pages_v = tensor((5, HKV, D, 256), fp8).permute(0, 3, 1, 2)
table, lengths = tensor((B, 2), torch.int32), tensor((B,), torch.int32)
out = fa4.torch.attention_with_kvcache(q, pages_k, pages_v, cache_seqlens=lengths,
                                       page_table=table, causal=True, num_splits=1,
                                       q_descale=descales[0], k_descale=descales[1],
                                       v_descale=descales[2])
print("paged:", out.shape, out.dtype, launched().split(" ")[0], "V in place:",
      pages_v.data_ptr() == int(fake.launches[-1].split("', '")[2].split("map of ")[1], 16),
      "dims", fake.dims[pages_v.data_ptr()], "descales:", all(
          f"'{t.data_ptr():#x}'" in fake.launches[-1] for t in descales))
# CHECK-NEXT: paged: (2, 300, 4, 64) torch.bfloat16 fp8_paged_descale V in place: True dims [256, 2, 64, 5] descales: True

# A problem no directory holds is compiled on demand: the FP8 problem as
# fa4.jit takes it (a recording stand-in for the compiler's cache). With
# descales given it asks for a kernel that takes them; without, for one
# that does not.
class RecordingCache:
    def kernel(self, *args, **kwargs):
        print("jit:", args, {key: kwargs[key] for key in ("causal", "lse", "arch", "descale",
                                                          "output_dtype")})
        raise RuntimeError("not compiled here")


os.environ["FA4_JIT"] = "1"
fa4.torch._jit[:] = [RecordingCache()]
q8 = tensor((B, SQ, 8, D), fp8)
for kwargs in (dict(q_descale=descales[0]), dict(out_dtype=torch.float16)):
    try:
        fa4.torch.attention(q8, k, v, causal=True, **kwargs)
    except LookupError as err:
        print("  " + str(err).splitlines()[-1])
os.environ["FA4_JIT"] = "0"
# CHECK-NEXT: jit: ('e4m3', 8, 2, 64) {'causal': True, 'lse': False, 'arch': 'sm_90a', 'descale': True, 'output_dtype': 'bf16'}
# CHECK-NEXT:   and compiling it on demand failed: not compiled here
# CHECK-NEXT: jit: ('e4m3', 8, 2, 64) {'causal': True, 'lse': False, 'arch': 'sm_90a', 'descale': False, 'output_dtype': 'f16'}
# CHECK-NEXT:   and compiling it on demand failed: not compiled here

# What does not fit, each refused before any launch.
launches = len(fake.launches)
bf16_q = tensor((B, SQ, HQ, D))
cases = [
    ("descales, no kernel", lambda: fa4.torch.attention(q, k, v, q_descale=descales[0])),
    ("mixed dtypes", lambda: fa4.torch.attention(q, k, tensor((B, SKV, HKV, D)))),
    ("float32", lambda: fa4.torch.attention(tensor((B, SQ, HQ, D), torch.float32), k, v)),
    ("descale dtype", lambda: fa4.torch.attention(
        q, k, v, q_descale=tensor((B, HKV), torch.float16))),
    ("descale type", lambda: fa4.torch.attention(q, k, v, v_descale=[1.0, 1.0])),
    ("descale shape", lambda: fa4.torch.attention(
        q, k, v, k_descale=tensor((B, HQ), torch.float32))),
    ("descale device", lambda: fa4.torch.attention(
        q, k, v, k_descale=tensor((B, HKV), torch.float32, device=Device("cuda", 1)))),
    ("descale grad", lambda: fa4.torch.attention(
        q, k, v, causal=True, return_lse=True,
        q_descale=tensor((B, HKV), torch.float32, requires_grad=True))),
    ("descales of bf16", lambda: fa4.torch.attention(
        bf16_q, tensor((B, SKV, HKV, D)), tensor((B, SKV, HKV, D)), q_descale=descales[0])),
    ("out_dtype of bf16", lambda: fa4.torch.attention(
        bf16_q, tensor((B, SKV, HKV, D)), tensor((B, SKV, HKV, D)),
        out_dtype=torch.float16)),
    ("out_dtype float32", lambda: fa4.torch.attention(q, k, v, out_dtype=torch.float32)),
    ("q head dim", lambda: fa4.torch.attention(
        tensor((B, SQ, HQ, D), fp8, strides=(SQ * HQ * D * 2, HQ * D * 2, D * 2, 2)), k, v)),
    ("varlen descale batch", lambda: fa4.torch.attention_varlen(
        tensor((700, HQ, D), fp8), tensor((900, HKV, D), fp8), tensor((900, HKV, D), fp8),
        tensor((3,), torch.int32), tensor((3,), torch.int32), causal=True,
        return_lse=True, q_descale=tensor((3, HKV), torch.float32))),
    ("small pages", lambda: fa4.torch.attention_with_kvcache(
        q, tensor((9, 64, HKV, D), fp8), tensor((9, 64, HKV, D), fp8),
        cache_seqlens=tensor((B,), torch.int32), page_table=tensor((B, 8), torch.int32))),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, RuntimeError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
        if isinstance(err, LookupError):
            print("  " + next(line.strip() for line in str(err).splitlines()
                              if "fp8_plain" in line))
print("launched:", len(fake.launches) - launches)
# CHECK-NEXT: descales, no kernel: LookupError: no fa4 kernel in {{.*}} for dtype=e4m3 heads_q=4 heads_kv=2 head_dim=64 causal=False scale=0.125 lse=False arch=sm_90a window=(-1, -1) softcap=0.0 sink=False descale=True output_dtype=bf16; candidates:
# CHECK-NEXT:   fp8_plain (fp8_plain.json): descale is False, not True
# CHECK-NEXT: mixed dtypes: TypeError: q, k and v must share a dtype, got torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16
# CHECK-NEXT: float32: TypeError: q has dtype torch.float32; fa4 kernels take torch.bfloat16 or torch.float16, or torch.float8_e4m3fn
# CHECK-NEXT: descale dtype: TypeError: q_descale must be a torch.float32 tensor [B, Hkv], got torch.float16
# CHECK-NEXT: descale type: TypeError: v_descale must be a torch.float32 tensor [B, Hkv], got list
# CHECK-NEXT: descale shape: ValueError: k_descale must have shape [B, Hkv] = [2, 2], got [2, 4]
# CHECK-NEXT: descale device: ValueError: k_descale is on cuda:1, q on cuda:0
# CHECK-NEXT: descale grad: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad
# CHECK-NEXT: descales of bf16: ValueError: q_descale, k_descale and v_descale dequantize FP8 inputs; q is torch.bfloat16
# CHECK-NEXT: out_dtype of bf16: ValueError: out_dtype torch.float16: torch.bfloat16 inputs give torch.bfloat16 outputs
# CHECK-NEXT: out_dtype float32: ValueError: out_dtype torch.float32: torch.float8_e4m3fn inputs give torch.bfloat16 or torch.float16 outputs
# CHECK-NEXT: q head dim: ValueError: q must have a unit-stride head dim (strides [153600, 512, 128, 2] for shape [2, 300, 4, 64]): TMA reads rows of contiguous elements; call .contiguous()
# CHECK-NEXT: varlen descale batch: ValueError: q_descale must have shape [B, Hkv] = [2, 2], got [3, 2]
# CHECK-NEXT: small pages: ValueError: FP8 reads V key-major in 128-key TMA boxes, each within one page: pages must hold at least 128 keys, got 64
# CHECK-NEXT: launched: 0

# Packed FP8 sequences: V copied into the kernel's packed key-major layout
# (`_key_major_copy` with cu_seqlens_k; rows from align16(cu_seqlens_k[b]) +
# 16 b, so at least Tk + 16 B of them), the descales one row per sequence.
expect("fp8_varlen_descale")
copied = []


def standin_copy(t, cu_seqlens_k=None):
    copied.append((tuple(t.shape), cu_seqlens_k is not None and tuple(cu_seqlens_k.shape)))
    rows = fa4.torch._packed_value_rows(t.shape[0], cu_seqlens_k.shape[0] - 1)
    return tensor((t.shape[1], t.shape[2], rows), fp8).permute(2, 0, 1)


key_major_copy, fa4.torch._key_major_copy = fa4.torch._key_major_copy, standin_copy
cu = tensor((3,), torch.int32)
out, lse = fa4.torch.attention_varlen(
    tensor((700, HQ, D), fp8), tensor((900, HKV, D), fp8), tensor((900, HKV, D), fp8), cu, cu,
    causal=True, return_lse=True, q_descale=tensor((2, HKV), torch.float32))
fa4.torch._key_major_copy = key_major_copy
value_map = int(fake.launches[-1].split("params ")[1].split("', '")[2].split("map of ")[1], 16)
print("varlen:", out.dtype, out.shape, lse.shape, "copied", copied, "V map dims",
      fake.dims[value_map], "strides", fake.strides[value_map])
# CHECK-NEXT: varlen: torch.bfloat16 (700, 4, 64) (4, 700) copied [((900, 2, 64), (3,))] V map dims [960, 2, 64, 1] strides [61440, 960, 960]
print("padded rows:", [fa4.torch._packed_value_rows(keys, n) for keys, n in
                       ((0, 0), (1, 1), (900, 2), (15, 3))])
# CHECK-NEXT: padded rows: [16, 48, 960, 80]

# The float32 reference with the descales: FP8 upcast, the scores scaled by
# q_descale * k_descale and O by v_descale, per batch and KV head (query head
# h takes KV head h // group).
print("reference signature:", "q_descale" in fa4.torch.reference.__code__.co_varnames)
# CHECK-NEXT: reference signature: True
runtime.set_driver(None)
