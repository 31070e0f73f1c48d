"""What the runtime tests share about manifests."""

import json

from fa4 import runtime


def dense_params():
    """The params a dense batch's manifest starts with, as fa4-compile
    writes them: the four tensor maps, the batch and lengths, the log2
    scale."""
    params = [{"kind": "tensor_map", "name": f"{n}_map", "source": f"tensor_maps[{i}]"}
              for i, n in enumerate(("query", "key", "value", "output"))]
    return params + [{"kind": "i32", "name": "batch", "source": "query.shape[0]"},
                     {"kind": "i32", "name": "seq_q", "source": "query.shape[1]"},
                     {"kind": "i32", "name": "seq_kv", "source": "key.shape[1]"},
                     {"kind": "f32", "name": "scale_log2", "source": "scale_log2"}]


def print_refusals(good, cases):
    """For each (label, change) of `cases`, loads a copy of manifest `good`
    with `change` applied and prints the runtime's ManifestError, or that it
    was accepted."""
    for label, change in cases:
        broken = json.loads(json.dumps(good))
        change(broken)
        try:
            runtime.Kernel(broken)
            print(f"{label}: accepted")
        except runtime.ManifestError as err:
            print(f"{label}: {err}")
