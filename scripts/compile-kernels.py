#!/usr/bin/env python3
"""Compiles attention kernels for a runtime kernel directory.

Writes one fa4.attention module per configuration and compiles it with
`fa4-opt --fa4-compile`, so that DIR holds <kernel>.{ptx,cubin,json} for
each; `fa4.torch.attention` and the device scripts choose among them by
their manifests. Kernel names say the configuration, e.g.
`bf16_d128_h16x16_causal_lse_attention`.

Sets:
  check  bf16/f16 x head dim 64/96/128/192 (and 256 for sm_90a), and Dqk
         192 with Dv 128, x causal or not x heads (Hq, Hkv) in (4, 4),
         (8, 2), (8, 1) (GQA ratios 1, 4, 8), with LSE
  bench  bf16, head dims 64, 96, 128, 192 and for sm_90a 256 (2048 / D
         heads, rounded down), and (192, 128) at 10 heads, causal or not,
         without LSE
  masks  the score stages with LSE: causal and symmetric sliding windows,
         softcap (with GQA, with a window and f16), GQA ratios 7 and 5,
         attention sinks (causal GQA, a symmetric window, softcap with GQA
         7 in f16), (sm_90a) a causal window at head dim 256
  masks-bench  bf16 head dim 128 without LSE for bench/masks.py: a causal
         4096 window (4095, 0) and softcap 30 at 16 heads, causal or not;
         causal GQA 28/4 and 32/4; causal with sinks at 16 heads
  softcap-bench  bf16 softcap 30 at head dims 64 and 128 (the bench
         set's head counts), causal or not, without LSE: the plan options
         of softcap (--variant k8:polynomial-tanh=8) for bench/variants.py
  varlen  packed sequences (cu_seqlens) with LSE: causal GQA 32/8 at head
         dim 128, a window with seqused_k in f16 at 64, softcap and sinks at
         GQA 7, (sm_90a) causal GQA at 256; over a paged cache: causal GQA
         32/8 at 128 in 64-key pages, a causal window with sinks and
         seqused_k in f16 at 64 in 32-key pages
  varlen-bench  bf16 head dim 128, 16 heads, without LSE for
         bench/varlen.py: packed sequences, causal or not, K and V
         contiguous or in 64-key pages (the dense kernels they are compared
         with are the bench set's)
  kvcache  KV caches read by dense batches, with LSE, for
         scripts/device/kvcache-check.py: causal GQA 32/8 at head dim 128
         over 256-key pages with seqused_k; f16 head dim 64 (4 heads), a
         dense cache with seqused_k, not causal; (sm_90a, whose KV blocks
         may be 64 keys) a window (100, 60) over 64-key pages at head dim
         128, GQA 8/2, every page entry used (no seqused_k); (sm_90a)
         causal GQA 8/2 at head dim 256 over 128-key pages with seqused_k
  fp8  e4m3 Q/K/V (V key-major) with LSE, O bf16: head dims 64, 96, 128
         x causal or not x GQA 1 and 4, with descale factors; then without
         descale, O f16, GQA 7, softcap with sinks, a causal window, head
         dim 80, packed sequences (causal GQA 8/2 at 128; a window with
         seqused_k and O f16 at 64); head dims 192 (causal), 256 (causal
         GQA 8/2 or not) and Dqk 192 / Dv 128 (causal GQA 8/2)
  fp8-bench  e4m3 with descale, head dims 64, 128, 192, 256 (2048 / D heads),
         causal or not, without LSE
  fp8-families  e4m3 with descale and LSE over KV caches: 256-key pages
         (causal GQA 8/2), a dense cache with a window (100, 0) (head dim
         64), for scripts/device/fp8-families-check.py

Variants: with `--variant LABEL:OPTIONS` (repeatable) each configuration is
compiled once per variant with the fa4-compile OPTIONS added (plan options
such as `scheduler=lpt block-n=64`, space-separated), as kernel
`<kernel>__<LABEL>_attention`; `bench/variants.py` times them side by side.

usage: compile-kernels.py --fa4-opt PATH --arch sm_90a --out DIR [--set check] [--set bench]
                          [--variant LABEL:OPTIONS ...]
"""

import argparse
import concurrent.futures
import itertools
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fa4.jit import kernel_name, module_text  # noqa: E402


