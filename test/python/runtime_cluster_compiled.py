# REQUIRES: ptxas
# RUN: rm -rf %t && mkdir -p %t
# RUN: fa4-opt %fa4_src_root/examples/kvcache/decode_paged.mlir -o /dev/null --fa4-compile="arch=sm_90a kv-splits=4 split-combine=cluster ptxas=%ptxas emit-dir=%t" > /dev/null
# RUN: %python %s %t | FileCheck %s
"""fa4.runtime on a cluster split the compiler writes (the paged decode
example, 4 splits combined over distributed shared memory, sm_90a): no
workspace params or bytes, the grid whole clusters of the 4 splits, and a
launch against the fake libcuda with the cluster dimension attribute."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
from torch_standin import FakeCuda  # noqa: E402  (the fake libcuda; torch is not installed)

from fa4 import runtime  # noqa: E402

kernel = runtime.Kernel.load(Path(sys.argv[1]) / "decode_paged_attention.json")
print("splits", kernel.kv_splits, "cluster", kernel.cluster,
      "workspace params", [n for n, k, _ in kernel.params if k == "workspace"],
      "workspace", kernel.workspace_bytes(2, 1))
# CHECK: splits 4 cluster (4, 1, 1) workspace params [] workspace (0, 0)

# 2 batches x 8 head blocks x 1 tile x 4 splits = 64 units: at most the SMs,
# rounded down to whole clusters.
print("grid", kernel.grid(2, 1, sm_count=132), kernel.grid(2, 1, sm_count=42),
      kernel.grid(2, 1, sm_count=3))
# CHECK-NEXT: grid (64, 1, 1) (40, 1, 1) (4, 1, 1)

fake = FakeCuda()
fake.capability, fake.sm_count = (9, 0), 132
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in kernel.params]
operands = {"query": (0x10000000, (2, 1, 32, 128), "bf16"),
            "key": (0x20000000, (40, 256, 8, 128), "bf16"),
            "value": (0x30000000, (40, 256, 8, 128), "bf16"),
            "output": (0x40000000, (2, 1, 32, 128), "bf16"),
            "lse": (0x50000000, (2, 32, 1), "f32"),
            "seqused_k": (0x60000000, (2,), "i32"),
            "page_table": (0x70000000, (2, 9), "i32")}
kernel.launch(operands, stream=0x5000)
print(fake.launches[-1].split(" params")[0], "attributes", fake.attributes[-1])
# (4, 4): the cluster dimension attribute, x = 4; (6, 1): programmatic
# stream serialization.
# CHECK-NEXT: decode_paged_attention grid 64 stream 0x5000 attributes [(4, 4), (6, 1)]

# A manifest whose cluster split names a workspace is refused.
manifest = dict(kernel.manifest, split_kv={"splits": 4, "partial_words_per_tile": 8,
                                           "counters_per_tile": 1})
try:
    runtime.Kernel(manifest, Path(sys.argv[1]))
    print("loaded")
except runtime.ManifestError as err:
    print("refused:", err)
# CHECK-NEXT: refused: split_kv {'splits': 4, 'partial_words_per_tile': 8, 'counters_per_tile': 1}: needs splits, partial_words_per_tile, counters_per_tile (splits at least 2; a workspace, or with a cluster of the splits none) and a dense batch
runtime.set_driver(None)
