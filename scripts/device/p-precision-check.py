#!/usr/bin/env python3
"""Compares each kernel compiled with one rounded P against the same
configuration compiled with P as two 16-bit parts (`p-precision=hi_lo`),
on the same inputs, against a float64 PyTorch reference.

DIR holds `<name>__<single>_attention` and `<name>__<hilo>_attention`
kernels (`scripts/compile-kernels.py --variant single: --variant
hilo:p-precision=hi_lo`). For each pair and each (B, Sq, Skv, scale
factor): fresh random inputs, O (and LSE) NaN-poisoned before each launch,
then for both kernels ||O - ref||_F / ||ref||_F and max |O - ref| (O as
stored, in its 16-bit type), and with LSE max |LSE - ref|. Scale factors
above 1 sharpen the softmax (fewer keys carry each row), where P's rounding
weighs most. Both kernels must pass attention-check.py's bounds (4 unit
roundoffs, LSE within 1e-3); the summary gives the geometric mean of the
hi_lo / single error ratios per scale factor.

usage: PYTHONPATH=python p-precision-check.py DIR [--single single] [--hilo hilo]
"""

import argparse
import math
import sys

import torch

import fa4.torch as fa4_torch

SHAPES = [(2, 300, 1000), (1, 1000, 1100), (4, 5, 2000), (2, 128, 4096)]
FACTORS = [1.0, 4.0, 16.0]
UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def errors(kernel, q, k, v, scale, want_o, want_lse):
    result = fa4_torch._run(kernel, q, k, v, kernel.lse, fill=float("nan"), scale=scale)
    output, lse = result if kernel.lse else (result, None)
    torch.cuda.synchronize()
    if not bool(torch.isfinite(output).all()):
        return None
    difference = output.double() - want_o
    norm = want_o.norm().item()
    relative = difference.norm().item() / norm if norm else difference.norm().item()
    lse_error = 0.0
    if lse is not None:
        finite = torch.isfinite(want_lse)
        if finite.any():
            lse_error = (lse[finite].double() - want_lse[finite]).abs().max().item()
    return relative, difference.abs().max().item(), lse_error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--single", default="single")
    parser.add_argument("--hilo", default="hilo")
    args = parser.parse_args(argv)
    device = torch.device("cuda", torch.cuda.current_device())
    capability = torch.cuda.get_device_capability(device)
    print(f"device: {torch.cuda.get_device_name(device)} (sm_{capability[0]}{capability[1]})")
    directory = fa4_torch.kernel_directory(args.directory)
    kernels = {kernel.name: kernel for kernel in directory if kernel.runs_on(capability)}
    suffix = f"__{args.single}_attention"
    pairs = []
    for name, kernel in sorted(kernels.items()):
        if name.endswith(suffix):
            other = kernels.get(name[:-len(suffix)] + f"__{args.hilo}_attention")
            if other is not None:
                pairs.append((kernel, other))
    generator = torch.Generator(device="cuda")
    generator.manual_seed(2026)
    dtypes = {e: t for t, e in fa4_torch._ELEMENTS.items()}
    ratios = {factor: [] for factor in FACTORS}
    runs = failures = 0
    for single, hilo in pairs:
        dtype = dtypes[single.element]
        bound = 4 * UNIT_ROUNDOFF[dtype]
        for (batch, seq_q, seq_kv) in SHAPES:
            for factor in FACTORS:
                q, k, v = (torch.randn(shape, dtype=dtype, device=device, generator=generator)
                           for shape in ((batch, seq_q, single.heads_q, single.head_dim),
                                         (batch, seq_kv, single.heads_kv, single.head_dim),
                                         (batch, seq_kv, single.heads_kv, single.head_dim_v)))
                scale = single.scale * factor
                want_o, want_lse = fa4_torch.reference(
                    q, k, v, single.causal, scale, dtype=torch.float64, window=single.window,
                    softcap=single.softcap or 0.0)
                measured = [errors(kernel, q, k, v, scale, want_o, want_lse)
                            for kernel in (single, hilo)]
                runs += 1
                problems = []
                for label, result in zip(("single", "hi_lo"), measured):
                    if result is None:
                        problems.append(f"{label}: O not finite")
                    elif not result[0] <= bound:
                        problems.append(f"{label}: relative error {result[0]:.3g} > {bound:.3g}")
                    elif not result[2] <= 1e-3:
                        problems.append(f"{label}: LSE error {result[2]:.3g} > 0.001")
                failures += bool(problems)
                line = (f"{single.name[:-len(suffix)]} B={batch} Sq={seq_q} Skv={seq_kv} "
                        f"scale x{factor:g}")
                if not problems:
                    (rel_s, max_s, lse_s), (rel_h, max_h, lse_h) = measured
                    ratios[factor].append(rel_h / rel_s if rel_s else 1.0)
                    line += (f": ||O-ref||/||ref|| single {rel_s:.3g} hi_lo {rel_h:.3g} "
                             f"({rel_h / rel_s if rel_s else 1.0:.2f}x), max |O-ref| "
                             f"{max_s:.3g} / {max_h:.3g}, max |LSE-ref| {lse_s:.3g} / {lse_h:.3g}")
                print(("FAIL " if problems else "PASS ") + line +
                      ("" if not problems else " -- " + "; ".join(problems)))
                sys.stdout.flush()
    for factor, values in ratios.items():
        if values:
            mean = math.exp(sum(math.log(max(r, 1e-12)) for r in values) / len(values))
            print(f"scale x{factor:g}: hi_lo / single relative error, geometric mean "
                  f"{mean:.3f} over {len(values)} runs (min {min(values):.3f}, "
                  f"max {max(values):.3f})")
    print(f"{runs - failures}/{runs} runs passed ({len(pairs)} kernel pairs)")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    raise SystemExit(main())
