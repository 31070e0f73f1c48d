#!/usr/bin/env python3
"""Times each problem of DIR compiled with 128-key and with 64-key blocks
(`fa4-compile block-n=128` / `block-n=64`, kernels `<name>_bn128_attention`
and `<name>_bn64_attention`), with cuDNN through SDPA on the dense causal
ones, in one run: what the sm_90a planner's block size costs where the
128-key kernel spills.

bf16, B x S = 16k tokens at S = 4k and 16k (packed kernels: sequences of
S / 4, S / 2, 3 S / 4, S, ... up to 16k tokens), TFLOP/s counting the unmasked work;
medians of --iters calls after --warmup, CUDA events.

usage: PYTHONPATH=python python3 bench/block_n.py DIR [--iters 30]
"""

import argparse
import os
import re
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms  # noqa: E402

from fa4 import runtime  # noqa: E402

ELEMENTS = {torch.bfloat16: "bf16", torch.float32: "f32", torch.int32: "i32"}


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def pairs(seq, window):
    """(query, key) pairs a bottom-right window keeps at Sq = Skv = seq."""
    left, right = window
    total = 0
    for i in range(seq):
        first = 0 if left < 0 else max(i - left, 0)
        last = seq - 1 if right < 0 else min(i + right, seq - 1)
        total += max(last - first + 1, 0)
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    kernels = {}
    for path in sorted(Path(args.directory).glob("*_bn*_attention.json")):
        name, block = re.fullmatch(r"(.*)_bn(\d+)_attention", path.stem).groups()
        kernels.setdefault(name, {})[int(block)] = runtime.Kernel.load(path)
    stream = torch.cuda.current_stream().cuda_stream
    print("\n| problem | S | 128-key TFLOP/s | 64-key TFLOP/s | 64 / 128 | cuDNN |")
    print("|---|---|---|---|---|---|")
    for name, by_block in kernels.items():
        kernel = by_block[128]
        hq, hkv, d = kernel.heads_q, kernel.heads_kv, kernel.head_dim
        for seq in (4096, 16384):
            batch = 16384 // seq
            randn = (lambda *shape: torch.randn(shape, dtype=torch.bfloat16, device=device))
            if kernel.varlen:
                cycle = [seq // 4, seq // 2, seq * 3 // 4, seq]
                lengths = []
                while sum(lengths) < 16384:
                    lengths.append(cycle[len(lengths) % 4])
                total = sum(lengths)
                q, o = randn(total, hq, d), randn(total, hq, d)
                k, v = randn(total, hkv, d), randn(total, hkv, d)
                offsets = torch.tensor([0] + lengths, device=device).cumsum(0).int()
                extra = {"cu_seqlens_q": operand(offsets), "cu_seqlens_k": operand(offsets)}
                lse_shape = (hq, total)
                work = sum(pairs(n, kernel.window) for n in lengths)
            else:
                q, o = randn(batch, seq, hq, d), randn(batch, seq, hq, d)
                k, v = randn(batch, seq, hkv, d), randn(batch, seq, hkv, d)
                extra = {}
                lse_shape = (batch, hq, seq)
                work = batch * pairs(seq, kernel.window)
            operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                        "output": operand(o), **extra}
            if kernel.lse:
                operands["lse"] = operand(torch.empty(lse_shape, device=device))
            results = {}
            for block, each in sorted(by_block.items()):
                ms = median_ms(lambda: each.launch(operands, stream=stream), args.warmup,
                               args.iters)
                results[block] = 4 * d * hq * work / ms / 1e9
            anchor = "-"
            if not kernel.varlen and kernel.window == (-1, 0):
                qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

                def cudnn():
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        return F.scaled_dot_product_attention(qt, kt, vt, is_causal=True,
                                                              enable_gqa=hq != hkv)
                anchor = f"{4 * d * hq * work / median_ms(cudnn, args.warmup, args.iters) / 1e9:.0f}"
            print(f"| {name} | {seq} | {results[128]:.0f} | {results[64]:.0f} | "
                  f"{results[64] / results[128]:.2f} | {anchor} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
