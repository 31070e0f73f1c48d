# RUN: %python %s | FileCheck %s
"""The eager fast path of fa4.torch.attention, attention_varlen and
flash_attn_func, against the stand-in torch and a fake libcuda that logs
every driver call: a repeated call is one cuCtxGetCurrent and one
cuLaunchKernelEx, its checks and kernel choice remembered (`_plans`); a
change of any pointer, shape, stride, stream or scalar misses and launches
with the new values; what the remembered checks do not cover (grad mode,
options of other types) is still checked on every call; both caches are
bounded. (The op path and what bypasses it: torch_op_registration.py.)"""

import atexit
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, grad_mode, tensor  # noqa: E402

torch = torch_standin.install()
# PyTorch's cheap current-stream and current-device calls, which fa4.torch
# prefers to torch.cuda.current_stream() and torch.cuda.device().
current = {"device": 0, "stream": 0x5000}
entered = []
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: current["stream"],
                                 _cuda_getDevice=lambda: current["device"])
torch.cuda.device = lambda device: (entered.append(str(device)),
                                    torch_standin.contextlib.nullcontext())[1]
torch_standin.caching_allocator()

import fa4.torch  # noqa: E402
from fa4 import flash_attn_func, runtime  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="fa4-fast-"))
atexit.register(shutil.rmtree, TMP, True)
for name, *args, options in [
        ("gqa_causal_lse", "bf16", 4, 2, True, True, {}),
        ("gqa_causal", "bf16", 4, 2, True, False, {}),
        ("gqa_softcap", "bf16", 4, 2, False, False, {"softcap": 30.0}),
        ("gqa_sink", "bf16", 4, 2, False, False, {"sink": True}),
        ("gqa_packed", "bf16", 4, 2, True, False, {"varlen": True})]:
    torch_standin.write_kernel(TMP, name, *args, **options)
directory = runtime.KernelDirectory(TMP)
fake = FakeCuda()
runtime.set_driver(fake)
path = str(TMP)


def call(label, fn, *args, **kwargs):
    """Runs one call; prints the driver calls it made (xN: N in a row), the
    eager plans remembered and the launch's stream and parameters."""
    kernel = kwargs.pop("kernel")
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == kernel).params]
    fake.calls.clear()
    count = len(fake.launches)
    try:
        fn(*args, **kwargs)
    except (TypeError, ValueError, RuntimeError, LookupError, OSError) as err:
        print(f"{label}: {type(err).__name__}: {err}")
        return
    names = []
    for name in fake.calls:
        if names and names[-1][0] == name:
            names[-1][1] += 1
        else:
            names.append([name, 1])
    calls = " ".join(n if c == 1 else f"{n}x{c}" for n, c in names)
    launch = fake.launches[-1].split(" grid ")[1] if len(fake.launches) > count else "none"
    print(f"{label}: {calls}; plans {len(fa4.torch._plans)}; grid {launch}")


