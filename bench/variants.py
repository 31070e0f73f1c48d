#!/usr/bin/env python3
"""Times each problem of DIR compiled in several variants (plan options),
with cuDNN through SDPA on the dense causal ones, in one run: what a plan
choice (block size, scheduler, ...) costs or buys. The variants are the
kernels `<name>__<variant>_attention` that `scripts/compile-kernels.py
--variant LABEL:OPTIONS` writes; the first variant in name order is the
baseline of the ratio column unless --baseline names another.

bf16, B x S = --tokens (16k) tokens at each S of --seqlens (4k and 16k;
packed kernels: sequences of S / 4, S / 2, 3 S / 4, S, ... up to the
tokens), TFLOP/s counting the unmasked work; medians of --iters calls
after --warmup, CUDA events, in --rounds alternating rounds over the
variants (each round starts one variant later; the median of each
variant's rounds).

usage: PYTHONPATH=python python3 bench/variants.py DIR [--baseline LABEL]
           [--tokens N] [--seqlens S,S,...] [--iters 30] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms, software  # noqa: E402
from masks import unmasked_pairs  # noqa: E402

from fa4 import runtime  # noqa: E402

ELEMENTS = {torch.bfloat16: "bf16", torch.float32: "f32", torch.int32: "i32"}


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--baseline", help="the variant the ratios divide by")
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--seqlens", default="4096,16384")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds over the variants (medians of each)")
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    print(software(device))
    kernels = {}
    for path in sorted(Path(args.directory).glob("*__*_attention.json")):
        name, variant = re.fullmatch(r"(.*)__(.*)_attention", path.stem).groups()
        kernels.setdefault(name, {})[variant] = runtime.Kernel.load(path)
    if not kernels:
        print(f"no <name>__<variant>_attention kernels in {args.directory}", file=sys.stderr)
        return 1
    stream = torch.cuda.current_stream().cuda_stream
    for name, by_variant in kernels.items():
        labels = sorted(by_variant)
        base = args.baseline if args.baseline in by_variant else labels[0]
        others = [label for label in labels if label != base]
        print(f"\n| problem | S | {' | '.join(f'{label} TFLOP/s' for label in [base] + others)} | "
              f"{' | '.join(f'{label} / {base}' for label in others)} | cuDNN |")
        print("|---|---|" + "---|" * (2 * len(others) + 2))
        kernel = by_variant[base]
        hq, hkv, d, dv = kernel.heads_q, kernel.heads_kv, kernel.head_dim, kernel.head_dim_v
        for seq in (int(text) for text in args.seqlens.split(",")):
            batch = max(args.tokens // seq, 1)
            randn = (lambda *shape: torch.randn(shape, dtype=torch.bfloat16, device=device))
            if kernel.varlen:
                cycle = [seq // 4, seq // 2, seq * 3 // 4, seq]
                lengths = []
                while sum(lengths) < batch * seq:
                    lengths.append(cycle[len(lengths) % 4])
                total = sum(lengths)
                q, o = randn(total, hq, d), randn(total, hq, dv)
                k, v = randn(total, hkv, d), randn(total, hkv, dv)
                offsets = torch.tensor([0] + lengths, device=device).cumsum(0).int()
                extra = {"cu_seqlens_q": operand(offsets), "cu_seqlens_k": operand(offsets)}
                lse_shape = (hq, total)
                work = sum(unmasked_pairs(n, *kernel.window) for n in lengths)
            else:
                q, o = randn(batch, seq, hq, d), randn(batch, seq, hq, dv)
                k, v = randn(batch, seq, hkv, d), randn(batch, seq, hkv, dv)
                extra = {}
                lse_shape = (batch, hq, seq)
                work = batch * unmasked_pairs(seq, *kernel.window)
            operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                        "output": operand(o), **extra}
            if kernel.lse:
                operands["lse"] = operand(torch.empty(lse_shape, device=device))
            flops = 2 * (d + dv) * hq * work
            # Alternating rounds, each starting one variant later, and the
            # median of each variant's rounds: the clock drift of a run
            # (5-10% on the H100s measured) falls on no one variant.
            rounds = {label: [] for label in by_variant}
            order = list(by_variant)
            for index in range(args.rounds):
                for label in order[index % len(order):] + order[:index % len(order)]:
                    each = by_variant[label]
                    rounds[label].append(median_ms(lambda: each.launch(operands, stream=stream),
                                                   args.warmup, args.iters))
            results = {label: flops / statistics.median(times) / 1e9
                       for label, times in rounds.items()}
            anchor = "-"
            causal = kernel.window == (-1, 0)
            if not kernel.varlen and not kernel.softcap and kernel.window in ((-1, 0), (-1, -1)):
                qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

                def cudnn():
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal,
                                                              enable_gqa=hq != hkv)
                anchor = f"{flops / median_ms(cudnn, args.warmup, args.iters) / 1e9:.0f}"
            cells = [f"{results[label]:.0f}" for label in [base] + others]
            cells += [f"{results[label] / results[base]:.2f}" for label in others]
            print(f"| {name} | {seq} | {' | '.join(cells)} | {anchor} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
