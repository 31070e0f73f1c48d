"""What the runtime tests share about manifests."""

import json

from fa4 import runtime
from manifest_entries import add_page_table, add_rope, add_table


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


# Per target: the CTA, its shared memory and the rows of a tensor map's box
# (Q tiles of 128 rows on sm_100a, 64 on sm_90a).
_TARGETS = {"sm_100a": dict(block=[512, 1, 1], dynamic_smem_bytes=200704, box_rows=128),
            "sm_90a": dict(block=[384, 1, 1], dynamic_smem_bytes=229376, box_rows=64,
                           programmatic_launch=True)}


def kvcache_manifest(kernel, arch="sm_100a", heads_q=32, heads_kv=8, head_dim=128,
                     head_dim_v=None, page_size=None, seqused_k=True, causal=True, lse=True,
                     element="bf16", rope=None):
    """A KV-cache kernel's manifest as fa4-compile writes it: paged with
    `page_size` (else a dense cache), with seqused_k, and with `rope`
    (start, columns, output) a rotary embedding."""
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    target = dict(_TARGETS[arch])
    box_rows = target.pop("box_rows")
    kv_rows = [-1, page_size] if page_size else [-1, -1]
    operands = [{"name": "query", "element": element, "shape": [-1, -1, heads_q, head_dim]},
                {"name": "key", "element": element, "shape": kv_rows + [heads_kv, head_dim]},
                {"name": "value", "element": element,
                 "shape": kv_rows + [heads_kv, head_dim_v]},
                {"name": "output", "element": element,
                 "shape": [-1, -1, heads_q, head_dim_v]}]
    params = dense_params()
    if lse:
        operands.append({"name": "lse", "element": "f32", "shape": [-1, heads_q, -1]})
        params.append({"kind": "pointer", "name": "lse", "source": "lse.data"})
    if seqused_k:
        add_table(operands, params, "seqused_k", [-1])
    if page_size:
        add_page_table(operands, params)
    maps = [{"operand": n, "operand_index": i, "element": element,
             "box": [64, pack, box_rows // pack, 1], "swizzle": "128B", "oob_fill": "zero"}
            for i, (n, pack) in enumerate((("query", 4), ("key", 1), ("value", 1),
                                           ("output", 4)))]
    result = {"kernel": kernel, "arch": arch, "cluster": [1, 1, 1],
              "files": {"cubin": f"{kernel}.cubin"},
              "grid": {"rule": "persistent", "head_blocks": heads_kv,
                       "query_rows_per_cta": 32},
              "causal": causal, "scale": head_dim ** -0.5,
              "scale_log2": 1.4426950408889634 * head_dim ** -0.5, **target}
    if rope:
        start, columns, output = rope
        add_rope(operands, params, columns, [-1, -1])
        result["rope"] = {"columns": columns, "output": output, "start": start}
    result.update(operands=operands, params=params, tensor_maps=maps)
    return result


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