def configurations(name, arch):
    """(element, head dim, Hq, Hkv, causal, lse, window or None, softcap or
    None[, sink[, varlen[, seqused_k[, V's head dim[, page size]]]]]) of each
    kernel of set `name`: `kernel_name`'s and `module_text`'s arguments."""
    head_dims = [64, 96, 128, 192] + ([256] if arch == "sm_90a" else [])
    if name == "check":
        for element, head_dim, causal, (heads_q, heads_kv) in itertools.product(
                ["bf16", "f16"], head_dims, [False, True], [(4, 4), (8, 2), (8, 1)]):
            yield element, head_dim, heads_q, heads_kv, causal, True, None, None
        # DeepSeek's prefill: Dqk 192, Dv 128.
        for element, causal, (heads_q, heads_kv) in itertools.product(
                ["bf16", "f16"], [False, True], [(4, 4), (8, 2), (8, 1)]):
            yield (element, 192, heads_q, heads_kv, causal, True, None, None, False, False,
                   False, 128)
    elif name == "bench":
        for head_dim, causal in itertools.product(head_dims, [False, True]):
            heads = 2048 // head_dim
            yield "bf16", head_dim, heads, heads, causal, False, None, None
        for causal in (False, True):
            yield "bf16", 192, 10, 10, causal, False, None, None, False, False, False, 128
    elif name == "masks":
        yield "bf16", 128, 8, 8, True, True, (255, 0), None
        yield "bf16", 64, 4, 4, False, True, (100, 60), None
        yield "bf16", 128, 8, 2, True, True, None, 30.0
        yield "f16", 64, 4, 4, False, True, (130, 7), 20.0
        yield "bf16", 128, 14, 2, True, True, None, None
        yield "bf16", 128, 10, 2, False, True, None, None
        yield "bf16", 128, 8, 2, True, True, None, None, True
        yield "bf16", 64, 4, 4, False, True, (100, 60), None, True
        yield "f16", 128, 14, 2, True, True, None, 30.0, True
        if arch == "sm_90a":
            yield "bf16", 256, 8, 2, True, True, (300, 0), None
    elif name == "masks-bench":
        for causal in (False, True):
            yield "bf16", 128, 16, 16, causal, False, None, 30.0
        yield "bf16", 128, 16, 16, True, False, (4095, 0), None
        yield "bf16", 128, 28, 4, True, False, None, None
        yield "bf16", 128, 32, 4, True, False, None, None
        yield "bf16", 128, 16, 16, True, False, None, None, True
    elif name == "softcap-bench":
        # Softcap 30 at the bench set's head counts (its kernels are the
        # same problems without a softcap), for bench/variants.py over
        # --variant kN:polynomial-tanh=N.
        for head_dim, causal in itertools.product([64, 128], [False, True]):
            heads = 2048 // head_dim
            yield "bf16", head_dim, heads, heads, causal, False, None, 30.0
    elif name == "varlen":
        yield "bf16", 128, 32, 8, True, True, None, None, False, True
        yield "f16", 64, 4, 4, False, True, (100, 60), None, False, True, True
        yield "bf16", 128, 28, 4, True, True, None, 30.0, True, True
        if arch == "sm_90a":
            yield "bf16", 256, 8, 2, True, True, None, None, False, True
        # Packed sequences over a paged cache.
        yield "bf16", 128, 32, 8, True, True, None, None, False, True, False, None, 64
        yield "f16", 64, 8, 2, True, True, (50, 0), None, True, True, True, None, 32
    elif name == "varlen-bench":
        for causal in (False, True):
            yield "bf16", 128, 16, 16, causal, False, None, None, False, True
            # The same over a paged cache of 64-key pages.
            yield "bf16", 128, 16, 16, causal, False, None, None, False, True, False, None, 64
    elif name == "kvcache":
        yield "bf16", 128, 32, 8, True, True, None, None, False, False, True, None, 256
        yield "f16", 64, 4, 4, False, True, None, None, False, False, True
        if arch == "sm_90a":
            # 64-key pages need 64-key KV blocks, which the contract gives
            # sm_90a only (sm_100a's blocks are 128 keys).
            yield "bf16", 128, 8, 2, False, True, (100, 60), None, False, False, False, None, 64
            yield "bf16", 256, 8, 2, True, True, None, None, False, False, True, None, 128
    elif name == "fp8":
        fp8 = lambda *c, sink=False, softcap=None, window=None, descale=True, out=None: (
            ("e4m3",) + c[:4] + (True, window, softcap, sink, False, False, None, None,
                                 descale, out))
        for head_dim, causal, (heads_q, heads_kv) in itertools.product(
                [64, 96, 128], [False, True], [(4, 4), (8, 2)]):
            yield fp8(head_dim, heads_q, heads_kv, causal)
        # Without descale factors, O in f16, a GQA ratio that packs no heads,
        # softcap and sinks, a causal window.
        yield fp8(128, 4, 4, True, descale=False)
        yield fp8(128, 8, 2, False, out="f16")
        yield fp8(128, 14, 2, True)
        yield fp8(128, 8, 2, True, softcap=30.0, sink=True)
        yield fp8(128, 4, 4, True, window=(255, 0))
        # Head dim 80: Q K^T reads 96 columns, TMA's zero fill past 80.
        yield fp8(80, 4, 4, True)
        # Packed sequences (V copied per sequence from 16-aligned rows):
        # causal GQA 8/2 at head dim 128; a window with seqused_k and O f16
        # at head dim 64.
        yield ("e4m3", 128, 8, 2, True, True, None, None, False, True, False, None, None,
               True)
        yield ("e4m3", 64, 4, 4, False, True, (100, 60), None, False, True, True, None, None,
               True, "f16")
        # Past head dim 128: sm_90a's 64-key blocks read half of a 128-key V
        # box, sm_100a keeps S, P and O in Tensor Memory.
        yield fp8(192, 4, 4, True)
        yield fp8(256, 8, 2, False)
        yield ("e4m3", 192, 8, 2, True, True, None, None, False, False, False, 128, None,
               True)
        yield fp8(256, 8, 2, True)
    elif name == "fp8-bench":
        for head_dim, causal in itertools.product([64, 128, 192, 256], [False, True]):
            heads = 2048 // head_dim
            yield ("e4m3", head_dim, heads, heads, causal, False, None, None, False, False,
                   False, None, None, True)
    elif name == "fp8-families":
        # e4m3 with descale over the KV-cache families: a paged cache of
        # 256-key pages (causal GQA 8/2 with LSE) and a dense cache (head dim
        # 64, not causal, with a window (100, 0)), for
        # scripts/device/fp8-families-check.py (split-KV: compile them again
        # with --variant kv3:kv-splits=3).
        fp8 = lambda d, hq, hkv, causal, window=None, pages=None: (
            "e4m3", d, hq, hkv, causal, True, window, None, False, False, True, None, pages,
            True)
        yield fp8(128, 8, 2, True, pages=256)
        yield fp8(64, 4, 4, False, window=(100, 0))
    else:
        raise ValueError(f"unknown set {name!r} (expected check, bench, masks, "
                         "masks-bench, softcap-bench, varlen, varlen-bench, kvcache, fp8, fp8-bench or "
                         "fp8-families)")


