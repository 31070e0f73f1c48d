#!/usr/bin/env python3
"""Times the score stages of fa4's kernels against the anchors that can run
the same case, in one run: a causal sliding window against fa4's dense
causal kernel (TFLOP/s counting only the unmasked work), softcap against
fa4 without it, attention sinks against fa4 without them, and GQA 7 (28/4
heads) against GQA 8 (32/4), both against cuDNN through SDPA (enable_gqa).

bf16, head dim 128, [B, S, H, D] inputs; medians of --iters calls after
--warmup, timed with CUDA events. The calls a ratio compares are timed in
--rounds alternating rounds and each takes the median of its rounds, so
that the GPU's clock drift over a run (5-10% on the H100s measured) does
not fall on one side of the ratio. Needs the kernels of
`compile-kernels.py --set bench --set masks-bench`.

usage: PYTHONPATH=python python3 bench/masks.py DIR [--iters 30] [--rounds 5]
"""

import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms, software  # noqa: E402

import fa4.torch as fa4_torch  # noqa: E402

HEAD_DIM = 128


def unmasked_pairs(seq, left, right):
    """(query, key) pairs a window keeps at Sq = Skv = seq (-1 unbounded)."""
    total = 0
    for i in range(seq):
        first = 0 if left < 0 else max(i - left, 0)
        last = seq - 1 if right < 0 else min(i + right, seq - 1)
        total += max(last - first + 1, 0)
    return total


def tflops(pairs, batch, heads, ms):
    return 4 * HEAD_DIM * pairs * batch * heads / ms / 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    print(software(device))
    torch.manual_seed(0)

    def inputs(batch, seq, heads_q, heads_kv):
        return (torch.randn((batch, seq, heads, HEAD_DIM), dtype=torch.bfloat16,
                            device=device) for heads in (heads_q, heads_kv, heads_kv))

    def ours(q, k, v, **options):
        return lambda: fa4_torch.attention(q, k, v, kernel_dir=args.directory, **options)

    def cudnn(q, k, v, causal):
        qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

        def call():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(
                    qt, kt, vt, is_causal=causal, enable_gqa=qt.shape[1] != kt.shape[1])
        return call

    def time(*calls):
        """Milliseconds of each call: the median over alternating rounds."""
        rounds = [[median_ms(call, args.warmup, args.iters) for call in calls]
                  for _ in range(args.rounds)]
        return [statistics.median(column) for column in zip(*rounds)]

    print("\n## Sliding window (causal, window (4095, 0), B=1, H=16)\n")
    print("| S | window TFLOP/s (unmasked work) | dense causal TFLOP/s | ratio | "
          "dense full TFLOP/s | ratio |")
    print("|---|---|---|---|---|---|")
    for seq in (8192, 16384):
        q, k, v = inputs(1, seq, 16, 16)
        ms = time(ours(q, k, v, causal=True, window=(4095, 0)), ours(q, k, v, causal=True),
                  ours(q, k, v))
        window = tflops(unmasked_pairs(seq, 4095, 0), 1, 16, ms[0])
        causal = tflops(unmasked_pairs(seq, -1, 0), 1, 16, ms[1])
        full = tflops(seq * seq, 1, 16, ms[2])
        print(f"| {seq} | {window:.0f} | {causal:.0f} | {window / causal:.2f} | "
              f"{full:.0f} | {window / full:.2f} |", flush=True)

    print("\n## Softcap 30 (H=16, B x S = 16384 tokens)\n")
    print("| causal | S | softcap TFLOP/s | without TFLOP/s | cost |")
    print("|---|---|---|---|---|")
    for causal in (False, True):
        for seq in (4096, 8192):
            batch = 16384 // seq
            q, k, v = inputs(batch, seq, 16, 16)
            pairs = unmasked_pairs(seq, -1, 0 if causal else -1)
            ms = time(ours(q, k, v, causal=causal, softcap=30.0), ours(q, k, v, causal=causal))
            capped, plain = (tflops(pairs, batch, 16, t) for t in ms)
            print(f"| {'yes' if causal else 'no'} | {seq} | {capped:.0f} | {plain:.0f} | "
                  f"{1 - capped / plain:.1%} |", flush=True)

    print("\n## Attention sinks (causal, H=16, B x S = 16384 tokens)\n")
    print("| S | sinks TFLOP/s | without TFLOP/s | cost |")
    print("|---|---|---|---|")
    for seq in (1024, 4096):
        batch = 16384 // seq
        q, k, v = inputs(batch, seq, 16, 16)
        sink = torch.randn(16, device=device)
        pairs = unmasked_pairs(seq, -1, 0)
        ms = time(ours(q, k, v, causal=True, sink=sink), ours(q, k, v, causal=True))
        with_sinks, plain = (tflops(pairs, batch, 16, t) for t in ms)
        print(f"| {seq} | {with_sinks:.0f} | {plain:.0f} | {1 - with_sinks / plain:.1%} |",
              flush=True)

    print("\n## GQA ratio 7 (28/4 heads) against 8 (32/4), causal, B x S = 16384\n")
    print("| S | GQA 7 TFLOP/s | GQA 8 TFLOP/s | 7 / 8 | cuDNN GQA 7 | cuDNN GQA 8 | "
          "fa4 / cuDNN (7) |")
    print("|---|---|---|---|---|---|---|")
    for seq in (4096, 8192):
        batch = 16384 // seq
        pairs = unmasked_pairs(seq, -1, 0)
        operands = {heads_q: tuple(inputs(batch, seq, heads_q, 4)) for heads_q in (28, 32)}
        ms = time(*(make(*operands[heads_q], **options)
                    for heads_q in (28, 32)
                    for make, options in ((ours, {"causal": True}), (cudnn, {"causal": True}))))
        ours7, cudnn7, ours8, cudnn8 = (tflops(pairs, batch, heads_q, t)
                                        for heads_q, t in zip((28, 28, 32, 32), ms))
        print(f"| {seq} | {ours7:.0f} | {ours8:.0f} | {ours7 / ours8:.2f} | "
              f"{cudnn7:.0f} | {cudnn8:.0f} | {ours7 / cudnn7:.2f} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
