# RUN: %python %s | FileCheck %s
"""fa4.flash_attn_func and fa4.flash_attn_varlen_func (flash-attn 2's entry
points) against the stand-in torch and the fake libcuda: how flash-attn's
arguments map onto fa4's kernel choice and launch parameters, the return
conventions, and the errors of what is not built. (flash_attn_varlen_func's
launches: torch_varlen.py.)"""

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
from fa4 import flash_attn_func, flash_attn_varlen_func, runtime  # noqa: E402

print("exported:", flash_attn_func is fa4.flash_attn.flash_attn_func,
      flash_attn_varlen_func is fa4.flash_attn.flash_attn_varlen_func)
# CHECK: exported: True True

TMP = Path(tempfile.mkdtemp(prefix="fa4-flash-attn-"))
atexit.register(shutil.rmtree, TMP, True)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
torch_standin.write_kernel(TMP, "plain", "bf16", 4, 2, False, False)
torch_standin.write_kernel(TMP, "causal_window_lse", "bf16", 4, 2, True, True,
                           window=(100, 0))
torch_standin.write_kernel(TMP, "softcap_f16", "f16", 2, 2, False, False, softcap=30.0)
torch_standin.write_kernel(TMP, "sink", "bf16", 4, 2, False, False, sink=True)
fake = FakeCuda()
runtime.set_driver(fake)
directory = runtime.KernelDirectory(TMP)


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


q, k, v = tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64)), tensor((2, 500, 2, 64))

# The defaults: out alone, 1/sqrt(D), no mask.
expect("plain")
out = flash_attn_func(q, k, v)
print("default:", type(out).__name__, out.shape, fake.launches[-1])
# CHECK: default: Tensor (2, 300, 4, 64) plain grid {{[0-9]+}} stream 0x5000 params [{{.*}}, 2, 300, 500, 0.18033687

# return_attn_probs: (out, softmax_lse, None) from the kernel with LSE;
# causal makes the window's right bound 0, as flash-attn does.
expect("causal_window_lse")
out, softmax_lse, s_dmask = flash_attn_func(q, k, v, causal=True, window_size=(100, 7),
                                            return_attn_probs=True)
print("probs:", out.shape, softmax_lse.shape, softmax_lse.dtype, s_dmask,
      fake.launches[-1].split(" grid")[0])
# CHECK: probs: (2, 300, 4, 64) (2, 4, 300) torch.float32 None causal_window_lse

# Positional arguments in flash-attn's order: dropout_p, softmax_scale,
# causal, window_size, softcap; the scale and the softcap over it are
# launch arguments.
expect("softcap_f16")
q16, k16 = tensor((1, 100, 2, 64), torch.float16), tensor((1, 80, 2, 64), torch.float16)
flash_attn_func(q16, k16, k16, 0.0, 0.2, False, (-1, -1), 30.0)
print("positional:", fake.launches[-1])
# CHECK: positional: softcap_f16 {{.*}} params [{{.*}}, 1, 100, 80, 0.288539{{[0-9]*}}, 150.0]

# A head dim that is not unit-stride is copied first (flash-attn does too);
# fa4.torch.attention itself refuses it.
expect("plain")
strided = tensor((2, 300, 4, 64), strides=(153600, 512, 128, 2))
flash_attn_func(strided, k, v)
print("strided head dim copied:", f"{strided.data_ptr():#x}" not in fake.launches[-1],
      fake.launches[-1].split(" grid")[0])
# CHECK: strided head dim copied: True plain

# Attention sinks, keyword-only.
expect("sink")
sinks = tensor((4,), torch.float32)
flash_attn_func(q, k, v, sink=sinks)
print("sink last:", fake.launches[-1].endswith(f"'{sinks.data_ptr():#x}']"))
# CHECK: sink last: True

cases = [
    ("dropout", lambda: flash_attn_func(q, k, v, dropout_p=0.1)),
    ("dropout range", lambda: flash_attn_func(q, k, v, dropout_p=1.5)),
    ("dropout type", lambda: flash_attn_func(q, k, v, dropout_p="none")),
    ("alibi", lambda: flash_attn_func(q, k, v, alibi_slopes=tensor((4,), torch.float32))),
    ("softmax_scale", lambda: flash_attn_func(q, k, v, softmax_scale=-1.0)),
    ("window_size", lambda: flash_attn_func(q, k, v, window_size=(1,))),
    ("window_size float", lambda: flash_attn_func(q, k, v, window_size=(1.5, 2))),
    ("softcap", lambda: flash_attn_func(q, k, v, softcap=-1.0)),
    ("requires grad", lambda: flash_attn_func(tensor((2, 300, 4, 64), requires_grad=True),
                                              k, v)),
    ("no kernel", lambda: flash_attn_func(q, k, v, window_size=(50, 50))),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (NotImplementedError, TypeError, ValueError, RuntimeError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: dropout: NotImplementedError: dropout_p=0.1: fa4's kernels have no dropout; pass dropout_p=0.0
# CHECK-NEXT: dropout range: ValueError: dropout_p must be a probability in [0, 1], got 1.5
# CHECK-NEXT: dropout type: ValueError: dropout_p must be a probability in [0, 1], got 'none'
# CHECK-NEXT: alibi: NotImplementedError: alibi_slopes: fa4's kernels have no ALiBi biases; pass alibi_slopes=None
# CHECK-NEXT: softmax_scale: ValueError: softmax_scale must be None (1/sqrt(headdim)) or a positive, finite number, got -1.0
# CHECK-NEXT: window_size: ValueError: window_size must be (left, right) integers (-1: unbounded), got (1,)
# CHECK-NEXT: window_size float: ValueError: window_size must be (left, right) integers (-1: unbounded), got (1.5, 2)
# CHECK-NEXT: softcap: ValueError: softcap must be 0.0 (none) or a positive, finite number, got -1.0
# CHECK-NEXT: requires grad: RuntimeError: fa4.torch.attention has no backward yet
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}} window=(50, 50)

