#!/usr/bin/env python3
"""Checks the packed-sequence (varlen) kernels of DIR on this GPU against a
float64 PyTorch reference computed sequence by sequence.

Every varlen manifest of DIR runs over ragged batches: sequences of
length 0 and 1, Sq != Skv both ways, a sequence with queries but no keys,
many sequences (one CTA walks several), long ones crossing many tiles; with
`seqused_k` each sequence's key range holds spare slots filled with
garbage that must weigh nothing (NaN keys, huge finite values). O and LSE are NaN-poisoned before the
launch. Passing means: every row a sequence owns is finite and
||O - ref||_F / ||ref||_F is within 4 unit roundoffs of the dtype over
them; |LSE - ref| <= 1e-3 (plus softcap * 2^-11 with a softcap:
tanh.approx) where finite, -inf where the reference is; and every row no
sequence owns is still NaN (nothing written past the sequences).

The kernels of examples/varlen are known by name (`alibi_varlen` gets
ALiBi slopes and their reference); any other varlen kernel with regions is
skipped. A paged kernel (packed sequences over a paged cache) reads each
sequence's keys through its page-table row: pages shuffled, spare pages of
NaN keys and huge values behind the entries past a sequence's keys (or
-1), cu_seqlens_k counting the keys (with seqused_k, 7 garbage slots
more). With --torch, each kernel also runs through
fa4.torch.attention_varlen and fa4.flash_attn_varlen_func (kernel_dir=DIR)
on one batch and must agree with the direct launch bit for bit.

A kernel with a fused rotary embedding (a manifest `rope` entry) gets a
table of real angles and positions [Tq], token i of sequence b at its
bottom-right-aligned position Skv_b - Sq_b + i (at least 0), a few past
the table's end and negative (the kernel clamps them); the reference
rotates each sequence's Q rows with fa4.torch.apply_rope, rounded to Q's
dtype as the kernel rounds them, and with rope_output rotates O back.

usage: PYTHONPATH=python varlen-check.py DIR [--small] [--torch]
"""

import argparse
import math
import sys
from pathlib import Path

import torch

import fa4.torch as fa4_torch
from fa4 import runtime

UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32",
            torch.int32: "i32"}

# (query lengths, key lengths) per batch.
BATCHES = [
    ([300, 0, 1, 77, 1000], [300, 5, 0, 513, 1100]),
    ([1100, 1, 129, 64], [1000, 1, 128, 300]),
    ([2048], [2048]),
    ([int(n) for n in torch.randint(0, 200, (40,), generator=torch.Generator()
                                    .manual_seed(3))],
     [int(n) for n in torch.randint(1, 260, (40,), generator=torch.Generator()
                                    .manual_seed(4))]),
]
SMALL_BATCHES = [([130, 0, 1, 70], [200, 3, 0, 70]), ([1, 65], [7, 64])]


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def alibi_slopes(heads):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])


def reference(q, k, v, scale, causal, window, softcap, sink, slopes):
    """One sequence in float64: q [Sq, Hq, D], k, v [Skv, Hkv, D]."""
    sq, heads, _ = q.shape
    skv = k.shape[0]
    group = heads // k.shape[1]
    qd = q.double().transpose(0, 1)
    kd = k.double().transpose(0, 1).repeat_interleave(group, 0)
    vd = v.double().transpose(0, 1).repeat_interleave(group, 0)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(sq, device=q.device).view(1, -1, 1)
    j = torch.arange(skv, device=q.device).view(1, 1, -1)
    if slopes is not None:
        s = s + slopes.double().view(-1, 1, 1) * (j - i)
    left, right = runtime.effective_window(window, causal)
    diagonal = i + skv - sq
    keep = torch.ones_like(s, dtype=torch.bool)
    if left >= 0:
        keep &= j >= diagonal - left
    if right >= 0:
        keep &= j <= diagonal + right
    s = s.masked_fill(~keep, -math.inf)
    if sink is not None:
        s = torch.cat([s, sink.double().view(-1, 1, 1).expand(heads, sq, 1)], -1)
        vd = torch.cat([vd, vd.new_zeros(heads, 1, vd.shape[2])], 1)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return (p @ vd).transpose(0, 1), lse


