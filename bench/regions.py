#!/usr/bin/env python3
"""What score and mask regions cost on this GPU: the ALiBi kernel of
examples/regions against the same attention without the region (causal
bf16, 8 query heads over 2 KV heads, head dim 128), with the planner's
default blocks (`plain`) and with the 64-key blocks the sm_90a planner picks
for kernels with regions (`plain64`), plus the document-mask kernel (f16,
8 heads, head dim 64, four documents per row). CUDA events over 20
launches after 3 warm-up ones; TFLOP/s count the causal half.

DIR holds plain_attention, plain64_attention (the plain kernel compiled
with block-n=64), alibi_attention and document_mask_attention.

usage: PYTHONPATH=python regions.py DIR
"""

import sys
from pathlib import Path

import torch

from fa4 import runtime

ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32",
            torch.int32: "i32"}


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def time_kernel(kernel, name, batch, seq):
    dtype = torch.float16 if name == "document_mask" else torch.bfloat16
    q = torch.randn(batch, seq, kernel.heads_q, kernel.head_dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, seq, kernel.heads_kv, kernel.head_dim, device="cuda", dtype=dtype)
    v, o = torch.randn_like(k), torch.empty_like(q)
    operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                "output": operand(o)}
    if name == "alibi":
        heads = kernel.heads_q
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)],
                              device="cuda")
        operands["capture0"] = operand(slopes)
    if name == "document_mask":
        docs = (torch.arange(seq, device="cuda") * 4 // seq).int().expand(batch, seq)
        docs = docs.contiguous()
        operands["capture0"] = operands["capture1"] = operand(docs)
    stream = torch.cuda.current_stream().cuda_stream
    for _ in range(3):
        kernel.launch(operands, stream=stream)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        kernel.launch(operands, stream=stream)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / 20
    flops = 4 * batch * kernel.heads_q * seq * seq * kernel.head_dim / 2
    return ms, flops / ms / 1e9


def main():
    directory = Path(sys.argv[1])
    for seq in (4096, 16384):
        batch = 32768 // seq
        speed = {}
        for name in ("plain", "plain64", "alibi", "document_mask"):
            kernel = runtime.Kernel.load(directory / f"{name}_attention.json")
            ms, speed[name] = time_kernel(kernel, name, batch, seq)
            print(f"S={seq} B={batch} {name}: {ms:.3f} ms, {speed[name]:.0f} TFLOP/s")
        print(f"  alibi / plain {speed['alibi'] / speed['plain']:.2f}, "
              f"alibi / plain64 {speed['alibi'] / speed['plain64']:.2f}")


if __name__ == "__main__":
    main()
