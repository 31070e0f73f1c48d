# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# REQUIRES: capi
"""fa4.jit on problems with a fused rotary embedding: the fa4.attention
text (`rope(%cos_sin, %positions)`, rope_start and rope_output), the kernel
names, the cache keys apart from the plain problem's, kernels compiled on
demand through libFA4CAPI.so and read by the runtime (the `rope` entry,
the operands, the parameters), the problems refused before compiling or
by the compiler's verifier, and fa4.torch.attention_with_kvcache compiling its rope
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

print(jit.module_text("mla", "bf16", 128, 16, 2, True, False, rope=(64, 64, True)))
print(jit.kernel_name("bf16", 128, 32, 8, True, True, seqused_k=True, page_size=256,
                      rope=(0, 128, False)),
      jit.kernel_name("bf16", 128, 16, 2, True, False, rope=runtime.Rope(64, 64, True)))
# CHECK: func.func @mla(%q: memref<?x?x16x128xbf16>, %k: memref<?x?x2x128xbf16>, %v: memref<?x?x2x128xbf16>, %o: memref<?x?x16x128xbf16>, %cos_sin: memref<?x64xf32>, %positions: memref<?x?xi32>) {
# CHECK-NEXT: fa4.attention ins(%q, %k, %v : memref<?x?x16x128xbf16>, memref<?x?x2x128xbf16>, memref<?x?x2x128xbf16>) outs(%o : memref<?x?x16x128xbf16>) rope(%cos_sin, %positions : memref<?x64xf32>, memref<?x?xi32>) {causal, rope_start = 64 : i64, rope_output}
# CHECK: bf16_d128_h32x8_causal_seqused_paged256_rope0x128_lse bf16_d128_h16x2_causal_rope64x64o


def describe(kernel):
    params = [p["name"] for p in kernel.manifest["params"]][-3:]
    return (f"{kernel.name} rope {kernel.rope} {kernel.manifest['rope']} operands "
            f"{[(n, kernel.operands[n]) for n in runtime.ROPE]} params {params}")


paged = cache.kernel("bf16", 32, 8, 128, causal=True, lse=True, arch="sm_90a",
                     seqused_k=True, page_size=256, rope=(0, 128, False))
print(describe(paged))
mla = cache.kernel("f16", 16, 2, 128, causal=True, arch="sm_90a", rope=(64, 64, True))
print(describe(mla))
print("compiled", cache.compiled, "again", cache.kernel(
    "f16", 16, 2, 128, causal=True, arch="sm_90a", rope=runtime.Rope(64, 64, True)) is mla,
      cache.compiled)
# CHECK: bf16_d128_h32x8_causal_seqused_paged256_rope0x128_lse_attention rope Rope(start=0, columns=128, output=False) {'columns': 128, 'output': False, 'start': 0} operands [('cos_sin', ('f32', (-1, 128))), ('positions', ('i32', (-1, -1)))] params ['cos_sin', 'rope_positions', 'positions']
# CHECK-NEXT: f16_d128_h16x2_causal_rope64x64o_attention rope Rope(start=64, columns=64, output=True) {'columns': 64, 'output': True, 'start': 64} operands [('cos_sin', ('f32', (-1, 64))), ('positions', ('i32', (-1, -1)))] params ['cos_sin', 'rope_positions', 'positions']
# CHECK-NEXT: compiled 2 again True 2

# Each rope is a problem of its own; the plain problem keeps its key.
plain = dict(dtype="bf16", heads_q=16, heads_kv=2, head_dim=128, causal=True, lse=False,
             arch="sm_90a", window=[-1, 0], softcap=False, sink=False)
keys = {cache.key(plain), cache.key(dict(plain, rope=[0, 128, False])),
        cache.key(dict(plain, rope=[64, 64, True])), cache.key(dict(plain, rope=[64, 64, False]))}
print("keys apart:", len(keys))
# CHECK-NEXT: keys apart: 4

for label, call in [
        ("start 4", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", rope=(4, 64, False))),
        ("columns 0", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", rope=(0, 0, False))),
        ("two values", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a", rope=(0, 64))),
        ("past the head dim", lambda: cache.kernel("bf16", 8, 2, 128, arch="sm_90a",
                                                   rope=(72, 64, False)))]:
    try:
        call()
        print(f"{label}: compiled")
    except (ValueError, MLIRError) as err:
        lines = str(err).splitlines()
        print(f"{label}: {type(err).__name__}: {lines[-1] if len(lines) > 1 else lines[0]}")
# CHECK-NEXT: start 4: ValueError: rope start 4 and columns 64 must be multiples of 8, columns positive
# CHECK-NEXT: columns 0: ValueError: rope start 0 and columns 0 must be multiples of 8, columns positive
# CHECK-NEXT: two values: ValueError: rope must be (start, columns, output) (integers and a bool) or None, got (0, 64)
# CHECK-NEXT: past the head dim: MLIRError: {{.*}}rope_start + R <= head dim 128, got rope_start = 72, R = 64

# fa4.torch.attention_with_kvcache without a kernel directory compiles its
# rope kernel on first use (on an sm_90a stand-in device; for a decode query
# the kernel of one Q stage) and launches it.
os.environ["FA4_CACHE_DIR"] = str(root / "torch-cache")
os.environ.pop("FA4_KERNEL_DIR", None)
import fa4.torch  # noqa: E402
torch.cuda.capability = (9, 0)
fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
q, pages = tensor((2, 1, 4, 64)), tensor((10, 128, 2, 64))
lengths, table = tensor((2,), torch.int32), tensor((2, 5), torch.int32)
cos_sin, positions = tensor((700, 32), torch.float32), tensor((2, 1), torch.int32)
kernel = fa4.jit.KernelCache().kernel("bf16", 4, 2, 64, causal=True, arch="sm_90a",
                                      seqused_k=True, page_size=128, rope=(32, 32, False))
fake.kinds = [kind for _, kind, _ in kernel.params]
out = fa4.torch.attention_with_kvcache(q, pages, pages, lengths, table, causal=True,
                                       num_splits=1, rope_cos_sin=cos_sin,
                                       rope_positions=positions, rope_start=32)
print("jit:", out.shape, fake.launches[-1].split(" grid")[0],
      fake.launches[-1].endswith(f"'{cos_sin.data_ptr():#x}', 700, "
                                 f"'{positions.data_ptr():#x}']"))
# CHECK-NEXT: jit: (2, 1, 4, 64) bf16_d64_h4x2_causal_seqused_paged128_rope32x32_q1_attention True
runtime.set_driver(None)
