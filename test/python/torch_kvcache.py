# RUN: %python %s | FileCheck %s
"""fa4.torch.attention_with_kvcache and fa4.flash_attn_with_kvcache against
the stand-in torch and the fake libcuda: the KV-cache kernel chosen (paged
or dense, with seqused_k or without; never a plain one, nor the reverse),
the tables' pointers and max_pages among the parameters, the pages' tensor
maps, an int cache_seqlens as an int32 tensor, a copied table kept alive
until its launch is enqueued, the calls that launch
nothing, the repeated eager call, the checks of q, the caches and the
tables, and flash-attn's arguments mapped or refused."""

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

import fa4  # noqa: E402
from fa4 import flash_attn_with_kvcache, runtime  # noqa: E402

print("exported:", fa4.attention_with_kvcache is fa4.torch.attention_with_kvcache,
      flash_attn_with_kvcache is fa4.flash_attn.flash_attn_with_kvcache)
# CHECK: exported: True True

TMP = Path(tempfile.mkdtemp(prefix="fa4-kvcache-"))
atexit.register(shutil.rmtree, TMP, True)
os.environ["FA4_KERNEL_DIR"] = str(TMP)
torch_standin.write_kernel(TMP, "plain", "bf16", 4, 2, True, True)
torch_standin.write_kernel(TMP, "paged256", "bf16", 4, 2, True, True, seqused_k=True,
                           page_size=256)
torch_standin.write_kernel(TMP, "paged128_all", "bf16", 4, 2, False, False, page_size=128)
torch_standin.write_kernel(TMP, "paged256_sink", "bf16", 4, 2, False, True, sink=True,
                           seqused_k=True, page_size=256)
torch_standin.write_kernel(TMP, "dense_seqused", "bf16", 4, 2, True, False, seqused_k=True)
fake = FakeCuda()
runtime.set_driver(fake)
directory = runtime.KernelDirectory(TMP)


def expect(name):
    """Decode the next launch's parameters as kernel `name`'s."""
    fake.kinds = [kind for _, kind, _ in next(k for k in directory if k.name == name).params]


def launched():
    return fake.launches[-1].split(" grid")[0]


# Decoding 4 tokens per batch against 256-key pages: q [3, 4, 4, 64], 40
# pages, up to 9 pages per batch.
q = tensor((3, 4, 4, 64))
k_pages, v_pages = tensor((40, 256, 2, 64)), tensor((40, 256, 2, 64))
lengths, table = tensor((3,), torch.int32), tensor((3, 9), torch.int32)
expect("paged256")
out, lse = fa4.torch.attention_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                            page_table=table, causal=True, return_lse=True)
print("out", out.shape, out.dtype, "lse", lse.shape, lse.dtype)
print(fake.launches[-1])
print("tables", f"'{lengths.data_ptr():#x}', '{table.data_ptr():#x}', 9]" in fake.launches[-1],
      "k pages map", fake.dims[k_pages.data_ptr()], fake.strides[k_pages.data_ptr()])
# CHECK-NEXT: out (3, 4, 4, 64) torch.bfloat16 lse (3, 4, 4) torch.float32
# batch, seq_q, seq_kv (the page size), the scale, LSE, seqused_k, the page
# table and max_pages.
# CHECK-NEXT: paged256 grid 12 stream 0x5000 params ['map of {{0x[0-9a-f]+}}', 'map of [[K:0x[0-9a-f]+]]', 'map of {{0x[0-9a-f]+}}', 'map of {{0x[0-9a-f]+}}', 3, 4, 256, 0.1803368{{[0-9]*}}, '{{0x[0-9a-f]+}}', '{{0x[0-9a-f]+}}', '{{0x[0-9a-f]+}}', 9]
# CHECK-NEXT: tables True k pages map [64, 2, 256, 40] [128, 256, 65536]

# An int cache_seqlens is every batch's length: an int32 [B] tensor of it.
expect("paged256")
fa4.torch.attention_with_kvcache(q, k_pages, v_pages, cache_seqlens=1000, page_table=table,
                                 causal=True, return_lse=True)
