#!/usr/bin/env python3
"""Checks the score- and mask-region kernels of examples/regions (and the
softcapped one of test/Simulator/matrix-regions.test) on this GPU against a
float64 PyTorch reference that computes the same modification in torch.

Each kernel is `<function>_attention` in DIR (compiled with fa4-compile
from the example). For each (B, Sq, Skv): random inputs and captures (ALiBi
slopes, a bf16 relative-bias table, sorted document ids, prefix lengths,
per-head score floors), O and LSE poisoned with NaN, then: every O element
finite, ||O - ref||_F / ||ref||_F within 4 unit roundoffs of the dtype,
|LSE - ref| <= 1e-3 (plus softcap * 2^-11 with a softcap: tanh.approx)
where finite and -inf where the reference is.

usage: PYTHONPATH=python regions-check.py DIR [--small]
"""

import argparse
import math
import sys
from pathlib import Path

import torch

from fa4 import runtime

SHAPES = [(2, 300, 300), (1, 1000, 1100), (2, 77, 513), (1, 1100, 1000), (1, 2048, 2048)]
SMALL_SHAPES = [(1, 200, 260), (2, 130, 70)]
UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32",
            torch.int32: "i32"}


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def alibi_slopes(heads):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])


def documents(batch, length, generator):
    """Sorted document ids: 1-4 boundaries per row at random positions."""
    ids = torch.zeros(batch, length, dtype=torch.int32)
    for b in range(batch):
        cuts = torch.randint(1, max(2, length), (int(torch.randint(1, 5, (1,),
                             generator=generator)),), generator=generator)
        for c in cuts.tolist():
            ids[b, c:] += 1
    return ids


# name -> (dtype, causal, window, softcap, lse, sink, make captures, score, mask)
# score(s, b, h, i, j, caps) and mask(...) act on float64 [B, H, Sq, Skv]
# tensors; b, h, i, j broadcast.
def _alibi_captures(batch, sq, skv, heads, g):
    return [alibi_slopes(heads).float()]


def _alibi_score(s, b, h, i, j, caps):
    return s + caps[0].double()[h] * (j - i)


def _bias_captures(batch, sq, skv, heads, g):
    return [(0.5 * torch.randn(heads, 129, generator=g)).bfloat16()]


def _bias_score(s, b, h, i, j, caps):
    return s + caps[0].double()[h, (j - i).clamp(-64, 64) + 64]


def _doc_captures(batch, sq, skv, heads, g):
    return [documents(batch, sq, g), documents(batch, skv, g)]


def _doc_mask(s, b, h, i, j, caps):
    return caps[0].long()[b, i] == caps[1].long()[b, j]


def _prefix_captures(batch, sq, skv, heads, g):
    return [torch.randint(0, skv + 1, (batch,), generator=g, dtype=torch.int32)]


def _prefix_mask(s, b, h, i, j, caps):
    return (j < caps[0].long()[b]) | (j <= i)


def _floor_captures(batch, sq, skv, heads, g):
    return [torch.randn(heads, generator=g) - 1.0]


def _floor_mask(s, b, h, i, j, caps):
    return s >= caps[0].double()[h]


KERNELS = {
    "alibi": (torch.bfloat16, True, (-1, 0), 0.0, False, False, _alibi_captures,
              _alibi_score, None),
    "relative_bias": (torch.bfloat16, False, (-1, -1), 0.0, False, False, _bias_captures,
                      _bias_score, None),
    "document_mask": (torch.float16, True, (-1, 0), 0.0, False, False, _doc_captures, None,
                      _doc_mask),
    "prefix_lm": (torch.bfloat16, False, (-1, -1), 0.0, True, False, _prefix_captures, None,
                  _prefix_mask),
    "capped_score_mask": (torch.bfloat16, False, (100, 40), 3.0, True, True,
                          _floor_captures, lambda s, b, h, i, j, caps: 0.5 * s,
                          _floor_mask),
}