def compile_one(fa4_opt, arch, out, config, variant=None):
    """Compiles `config` into `out`; `variant` is (label, fa4-compile options)."""
    name = kernel_name(*config)
    options = f"arch={arch} emit-dir={out}"
    if variant:
        name = f"{name}__{variant[0]}"
        options += f" {variant[1]}"
    source = os.path.join(out, name + ".mlir")
    with open(source, "w") as f:
        f.write(module_text(name, *config))
    result = subprocess.run(
        [fa4_opt, source, f"--fa4-compile={options}", "-o", os.devnull],
        capture_output=True, text=True)
    return name, result.returncode, result.stdout + result.stderr


def variant(text):
    """LABEL:OPTIONS of --variant."""
    label, sep, options = text.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z0-9-]+", label):
        raise argparse.ArgumentTypeError(
            f"expected LABEL:OPTIONS with a label of letters, digits and '-', got {text!r}")
    return label, options.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fa4-opt", required=True)
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--out", required=True)
    parser.add_argument("--set", action="append", dest="sets",
                        help="check, bench, masks, masks-bench, softcap-bench, varlen, "
                             "varlen-bench, kvcache, fp8, fp8-bench or fp8-families "
                             "(repeatable; default check and bench)")
    parser.add_argument("--variant", action="append", type=variant, default=[],
                        help="LABEL:OPTIONS, each configuration also compiled with the "
                             "fa4-compile OPTIONS as <kernel>__LABEL (repeatable; then only "
                             "the variants are compiled)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    configs = []
    for name in args.sets or ["check", "bench"]:
        configs += [c for c in configurations(name, args.arch) if c not in configs]
    jobs = [(c, v) for c in configs for v in (args.variant or [None])]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for name, code, log in pool.map(
                lambda job: compile_one(args.fa4_opt, args.arch, args.out, *job), jobs):
            if code:
                failures += 1
                print(f"FAIL {name}\n{log}", file=sys.stderr)
            else:
                summary = [line.strip() for line in log.splitlines() if "ptxas:" in line]
                print(f"ok   {name}: {summary[0] if summary else log.strip()}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