pointer = fake.launches[-1].split("', '")[-2]
print("int lengths:", launched(), pointer != f"{lengths.data_ptr():#x}")
# CHECK-NEXT: int lengths: paged256 True

# Pages without lengths: every batch has max_pages * P keys; a page table
# that is not contiguous is copied.
expect("paged128_all")
k128 = tensor((64, 128, 2, 64))
strided_table = tensor((3, 9), torch.int32, strides=(16, 1))
fa4.torch.attention_with_kvcache(q, k128, k128, page_table=strided_table)
print("all keys:", launched(), "table copied",
      f"{strided_table.data_ptr():#x}" not in fake.launches[-1],
      "max_pages", fake.launches[-1].split(", ")[-1])
# CHECK-NEXT: all keys: paged128_all table copied True max_pages 9]

# The copy lives until the launch is enqueued (freed earlier, the caching
# allocator could hand its memory to an allocation written before the kernel
# reads it); the repeated call's (the eager plan's) too.
copies, alive = [], []
contiguous, launch = torch.Tensor.contiguous, fake.cuLaunchKernelEx


def recording_contiguous(self):
    copy = contiguous(self)
    if copy is not self:
        copies.append(weakref.ref(copy))
    return copy


torch.Tensor.contiguous = recording_contiguous
fake.cuLaunchKernelEx = lambda *args: (alive.append([r() is not None for r in copies]),
                                       launch(*args))[1]
fa4.torch.attention_with_kvcache(q, k128, k128, page_table=strided_table)
torch.Tensor.contiguous = contiguous
del fake.cuLaunchKernelEx
print("copied table alive at the launch:", alive, "after:", [r() is not None for r in copies])
# CHECK-NEXT: copied table alive at the launch: {{\[}}[True]] after: [False]

# A dense cache with lengths; without tables it is plain attention.
expect("dense_seqused")
k_dense = tensor((3, 2048, 2, 64))
fa4.torch.attention_with_kvcache(q, k_dense, k_dense, cache_seqlens=lengths, causal=True)
print("dense:", launched(), fake.launches[-1].split(", ")[4:7],
      fake.launches[-1].endswith(f"'{lengths.data_ptr():#x}']"))
expect("plain")
fa4.torch.attention_with_kvcache(q, k_dense, k_dense, causal=True, return_lse=True)
print("no tables:", launched())
# CHECK-NEXT: dense: dense_seqused ['3', '4', '2048'] True
# CHECK-NEXT: no tables: plain

# Sinks, the sink pointer before the tables.
expect("paged256_sink")
sinks = tensor((4,), torch.float32)
fa4.torch.attention_with_kvcache(q, k_pages, v_pages, lengths, table, sink=sinks,
                                 return_lse=True)
print("sink:", launched(), f"'{sinks.data_ptr():#x}', '{lengths.data_ptr():#x}', "
      f"'{table.data_ptr():#x}', 9]" in fake.launches[-1])
# CHECK-NEXT: sink: paged256_sink True

# Nothing to launch: no query rows; no room for keys (no page entries, no
# pages): O = 0, LSE -inf or the sink.
count = len(fake.launches)
empty, empty_lse = fa4.torch.attention_with_kvcache(tensor((3, 0, 4, 64)), k_pages, v_pages,
                                                    lengths, table, causal=True,
                                                    return_lse=True)
no_entries, no_entries_lse = fa4.torch.attention_with_kvcache(
    q, k_pages, v_pages, lengths, tensor((3, 0), torch.int32), causal=True, return_lse=True)
no_pages, no_pages_lse = fa4.torch.attention_with_kvcache(
    q, tensor((0, 256, 2, 64)), tensor((0, 256, 2, 64)), lengths, table, sink=sinks,
    return_lse=True)
print("no launch:", len(fake.launches) == count, empty.shape, empty_lse.shape,
      "no entries: O", no_entries.filled, "LSE", no_entries_lse.filled,
      "no pages: O", no_pages.filled, "LSE", no_pages_lse.filled is not None)
