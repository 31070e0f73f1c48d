# REQUIRES: ptxas
# RUN: rm -rf %t && fa4-opt %fa4_src_root/examples/attention.mlir --fa4-compile="emit-dir=%t" -o /dev/null > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.runtime on a manifest the compiler wrote (the README example: causal
GQA, 32 query heads over 8 K/V heads, head dim 128, bf16, with LSE): the
kernel is found, its parameters agree in number and type with the PTX entry,
and the grid and tensor maps follow the manifest."""

import re
import sys
from pathlib import Path

from fa4 import runtime

directory = runtime.KernelDirectory(sys.argv[1])
kernel = directory.find("bf16", 32, 8, 128, causal=True, lse=True, arch="sm_100a")
print(repr(kernel), "errors", directory.errors)
# CHECK: <fa4 kernel gqa_causal_attention sm_100a bf16 heads 32/8 head_dim 128 causal True scale 0.0883883476483184{{[0-9]*}} lse True> errors []

# The parameters against the PTX entry: one .param per manifest param, of
# the width the runtime passes.
ptx = (Path(sys.argv[1]) / kernel.manifest["files"]["ptx"]).read_text()
entry = re.search(rf"\.entry {kernel.name}\((.*?)\)", ptx, flags=re.S).group(1)
ptx_types = re.findall(r"\.param \.(\w+)", entry)
widths = {"tensor_map": "u64", "i32": "u32", "f32": "f32", "pointer": "u64"}
print("ptx", ptx_types)
print("runtime", [widths[kind] for _, kind, _ in kernel.params])
# CHECK-NEXT: ptx ['u64', 'u64', 'u64', 'u64', 'u32', 'u32', 'u32', 'f32', 'u64']
# CHECK-NEXT: runtime ['u64', 'u64', 'u64', 'u64', 'u32', 'u32', 'u32', 'f32', 'u64']

cubin = kernel.image_path()
print(cubin.name, cubin.read_bytes()[:4], "symbol", kernel.name.encode() in cubin.read_bytes())
# CHECK-NEXT: gqa_causal_attention.cubin b'\x7fELF' symbol True

# tiles = batch * head_blocks * ceil(seq_q / query_rows_per_cta)
print("grid", kernel.head_blocks, kernel.query_rows_per_cta, kernel.grid(1, 100, 148),
      kernel.grid(2, 1000, 148))
# CHECK-NEXT: grid 8 64 (16, 1, 1) (148, 1, 1)

args = kernel.arguments({
    "query": (0x10000, (2, 1000, 32, 128), "bf16"), "key": (0x20000, (2, 1500, 8, 128), "bf16"),
    "value": (0x30000, (2, 1500, 8, 128), "bf16"),
    "output": (0x40000, (2, 1000, 32, 128), "bf16"), "lse": (0x50000, (2, 32, 1000), "f32")})
for arg in args:
    print(arg.name, arg.value.describe() if arg.kind == "tensor_map" else arg.value)
# CHECK-NEXT: query_map dims [128, 32, 1000, 2], strides [256, 8192, 8192000] B, box [64, 4, 32, 1], address 0x10000
# CHECK-NEXT: key_map dims [128, 8, 1500, 2], strides [256, 2048, 3072000] B, box [64, 1, 128, 1], address 0x20000
# CHECK-NEXT: value_map dims [128, 8, 1500, 2], strides [256, 2048, 3072000] B, box [64, 1, 128, 1], address 0x30000
# CHECK-NEXT: output_map dims [128, 32, 1000, 2], strides [256, 8192, 8192000] B, box [64, 4, 32, 1], address 0x40000
# CHECK-NEXT: batch 2
# CHECK-NEXT: seq_q 1000
# CHECK-NEXT: seq_kv 1500
# CHECK-NEXT: scale_log2 0.1275174308245986{{[0-9]*}}
# CHECK-NEXT: lse 327680