def reference(q, k, v, scale, window, softcap, sink, captures, score, mask):
    """O [B, Sq, Hq, D] and LSE [B, Hq, Sq] in float64."""
    batch, sq, heads, _ = q.shape
    skv, group = k.shape[1], heads // k.shape[2]
    qd = q.double().transpose(1, 2)
    kd = k.double().repeat_interleave(group, dim=2).transpose(1, 2)
    vd = v.double().repeat_interleave(group, dim=2).transpose(1, 2)
    s = scale * qd @ kd.transpose(-1, -2)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    device = q.device
    b = torch.arange(batch, device=device).view(-1, 1, 1, 1)
    h = torch.arange(heads, device=device).view(1, -1, 1, 1)
    i = torch.arange(sq, device=device).view(1, 1, -1, 1)
    j = torch.arange(skv, device=device).view(1, 1, 1, -1)
    caps = [c.to(device) for c in captures]
    keep = torch.ones_like(s, dtype=torch.bool)
    if mask:
        keep &= mask(s, b, h, i, j, caps)
    if score:
        s = score(s, b, h, i, j, caps)
    diagonal = i + skv - sq
    left, right = window
    if left >= 0:
        keep &= j >= diagonal - left
    if right >= 0:
        keep &= j <= diagonal + right
    s = s.masked_fill(~keep, -math.inf)
    if sink is not None:
        s = torch.cat([s, sink.double().view(1, -1, 1, 1).expand(batch, heads, sq, 1)], -1)
        vd = torch.cat([vd, torch.zeros_like(vd[:, :, :1])], 2)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return (p @ vd).transpose(1, 2), lse


def check(name, kernel, batch, sq, skv, g):
    dtype, causal, window, softcap, has_lse, has_sink, make, score, mask = KERNELS[name]
    device = torch.device("cuda")
    q = torch.randn(batch, sq, kernel.heads_q, kernel.head_dim, generator=g).to(dtype).to(device)
    k, v = (torch.randn(batch, skv, kernel.heads_kv, kernel.head_dim, generator=g)
            .to(dtype).to(device) for _ in range(2))
    captures = make(batch, sq, skv, kernel.heads_q, g)
    on_device = [c.to(device).contiguous() for c in captures]
    out = torch.full_like(q, float("nan"))
    operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                "output": operand(out)}
    lse = sink = None
    if has_lse:
        lse = torch.full((batch, kernel.heads_q, sq), float("nan"), device=device)
        operands["lse"] = operand(lse)
    if has_sink:
        sink = (math.log(skv) + 2 * torch.randn(kernel.heads_q, generator=g)).to(device)
        sink[3::4] = -math.inf
        operands["sink"] = operand(sink)
    for index, c in enumerate(on_device):
        operands[f"capture{index}"] = operand(c)
    kernel.launch(operands, stream=torch.cuda.current_stream().cuda_stream,
                  device=device.index)
    torch.cuda.synchronize()
    want_o, want_lse = reference(q, k, v, kernel.scale, window, softcap, sink, on_device,
                                 score, mask)
    problems = []
    if not bool(torch.isfinite(out).all()):
        problems.append(f"{int((~torch.isfinite(out)).sum())} O elements not finite")
    norm = want_o.norm().item()
    relative = (out.double() - want_o).norm().item() / (norm or 1.0)
    bound = 4 * UNIT_ROUNDOFF[dtype]
    if not relative <= bound:
        problems.append(f"relative error {relative:.3g} > {bound:.3g}")
    text = f"O rel-err {relative:.2e}"
    if lse is not None:
        finite = torch.isfinite(want_lse)
        if not bool((lse[~finite] == -math.inf).all()):
            problems.append("LSE not -inf where no key is seen")
        worst = (lse.double()[finite] - want_lse[finite]).abs().max().item() \
            if finite.any() else 0.0
        # A softcap's tanh.approx.f32 has a relative error up to 2^-11 (PTX
        # ISA), so capped scores, and the LSE with them, are off by up to
        # softcap * 2^-11 beyond the usual bound.
        lse_bound = 1e-3 + softcap * 2.0 ** -11
        if not worst <= lse_bound:
            problems.append(f"LSE error {worst:.3g} > {lse_bound:.3g}")
        text += f", LSE max-err {worst:.2e}"
    return problems, text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    g = torch.Generator().manual_seed(7)
    failed = total = 0
    for name in KERNELS:
        path = Path(args.directory) / f"{name}_attention.json"
        if not path.exists():
            print(f"MISSING {path}")
            failed += 1
            continue
        kernel = runtime.Kernel.load(path)
        for batch, sq, skv in SMALL_SHAPES if args.small else SHAPES:
            problems, text = check(name, kernel, batch, sq, skv, g)
            total += 1
            failed += bool(problems)
            print(f"{'FAIL' if problems else 'PASS'} {name} B={batch} Sq={sq} Skv={skv}: "
                  f"{text}{': ' + '; '.join(problems) if problems else ''}")
    print(f"{total - failed}/{total} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