# CHECK-NEXT: no launch: True (3, 0, 4, 64) (3, 4, 0) no entries: O 0.0 LSE -inf no pages: O 0.0 LSE True

# A repeated call: one cuCtxGetCurrent and one cuLaunchKernelEx; another
# page table launches anew with the same plan.
expect("paged256")
torch_standin.caching_allocator()
q5 = tensor((3, 5, 4, 64))
args = (q5, k_pages, v_pages, lengths, table)
for label, call_args in (("first", args), ("again", args),
                         ("other table", (q5, k_pages, v_pages, lengths,
                                          tensor((3, 9), torch.int32)))):
    plans = len(fa4.torch._plans)
    fake.calls.clear()
    fa4.torch.attention_with_kvcache(*call_args, causal=True, return_lse=True)
    print(f"{label}:", " ".join(fake.calls[-3:]), "new plans", len(fa4.torch._plans) - plans)
# CHECK-NEXT: first: {{.*}}cuLaunchKernelEx new plans 1
# CHECK-NEXT: again: cuCtxGetCurrent cuLaunchKernelEx new plans 0
# CHECK-NEXT: other table: cuMemAllocAsync cuMemcpyHtoDAsync_v2 cuLaunchKernelEx new plans 0

cpu = Device("cpu")
cases = [
    ("q 3-D", lambda: fa4.torch.attention_with_kvcache(tensor((3, 4, 64)), k_pages, v_pages,
                                                       lengths, table)),
    ("pages differ", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, tensor((41, 256, 2, 64)), lengths, table)),
    ("page size", lambda: fa4.torch.attention_with_kvcache(
        q, tensor((40, 96, 2, 64)), tensor((40, 96, 2, 64)), lengths, table)),
    ("heads", lambda: fa4.torch.attention_with_kvcache(
        q, tensor((40, 256, 3, 64)), tensor((40, 256, 3, 64)), lengths, table)),
    ("cache head dim stride", lambda: fa4.torch.attention_with_kvcache(
        q, tensor((40, 256, 2, 64), strides=(65536, 256, 128, 2)), v_pages, lengths, table)),
    ("dense batch", lambda: fa4.torch.attention_with_kvcache(q, tensor((2, 2048, 2, 64)),
                                                             tensor((2, 2048, 2, 64)),
                                                             lengths)),
    ("lengths dtype", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, tensor((3,), torch.float32), table)),
    ("lengths rank", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, tensor((3, 1), torch.int32), table)),
    ("lengths batch", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, tensor((4,), torch.int32), table)),
    ("lengths device", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, tensor((3,), torch.int32, device=cpu), table)),
    ("lengths list", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages, [5, 6, 7],
                                                              table)),
    ("lengths bool", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages, True,
                                                              table)),
    ("lengths past int32", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages,
                                                                    2 ** 31, table)),
    ("table dtype", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, lengths, tensor((3, 9), torch.float32))),
    ("table rank", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, lengths, tensor((27,), torch.int32))),
    ("table rows", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, lengths, tensor((2, 9), torch.int32))),
    ("table device", lambda: fa4.torch.attention_with_kvcache(
        q, k_pages, v_pages, lengths, tensor((3, 9), torch.int32, device=cpu))),
    ("table type", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages, lengths,
                                                            [[0] * 9] * 3)),
    ("causal window", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages, lengths,
                                                               table, causal=True,
                                                               window=(10, 4))),
    ("no kernel", lambda: fa4.torch.attention_with_kvcache(q, k_pages, v_pages, lengths,
                                                           table, window=(64, 0))),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
        if isinstance(err, LookupError):
            print("\n".join(sorted(line.strip() for line in str(err).splitlines()[1:])))