q, k, v = tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64)), tensor((2, 500, 2, 64))
attention = fa4.torch.attention
call("first", attention, q, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
call("again", attention, q, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
print(f"q {q.data_ptr():#x} k {k.data_ptr():#x} v {v.data_ptr():#x}")
# CHECK: first: cuInit cuCtxGetCurrent cuDeviceGet cuCtxGetDevice cuDeviceGetAttributex4 cuModuleLoadData cuModuleGetFunction cuFuncSetAttribute cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; plans 1; grid 16 stream 0x5000 params ['map of [[Q:0x[0-9a-f]+]]', 'map of [[K:0x[0-9a-f]+]]', 'map of [[V:0x[0-9a-f]+]]', 'map of [[O:0x[0-9a-f]+]]', 2, 300, 500, 0.1803368777036667, '[[L:0x[0-9a-f]+]]']
# CHECK-NEXT: again: cuCtxGetCurrent cuLaunchKernelEx; plans 1; grid 16 stream 0x5000 params ['map of [[Q]]', 'map of [[K]]', 'map of [[V]]', 'map of [[O]]', 2, 300, 500, 0.1803368777036667, '[[L]]']
# CHECK-NEXT: q [[Q]] k [[K]] v [[V]]

# Each change misses the remembered launch and launches with the new
# values; a change of pointers only keeps the plan (no new checks).
q2 = tensor((2, 300, 4, 64))
call("new q", attention, q2, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
print(f"q2 {q2.data_ptr():#x}")
k6, v6 = tensor((2, 600, 2, 64)), tensor((2, 600, 2, 64))
call("Skv 600", attention, q, k6, v6, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
view = tensor((2, 300, 4, 64), strides=(76800, 64, 19200, 1))
call("view", attention, view, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
print("view map strides", fake.strides[view.data_ptr()])
current["stream"] = 0x6000
call("stream", attention, q, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
current["stream"] = 0x5000
call("scale 0.2", attention, q, k, v, causal=True, return_lse=True, scale=0.2,
     kernel_dir=path, kernel="gqa_causal_lse")
call("scale 0.2 again", attention, q, k, v, causal=True, return_lse=True, scale=0.2,
     kernel_dir=path, kernel="gqa_causal_lse")
call("no lse", attention, q, k, v, causal=True, kernel_dir=path, kernel="gqa_causal")
call("softcap 30", attention, q, k, v, softcap=30.0, kernel_dir=path, kernel="gqa_softcap")
call("softcap 50", attention, q, k, v, softcap=50.0, kernel_dir=path, kernel="gqa_softcap")
call("softcap 50 again", attention, q, k, v, softcap=50.0, kernel_dir=path,
     kernel="gqa_softcap")
sinks, sinks2 = tensor((4,), torch.float32), tensor((4,), torch.float32)
call("sink", attention, q, k, v, sink=sinks, kernel_dir=path, kernel="gqa_sink")
call("other sink", attention, q, k, v, sink=sinks2, kernel_dir=path, kernel="gqa_sink")
print(f"sinks {sinks.data_ptr():#x} {sinks2.data_ptr():#x}")
# CHECK-NEXT: new q: cuCtxGetCurrent cuDeviceGet cuCtxGetDevice cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; plans 1; grid 16 stream 0x5000 params ['map of [[Q2:0x[0-9a-f]+]]', 'map of [[K]]', 'map of [[V]]', 'map of [[O]]', 2, 300, 500, 0.1803368777036667, '[[L]]']
# CHECK-NEXT: q2 [[Q2]]
# CHECK-NEXT: Skv 600: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}; plans 2; grid 16 stream 0x5000 params ['map of [[Q]]', 'map of {{0x[0-9a-f]+}}', 'map of {{0x[0-9a-f]+}}', 'map of [[O]]', 2, 300, 600, 0.1803368777036667, '[[L]]']
# CHECK-NEXT: view: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}; plans 3; grid 16 stream 0x5000
# CHECK-NEXT: view map strides [38400, 128, 153600]
# CHECK-NEXT: stream: cuCtxGetCurrent cuDeviceGet cuCtxGetDevice cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; plans 3; grid 16 stream 0x6000 params ['map of [[Q]]', 'map of [[K]]', 'map of [[V]]', 'map of [[O]]', 2, 300, 500, 0.1803368777036667, '[[L]]']
# CHECK-NEXT: scale 0.2: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}; plans 4; grid 16 stream 0x5000 params [{{.*}}, 2, 300, 500, 0.2885390{{[0-9]*}}, '[[L]]']
# CHECK-NEXT: scale 0.2 again: cuCtxGetCurrent cuLaunchKernelEx; plans 4; grid 16 stream 0x5000 params [{{.*}}, 2, 300, 500, 0.2885390{{[0-9]*}}, '[[L]]']
# CHECK-NEXT: no lse: {{.*}}cuModuleLoadData {{.*}}; plans 5; grid 16 stream 0x5000 params [{{.*}}, 2, 300, 500, 0.1803368777036667]
# CHECK-NEXT: softcap 30: {{.*}}; plans 6; grid 16 stream 0x5000 params [{{.*}}, 2, 300, 500, 0.1803368777036667, 240.0]
# CHECK-NEXT: softcap 50: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}; plans 7; grid 16 stream 0x5000 params [{{.*}}, 2, 300, 500, 0.1803368777036667, 400.0]
# CHECK-NEXT: softcap 50 again: cuCtxGetCurrent cuLaunchKernelEx; plans 7; {{.*}} 400.0]
# CHECK-NEXT: sink: {{.*}}; plans 8; grid 16 stream 0x5000 params [{{.*}}, 0.1803368777036667, '[[S1:0x[0-9a-f]+]]']
# CHECK-NEXT: other sink: cuCtxGetCurrent cuDeviceGet cuCtxGetDevice cuTensorMapEncodeTiledx4 cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx; plans 8; grid 16 stream 0x5000 params [{{.*}}, 0.1803368777036667, '[[S2:0x[0-9a-f]+]]']
# CHECK-NEXT: sinks [[S1]] [[S2]]

# The outputs are fresh tensors of the right shapes each call.
fake.kinds = [kind for _, kind, _ in directory.find("bf16", 4, 2, 64, causal=True).params]
out, lse = attention(q, k, v, causal=True, return_lse=True, kernel_dir=path)
out2 = attention(q, k, v, causal=True, kernel_dir=path)
print("outputs", out.shape, out.dtype, lse.shape, lse.dtype, type(out2).__name__, out2.shape)
# CHECK-NEXT: outputs (2, 300, 4, 64) torch.bfloat16 (2, 4, 300) torch.float32 Tensor (2, 300, 4, 64)

# Another current device: the call makes q's device current for the launch.
current["device"] = 1
entered.clear()
call("device 1 current", attention, q, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
current["device"] = 0
print("entered", entered)
# CHECK-NEXT: device 1 current: cuCtxGetCurrent cuLaunchKernelEx; plans 8;
# CHECK-NEXT: entered ['cuda:0']

# What the plan does not hold is checked on every call: inputs that
# require grad in grad mode, and options of other types than the plain ones
# (True == 1, but a bool is refused).
grad_q = tensor((2, 300, 4, 64), requires_grad=True)
grad_mode[0] = False
call("grad, no_grad", attention, grad_q, k, v, causal=True, return_lse=True,
     kernel_dir=path, kernel="gqa_causal_lse")
grad_mode[0] = True
call("grad", attention, grad_q, k, v, causal=True, return_lse=True, kernel_dir=path,
     kernel="gqa_causal_lse")
call("scale 1", attention, q, k, v, causal=True, return_lse=True, scale=1,
     kernel_dir=path, kernel="gqa_causal_lse")
call("scale True", attention, q, k, v, causal=True, return_lse=True, scale=True,
     kernel_dir=path, kernel="gqa_causal_lse")
call("window (True, -1)", attention, q, k, v, causal=True, return_lse=True,
     window=(True, -1), kernel_dir=path, kernel="gqa_causal_lse")
call("softcap False", attention, q, k, v, softcap=False, kernel_dir=path,
     kernel="gqa_softcap")
# CHECK-NEXT: grad, no_grad: {{.*}}; plans 8; grid 16
# CHECK-NEXT: grad: RuntimeError: fa4.torch.attention has no backward yet
# CHECK-NEXT: scale 1: {{.*}}; plans 8; grid 16 stream 0x5000 params [{{.*}}, 1.4426950216293335,
# CHECK-NEXT: scale True: ValueError: scale must be a real number, got True
# CHECK-NEXT: window (True, -1): ValueError: window must be (left, right) integers, got (True, -1)
# CHECK-NEXT: softcap False: ValueError: softcap must be a real number, got False

# The environment's kernel directory is part of the key.
os.environ["FA4_KERNEL_DIR"] = path
call("env dir", attention, q, k, v, causal=True, return_lse=True, kernel="gqa_causal_lse")
os.environ["FA4_KERNEL_DIR"] = str(TMP / "missing")
call("other env dir", attention, q, k, v, causal=True, return_lse=True,
     kernel="gqa_causal_lse")
del os.environ["FA4_KERNEL_DIR"]
# CHECK-NEXT: env dir: cuCtxGetCurrent cuLaunchKernelEx; plans 9;
# CHECK-NEXT: other env dir: FileNotFoundError: kernel directory {{.*}}missing does not exist

# Packed sequences and flash_attn_func take the same path.
packed_q, packed_k = tensor((700, 4, 64)), tensor((900, 2, 64))
cu_q, cu_k = tensor((4,), torch.int32), tensor((4,), torch.int32)
varlen = fa4.torch.attention_varlen
call("varlen", varlen, packed_q, packed_k, packed_k, cu_q, cu_k, causal=True,
     kernel_dir=path, kernel="gqa_packed")
call("varlen again", varlen, packed_q, packed_k, packed_k, cu_q, cu_k, causal=True,
     kernel_dir=path, kernel="gqa_packed")
cu_k2 = tensor((4,), torch.int32)
call("varlen other cu_seqlens_k", varlen, packed_q, packed_k, packed_k, cu_q, cu_k2,
     causal=True, kernel_dir=path, kernel="gqa_packed")
print(f"cu_k {cu_k.data_ptr():#x} cu_k2 {cu_k2.data_ptr():#x}")
call("varlen 5 sequences", varlen, packed_q, packed_k, packed_k, tensor((6,), torch.int32),
     tensor((6,), torch.int32), causal=True, kernel_dir=path, kernel="gqa_packed")
# (Its causal window is (-1, 0), not attention's (-1, -1): another plan, the
# same launch.)
call("flash_attn_func", flash_attn_func, q, k, v, causal=True, kernel_dir=path,
     kernel="gqa_causal")
call("flash_attn_func again", flash_attn_func, q, k, v, causal=True, kernel_dir=path,
     kernel="gqa_causal")
strided = tensor((2, 300, 4, 64), strides=(153600, 512, 128, 2))
call("flash_attn_func strided head", flash_attn_func, strided, k, v, causal=True,
     kernel_dir=path, kernel="gqa_causal")
call("attention strided head", attention, strided, k, v, causal=True, kernel_dir=path,
     kernel="gqa_causal")
# CHECK-NEXT: varlen: {{.*}}; plans 10; grid {{[0-9]+}} stream 0x5000 params [{{.*}}, 4, 700, 900, 0.1803368777036667, '[[CQ:0x[0-9a-f]+]]', '[[CK:0x[0-9a-f]+]]', '{{0x[0-9a-f]+}}']
# CHECK-NEXT: varlen again: cuCtxGetCurrent cuLaunchKernelEx; plans 10; {{.*}} '[[CQ]]', '[[CK]]',
# CHECK-NEXT: varlen other cu_seqlens_k: cuCtxGetCurrent cuDeviceGet cuCtxGetDevice {{.*}}; plans 10; {{.*}} '[[CQ]]', '[[CK2:0x[0-9a-f]+]]',
# CHECK-NEXT: cu_k [[CK]] cu_k2 [[CK2]]
# CHECK-NEXT: varlen 5 sequences: {{.*}}; plans 11; {{.*}} params [{{.*}}, 6, 700, 900,
# CHECK-NEXT: flash_attn_func: cuCtxGetCurrent cuLaunchKernelEx; plans 12;
# CHECK-NEXT: flash_attn_func again: cuCtxGetCurrent cuLaunchKernelEx; plans 12;
# CHECK-NEXT: flash_attn_func strided head: {{.*}}cuTensorMapEncodeTiledx4 {{.*}}cuLaunchKernelEx; plans 12;
# CHECK-NEXT: attention strided head: ValueError: q must have a unit-stride head dim

# The plans are bounded: all are forgotten when PLAN_CACHE_SIZE are held.
fa4.torch._plans.clear()
fa4.torch.PLAN_CACHE_SIZE = 2
for seq in (100, 200, 300, 400):
    attention(tensor((2, seq, 4, 64)), k, v, causal=True, kernel_dir=path)
    print(f"Sq {seq}: plans {len(fa4.torch._plans)}")
# CHECK-NEXT: Sq 100: plans 1
# CHECK-NEXT: Sq 200: plans 2
# CHECK-NEXT: Sq 300: plans 1
# CHECK-NEXT: Sq 400: plans 2
runtime.set_driver(None)
