#!/usr/bin/env python3
"""Checks the kernels fa4-raise-attention makes from examples/raise on this
GPU against a float64 reference of the linalg program they were raised
from, on tensors in the program's own layouts.

- sdpa_mask: Q, K, V [B, H, S, 64] f16 and an additive mask [1, 1, Sq, Skv]
  (random, with -inf entries), softmax(Q K^T / 8 + mask) V. The raised
  module collapses B and H into fa4's batch: the kernel gets reshapes of
  the same memory, as its bufferized host code does.
- iree_gqa: Q [2, 8, 4, 128, 64], K and V [2, 8, 256, 64] bf16, with Q
  scaled by the bf16 constant c = 0.18066 before Q K^T, exp2 and the
  division by the sum after P V: softmax(ln 2 c Q K^T) V per (b, g, r),
  K and V shared by the 4 query heads r of each group g. The kernel gets
  the operands permuted as the raised module's linalg.transpose ops do.

O is poisoned with NaN before each launch; every element must be finite
and ||O - ref||_F / ||ref||_F within 4 unit roundoffs of the dtype.

usage: PYTHONPATH=python raise-check.py DIR   (DIR: the fa4-compile emit-dir
       of both examples, compiled through the pipeline of
       test/Integration/raise.test)
"""

import argparse
import math
import sys
from pathlib import Path

import torch

from fa4 import runtime

UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16"}


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def compare(out, want, dtype):
    problems = []
    if not bool(torch.isfinite(out).all()):
        problems.append(f"{int((~torch.isfinite(out)).sum())} O elements not finite")
    relative = (out.double() - want).norm().item() / (want.norm().item() or 1.0)
    bound = 4 * UNIT_ROUNDOFF[dtype]
    if not relative <= bound:
        problems.append(f"relative error {relative:.3g} > {bound:.3g}")
    return problems, f"O rel-err {relative:.2e}"


def sdpa_mask(kernel, batch, sq, skv, g):
    heads, dim, dtype = 8, 64, torch.float16
    device = torch.device("cuda")
    q = torch.randn(batch, heads, sq, dim, generator=g).to(dtype).to(device)
    k, v = (torch.randn(batch, heads, skv, dim, generator=g).to(dtype).to(device)
            for _ in range(2))
    mask = torch.randn(1, 1, sq, skv, generator=g)
    mask[torch.rand(1, 1, sq, skv, generator=g) < 0.2] = -math.inf
    mask[..., 0] = 0.0  # every row keeps a key
    mask = mask.to(dtype).to(device)
    out = torch.full_like(q, float("nan"))
    # The raised module's reshapes: [B, H, S, D] as [B*H, S, 1, D].
    operands = {"query": operand(q.view(batch * heads, sq, 1, dim)),
                "key": operand(k.view(batch * heads, skv, 1, dim)),
                "value": operand(v.view(batch * heads, skv, 1, dim)),
                "output": operand(out.view(batch * heads, sq, 1, dim)),
                "capture0": operand(mask)}
    kernel.launch(operands, stream=torch.cuda.current_stream().cuda_stream,
                  device=device.index)
    torch.cuda.synchronize()
    s = q.double() @ k.double().transpose(-1, -2) / 8.0 + mask.double()
    want = torch.softmax(s, -1) @ v.double()
    return compare(out, want, dtype)


def iree_gqa(kernel, g):
    batch, groups, per, sq, skv, dim, dtype = 2, 8, 4, 128, 256, 64, torch.bfloat16
    device = torch.device("cuda")
    q = torch.randn(batch, groups, per, sq, dim, generator=g).to(dtype).to(device)
    k, v = (torch.randn(batch, groups, skv, dim, generator=g).to(dtype).to(device)
            for _ in range(2))
    out = torch.full((batch, sq, groups * per, dim), float("nan"), dtype=dtype, device=device)
    # The raised module's transposes: Q to [B, S, G x R, D], K and V to
    # [B, S, G, D]; O comes back as [B, S, G, R, D] permuted to Q's layout.
    qt = q.permute(0, 3, 1, 2, 4).reshape(batch, sq, groups * per, dim).contiguous()
    kt, vt = (t.permute(0, 2, 1, 3).contiguous() for t in (k, v))
    operands = {"query": operand(qt), "key": operand(kt), "value": operand(vt),
                "output": operand(out)}
    kernel.launch(operands, stream=torch.cuda.current_stream().cuda_stream,
                  device=device.index)
    torch.cuda.synchronize()
    result = out.view(batch, sq, groups, per, dim).permute(0, 2, 3, 1, 4)
    c = float(torch.tensor(0.180336878).to(torch.bfloat16))
    s = torch.einsum("bgrid,bgjd->bgrij", q.double(), k.double()) * c * math.log(2.0)
    want = torch.einsum("bgrij,bgjd->bgrid", torch.softmax(s, -1), v.double())
    return compare(result, want, dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    args = parser.parse_args()
    g = torch.Generator().manual_seed(11)
    runs = []
    mask_kernel = runtime.Kernel.load(Path(args.directory) / "sdpa_mask_attention.json")
    for batch, sq, skv in [(2, 300, 300), (1, 77, 513), (3, 1024, 1000)]:
        runs.append((f"sdpa_mask B={batch} Sq={sq} Skv={skv}",
                     sdpa_mask(mask_kernel, batch, sq, skv, g)))
    gqa_kernel = runtime.Kernel.load(Path(args.directory) / "iree_gqa_attention.json")
    runs.append(("iree_gqa 2x8x4x128 against 256 keys", iree_gqa(gqa_kernel, g)))
    failed = 0
    for name, (problems, text) in runs:
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'PASS'} {name}: {text}"
              f"{': ' + '; '.join(problems) if problems else ''}")
    print(f"{len(runs) - failed}/{len(runs)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
