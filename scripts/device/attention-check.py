#!/usr/bin/env python3
"""Checks every kernel of a kernel directory that runs on this GPU over a
matrix of problem shapes, against a float64 PyTorch reference.

For each kernel (its dtype, head counts, head dims, causality, window,
softcap, sinks and LSE come from its manifest) and each (B, Sq, Skv): fresh
random inputs (sinks about a row's log-sum-exp, every fourth -inf), O and
LSE poisoned with NaN before the launch, then
  - every output element written and finite,
  - ||O - ref||_F / ||ref||_F within 4 unit roundoffs of the dtype
    (1.56e-2 bf16, 1.95e-3 f16; the bound fa4-sim uses),
  - |LSE - ref| <= 1e-3 where the reference is finite, -inf where it is.
Each kernel also runs once at another scale (1.7 times its own) and, with a
softcap, another softcap (0.6 times): both are kernel arguments. A softcap
kernel runs once more at a tenth of its softcap, so that most warps'
scores pass the cap (a plan's polynomial tanh falls back to MUFU there),
and once at 20 times it, past the ceiling under which the softmax takes
the cap as every row's reference (the running maximum then).
Prints one line per run and a summary; exits 1 on any failure.

usage: PYTHONPATH=python attention-check.py DIR [--small] [--kernel SUBSTRING]
  --small  two shapes per kernel (for compute-sanitizer runs)
"""

import argparse
import sys

import torch

import fa4.torch as fa4_torch

SHAPES = [(2, 128, 128), (1, 1000, 1100), (1, 1100, 1000), (3, 77, 300),
          (2, 300, 77), (2, 1, 513), (1, 2048, 2048), (1, 4096, 4096)]
SMALL_SHAPES = [(1, 200, 300), (2, 130, 70)]
UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def check(kernel, dtype, batch, seq_q, seq_kv, generator, factor=1.0, cap_factor=1.0):
    device = torch.device("cuda")
    shape_q = (batch, seq_q, kernel.heads_q, kernel.head_dim)
    shape_k = (batch, seq_kv, kernel.heads_kv, kernel.head_dim)
    shape_v = (batch, seq_kv, kernel.heads_kv, kernel.head_dim_v)
    q, k, v = (torch.randn(s, dtype=dtype, device=device, generator=generator)
               for s in (shape_q, shape_k, shape_v))
    sink = (fa4_torch._test_sinks(kernel.heads_q, seq_kv, device, generator)
            if kernel.sink else None)
    scale = kernel.scale * factor
    softcap = kernel.softcap * cap_factor if kernel.softcap else 0.0
    result = fa4_torch._run(kernel, q, k, v, kernel.lse, fill=float("nan"), sink=sink,
                            scale=scale, softcap=softcap or None)
    output, lse = result if kernel.lse else (result, None)
    torch.cuda.synchronize()
    want_o, want_lse = fa4_torch.reference(q, k, v, kernel.causal, scale,
                                           dtype=torch.float64, window=kernel.window,
                                           softcap=softcap, sink=sink)
    bound = 4 * UNIT_ROUNDOFF[dtype]
    problems = []
    written = bool(torch.isfinite(output).all())
    if not written:
        problems.append(f"{int((~torch.isfinite(output)).sum())} O elements not finite")
    difference = output.double() - want_o
    norm = want_o.norm().item()
    relative = difference.norm().item() / norm if norm else difference.norm().item()
    if not relative <= bound:
        problems.append(f"relative error {relative:.3g} > {bound:.3g}")
    line = (f"{kernel.name} B={batch} Sq={seq_q} Skv={seq_kv}"
            f"{f' scale {scale:.4g}' if factor != 1.0 else ''}"
            f"{f' softcap {softcap:.4g}' if cap_factor != 1.0 and softcap else ''}: ||O-ref||/||ref|| "
            f"{relative:.3g}, max |O-ref| {difference.abs().max().item():.3g}")
    if lse is not None:
        finite = torch.isfinite(want_lse)
        lse_error = ((lse[finite].double() - want_lse[finite]).abs().max().item()
                     if finite.any() else 0.0)
        line += f", max |LSE-ref| {lse_error:.3g}"
        if not lse_error <= 1e-3:
            problems.append(f"LSE error {lse_error:.3g} > 0.001")
        if not bool((lse[~finite] == want_lse[~finite]).all()):
            problems.append("LSE of rows without keys is not -inf")
    return problems, line


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--kernel", action="append", default=[],
                        help="only kernels whose name contains this (repeatable)")
    args = parser.parse_args(argv)
    device = torch.device("cuda", torch.cuda.current_device())
    capability = torch.cuda.get_device_capability(device)
    print(f"device: {torch.cuda.get_device_name(device)} (sm_{capability[0]}{capability[1]})")
    directory = fa4_torch.kernel_directory(args.directory)
    for name, why in directory.errors:
        print(f"skip {name}: {why}")
    generator = torch.Generator(device="cuda")
    generator.manual_seed(2026)
    dtypes = {e: t for t, e in fa4_torch._ELEMENTS.items()}
    runs = failures = 0
    for kernel in sorted(directory, key=lambda k: k.name):
        if args.kernel and not any(s in kernel.name for s in args.kernel):
            continue
        if not kernel.runs_on(capability):
            continue
        if kernel.varlen or kernel.regions or kernel.kvcache or kernel.rope:
            # Packed sequences, score regions, KV caches and rotary
            # embeddings have checks of their own.
            why = ("packed sequences: varlen-check.py" if kernel.varlen
                   else "regions: regions-check.py" if kernel.regions
                   else "a KV cache: kvcache-check.py" if kernel.kvcache
                   else "a rotary embedding: kvcache-check.py")
            print(f"skip {kernel.name}: {why}")
            continue
        runs_of_kernel = [(shape, 1.0, 1.0)
                          for shape in (SMALL_SHAPES if args.small else SHAPES)]
        runs_of_kernel.append(((1, 300, 500), 1.7, 0.6))
        if kernel.softcap:
            runs_of_kernel += [((1, 300, 500), 1.0, 0.1), ((1, 300, 500), 1.0, 20.0)]
        for (batch, seq_q, seq_kv), factor, cap_factor in runs_of_kernel:
            problems, line = check(kernel, dtypes[kernel.element], batch, seq_q,
                                   seq_kv, generator, factor, cap_factor)
            runs += 1
            failures += bool(problems)
            print(("FAIL " if problems else "PASS ") + line +
                  ("" if not problems else " -- " + "; ".join(problems)))
            sys.stdout.flush()
    print(f"{runs - failures}/{runs} runs passed")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    raise SystemExit(main())
