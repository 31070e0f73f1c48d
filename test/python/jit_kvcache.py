# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit on KV-cache problems: a dense cache with seqused_k and paged K/V
compiled on demand through libFA4CAPI.so (the fa4.attention syntax
`seqused_k(...)` on a dense batch and `paged(...)`), their manifests read
by the runtime (operands, the page size, the new parameters), their cache
keys apart from the plain problem's, the page sizes the Python side or the
compiler refuses, and fa4.torch.attention_with_kvcache compiling its
kernel on first use (the stand-in torch and the fake libcuda)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, tensor  # noqa: E402

torch = torch_standin.install()

from fa4 import MLIRError, jit, runtime  # noqa: E402

root = Path(sys.argv[1])
cache = jit.KernelCache(root / "cache")


def describe(kernel):
    params = {name: (kind, source) for name, kind, source in
              ((p["name"], p["kind"], p["source"]) for p in kernel.manifest["params"])
              if name in ("seq_kv", "seqused_k", "page_table", "max_pages")}
    return (f"{kernel.name} {kernel.arch} kvcache {kernel.kvcache} seqused_k "
            f"{kernel.seqused_k} paged {kernel.paged} page_size {kernel.page_size} key "
            f"{kernel.operands['key'][1]} tables "
            f"{[(n, kernel.operands[n]) for n in runtime.KV_TABLES if n in kernel.operands]} "
            f"params {sorted(params.items())}")


dense = cache.kernel("f16", 4, 4, 64, lse=True, arch="sm_100a", seqused_k=True)
print(describe(dense))
# CHECK: f16_d64_h4x4_seqused_lse_attention sm_100a kvcache True seqused_k True paged False page_size None key (-1, -1, 4, 64) tables [('seqused_k', ('i32', (-1,)))] params [('seq_kv', ('i32', 'key.shape[1]')), ('seqused_k', ('pointer', 'seqused_k.data'))]
paged = cache.kernel("bf16", 32, 8, 128, causal=True, lse=True, arch="sm_100a",
                     seqused_k=True, page_size=256)
print(describe(paged))
# CHECK-NEXT: bf16_d128_h32x8_causal_seqused_paged256_lse_attention sm_100a kvcache True seqused_k True paged True page_size 256 key (-1, 256, 8, 128) tables [('seqused_k', ('i32', (-1,))), ('page_table', ('i32', (-1, -1)))] params [('max_pages', ('i32', 'page_table.shape[1]')), ('page_table', ('pointer', 'page_table.data')), ('seq_kv', ('i32', 'key.shape[1]')), ('seqused_k', ('pointer', 'seqused_k.data'))]
hopper = cache.kernel("bf16", 8, 2, 128, arch="sm_90a", lse=True, window=(100, 60),
                      page_size=64)
print(describe(hopper))
# CHECK-NEXT: bf16_d128_h8x2_window100x60_paged64_lse_attention sm_90a kvcache True seqused_k False paged True page_size 64 key (-1, 64, 2, 128) tables [('page_table', ('i32', (-1, -1)))] params [('max_pages', ('i32', 'page_table.shape[1]')), ('page_table', ('pointer', 'page_table.data')), ('seq_kv', ('i32', 'key.shape[1]'))]
print("compiled", cache.compiled)
# CHECK-NEXT: compiled 3

# Each is a problem of its own; the plain problem keeps its key.
plain = dict(dtype="bf16", heads_q=32, heads_kv=8, head_dim=128, causal=True, lse=True,
             arch="sm_100a", window=[-1, 0], softcap=False, sink=False)
keys = {cache.key(plain), cache.key(dict(plain, seqused_k=True)),
        cache.key(dict(plain, seqused_k=True, page_size=256)),
        cache.key(dict(plain, seqused_k=True, page_size=128))}
print("keys apart:", len(keys))
# CHECK-NEXT: keys apart: 4

# Refused before compiling: page sizes that are not powers of two. Packed
# sequences over pages compile.
for label, call in [
        ("page 96", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", page_size=96)),
        ("page 1.5", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", page_size=1.5)),
        ("varlen", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", varlen=True,
                                        page_size=256))]:
    try:
        call()
        print(f"{label}: compiled")
    except (ValueError, MLIRError) as err:
        print(f"{label}: {type(err).__name__}: {str(err).splitlines()[0]}")
# CHECK-NEXT: page 96: ValueError: page_size must be a power of two, got 96
# CHECK-NEXT: page 1.5: ValueError: page_size must be a power of two, got 1.5
# CHECK-NEXT: varlen: compiled

# fa4.torch.attention_with_kvcache without a kernel directory compiles its
# kernel on first use (on this sm_100a stand-in device) and launches it.
os.environ["FA4_CACHE_DIR"] = str(root / "torch-cache")
os.environ.pop("FA4_KERNEL_DIR", None)
import fa4.torch  # noqa: E402
fake = FakeCuda()
runtime.set_driver(fake)
q, pages = tensor((2, 1, 4, 64)), tensor((10, 128, 2, 64))
lengths, table = tensor((2,), torch.int32), tensor((2, 5), torch.int32)
kernel = fa4.jit.KernelCache().kernel("bf16", 4, 2, 64, causal=True, arch="sm_100a",
                                      seqused_k=True, page_size=128)
fake.kinds = [kind for _, kind, _ in kernel.params]
out = fa4.torch.attention_with_kvcache(q, pages, pages, lengths, table, causal=True)
print("jit:", out.shape, fake.launches[-1].split(" grid")[0],
      f"{lengths.data_ptr():#x}" in fake.launches[-1],
      f"{table.data_ptr():#x}" in fake.launches[-1])
# (Decoding 2 sequences on sm_100a: few work tiles, so the interleaved variant.)
# CHECK-NEXT: jit: (2, 1, 4, 64) bf16_d64_h4x2_causal_seqused_paged128_q1_kvi2_attention True True
runtime.set_driver(None)
