# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %fa4_src_root/scripts/compile-kernels.py --fa4-opt fa4-opt --arch sm_100a --out %t/sm100a --set kvcache > /dev/null
# RUN: %python %fa4_src_root/scripts/compile-kernels.py --fa4-opt fa4-opt --arch sm_90a --out %t/sm90a --set kvcache > /dev/null
# RUN: %python %s %t/sm100a %t/sm90a | FileCheck %s
"""fa4.runtime on the manifests the compiler writes for compile-kernels.py's
`kvcache` set, on both targets: every one a dense-batch KV-cache kernel the
runtime reads (paged with its page size, or seqused_k), its parameters
agreeing in number and type with the PTX entry and carrying the new
sources (seqused_k.data, page_table.data, page_table.shape[1]); a paged
launch's arguments (the pages' tensor maps, max_pages, the tables'
addresses); and the directory choosing each kernel for its own problem
only."""

import re
import sys
from pathlib import Path

from fa4 import runtime

WIDTHS = {"tensor_map": "u64", "i32": "u32", "f32": "f32", "pointer": "u64"}
NEW = ("seq_kv", "seqused_k", "page_table", "max_pages")

for path in sys.argv[1:]:
    directory = runtime.KernelDirectory(path)
    print("errors", directory.errors, "kernels", len(directory))
    for kernel in directory:
        ptx = (Path(path) / kernel.manifest["files"]["ptx"]).read_text()
        entry = re.search(rf"\.entry {kernel.name}\((.*?)\)", ptx, flags=re.S).group(1)
        ptx_types = re.findall(r"\.param \.(\w+)", entry)
        ours = [WIDTHS[kind] for _, kind, _ in kernel.params]
        sources = sorted((p["name"], p["kind"], p["source"]) for p in kernel.manifest["params"]
                         if p["name"] in NEW)
        print(kernel.arch, kernel.name, "kvcache", kernel.kvcache, "seqused_k",
              kernel.seqused_k, "page_size", kernel.page_size, "key",
              list(kernel.operands["key"][1]), "params", sources,
              "agree with the PTX entry", ptx_types == ours)
# CHECK: errors [] kernels 2
# CHECK-NEXT: sm_100a bf16_d128_h32x8_causal_seqused_paged256_lse_attention kvcache True seqused_k True page_size 256 key [-1, 256, 8, 128] params [('max_pages', 'i32', 'page_table.shape[1]'), ('page_table', 'pointer', 'page_table.data'), ('seq_kv', 'i32', 'key.shape[1]'), ('seqused_k', 'pointer', 'seqused_k.data')] agree with the PTX entry True
# CHECK-NEXT: sm_100a f16_d64_h4x4_seqused_lse_attention kvcache True seqused_k True page_size None key [-1, -1, 4, 64] params [('seq_kv', 'i32', 'key.shape[1]'), ('seqused_k', 'pointer', 'seqused_k.data')] agree with the PTX entry True
# CHECK-NEXT: errors [] kernels 4
# CHECK-NEXT: sm_90a bf16_d128_h32x8_causal_seqused_paged256_lse_attention kvcache True seqused_k True page_size 256 key [-1, 256, 8, 128] params [('max_pages', 'i32', 'page_table.shape[1]'), ('page_table', 'pointer', 'page_table.data'), ('seq_kv', 'i32', 'key.shape[1]'), ('seqused_k', 'pointer', 'seqused_k.data')] agree with the PTX entry True
# CHECK-NEXT: sm_90a bf16_d128_h8x2_window100x60_paged64_lse_attention kvcache True seqused_k False page_size 64 key [-1, 64, 2, 128] params [('max_pages', 'i32', 'page_table.shape[1]'), ('page_table', 'pointer', 'page_table.data'), ('seq_kv', 'i32', 'key.shape[1]')] agree with the PTX entry True
# CHECK-NEXT: sm_90a bf16_d256_h8x2_causal_seqused_paged128_lse_attention kvcache True seqused_k True page_size 128 key [-1, 128, 2, 256] params [('max_pages', 'i32', 'page_table.shape[1]'), ('page_table', 'pointer', 'page_table.data'), ('seq_kv', 'i32', 'key.shape[1]'), ('seqused_k', 'pointer', 'seqused_k.data')] agree with the PTX entry True
# CHECK-NEXT: sm_90a f16_d64_h4x4_seqused_lse_attention kvcache True seqused_k True page_size None key [-1, -1, 4, 64] params [('seq_kv', 'i32', 'key.shape[1]'), ('seqused_k', 'pointer', 'seqused_k.data')] agree with the PTX entry True

directory = runtime.KernelDirectory(sys.argv[1])
kernel = directory.find("bf16", 32, 8, 128, causal=True, lse=True, seqused_k=True,
                        page_size=256)
print("found", kernel.name)
# CHECK-NEXT: found bf16_d128_h32x8_causal_seqused_paged256_lse_attention
operands = {"query": (0x10000000, (4, 2, 32, 128), "bf16"),
            "key": (0x20000000, (40, 256, 8, 128), "bf16"),
            "value": (0x30000000, (40, 256, 8, 128), "bf16"),
            "output": (0x40000000, (4, 2, 32, 128), "bf16"),
            "lse": (0x50000000, (4, 32, 2), "f32"),
            "seqused_k": (0x60000000, (4,), "i32"),
            "page_table": (0x70000000, (4, 9), "i32")}
arguments = {arg.name: arg for arg in kernel.arguments(operands)}
for arg in kernel.arguments(operands):
    if arg.kind == "tensor_map" and arg.value.operand in ("key", "value"):
        print(arg.value.operand, "dims", list(arg.value.global_dim), "strides",
              list(arg.value.global_strides), "box rows", arg.value.box_dim[2])
print("max_pages", arguments["max_pages"].value, "seq_kv", arguments["seq_kv"].value,
      "seqused_k", hex(arguments["seqused_k"].value), "page_table",
      hex(arguments["page_table"].value))
# The pages' maps are (D, H, P, pages); a box never crosses a page.
# CHECK-NEXT: key dims [128, 8, 256, 40] strides [256, 2048, 524288] box rows [[ROWS:[0-9]+]]
# CHECK-NEXT: value dims [128, 8, 256, 40] strides [256, 2048, 524288] box rows [[ROWS]]
# CHECK-NEXT: max_pages 9 seq_kv 256 seqused_k 0x60000000 page_table 0x70000000
print("box divides the page:", 256 % int(kernel.tensor_maps[1]["box"][2]) == 0)
# CHECK-NEXT: box divides the page: True
for problem in (dict(causal=True, lse=True), dict(causal=True, lse=True, seqused_k=True),
                dict(causal=True, lse=True, seqused_k=True, page_size=128)):
    try:
        found = directory.find("bf16", 32, 8, 128, **problem)
        print("found", found.name, "for", problem)
    except LookupError:
        print("no kernel for", problem)
# CHECK-NEXT: no kernel for {'causal': True, 'lse': True}
# CHECK-NEXT: no kernel for {'causal': True, 'lse': True, 'seqused_k': True}
# CHECK-NEXT: no kernel for {'causal': True, 'lse': True, 'seqused_k': True, 'page_size': 128}
