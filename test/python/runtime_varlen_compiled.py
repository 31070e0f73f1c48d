# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t/sm100a %t/sm90a
# RUN: for f in %fa4_src_root/examples/varlen/*.mlir; do fa4-opt $f --fa4-compile="emit-dir=%t/sm100a" -o /dev/null > /dev/null && fa4-opt $f --fa4-compile="arch=sm_90a emit-dir=%t/sm90a" -o /dev/null > /dev/null || exit 1; done
# RUN: %python %s %t/sm100a %t/sm90a | FileCheck %s
"""fa4.runtime on the manifests the compiler writes for examples/varlen, on
both targets: every one is a packed-sequence kernel the runtime reads, its
parameters agree in number and type with the PTX entry, a launch's
arguments follow the packed conventions (tables, maps, O's pointer; over a
paged cache K's and V's maps are the cache's), and the directory chooses
each kernel for its own problem only."""

import re
import sys
from pathlib import Path

from fa4 import runtime

WIDTHS = {"tensor_map": "u64", "i32": "u32", "f32": "f32", "pointer": "u64"}

for path in sys.argv[1:]:
    directory = runtime.KernelDirectory(path)
    print("errors", directory.errors, "kernels", len(directory))
    for kernel in directory:
        ptx = (Path(path) / kernel.manifest["files"]["ptx"]).read_text()
        entry = re.search(rf"\.entry {kernel.name}\((.*?)\)", ptx, flags=re.S).group(1)
        ptx_types = re.findall(r"\.param \.(\w+)", entry)
        ours = [WIDTHS[kind] for _, kind, _ in kernel.params]
        print(kernel.arch, kernel.name, "varlen", kernel.varlen, "seqused_k",
              kernel.seqused_k, "params", [name for name, _, _ in kernel.params][4:],
              "agree with the PTX entry", ptx_types == ours)
# CHECK: errors [] kernels 6
# CHECK-NEXT: sm_100a alibi_varlen_attention varlen True seqused_k False params ['sequence_bounds', 'total_q', 'total_kv', 'scale_log2', 'cu_seqlens_q', 'cu_seqlens_k', 'output_rows', 'capture0'] agree with the PTX entry True
# CHECK-NEXT: sm_100a cached_prefill_attention varlen True seqused_k True params ['sequence_bounds', 'total_q', 'total_kv', 'scale_log2', 'score_cap', 'sink', 'cu_seqlens_q', 'cu_seqlens_k', 'seqused_k', 'output_rows'] agree with the PTX entry True
# CHECK-NEXT: sm_100a causal_gqa_lse_attention varlen True seqused_k False params ['sequence_bounds', 'total_q', 'total_kv', 'scale_log2', 'lse', 'cu_seqlens_q', 'cu_seqlens_k', 'output_rows'] agree with the PTX entry True
# CHECK-NEXT: sm_100a paged_cache_attention varlen True seqused_k False params ['sequence_bounds', 'total_q', 'seq_kv', 'scale_log2', 'lse', 'cu_seqlens_q', 'cu_seqlens_k', 'output_rows', 'page_table', 'max_pages'] agree with the PTX entry True
# CHECK-NEXT: sm_100a varlen_rope_attention varlen True seqused_k False params ['sequence_bounds', 'total_q', 'total_kv', 'scale_log2', 'lse', 'cu_seqlens_q', 'cu_seqlens_k', 'output_rows', 'cos_sin', 'rope_positions', 'positions'] agree with the PTX entry True
# CHECK-NEXT: sm_100a window_attention varlen True seqused_k False params ['sequence_bounds', 'total_q', 'total_kv', 'scale_log2', 'cu_seqlens_q', 'cu_seqlens_k', 'output_rows'] agree with the PTX entry True
# CHECK-NEXT: errors [] kernels 6
# CHECK-NEXT: sm_90a alibi_varlen_attention varlen True
# CHECK-NEXT: sm_90a cached_prefill_attention varlen True seqused_k True {{.*}} agree with the PTX entry True
# CHECK-NEXT: sm_90a causal_gqa_lse_attention varlen True seqused_k False {{.*}} agree with the PTX entry True
# CHECK-NEXT: sm_90a paged_cache_attention varlen True seqused_k False {{.*}} agree with the PTX entry True
# CHECK-NEXT: sm_90a varlen_rope_attention varlen True seqused_k False {{.*}} agree with the PTX entry True
# CHECK-NEXT: sm_90a window_attention varlen True seqused_k False {{.*}} agree with the PTX entry True

directory = runtime.KernelDirectory(sys.argv[1])
kernel = directory.find("bf16", 8, 2, 64, causal=True, lse=True, varlen=True)
print("found", kernel.name, "grid", kernel.head_blocks, kernel.query_rows_per_cta,
      kernel.grid(5, 2000, 148))