# CHECK-NEXT: q 3-D: ValueError: q must be 4-D [B, Sq, Hq, D], got shape [3, 4, 64]
# CHECK-NEXT: pages differ: ValueError: k and v shapes differ: [40, 256, 2, 64] and [41, 256, 2, 64]
# CHECK-NEXT: page size: ValueError: k_cache's page size (dimension 1 of [num_pages, page_size, Hkv, D]) must be a power of two, got 96
# CHECK-NEXT: heads: ValueError: query heads (4) must be a multiple of key/value heads (3)
# CHECK-NEXT: cache head dim stride: ValueError: k must have a unit-stride head dim (strides [65536, 256, 128, 2] for shape [40, 256, 2, 64]): TMA reads rows of contiguous elements; call .contiguous()
# CHECK-NEXT: dense batch: ValueError: batch sizes differ: q 3, k 2, v 2
# CHECK-NEXT: lengths dtype: ValueError: cache_seqlens must be a torch.int32 tensor [B], got torch.float32 of shape [3]
# CHECK-NEXT: lengths rank: ValueError: cache_seqlens must be a torch.int32 tensor [B], got torch.int32 of shape [3, 1]
# CHECK-NEXT: lengths batch: ValueError: cache_seqlens must be [B] with B = 3 (q's batch), got shape [4]
# CHECK-NEXT: lengths device: ValueError: cache_seqlens is on cpu, q on cuda:0
# CHECK-NEXT: lengths list: TypeError: cache_seqlens must be None, an int or a torch.int32 tensor [B], got list
# CHECK-NEXT: lengths bool: TypeError: cache_seqlens must be None, an int or a torch.int32 tensor [B], got bool
# CHECK-NEXT: lengths past int32: ValueError: cache_seqlens = 2147483648 does not fit an int32
# CHECK-NEXT: table dtype: ValueError: page_table must be a torch.int32 tensor [B, max_pages], got torch.float32 of shape [3, 9]
# CHECK-NEXT: table rank: ValueError: page_table must be a torch.int32 tensor [B, max_pages], got torch.int32 of shape [27]
# CHECK-NEXT: table rows: ValueError: page_table must be [B, max_pages] with B = 3 (q's batch), got shape [2, 9]
# CHECK-NEXT: table device: ValueError: page_table is on cpu, q on cuda:0
# CHECK-NEXT: table type: TypeError: page_table must be a torch.Tensor, got list
# CHECK-NEXT: causal window: ValueError: causal attention needs window right bound 0 or -1, got 4
# CHECK-NEXT: no kernel: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=False scale=0.125 lse=False arch=sm_100a window=(64, 0) softcap=0.0 sink=False seqused_k=True page_size=256; candidates:
# CHECK-NEXT: dense_seqused (dense_seqused.json): causal is True, not False; paged is False, not True; window is (-1, 0), not (64, 0)
# CHECK-NEXT: paged128_all (paged128_all.json): seqused_k is False, not True; page_size is 128, not 256; window is (-1, -1), not (64, 0)
# CHECK-NEXT: paged256 (paged256.json): causal is True, not False; lse is True, not False; window is (-1, 0), not (64, 0)
# CHECK-NEXT: paged256_sink (paged256_sink.json): lse is True, not False; sink is True, not False; window is (-1, -1), not (64, 0)
# CHECK-NEXT: plain (plain.json): causal is True, not False; lse is True, not False; seqused_k is False, not True; paged is False, not True; window is (-1, 0), not (64, 0)

# flash_attn_with_kvcache: flash-attn's arguments, its order and return
# conventions, onto attention_with_kvcache.
expect("paged256")
out, softmax_lse = flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                           block_table=table, causal=True,
                                           window_size=(-1, 7), return_softmax_lse=True)
print("flash_attn_with_kvcache:", out.shape, softmax_lse.shape, launched(),
      f"'{lengths.data_ptr():#x}', '{table.data_ptr():#x}', 9]" in fake.launches[-1])
# CHECK-NEXT: flash_attn_with_kvcache: (3, 4, 4, 64) (3, 4, 4) paged256 True
expect("paged256_sink")
# (q, k_cache, v_cache, k, v, rotary_cos, rotary_sin, cache_seqlens,
# cache_batch_idx, cache_leftpad, block_table, softmax_scale, causal,
# window_size, softcap, rotary_interleaved, alibi_slopes, num_splits,
# return_softmax_lse)
result = flash_attn_with_kvcache(q, k_pages, v_pages, None, None, None, None, 777, None,
                                 None, table, 0.2, False, (-1, -1), 0.0, True, None, 0, True,
                                 sink=sinks)
