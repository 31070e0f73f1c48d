# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/kvcache/decode_paged.mlir -o /dev/null --fa4-compile="arch=sm_100a kv-splits=4 ptxas=%ptxas emit-dir=%t" > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.runtime on a split-KV kernel the compiler writes (the paged decode
example with 4 splits, sm_100a): the workspace params agree with the PTX
entry, the grid counts (tile, split) units, the workspace is sized per
work tile, the directory chooses it only for a problem that asks for 4
splits, and a launch against the fake libcuda allocates the workspace,
zeroes its counters and passes both pointers after the page table's, with
programmatic stream serialization (the kernel's griddepcontrol)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
from torch_standin import FakeCuda  # noqa: E402  (the fake libcuda; torch is not installed)

from fa4 import runtime  # noqa: E402

WIDTHS = {"tensor_map": "u64", "i32": "u32", "f32": "f32", "pointer": "u64",
          "workspace": "u64"}
directory = runtime.KernelDirectory(sys.argv[1])
kernel = runtime.Kernel.load(Path(sys.argv[1]) / "decode_paged_attention.json")
ptx = (Path(sys.argv[1]) / kernel.manifest["files"]["ptx"]).read_text()
entry = re.search(rf"\.entry {kernel.name}\((.*?)\)", ptx, flags=re.S).group(1)
print("splits", kernel.kv_splits, "params agree with the PTX entry",
      re.findall(r"\.param \.(\w+)", entry) == [WIDTHS[k] for _, k, _ in kernel.params],
      "workspace params", [(n, r) for n, k, r in kernel.params if k == "workspace"])
# CHECK: splits 4 params agree with the PTX entry True workspace params [('split_partials', 'workspace.partials'), ('split_counters', 'workspace.counters')]

# 2 batches x 8 head blocks x 1 query tile = 16 tiles, 64 units; per tile 2
# Q stages x 128 rows x (4 x 128 + 4) words and 2 counters.
print("grid", kernel.grid(2, 1, sm_count=132), kernel.grid(2, 1, sm_count=40),
      "workspace", kernel.workspace_bytes(2, 1))
# CHECK-NEXT: grid (64, 1, 1) (40, 1, 1) workspace (8454144, 128)

for splits in (1, 4, None):
    try:
        found = directory.find("bf16", 32, 8, 128, causal=True, lse=True, seqused_k=True,
                               page_size=256, kv_splits=splits)
        print("kv_splits", splits, "found", found.name)
    except LookupError as err:
        print("kv_splits", splits, "none:", str(err).splitlines()[-1].strip())
# CHECK-NEXT: kv_splits 1 none: decode_paged_attention (decode_paged_attention.json): kv_splits is 4, not 1
# CHECK-NEXT: kv_splits 4 found decode_paged_attention
# CHECK-NEXT: kv_splits None found decode_paged_attention

print("rule", runtime.kv_splits_for(132, 16, 64), runtime.kv_splits_for(132, 100, 64),
      runtime.kv_splits_for(132, 8, 7), runtime.kv_splits_for(148, 1, 4096))
# CHECK-NEXT: rule 8 1 1 64

fake = FakeCuda()
runtime.set_driver(fake)
fake.kinds = ["pointer" if kind == "workspace" else kind for _, kind, _ in kernel.params]
operands = {"query": (0x10000000, (2, 1, 32, 128), "bf16"),
            "key": (0x20000000, (40, 256, 8, 128), "bf16"),
            "value": (0x30000000, (40, 256, 8, 128), "bf16"),
            "output": (0x40000000, (2, 1, 32, 128), "bf16"),
            "lse": (0x50000000, (2, 32, 1), "f32"),
            "seqused_k": (0x60000000, (2,), "i32"),
            "page_table": (0x70000000, (2, 9), "i32")}
kernel.launch(operands, stream=0x5000)
params = fake.launches[-1].split("params ")[1]
print(fake.launches[-1].split(" params")[0], "last params", params.split(", ")[-3:])
# The workspace is one allocation per stream: the counters (zeroed, 256
# bytes rounded up), then the partial rows.
# CHECK-NEXT: decode_paged_attention grid {{[0-9]+}} stream 0x5000 last params ['9', "'[[PARTIALS:0x[0-9a-f]+]]'", "'[[COUNTERS:0x[0-9a-f]+]]']"]
partials, counters = (int(p.strip("[]'\""), 16) for p in params.split(", ")[-2:])
print("partials at counters +", partials - counters, "zeroed",
      [fake.maps.get(counters) is not None])
# CHECK-NEXT: partials at counters + 256 zeroed [True]
# The kernel waits for its prerequisite grid (griddepcontrol): launched with
# programmatic stream serialization (attribute 6), unless FA4_PDL=0.
print("launch attributes", fake.attributes[-1])
# CHECK-NEXT: launch attributes [(6, 1)]
import os  # noqa: E402
os.environ["FA4_PDL"] = "0"
kernel.launch(dict(operands, query=(0x11000000, (2, 1, 32, 128), "bf16")), stream=0x5000)
print("with FA4_PDL=0", fake.attributes[-1], "same workspace",
      fake.launches[-1].split(", ")[-2:] == params.split(", ")[-2:])
# CHECK-NEXT: with FA4_PDL=0 [] same workspace True
# A larger batch grows the stream's workspace: a new allocation, and the
# launches that used the old one are forgotten.
remembered = len(kernel._launches)
kernel.launch(dict(operands, query=(0x12000000, (3, 1, 32, 128), "bf16"),
                   output=(0x40000000, (3, 1, 32, 128), "bf16"),
                   lse=(0x50000000, (3, 32, 1), "f32"),
                   seqused_k=(0x60000000, (3,), "i32"),
                   page_table=(0x70000000, (3, 9), "i32")), stream=0x5000)
print("grown", fake.launches[-1].split(", ")[-2:] != params.split(", ")[-2:],
      "remembered", remembered, "->", len(kernel._launches))
# CHECK-NEXT: grown True remembered 2 -> 1
runtime.set_driver(None)
