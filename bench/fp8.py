#!/usr/bin/env python3
"""Times fa4's FP8 (e4m3) attention kernels against fa4's bf16 kernels and
PyTorch SDPA's cuDNN backend on the same problems, in one run.

[B, S, H, D] with H = 2048 / D heads (32 at D 64, 16 at D 128, 8 at
D 256), B = tokens / S so that every row of the
table does the same number of tokens, Sq = Skv = S, causal or not. FP8: q, k, v torch.float8_e4m3fn (unit
normals rounded to e4m3), V made key-major once (`fa4.torch`'s
`_key_major_copy`, so that the timing is the kernel's alone, without the
per-call copy), q/k/v_descale [B, H] random in [0.5, 2); bf16 (fa4 and
cuDNN): the same values dequantized (q * q_descale, ...) and rounded to
bf16. cuDNN FP8 is SDPA's cuDNN backend on the FP8 q, k, v without
descales, nan where this PyTorch's SDPA refuses FP8. Each call is timed
with CUDA events: the median of --iters calls after --warmup. TFLOP/s
counts 4 * B * H * S^2 * D (halved when causal); a backend that fails
shows nan (its first error printed as a comment). "fp8/bf16" is fa4 FP8
over fa4 bf16 (the goal: 1.3 or more), "fp8/cuDNN" fa4 FP8 over cuDNN
bf16; "max |fp8 - bf16|" compares fa4's two outputs. Needs the kernels of
`scripts/compile-kernels.py --arch sm_90a --set bench --set fp8-bench`
(others are compiled on demand).

usage: PYTHONPATH=python python3 bench/fp8.py DIR [--head-dims 64,128]
       [--seqlens 1024,2048,4096,8192,16384] [--tokens 16384] [--iters 30]
"""

import argparse
import math
import os
import sys

import torch
from torch.nn.attention import SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms, sdpa, software  # noqa: E402

import fa4.torch as fa4_torch  # noqa: E402

FP8 = getattr(torch, "float8_e4m3fn", None)


def inputs(batch, seqlen, heads, head_dim, device):
    """(FP8 q, k, v [B, S, H, D] with V key-major, the FP8 V as made,
    q/k/v descales [B, H], bf16 q, k, v: the FP8 values dequantized)."""
    shape = (batch, seqlen, heads, head_dim)
    q, k, v = (torch.randn(shape, device=device).to(FP8) for _ in range(3))
    descales = [torch.rand((batch, heads), device=device) * 1.5 + 0.5 for _ in range(3)]
    dequantized = [(t.float() * d[:, None, :, None]).to(torch.bfloat16)
                   for t, d in zip((q, k, v), descales)]
    return (q, k, fa4_torch._key_major_copy(v)), v, descales, dequantized


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args(argv)
    if FP8 is None:
        parser.error(f"torch {torch.__version__} has no torch.float8_e4m3fn")
    device = torch.device("cuda")
    print(software(device))
    print("| D | causal | S | B x H | fa4 FP8 TFLOP/s | fa4 bf16 TFLOP/s | cuDNN bf16 TFLOP/s "
          "| cuDNN FP8 TFLOP/s | fp8/bf16 | fp8/cuDNN | max |fp8 - bf16| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    failed = set()   # the backends whose first error was printed
    ratios = []

    def tflops(name, call, flops):
        if name == "cuDNN FP8" and name in failed:
            return float("nan")   # this PyTorch's SDPA has no FP8: not tried again
        try:
            return flops / median_ms(call, args.warmup, args.iters) / 1e9
        except Exception as error:  # noqa: BLE001 (a backend that fails shows nan)
            if name not in failed:
                failed.add(name)
                print(f"<!-- {name} failed: {type(error).__name__}: {error} -->", flush=True)
            return float("nan")

    torch.manual_seed(0)
    for head_dim in (int(d) for d in args.head_dims.split(",")):
        heads = 2048 // head_dim
        for causal in (False, True):
            for seqlen in (int(s) for s in args.seqlens.split(",")):
                batch = max(1, args.tokens // seqlen)
                (q8, k8, v8), v8_made, descales, (q, k, v) = inputs(
                    batch, seqlen, heads, head_dim, device)
                flops = 4 * batch * heads * seqlen * seqlen * head_dim
                flops /= 2 if causal else 1
                q_descale, k_descale, v_descale = descales

                def fp8():
                    return fa4_torch.attention(q8, k8, v8, causal=causal,
                                               kernel_dir=args.directory,
                                               q_descale=q_descale, k_descale=k_descale,
                                               v_descale=v_descale)

                def bf16():
                    return fa4_torch.attention(q, k, v, causal=causal,
                                               kernel_dir=args.directory)
                cudnn = sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                cudnn_fp8 = sdpa(SDPBackend.CUDNN_ATTENTION, q8, k8, v8_made, causal)
                try:
                    difference = (fp8().float() - bf16().float()).abs().max().item()
                except Exception:  # noqa: BLE001 (reported by the timing below)
                    difference = float("nan")
                results = {name: tflops(name, call, flops)
                           for name, call in (("fa4 FP8", fp8), ("fa4 bf16", bf16),
                                              ("cuDNN bf16", cudnn),
                                              ("cuDNN FP8", cudnn_fp8))}
                ratio = results["fa4 FP8"] / results["fa4 bf16"]
                over_cudnn = results["fa4 FP8"] / results["cuDNN bf16"]
                if math.isfinite(ratio):
                    ratios.append(ratio)
                print(f"| {head_dim} | {'yes' if causal else 'no'} | {seqlen} | "
                      f"{batch} x {heads} | {results['fa4 FP8']:.0f} | "
                      f"{results['fa4 bf16']:.0f} | {results['cuDNN bf16']:.0f} | "
                      f"{results['cuDNN FP8']:.0f} | {ratio:.2f} | {over_cudnn:.2f} | "
                      f"{difference:.3g} |", flush=True)
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\nfp8/bf16 over {len(ratios)} rows: geometric mean {mean:.2f}, "
              f"min {min(ratios):.2f} (goal >= 1.3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
