# RUN: %python %s | FileCheck %s
# REQUIRES: capi
"""fa4.torch.attention without PyTorch or a GPU: a stand-in `torch` module
(the few calls fa4.torch makes) and a fake libcuda. Checks the input
validation, the kernel choice, what is launched with which pointers, and the
returned tensors."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import Device, FakeCuda, Tensor, grad_mode, tensor  # noqa: E402

torch = torch_standin.install()
# Kernels come from the test's directory; compiling on demand is tested at
# the end.
os.environ["FA4_JIT"] = "0"

import fa4  # noqa: E402
from fa4 import runtime  # noqa: E402

print("fa4.attention is fa4.torch.attention:", fa4.attention is fa4.torch.attention)
# CHECK: fa4.attention is fa4.torch.attention: True
attention = fa4.attention

TMP = Path(tempfile.mkdtemp(prefix="fa4-torch-"))
atexit.register(shutil.rmtree, TMP, True)


def write_kernel(*args, **kwargs):
    torch_standin.write_kernel(TMP, *args, **kwargs)


write_kernel("gqa_causal_lse", "bf16", 4, 2, True, True)
write_kernel("mha_f16", "f16", 2, 2, False, False)
write_kernel("gqa_sink", "bf16", 4, 2, False, False, sink=True)
# In a directory of its own: the choices below list every kernel of TMP.
TMP_DV = TMP / "dv"
TMP_DV.mkdir()
torch_standin.write_kernel(TMP_DV, "d192v128", "bf16", 4, 2, True, True, head_dim=192,
                           head_dim_v=128)

fake = FakeCuda()
runtime.set_driver(fake)

q, k, v = tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64)), tensor((2, 500, 2, 64))
kernel = runtime.KernelDirectory(TMP).find("bf16", 4, 2, 64, causal=True, lse=True)
fake.kinds = [kind for _, kind, _ in kernel.params]
out, lse = attention(q, k, v, causal=True, return_lse=True, kernel_dir=str(TMP))
print("out", out.shape, out.dtype, "lse", lse.shape, lse.dtype)
print(fake.launches[-1])
print(f"q {q.data_ptr():#x} k {k.data_ptr():#x} v {v.data_ptr():#x} out {out.data_ptr():#x} "
      f"lse {lse.data_ptr():#x}")
# CHECK: out (2, 300, 4, 64) torch.bfloat16 lse (2, 4, 300) torch.float32
# CHECK-NEXT: gqa_causal_lse grid 16 stream 0x5000 params ['map of [[Q:0x[0-9a-f]+]]', 'map of [[K:0x[0-9a-f]+]]', 'map of [[V:0x[0-9a-f]+]]', 'map of [[O:0x[0-9a-f]+]]', 2, 300, 500, 0.1803368777036667, '[[L:0x[0-9a-f]+]]']
# CHECK-NEXT: q [[Q]] k [[K]] v [[V]] out [[O]] lse [[L]]

fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "f16", 2, 2, 64).params]
out = attention(tensor((1, 1000, 2, 64), torch.float16), tensor((1, 10, 2, 64), torch.float16),
                tensor((1, 10, 2, 64), torch.float16), scale=0.125, kernel_dir=str(TMP))
print("f16 out", out.shape, out.dtype)
print(fake.launches[-1])
# CHECK: f16 out (1, 1000, 2, 64) torch.float16
# CHECK-NEXT: mha_f16 grid 8 stream 0x5000 params [{{.*}}, 1, 1000, 10, 0.1803368777036667]

# V with a head dim of its own (Dqk 192, Dv 128): O has V's, the scale is
# 1/sqrt(Dqk).
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP_DV).find(
    "bf16", 4, 2, 192, causal=True, lse=True, head_dim_v=128).params]
out, lse = attention(tensor((1, 100, 4, 192)), tensor((1, 50, 2, 192)), tensor((1, 50, 2, 128)),
                     causal=True, return_lse=True, kernel_dir=str(TMP_DV))
print("dv out", out.shape, "lse", lse.shape, fake.launches[-1].split(" params")[0],
      fake.launches[-1].split(", ")[-2])
# CHECK: dv out (1, 100, 4, 128) lse (1, 4, 100) d192v128 grid {{[0-9]+}} stream 0x5000 0.1041175
for label, shapes in (("dv 96", ((1, 100, 4, 192), (1, 50, 2, 192), (1, 50, 2, 96))),
                      ("dv equal", ((1, 100, 4, 192), (1, 50, 2, 192), (1, 50, 2, 192)))):
    try:
        attention(*(tensor(s) for s in shapes), causal=True, return_lse=True,
                  kernel_dir=str(TMP_DV))
    except LookupError as err:
        lines = str(err).splitlines()
        print(f"{label}: {lines[0].split(' for ')[1]}")
        print(next(line for line in lines if "d192v128" in line).strip())
# CHECK: dv 96: dtype=bf16 heads_q=4 heads_kv=2 head_dim=192 causal=True scale=0.07216878364870323 lse=True arch=sm_100a window=(-1, 0) softcap=0.0 sink=False head_dim_v=96; candidates:
# CHECK-NEXT: d192v128 (d192v128.json): head_dim_v is 128, not 96
# CHECK: dv equal: dtype=bf16 heads_q=4 heads_kv=2 head_dim=192 causal=True scale=0.07216878364870323 lse=True arch=sm_100a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT: d192v128 (d192v128.json): head_dim_v is 128, not 192

# Another scale: the same kernel, its scale_log2 argument from the call.
fake.kinds = [kind for _, kind, _ in kernel.params]
attention(q, k, v, causal=True, return_lse=True, scale=0.2, kernel_dir=str(TMP))
print("scale 0.2:", fake.launches[-1].split(", ")[-2])
# CHECK: scale 0.2: 0.288539

# Nothing to compute: the (empty) outputs, no launch.
count = len(fake.launches)
out, lse = attention(tensor((2, 0, 4, 64)), k, v, causal=True, return_lse=True,
                     kernel_dir=str(TMP))
print("empty:", out.shape, lse.shape, "launches", len(fake.launches) - count)
# CHECK: empty: (2, 0, 4, 64) (2, 4, 0) launches 0

# Checks poison the outputs before the launch (fill=).
filled = []
torch.full = lambda shape, value, dtype, device: (
    filled.append((tuple(shape), value)), Tensor(shape, dtype, device))[1]
fake.kinds = [kind for _, kind, _ in kernel.params]
fa4.torch._run(kernel, q, k, v, True, fill=float("nan"))
print("poisoned:", filled, "launched", fake.launches[-1].split(" params")[0])
# CHECK: poisoned: [((2, 300, 4, 64), nan), ((2, 4, 300), nan)] launched gqa_causal_lse grid 16 stream 0x5000

# A [B, S, H, D] view of a [B, H, S, D] tensor: launched without a copy,
# its tensor map over the view's strides.
fake.kinds = [kind for _, kind, _ in kernel.params]
view = tensor((2, 300, 4, 64), strides=(76800, 64, 19200, 1))
attention(view, k, v, causal=True, return_lse=True, kernel_dir=str(TMP))
print("view: map strides", fake.strides[view.data_ptr()], "launched",
      fake.launches[-1].split(" grid")[0])
# CHECK: view: map strides [38400, 128, 153600] launched gqa_causal_lse

# Inputs that require grad: refused in grad mode (no backward yet), run
# under no_grad.
grad_q = tensor((2, 300, 4, 64), requires_grad=True)
try:
    attention(grad_q, k, v, causal=True, return_lse=True, kernel_dir=str(TMP))
    print("requires grad: accepted")
except RuntimeError as err:
    print("requires grad:", err)
grad_mode[0] = False
count = len(fake.launches)
attention(grad_q, k, v, causal=True, return_lse=True, kernel_dir=str(TMP))
grad_mode[0] = True
print("no_grad: launches", len(fake.launches) - count)
# CHECK: requires grad: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad, and its gradient would silently stop here; call it under torch.no_grad() or on detached tensors
# CHECK-NEXT: no_grad: launches 1

# Attention sinks: the kernel with sinks, the f32 sinks' pointer last; other
# floating dtypes are read as f32 (a converted copy); learnable sinks that
# require grad are refused like q, k and v.
sink_kernel = runtime.KernelDirectory(TMP).find("bf16", 4, 2, 64, sink=True)
fake.kinds = [kind for _, kind, _ in sink_kernel.params]
sinks = tensor((4,), torch.float32)
attention(q, k, v, sink=sinks, kernel_dir=str(TMP))
print(fake.launches[-1].split(" grid")[0], "sink last:",
      fake.launches[-1].endswith(f"'{sinks.data_ptr():#x}']"))
bf16_sinks = tensor((4,), torch.bfloat16)
attention(q, k, v, sink=bf16_sinks, kernel_dir=str(TMP))
print("bf16 sinks copied:", not fake.launches[-1].endswith(f"'{bf16_sinks.data_ptr():#x}']"))
for label, call in [
        ("sink shape", lambda: attention(q, k, v, sink=tensor((2,), torch.float32),
                                         kernel_dir=str(TMP))),
        ("sink type", lambda: attention(q, k, v, sink=[0.0] * 4, kernel_dir=str(TMP))),
        ("sink device", lambda: attention(q, k, v, kernel_dir=str(TMP),
                                          sink=tensor((4,), torch.float32, device=Device("cuda", 1)))),
        ("sink grad", lambda: attention(q, k, v, kernel_dir=str(TMP),
                                        sink=tensor((4,), torch.float32, requires_grad=True))),
        ("sink kernel", lambda: attention(q, k, v, causal=True, return_lse=True, sink=sinks,
                                          kernel_dir=str(TMP)))]:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError, RuntimeError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK: gqa_sink sink last: True
# CHECK-NEXT: bf16 sinks copied: True
# CHECK-NEXT: sink shape: ValueError: sink must have shape [heads_q] = [4], got [2]
# CHECK-NEXT: sink type: TypeError: sink must be a floating-point tensor, got list
# CHECK-NEXT: sink device: ValueError: sink is on cuda:1, q on cuda:0
# CHECK-NEXT: sink grad: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad, and its gradient would silently stop here; call it under torch.no_grad() or on detached tensors
# CHECK-NEXT: sink kernel: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=True scale=0.125 lse=True arch=sm_100a window=(-1, 0) softcap=0.0 sink=True; candidates:

os.environ["FA4_KERNEL_DIR"] = str(TMP)
cpu = Device("cpu")
cases = [
    ("not a tensor", lambda: attention([1.0], k, v)),
    ("float32", lambda: attention(tensor((2, 300, 4, 64), torch.float32), k, v)),
    ("mixed", lambda: attention(q, tensor((2, 500, 2, 64), torch.float16), v)),
    ("cpu", lambda: attention(q, tensor((2, 500, 2, 64), device=cpu), v)),
    ("devices", lambda: attention(q, k, tensor((2, 500, 2, 64), device=Device("cuda", 1)))),
    ("3-D", lambda: attention(tensor((300, 4, 64)), k, v)),
    ("head dim stride", lambda: attention(tensor((2, 300, 4, 64), strides=(153600, 512, 128, 2)),
                                          k, v)),
    ("unaligned stride", lambda: attention(tensor((2, 300, 4, 64), strides=(78000, 260, 65, 1)),
                                           k, v, causal=True, return_lse=True)),
    ("batch", lambda: attention(tensor((3, 300, 4, 64)), k, v)),
    ("head dim", lambda: attention(tensor((2, 300, 4, 128)), k, v)),
    ("k/v", lambda: attention(q, k, tensor((2, 501, 2, 64)))),
    ("heads", lambda: attention(tensor((2, 300, 3, 64)), k, v)),
    ("scale", lambda: attention(q, k, v, scale=-1.0)),
    ("no kernel", lambda: attention(q, k, v, causal=True, scale=0.2)),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
        if isinstance(err, LookupError):
            print(str(err).splitlines()[1])
# CHECK: not a tensor: TypeError: q must be a torch.Tensor, got list
# CHECK-NEXT: float32: TypeError: q has dtype torch.float32; fa4 kernels take torch.bfloat16 or torch.float16
# CHECK-NEXT: mixed: TypeError: q, k and v must share a dtype, got torch.bfloat16, torch.float16, torch.bfloat16
# CHECK-NEXT: cpu: ValueError: k is on cpu; fa4 kernels take CUDA tensors
# CHECK-NEXT: devices: ValueError: q, k and v must be on one device, got cuda:0, cuda:0, cuda:1
# CHECK-NEXT: 3-D: ValueError: q must be 4-D [B, Sq, Hq, D], got shape [300, 4, 64]
# CHECK-NEXT: head dim stride: ValueError: q must have a unit-stride head dim (strides [153600, 512, 128, 2] for shape [2, 300, 4, 64]): TMA reads rows of contiguous elements; call .contiguous()
# CHECK-NEXT: unaligned stride: ValueError: query: TMA needs byte strides that are positive multiples of 16 below 2^40, got 130 bytes for dimension 2 (strides [78000, 260, 65, 1] elements of 2 bytes)
# CHECK-NEXT: batch: ValueError: batch sizes differ: q 3, k 2, v 2
# CHECK-NEXT: head dim: ValueError: head dims differ: q 128, k 64 (q and k share one; v may have its own)
# CHECK-NEXT: k/v: ValueError: k and v shapes differ: [2, 500, 2, 64] and [2, 501, 2, 64]
# CHECK-NEXT: heads: ValueError: query heads (3) must be a multiple of key/value heads (2)
# CHECK-NEXT: scale: ValueError: scale must be positive and finite, got -1.0
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}}fa4-torch-{{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=True scale=0.2 lse=False arch=sm_100a window=(-1, 0) softcap=0.0 sink=False; candidates:
# CHECK-NEXT:   gqa_causal_lse (gqa_causal_lse.json): lse is True, not False

# The device's arch chooses too. (The choice is remembered per device, whose
# arch cannot change; the stand-in's can, so forget the choices.)
torch.cuda.capability = (9, 0)
fa4.torch._chosen.clear()
fa4.torch._plans.clear()
try:
    attention(q, k, v, causal=True, return_lse=True)
except LookupError as err:
    print(str(err).splitlines()[1])
# CHECK: gqa_causal_lse (gqa_causal_lse.json): arch is sm_100a, not sm_90a
del os.environ["FA4_KERNEL_DIR"]
try:
    attention(q, k, v)
except ValueError as err:
    print(err)
# CHECK: no kernel directory: pass kernel_dir= or set FA4_KERNEL_DIR to a directory of compiled fa4 kernels (compiling on demand is off: FA4_JIT=0)

# Compiling on demand (the real compiler through libFA4CAPI.so): a problem
# no directory holds is compiled once into the cache, launched, found in
# memory on the next call and on disk by a new cache. On the sm_100a
# stand-in this call's few work tiles also compile and launch the
# problem's kernel with interleaved softmax warpgroups (kv_interleave 2).
os.environ["FA4_JIT"] = "1"
torch.cuda.capability = (10, 0)
os.environ["FA4_CACHE_DIR"] = str(TMP / "cache")
q6, k2 = tensor((1, 200, 6, 64)), tensor((1, 300, 2, 64))
cache = fa4.torch.jit_cache()
fake.kinds = ["tensor_map"] * 4 + ["i32"] * 3 + ["f32"]
out = attention(q6, k2, k2, causal=True, scale=0.3, kernel_dir=str(TMP))
print("jit:", out.shape, "compiled", cache.compiled, fake.launches[-1].split(" grid")[0],
      "params", fake.launches[-1].split("params ")[1])
attention(q6, k2, k2, causal=True, kernel_dir=str(TMP))
entries = [p.name for p in (TMP / "cache").iterdir()]
from fa4 import jit  # noqa: E402
again = jit.KernelCache()
kernel6 = again.kernel("bf16", 6, 2, 64, causal=True, arch="sm_100a")
print("again: compiled", cache.compiled, again.compiled, "entries", len(entries),
      "kernel", kernel6.name, kernel6.arch, kernel6.heads_q, kernel6.causal)
# CHECK: jit: (1, 200, 6, 64) compiled 2 bf16_d64_h6x2_causal_q1_kvi2_attention params [{{.*}}, 1, 200, 300, 0.432808
# CHECK-NEXT: again: compiled 2 0 entries 2 kernel bf16_d64_h6x2_causal_attention sm_100a 6 True
runtime.set_driver(None)