# CHECK-NEXT: found causal_gqa_lse_attention grid [[HB:[0-9]+]] [[ROWS:[0-9]+]] ({{[0-9]+}}, 1, 1)
args = kernel.arguments({
    "query": (0x10000000, (2000, 8, 64), "bf16"), "key": (0x20000000, (3000, 2, 64), "bf16"),
    "value": (0x30000000, (3000, 2, 64), "bf16"),
    "output": (0x40000000, (2000, 8, 64), "bf16"), "lse": (0x50000000, (8, 2000), "f32"),
    "cu_seqlens_q": (0x60000000, (6,), "i32"), "cu_seqlens_k": (0x70000000, (6,), "i32")})
for arg in args:
    print(arg.name, arg.value.describe() if arg.kind == "tensor_map" else arg.value)
# The maps are (D, H, T, 1) from each tensor's address.
# CHECK-NEXT: query_map dims [64, 8, 2000, 1], strides [128, 1024, 1024] B, box [64, {{[0-9]+}}, {{[0-9]+}}, 1], address 0x10000000
# CHECK-NEXT: key_map dims [64, 2, 3000, 1], strides [128, 256, 256] B, box [64, 1, {{[0-9]+}}, 1], address 0x20000000
# CHECK-NEXT: value_map dims [64, 2, 3000, 1], strides [128, 256, 256] B, box [64, 1, {{[0-9]+}}, 1], address 0x30000000
# CHECK-NEXT: output_map dims [64, 8, 2000, 1], strides [128, 1024, 1024] B, box [64, {{[0-9]+}}, {{[0-9]+}}, 1], address 0x40000000
# CHECK-NEXT: sequence_bounds 6
# CHECK-NEXT: total_q 2000
# CHECK-NEXT: total_kv 3000
# CHECK-NEXT: scale_log2 0.18033688{{[0-9]*}}
# CHECK-NEXT: lse 1342177280
# CHECK-NEXT: cu_seqlens_q 1610612736
# CHECK-NEXT: cu_seqlens_k 1879048192
# CHECK-NEXT: output_rows 1073741824
for problem in (dict(causal=True, lse=True), dict(causal=True, lse=True, varlen=True,
                                                   seqused_k=True)):
    try:
        directory.find("bf16", 8, 2, 64, **problem)
    except LookupError as err:
        print("no kernel for", problem)
# CHECK-NEXT: no kernel for {'causal': True, 'lse': True}
# CHECK-NEXT: no kernel for {'causal': True, 'lse': True, 'varlen': True, 'seqused_k': True}


# Packed sequences over a paged cache: Q's and O's maps packed, K's and V's
# the cache's [pages, 64, 8, 128]; seq_kv is the page size, the page table
# has a row per sequence (5 here).
paged = directory.find("bf16", 32, 8, 128, causal=True, lse=True, varlen=True, page_size=64)
print("found", paged.name, "paged", paged.paged, paged.page_size, "kvcache", paged.kvcache)
# CHECK-NEXT: found paged_cache_attention paged True 64 kvcache False
operands = {
    "query": (0x10000000, (2000, 32, 128), "bf16"),
    "key": (0x20000000, (300, 64, 8, 128), "bf16"),
    "value": (0x30000000, (300, 64, 8, 128), "bf16"),
    "output": (0x40000000, (2000, 32, 128), "bf16"), "lse": (0x50000000, (32, 2000), "f32"),
    "cu_seqlens_q": (0x60000000, (6,), "i32"), "cu_seqlens_k": (0x70000000, (6,), "i32"),
    "page_table": (0x80000000, (5, 12), "i32")}
for arg in paged.arguments(operands):
    print(arg.name, arg.value.describe() if arg.kind == "tensor_map" else arg.value)
# CHECK-NEXT: query_map dims [128, 32, 2000, 1], {{.*}} address 0x10000000
# CHECK-NEXT: key_map dims [128, 8, 64, 300], strides [256, 2048, 131072] B, box [64, 1, {{[0-9]+}}, 1], address 0x20000000
# CHECK-NEXT: value_map dims [128, 8, 64, 300], strides [256, 2048, 131072] B, box [64, 1, {{[0-9]+}}, 1], address 0x30000000
# CHECK-NEXT: output_map dims [128, 32, 2000, 1], {{.*}} address 0x40000000
# CHECK-NEXT: sequence_bounds 6
# CHECK-NEXT: total_q 2000
# CHECK-NEXT: seq_kv 64
# CHECK-NEXT: scale_log2
# CHECK-NEXT: lse 1342177280
# CHECK-NEXT: cu_seqlens_q 1610612736
# CHECK-NEXT: cu_seqlens_k 1879048192
# CHECK-NEXT: output_rows 1073741824
# CHECK-NEXT: page_table 2147483648
# CHECK-NEXT: max_pages 12
for label, change in [("table rows", {"page_table": (0x80000000, (4, 12), "i32")}),
                      ("packed key", {"key": (0x20000000, (3000, 8, 128), "bf16")})]:
    try:
        paged.arguments({**operands, **change})
    except ValueError as err:
        print(label + ":", err)
# CHECK-NEXT: table rows: page_table: 4 rows for 5 sequences (cu_seqlens_q's entries less one); it must be [sequences, max_pages]
# CHECK-NEXT: packed key: key: rank 3 (shape [3000, 8, 128]), kernel paged_cache_attention takes rank 4