def prefix(lengths, slack=0):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n + slack)
    return offsets


def paged_cache(kernel, counts, g, dtype):
    """A paged K, V [pages, P, Hkv, D] holding `counts` keys per sequence
    and its page table: each sequence's pages shuffled, two spare pages of
    NaN keys and huge values named by some entries past a sequence's keys
    (the others -1); returns (k, v, page table as a list of rows)."""
    size = kernel.page_size
    max_pages = max([1] + [-(-n // size) for n in counts])
    batch = len(counts)
    pages = batch * max_pages + 2
    k, v = (torch.randn(pages, size, kernel.heads_kv, kernel.head_dim, generator=g).to(dtype)
            for _ in range(2))
    k[-2:], v[-2:] = float("nan"), 3e4
    order = torch.randperm(batch * max_pages, generator=g).tolist()
    rows = []
    for b, n in enumerate(counts):
        rows.append([order[b * max_pages + p] if p * size < n
                     else pages - 1 - (b + p) % 2 if (b + p) % 3 else -1
                     for p in range(max_pages)])
    return k, v, rows


def inputs(kernel, lengths_q, lengths_k, g):
    """Packed q, k, v (paged: the cache), the tables (as lists and on the
    device), each sequence's keys and values, sinks and captures of one
    batch."""
    dtype, device = DTYPES[kernel.element], torch.device("cuda")
    slack = 7 if kernel.seqused_k else 0
    cu_q, cu_k = prefix(lengths_q), prefix(lengths_k, slack)
    q = torch.randn(cu_q[-1], kernel.heads_q, kernel.head_dim, generator=g).to(dtype)
    table = (lambda xs: torch.tensor(xs, dtype=torch.int32, device=device))
    tables = {"cu_seqlens_q": table(cu_q), "cu_seqlens_k": table(cu_k)}
    if kernel.paged:
        counts = [n + slack for n in lengths_k]
        k, v, rows = paged_cache(kernel, counts, g, dtype)
        size = kernel.page_size
        slot = lambda b, j: (rows[b][j // size], j % size)
        # Garbage in the slots past a sequence's used keys (seqused_k).
        for b, (n, count) in enumerate(zip(lengths_k, counts)):
            for j in range(n, count):
                k[slot(b, j)], v[slot(b, j)] = float("nan"), 3e4
        tables["page_table"] = table(rows)
        keys = [(torch.stack([k[slot(b, j)] for j in range(n)]) if n else k[0, :0],
                 torch.stack([v[slot(b, j)] for j in range(n)]) if n else v[0, :0])
                for b, n in enumerate(lengths_k)]
    else:
        k, v = (torch.randn(cu_k[-1], kernel.heads_kv, kernel.head_dim, generator=g).to(dtype)
                for _ in range(2))
        if slack:
            # Garbage in the unused slots, which the kernel reads past a
            # sequence's last key and must weigh 0: NaN keys (masked), huge
            # values (finite, as the kernels require of rows a sequence does
            # not own: 0 x NaN is NaN).
            for b, n in enumerate(lengths_k):
                k[cu_k[b] + n:cu_k[b + 1]] = float("nan")
                v[cu_k[b] + n:cu_k[b + 1]] = 3e4
        keys = [(k[cu_k[b]:cu_k[b] + n], v[cu_k[b]:cu_k[b] + n])
                for b, n in enumerate(lengths_k)]
    keys = [(kb.to(device), vb.to(device)) for kb, vb in keys]
    if kernel.seqused_k:
        tables["seqused_k"] = table(lengths_k)
    sink = None
    if kernel.sink:
        sink = (math.log(max(max(lengths_k), 1)) + 2 * torch.randn(kernel.heads_q, generator=g))
        sink[3::4] = -math.inf
        sink = sink.to(device)
    captures = {}
    if kernel.captures:
        captures["capture0"] = alibi_slopes(kernel.heads_q).to(device)
    if kernel.rope:
        captures.update(rope_inputs(kernel, lengths_q, lengths_k))
    return (q.to(device), k.to(device), v.to(device), cu_q, keys, tables, sink, captures)


def rope_inputs(kernel, lengths_q, lengths_k):
    """The rope table (float32 [max Skv + 64, R] of p theta_k, theta_k =
    10000^(-2k / R): the cosines, then the sines) and the positions [Tq]
    (token i of sequence b at Skv_b - Sq_b + i, at least 0; the first past
    the table's rows, the last negative), on the GPU."""
    columns, rows = kernel.rope.columns, max(lengths_k, default=0) + 64
    theta = 10000.0 ** (-2 * torch.arange(columns // 2, dtype=torch.float64) / columns)
    angles = torch.arange(rows, dtype=torch.float64)[:, None] * theta[None, :]
    table = torch.cat((angles.cos(), angles.sin()), dim=1).to(torch.float32)
    positions = torch.tensor([max(n_k - n_q + i, 0) for n_q, n_k in zip(lengths_q, lengths_k)
                              for i in range(n_q)], dtype=torch.int32)
    if positions.numel() > 1:
        positions[0], positions[-1] = rows + 5, -7
    device = torch.device("cuda")
    return {"cos_sin": table.to(device), "positions": positions.to(device)}


def check(kernel, lengths_q, lengths_k, g):
    q, k, v, cu_q, keys, tables, sink, captures = inputs(kernel, lengths_q, lengths_k, g)
    out = torch.full_like(q, float("nan"))
    operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                "output": operand(out)}
    lse = None
    if kernel.lse:
        lse = torch.full((kernel.heads_q, q.shape[0]), float("nan"), device=q.device)
        operands["lse"] = operand(lse)
    if sink is not None:
        operands["sink"] = operand(sink)
    operands.update({name: operand(t) for name, t in {**tables, **captures}.items()})
    grid = kernel.launch(operands, stream=torch.cuda.current_stream().cuda_stream,
                         device=q.device.index)
    torch.cuda.synchronize()

    want_o = torch.full(q.shape, math.nan, dtype=torch.float64, device=q.device)
    want_lse = torch.full((kernel.heads_q, q.shape[0]), math.nan, dtype=torch.float64,
                          device=q.device)
    softcap = kernel.softcap or 0.0
    for b, (n_q, n_k) in enumerate(zip(lengths_q, lengths_k)):
        if not n_q:
            continue
        rows = slice(cu_q[b], cu_q[b] + n_q)
        q_b = q[rows]
        if kernel.rope:
            # Q rotated in float64 and rounded to its dtype, as the kernel does.
            rope = (captures["cos_sin"], captures["positions"][None, rows], kernel.rope.start)
            q_b = fa4_torch.apply_rope(q_b[None], *rope)[0]
        want_o[rows], want_lse[:, rows] = reference(
            q_b, *keys[b], kernel.scale, kernel.causal, kernel.window, softcap,
            sink, captures.get("capture0"))
        if kernel.rope and kernel.rope.output:
            want_o[rows] = fa4_torch.apply_rope(want_o[None, rows], *rope, inverse=True)[0]
    owned = ~torch.isnan(want_o[:, 0, 0])
    problems = []
    if not bool(torch.isnan(out[~owned]).all()):
        problems.append("rows no sequence owns were written")
    got = out[owned]
    if not bool(torch.isfinite(got).all()):
        problems.append(f"{int((~torch.isfinite(got)).sum())} O elements not finite")
    norm = want_o[owned].norm().item()
    relative = (got.double() - want_o[owned]).norm().item() / (norm or 1.0)
    bound = 4 * UNIT_ROUNDOFF[q.dtype]
    if not relative <= bound:
        problems.append(f"relative error {relative:.3g} > {bound:.3g}")
    text = f"grid {grid[0]}, O rel-err {relative:.2e}"
    if lse is not None:
        if not bool(torch.isnan(lse[:, ~owned]).all()):
            problems.append("LSE of rows no sequence owns was written")
        got_lse, ref_lse = lse[:, owned].double(), want_lse[:, owned]
        finite = torch.isfinite(ref_lse)
        if not bool((got_lse[~finite] == -math.inf).all()):
            problems.append("LSE not -inf where no key is seen")
        worst = ((got_lse[finite] - ref_lse[finite]).abs().nan_to_num(math.inf).max().item()
                 if finite.any() else 0.0)
        lse_bound = 1e-3 + softcap * 2.0 ** -11
        if not worst <= lse_bound:
            problems.append(f"LSE error {worst:.3g} > {lse_bound:.3g}")
        text += f", LSE max-err {worst:.2e}"
    return problems, text, (q, k, v, tables, sink, out, lse, captures)


def check_torch(kernel, directory, launched):
    """fa4.torch.attention_varlen and flash_attn_varlen_func on the batch
    `launched` (the direct launch's inputs and results) give the same bits."""
    import fa4.torch
    from fa4 import flash_attn_varlen_func
    q, k, v, tables, sink, out, lse, captures = launched
    cu_q, cu_k = tables["cu_seqlens_q"], tables["cu_seqlens_k"]
    used, pages = tables.get("seqused_k"), tables.get("page_table")
    options = dict(causal=kernel.causal, kernel_dir=str(directory))
    if kernel.rope:
        options.update(rope_cos_sin=captures["cos_sin"], rope_positions=captures["positions"],
                       rope_start=kernel.rope.start, rope_output=kernel.rope.output)
    window = kernel.window
    got = fa4.torch.attention_varlen(q, k, v, cu_q, cu_k, seqused_k=used, window=window,
                                     softcap=kernel.softcap or 0.0, sink=sink,
                                     return_lse=kernel.lse, page_table=pages, **options)
    got_o, got_lse = got if kernel.lse else (got, None)
    lengths = (cu_q[1:] - cu_q[:-1]).tolist()
    owned = torch.zeros(q.shape[0], dtype=torch.bool, device=q.device)
    for b, n in enumerate(lengths):
        owned[cu_q[b]:cu_q[b] + n] = True
    same = torch.equal(got_o[owned], out[owned])
    if lse is not None:
        same = same and torch.equal(got_lse[:, owned], lse[:, owned])
    fa = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths), 0, causal=kernel.causal,
                                window_size=window, softcap=kernel.softcap or 0.0,
                                return_attn_probs=kernel.lse, block_table=pages,
                                seqused_k=used, sink=sink, kernel_dir=str(directory),
                                **{name: value for name, value in options.items()
                                   if name.startswith("rope")})
    fa_o = fa[0] if kernel.lse else fa
    same_fa = torch.equal(fa_o[owned], out[owned])
    return same, same_fa


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--torch", action="store_true")
    args = parser.parse_args()
    directory = runtime.KernelDirectory(args.directory)
    capability = torch.cuda.get_device_capability()
    g = torch.Generator().manual_seed(11)
    failed = total = 0
    for kernel in directory:
        if not kernel.varlen or not kernel.runs_on(capability):
            continue
        if kernel.captures and not kernel.name.startswith("alibi_varlen"):
            print(f"SKIP {kernel.name}: its regions have no reference here")
            continue
        launched = None
        for lengths_q, lengths_k in SMALL_BATCHES if args.small else BATCHES:
            problems, text, launched = check(kernel, lengths_q, lengths_k, g)
            total += 1
            failed += bool(problems)
            print(f"{'FAIL' if problems else 'PASS'} {kernel.name} B={len(lengths_q)} "
                  f"Tq={sum(lengths_q)} Tk={sum(lengths_k)}: {text}"
                  f"{': ' + '; '.join(problems) if problems else ''}", flush=True)
        if args.torch and not kernel.captures and launched is not None:
            same, same_fa = check_torch(kernel, args.directory, launched)
            total += 1
            failed += not (same and same_fa)
            print(f"{'PASS' if same and same_fa else 'FAIL'} {kernel.name} through "
                  f"fa4.torch.attention_varlen: {'same' if same else 'DIFFERENT'}, "
                  f"flash_attn_varlen_func: {'same' if same_fa else 'DIFFERENT'}")
    if not total:
        print(f"no varlen kernel of {args.directory} runs on this GPU")
        return 1
    print(f"{total - failed}/{total} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