print("positional:", len(result), launched(), fake.launches[-1].split(", ")[7],
      "int lengths", fake.launches[-1].split("', '")[-2] != f"{lengths.data_ptr():#x}")
# CHECK-NEXT: positional: 2 paged256_sink 0.288539{{[0-9]*}} int lengths True
expect("dense_seqused")
strided_q = tensor((3, 4, 4, 64), strides=(2048, 512, 128, 2))
out = flash_attn_with_kvcache(strided_q, k_dense, k_dense, cache_seqlens=lengths, causal=True,
                              num_splits=1)
print("dense, strided q copied:", type(out).__name__, launched(),
      f"{strided_q.data_ptr():#x}" not in fake.launches[-1])
# CHECK-NEXT: dense, strided q copied: Tensor dense_seqused True
expect("plain")
out, softmax_lse = flash_attn_with_kvcache(q, k_dense, k_dense, causal=True,
                                           return_softmax_lse=True)
print("no cache_seqlens nor block_table:", launched())
# CHECK-NEXT: no cache_seqlens nor block_table: plain

new = tensor((3, 4, 2, 64))
cases = [
    ("k, v", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, new, new, cache_seqlens=lengths,
                                             block_table=table)),
    ("rotary", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, rotary_cos=tensor((2048, 32)),
                                               rotary_sin=tensor((2048, 32)),
                                               cache_seqlens=lengths, block_table=table)),
    ("cache_batch_idx", lambda: flash_attn_with_kvcache(
        q, k_dense, k_dense, cache_seqlens=lengths,
        cache_batch_idx=tensor((3,), torch.int32))),
    ("cache_leftpad", lambda: flash_attn_with_kvcache(
        q, k_dense, k_dense, cache_seqlens=lengths, cache_leftpad=tensor((3,), torch.int32))),
    ("alibi", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                              block_table=table,
                                              alibi_slopes=tensor((4,), torch.float32))),
    ("num_splits", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                                   block_table=table, num_splits=-1)),
    # An explicit split needs a kernel of it (the heuristic's, 0, falls
    # back to the unsplit kernel where none is at hand: the calls above).
    ("num_splits 4", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                                     block_table=table, num_splits=4)),
    ("rotary_interleaved", lambda: flash_attn_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=lengths, block_table=table,
        rotary_interleaved="yes")),
    ("softcap", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                                block_table=table, softcap=-1.0)),
    ("softmax_scale", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                                      block_table=table, softmax_scale=0.0)),
    ("window_size", lambda: flash_attn_with_kvcache(q, k_pages, v_pages, cache_seqlens=lengths,
                                                    block_table=table, window_size=5)),
    ("block_table dtype", lambda: flash_attn_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=lengths, block_table=tensor((3, 9), torch.float32))),
    ("block_table with a dense cache", lambda: flash_attn_with_kvcache(
        q, k_dense, k_dense, cache_seqlens=lengths, block_table=table)),
    ("cache_seqlens float", lambda: flash_attn_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=7.5, block_table=table)),
]
for label, call in cases:
    try:
        call()
        print(f"{label}: accepted")
    except (NotImplementedError, TypeError, ValueError, LookupError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: k, v: NotImplementedError: k, v: fa4 does not append new keys to the cache; write them into k_cache/v_cache at each batch's cache_seqlens, pass the new lengths, and k=None, v=None
# CHECK-NEXT: rotary: NotImplementedError: rotary_cos, rotary_sin: fa4 does not append keys to rotate; write the keys rotated into the cache, pass rotary_cos=None, rotary_sin=None and rotate q in the kernel with rope_cos_sin= and rope_positions=
# CHECK-NEXT: cache_batch_idx: NotImplementedError: cache_batch_idx: fa4 reads batch b's cache at index b; index k_cache, v_cache (or the block_table rows) first and pass cache_batch_idx=None
# CHECK-NEXT: cache_leftpad: NotImplementedError: cache_leftpad: fa4's caches start at key 0; pass cache_leftpad=None
# CHECK-NEXT: alibi: NotImplementedError: alibi_slopes: fa4's kernels have no ALiBi biases; pass alibi_slopes=None
# CHECK-NEXT: num_splits: ValueError: num_splits must be an int in [0, 64] (0: heuristic), got -1
# CHECK-NEXT: num_splits 4: LookupError: no fa4 kernel in {{.*}} for dtype=bf16 heads_q=4 heads_kv=2 head_dim=64 causal=False {{.*}} page_size=256 kv_splits=4; candidates:
# CHECK-NEXT: rotary_interleaved: ValueError: rotary_interleaved must be a bool, got 'yes'
# CHECK-NEXT: softcap: ValueError: softcap must be 0.0 (none) or a positive, finite number, got -1.0
# CHECK-NEXT: softmax_scale: ValueError: softmax_scale must be None (1/sqrt(headdim)) or a positive, finite number, got 0.0
# CHECK-NEXT: window_size: ValueError: window_size must be (left, right) integers (-1: unbounded), got 5
# CHECK-NEXT: block_table dtype: ValueError: page_table must be a torch.int32 tensor [B, max_pages], got torch.float32 of shape [3, 9]
# CHECK-NEXT: block_table with a dense cache: LookupError: no fa4 kernel in {{.*}} page_size=2048; candidates:
# CHECK-NEXT: cache_seqlens float: TypeError: cache_seqlens must be None, an int or a torch.int32 tensor [B], got float

# sm_90a decode: a query that one Q stage holds (here 16 query positions:
# 32 per CTA over two stages) takes a kernel of one Q stage where the
# directory has one, split or not; a longer one, or a directory without
# it, the two-stage kernel.
HOPPER = Path(tempfile.mkdtemp(prefix="fa4-kvcache-hopper-"))
atexit.register(shutil.rmtree, HOPPER, True)
for name, stages, rows in (("a_two_stages", 2, 32), ("b_one_stage", 1, 16)):
    torch_standin.write_kernel(HOPPER, name, "bf16", 4, 2, True, True, seqused_k=True,
                               page_size=256, arch="sm_90a", q_stages=stages,
                               query_rows=rows)
fake = FakeCuda()
torch.cuda.capability = fake.capability = (9, 0)
runtime.set_driver(fake)
directory = runtime.KernelDirectory(HOPPER)
for tokens in (1, 16, 17):
    expect("b_one_stage" if tokens <= 16 else "a_two_stages")
    fa4.attention_with_kvcache(tensor((3, tokens, 4, 64)), k_pages, v_pages, causal=True,
                               cache_seqlens=lengths, page_table=table, return_lse=True,
                               kernel_dir=HOPPER, num_splits=1)
    print(f"decode {tokens}:", launched())
# CHECK-NEXT: decode 1: b_one_stage
# CHECK-NEXT: decode 16: b_one_stage
# CHECK-NEXT: decode 17: a_two_stages
TWO = HOPPER / "two"
TWO.mkdir()
torch_standin.write_kernel(TWO, "a_two_stages", "bf16", 4, 2, True, True, seqused_k=True,
                           page_size=256, arch="sm_90a", q_stages=2, query_rows=32)
directory = runtime.KernelDirectory(TWO)
expect("a_two_stages")
fa4.attention_with_kvcache(tensor((3, 2, 4, 64)), k_pages, v_pages, causal=True,
                           cache_seqlens=lengths, page_table=table, return_lse=True,
                           kernel_dir=TWO, num_splits=1)
print("no one-stage kernel:", launched())
# CHECK-NEXT: no one-stage kernel: a_two_stages
print("find:", [k.name for k in directory if k.matches(q_stages=1)],
      [k.name for k in directory if k.matches(q_stages=2)])
# CHECK-NEXT: find: [] ['a_two_stages']
torch.cuda.capability = (10, 0)
runtime.set_driver(None)
