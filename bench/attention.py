#!/usr/bin/env python3
"""Times fa4 attention kernels against PyTorch SDPA's cuDNN and
FlashAttention-2 backends on the same inputs, in one run.

bf16, [B, S, H, D] with H = 2048 / D heads, rounded down (32 at D 64, 21
at D 96, 16 at D 128, 10 at D 192, 8 at D 256); a head dim "192:128" is
Dqk 192 with V and O of head dim 128 (DeepSeek's prefill).
B = tokens / S so that every row of the table does the same number of
tokens, Sq = Skv = S. Each call is timed with CUDA events: the median of
--iters calls after --warmup. TFLOP/s counts 2 * B * H * S^2 * (Dqk + Dv)
(halved when causal); a backend that refuses a shape shows nan. "fa4 / cuDNN" compares the medians; "fa4
back-to-back" is the mean of --iters calls enqueued without waiting, where
the runtime's per-call host work overlaps the previous kernel.

usage: PYTHONPATH=python python3 bench/attention.py DIR [--head-dims 64,192:128]
       [--seqlens 1024,2048,4096,8192,16384] [--tokens 16384] [--iters 30]
"""

import argparse
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa4.torch as fa4_torch


def software(device):
    """The line each benchmark opens with: the GPU and the software timed."""
    return (f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}, "
            f"cuDNN {torch.backends.cudnn.version()}")


def median_ms(call, warmup, iters):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times)


def back_to_back_ms(call, iters):
    """Mean time of `iters` calls enqueued back to back: per-call host
    overhead overlaps the previous call's GPU time."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def sdpa(backend, q, k, v, causal):
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    return call


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--head-dims", default="64,96,128,192,192:128,256")
    parser.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    print(software(device))
    print("| D | causal | S | B x H | fa4 TFLOP/s | cuDNN TFLOP/s | FA2 TFLOP/s | fa4 / cuDNN | fa4 back-to-back | max |fa4 - cuDNN| |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    for spec in args.head_dims.split(","):
        head_dim, _, head_dim_v = spec.partition(":")
        head_dim = int(head_dim)
        head_dim_v = int(head_dim_v or head_dim)
        heads = 2048 // head_dim
        for causal in (False, True):
            for seqlen in (int(s) for s in args.seqlens.split(",")):
                batch = max(1, args.tokens // seqlen)
                shape = (batch, seqlen, heads, head_dim)
                q, k = (torch.randn(shape, dtype=torch.bfloat16, device=device)
                        for _ in range(2))
                v = torch.randn((*shape[:-1], head_dim_v), dtype=torch.bfloat16,
                                device=device)
                flops = 2 * batch * heads * seqlen * seqlen * (head_dim + head_dim_v)
                flops /= 2 if causal else 1

                def ours():
                    return fa4_torch.attention(q, k, v, causal=causal,
                                               kernel_dir=args.directory)
                cudnn = sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                flash = sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
                try:
                    difference = (ours().float()
                                  - cudnn().transpose(1, 2).float()).abs().max().item()
                except RuntimeError:
                    difference = float("nan")
                results = {}
                for name, call in (("fa4", ours), ("cudnn", cudnn), ("fa2", flash)):
                    try:
                        results[name] = flops / median_ms(call, args.warmup, args.iters) / 1e9
                    except RuntimeError as error:
                        print(f"<!-- {name} failed: {error} -->")
                        results[name] = float("nan")
                ratio = results["fa4"] / results["cudnn"]
                streamed = flops / back_to_back_ms(ours, args.iters) / 1e9
                print(f"| {spec} | {'yes' if causal else 'no'} | {seqlen} | "
                      f"{batch} x {heads} | {results['fa4']:.0f} | {results['cudnn']:.0f} | "
                      f"{results['fa2']:.0f} | {ratio:.2f} | {streamed:.0f} | "
                      f"{difference:.3g} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