# flash_attn_varlen_func: flash-attn's signature and its argument checks;
# this directory has no packed-sequence kernel, paged or not.
total_q, total_k = tensor((700, 4, 64)), tensor((900, 2, 64))
cu_q, cu_k = tensor((3,), torch.int32), tensor((3,), torch.int32)
varlen = flash_attn_varlen_func
cases = [
    ("varlen", lambda: varlen(total_q, total_k, total_k, cu_q, cu_k, 400, 500)),
    ("varlen keywords", lambda: varlen(
        total_q, total_k, total_k, cu_q, cu_k, 400, 500, dropout_p=0.0, softmax_scale=0.1,
        causal=True, window_size=(64, 0), softcap=0.0, alibi_slopes=None,
        deterministic=True, return_attn_probs=True, block_table=None)),
    ("paged", lambda: varlen(total_q, tensor((10, 256, 2, 64)), tensor((10, 256, 2, 64)),
                             cu_q, cu_k, 400, 500, block_table=tensor((2, 5), torch.int32))),
    ("q list", lambda: varlen([0.0], total_k, total_k, cu_q, cu_k, 400, 500)),
    ("q 4-D", lambda: varlen(tensor((2, 350, 4, 64)), total_k, total_k, cu_q, cu_k, 400, 500)),
    ("cu_seqlens dtype", lambda: varlen(total_q, total_k, total_k, tensor((3,), torch.float32),
                                        cu_k, 400, 500)),
    ("cu_seqlens lengths", lambda: varlen(total_q, total_k, total_k, cu_q,
                                          tensor((4,), torch.int32), 400, 500)),
    ("max_seqlen", lambda: varlen(total_q, total_k, total_k, cu_q, cu_k, -1, 500)),
    ("heads", lambda: varlen(tensor((700, 3, 64)), total_k, total_k, cu_q, cu_k, 400, 500)),
    ("block_table", lambda: varlen(total_q, tensor((10, 256, 2, 64)), tensor((10, 256, 2, 64)),
                                   cu_q, cu_k, 400, 500,
                                   block_table=tensor((3, 5), torch.int32))),
    ("varlen dropout", lambda: varlen(total_q, total_k, total_k, cu_q, cu_k, 400, 500,
                                      dropout_p=0.5)),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (NotImplementedError, TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: varlen: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=False scale=0.125 lse=False arch=sm_100a window=(-1, -1) softcap=0.0 sink=False varlen=True; candidates:
# CHECK-NEXT: varlen keywords: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=True scale=0.1 lse=True arch=sm_100a window=(64, 0) softcap=0.0 sink=False varlen=True; candidates:
# CHECK-NEXT: paged: LookupError: no fa4 kernel in {{.*}} varlen=True page_size=256; candidates:
# CHECK-NEXT: q list: TypeError: q must be a torch.Tensor, got list
# CHECK-NEXT: q 4-D: ValueError: q must be [total_q, Hq, D], got shape [2, 350, 4, 64]
# CHECK-NEXT: cu_seqlens dtype: ValueError: cu_seqlens_q must be a 1-D torch.int32 tensor of batch + 1 offsets, got torch.float32 of shape [3]
# CHECK-NEXT: cu_seqlens lengths: ValueError: cu_seqlens_q and cu_seqlens_k must have one entry per sequence plus one, got 3 and 4
# CHECK-NEXT: max_seqlen: ValueError: max_seqlen_q must be a non-negative int, got -1
# CHECK-NEXT: heads: ValueError: query heads (3) must be a multiple of key/value heads (2)
# CHECK-NEXT: block_table: ValueError: block_table must be a [batch = 2, max_blocks] torch.int32 tensor, got torch.int32 of shape [3, 5]
# CHECK-NEXT: varlen dropout: NotImplementedError: dropout_p=0.5: fa4's kernels have no dropout; pass dropout_p=0.0
runtime.set_driver(None)
