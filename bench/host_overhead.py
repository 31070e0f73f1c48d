#!/usr/bin/env python3
"""Per-call host time of fa4.torch.attention and of PyTorch SDPA on a tiny
problem, in one process.

At B=1, S=128 a kernel takes a few microseconds, so the host is the
bottleneck: --calls calls are enqueued back to back and timed with
time.perf_counter() (the GPU is synchronized before the clock starts and
after it stops, outside the time), in --rounds rounds interleaved across
the rows; the median round is the host time per call (a shared host's load
varies from round to round). The GPU time per call is measured too (CUDA
events around --iters calls enqueued while the GPU is stalled, so that they
run back to back), and a host time not well above it is flagged: the
enqueue loop may then have waited for the GPU. Rows:

  fa4.torch.attention   the public path: eagerly, with nothing that would
                        intercept the op (no dispatch or function mode,
                        transform, profiler or trace), the op's kernel
                        called directly, its checks and choice remembered
                        per configuration; else through fa4::attention
  fa4::attention op     the custom op called with attention's normalized
                        arguments (where torch.library has custom ops): the
                        dispatcher and the op's kernel
  fa4 without the op    fa4.torch's kernel of the op called directly: the
                        op row less this one is PyTorch's dispatch
  SDPA                  F.scaled_dot_product_attention on [B, H, S, D]
                        views, PyTorch's choice of backend (enable_gqa for
                        Hq != Hkv)
  SDPA flash            the same, restricted to the FlashAttention-2
                        backend (skipped where it refuses the problem)

The kernel directory is read through FA4_KERNEL_DIR or DIR; the first call
chooses the kernel (outside the time). --profile prints the cProfile of the
fa4 calls, the functions with the most time of their own first.

usage: PYTHONPATH=python python3 bench/host_overhead.py DIR [--batch 1] [--seqlen 128]
       [--heads 32] [--kv-heads 8] [--head-dim 128] [--no-causal] [--calls 2000]
       [--rounds 5] [--profile]
"""

import argparse
import contextlib
import cProfile
import math
import pstats
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa4.torch as fa4_torch


def host_us(call, calls):
    """Host microseconds per call of `calls` calls enqueued back to back."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def gpu_us(call, iters, host):
    """GPU microseconds per call: `iters` calls timed by CUDA events while
    the GPU was stalled (torch.cuda._sleep, a test helper of PyTorch) for
    longer than the host takes to enqueue them (`host` us each), so the
    events time the kernels back to back, not the host between them."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # About 2000 cycles per microsecond at the H200's clocks; twice the
    # host's time for margin.
    torch.cuda._sleep(int(2 * host * iters * 2000))
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="kernel directory (default: "
                        "$FA4_KERNEL_DIR)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--no-causal", dest="causal", action="store_false")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    # Few enough to stay below the driver's queue of pending launches.
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    device = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}")
    print(f"problem: B={args.batch} S={args.seqlen} Hq={args.heads} Hkv={args.kv_heads} "
          f"D={args.head_dim} bf16 {'causal' if args.causal else 'not causal'}; "
          f"fa4 through the custom op: {fa4_torch._op is not None}")
    torch.manual_seed(0)
    shape_q = (args.batch, args.seqlen, args.heads, args.head_dim)
    shape_kv = (args.batch, args.seqlen, args.kv_heads, args.head_dim)
    q = torch.randn(shape_q, dtype=torch.bfloat16, device=device)
    k, v = (torch.randn(shape_kv, dtype=torch.bfloat16, device=device) for _ in range(2))
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
    gqa = args.heads != args.kv_heads
    causal, path = args.causal, args.directory

    def fa4_call():
        return fa4_torch.attention(q, k, v, causal=causal, kernel_dir=path)

    window_right = 0 if causal else -1

    def fa4_direct():
        return fa4_torch._attention(q, k, v, None, causal, None, -1, window_right, 0.0,
                                    False, path)

    def fa4_op():
        return fa4_torch._op(q, k, v, None, causal, None, -1, window_right, 0.0, False,
                             path)

    def sdpa():
        return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=gqa)

    print(f"fa4.torch.attention calls the op's kernel directly here: "
          f"{fa4_torch._nothing_intercepts()}")
    calls = [("fa4.torch.attention", fa4_call)]
    if fa4_torch._op is not None:
        calls.append(("fa4::attention op", fa4_op))
    calls += [("fa4 without the op", fa4_direct), ("SDPA", sdpa)]
    calls = [(name, call, contextlib.nullcontext) for name, call in calls]
    with torch.no_grad():
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                sdpa()
            calls.append(("SDPA flash", sdpa,
                          lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)))
        except RuntimeError as err:
            print(f"SDPA flash skipped: {str(err).splitlines()[0]}")
        # The rounds of the rows interleaved, so that a change of the host's
        # load weighs on every row alike.
        times = {name: [] for name, _, _ in calls}
        for warm_up in [True] + [False] * args.rounds:
            for name, call, context in calls:
                with context():
                    if warm_up:
                        for _ in range(10):
                            call()
                    else:
                        times[name].append(host_us(call, args.calls))
        rows = []
        for name, call, context in calls:
            host = sorted(times[name])[len(times[name]) // 2]
            with context():
                rows.append((name, host, gpu_us(call, args.iters, host)))
        difference = (fa4_call().float() - sdpa().transpose(1, 2).float()).abs().max().item()

    print("| path | host us/call | GPU us/call |")
    print("|---|---|---|")
    for name, host, gpu in rows:
        flag = "" if host > 1.2 * gpu else " (GPU-bound: host time is an upper bound)"
        print(f"| {name} | {host:.1f}{flag} | {gpu:.1f} |")
    hosts = {name: host for name, host, _ in rows}
    public, direct = hosts["fa4.torch.attention"], hosts["fa4 without the op"]
    dispatch = (f"; the op's dispatch: {hosts['fa4::attention op'] - direct:.1f} us/call"
                if "fa4::attention op" in hosts else "")
    print(f"host time fa4 / SDPA: {public / hosts['SDPA']:.2f}; attention less the op's "
          f"kernel: {public - direct:.1f} us/call{dispatch}; max |fa4 - SDPA| "
          f"{difference:.3g}")
    if not math.isfinite(difference) or difference > 2e-2:
        print("fa4 and SDPA disagree")
        return 1

    if args.profile:
        profile = cProfile.Profile()
        with torch.no_grad():
            profile.enable()
            for _ in range(args.calls):
                fa4_call()
            profile.disable()
        torch.cuda.synchronize()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
