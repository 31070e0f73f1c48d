#!/usr/bin/env python3
"""Checks the KV-cache kernels of DIR (dense batches reading a cache: paged
K/V through a page table, or a dense cache with seqused_k) on this GPU
against a float64 PyTorch reference computed batch by batch through the
page table (fa4.torch.reference_kvcache).

Every manifest of DIR with a page table, or with seqused_k and a dense
batch, runs over decode shapes (Sq 1, 4 and 8 new tokens) and prefill
against a cache (Sq below the cache lengths): ragged lengths of 0 and 1
keys, one page less one, one page, one more, lengths that are not a
multiple of the page size, a full cache, and lengths the kernel must clamp
(past the capacity, negative); a length below Sq leaves causal rows that
see no key. Paged caches take their pages from a random permutation of the
cache; the page table's entries past a batch's pages hold garbage (-1,
huge indexes, the page count) that must never be read; the slots past a
batch's last key in its last page hold NaN keys and huge finite values that
must weigh 0 (0 x NaN is NaN, so values there must be finite), and pages
no batch holds are NaN throughout (never read). A dense cache's slots past
a batch's length are filled the same way. A paged kernel without seqused_k
gives every batch max_pages * page_size keys. O and LSE are NaN-poisoned
before the launch. Passing means: every O element finite and
||O - ref||_F / ||ref||_F within 4 unit roundoffs of the dtype; |LSE - ref|
<= 1e-3 (plus softcap * 2^-11 with a softcap: tanh.approx) where finite,
-inf where the reference is, every LSE written. These are varlen-check.py's
tolerances.

Kernels with a fused rotary embedding (a manifest `rope` entry: a KV
cache's, or a plain dense batch's, which runs the cases of a cache without
seqused_k over a dense K/V) also take a cos | sin table of real angles
(theta_k = 10000^(-2k/R), P = capacity + 64 rows, float32) and each query's
position, bottom-right aligned to its batch's keys (len_b - Sq + i,
clamped at 0), a few of them past P or negative (the kernel clamps them
into the table); the reference rotates q in float64, rounds it to q's
dtype, and with rope_output rotates O back (fa4.torch.reference_kvcache's
rope arguments). The keys are taken as already rotated.

Split-KV kernels (compiled with kv-splits=N, e.g. as compile-kernels.py
variants) run the same cases with their workspace. With --torch, each
kernel also runs through fa4.torch.attention_with_kvcache and
fa4.flash_attn_with_kvcache (num_splits the kernel's) on the last batch
checked, from a directory holding that kernel alone (DIR's variants of one
problem, e.g. one Q stage, would give the same problem another kernel: the
entry points prefer one Q stage for a decode-sized query on sm_90a), and
must agree with the direct launch bit for bit.

usage: PYTHONPATH=python kvcache-check.py DIR [--small] [--torch]
"""

import argparse
import math
import sys

import torch

import fa4.torch as fa4_torch
from alone import kernel_alone
from fa4 import runtime

UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32",
            torch.int32: "i32"}
# Page-table entries no batch's keys reach: never read.
GARBAGE = [-1, 2 ** 31 - 1, -(2 ** 31)]


def operand(t):
    return runtime.Operand(t.data_ptr(), tuple(t.shape), ELEMENTS[t.dtype], tuple(t.stride()))


def cases(kernel, capacity, page, small, g):
    """(label, Sq, lengths per batch) of a kernel whose batches hold
    `capacity` keys; `page` is the page size (a nominal one for a dense
    cache). Without seqused_k every batch uses the whole capacity."""
    if not kernel.seqused_k:
        runs = [("decode", 1, 3), ("decode", 8, 5), ("prefill", min(300, capacity // 2), 2)]
        if small:
            runs = runs[:2]
        return [(label, seq_q, [capacity] * batch) for label, seq_q, batch in runs]
    ragged = [0, 1, page - 1, page, page + 1, 3 * page + 5, capacity - 1, capacity,
              capacity + 100, -5]
    random = [int(n) for n in torch.randint(0, capacity + 1, (16,), generator=g)]
    seq_q = min(300, capacity // 3)
    prefill = [seq_q, seq_q + 1, seq_q + 2 * page + 3, 2 * seq_q + 7, capacity]
    runs = [("decode", 1, ragged), ("decode", 4, [1, 3, 4, 5, 2 * page + 7, capacity]),
            ("decode", 8, random), ("prefill", seq_q, prefill)]
    return runs[:2] if small else runs


def rope_inputs(kernel, seq_q, clamped, capacity):
    """The rope table (float32 [capacity + 64, R]: row p the cosines, then
    the sines, of p theta_k, theta_k = 10000^(-2k / R)) and the positions
    (int32 [B, Sq]: row i of batch b at clamped[b] - Sq + i, at least 0;
    a few past the table's rows and negative, which the kernel clamps), on
    the GPU; (None, None) for a kernel without rope."""
    if not kernel.rope:
        return None, None
    columns, rows = kernel.rope.columns, capacity + 64
    theta = 10000.0 ** (-2 * torch.arange(columns // 2, dtype=torch.float64) / columns)
    angles = torch.arange(rows, dtype=torch.float64)[:, None] * theta[None, :]
    table = torch.cat((angles.cos(), angles.sin()), dim=1).to(torch.float32)
    positions = torch.tensor([[max(n - seq_q + i, 0) for i in range(seq_q)] for n in clamped],
                             dtype=torch.int32).reshape(len(clamped), seq_q)
    if positions.numel():
        positions[0, -1] = rows + 5
        positions[-1, 0] = -7
        positions[len(clamped) // 2, seq_q // 2] = 2 ** 31 - 1
    device = torch.device("cuda")
    return table.to(device), positions.to(device)


def inputs(kernel, seq_q, lengths, capacity, max_pages, g):
    """q, the caches, seqused_k (or None), the page table (or None), the
    sinks and the rope table and positions (None without) of one batch,
    garbage where no key is."""
    dtype, device = DTYPES[kernel.element], torch.device("cuda")
    batch = len(lengths)
    clamped = [min(max(n, 0), capacity) for n in lengths]
    q = torch.randn(batch, seq_q, kernel.heads_q, kernel.head_dim, generator=g).to(dtype)
    table = None
    if kernel.paged:
        page = kernel.page_size
        used = [-(-n // page) for n in clamped]
        spare = 3
        pages = sum(used) + spare
        k = torch.randn(pages, page, kernel.heads_kv, kernel.head_dim, generator=g).to(dtype)
        v = torch.randn(pages, page, kernel.heads_kv, kernel.head_dim_v,
                        generator=g).to(dtype)
        order = torch.randperm(pages, generator=g).tolist()
        table = torch.empty(batch, max_pages, dtype=torch.int32)
        at = 0
        for b, n in enumerate(clamped):
            mine = order[at:at + used[b]]
            at += used[b]
            table[b, :used[b]] = torch.tensor(mine, dtype=torch.int32)
            for j in range(used[b], max_pages):
                table[b, j] = (GARBAGE + [pages])[(b + j) % (len(GARBAGE) + 1)]
            if n % page:
                # Read (the last page's KV block) and masked: NaN keys,
                # finite values.
                k[mine[-1], n % page:] = float("nan")
                v[mine[-1], n % page:] = 3e4
        for p in order[at:]:
            # No batch holds it: never read.
            k[p] = float("nan")
            v[p] = float("nan")
        table = table.to(device)
    else:
        k = torch.randn(batch, capacity, kernel.heads_kv, kernel.head_dim,
                        generator=g).to(dtype)
        v = torch.randn(batch, capacity, kernel.heads_kv, kernel.head_dim_v,
                        generator=g).to(dtype)
        for b, n in enumerate(clamped):
            k[b, n:] = float("nan")
            v[b, n:] = 3e4
    used = (torch.tensor(lengths, dtype=torch.int32, device=device) if kernel.seqused_k
            else None)
    sink = None
    if kernel.sink:
        sink = math.log(max(max(clamped), 1)) + 2 * torch.randn(kernel.heads_q, generator=g)
        sink[3::4] = -math.inf
        sink = sink.to(device)
    cos_sin, positions = rope_inputs(kernel, seq_q, clamped, capacity)
    return (q.to(device), k.to(device), v.to(device), used, table, sink,
            None if cos_sin is None else (cos_sin, positions))


def check(kernel, seq_q, lengths, capacity, max_pages, g):
    q, k, v, used, table, sink, rope = inputs(kernel, seq_q, lengths, capacity, max_pages, g)
    batch = q.shape[0]
    out = torch.full((batch, seq_q, kernel.heads_q, kernel.head_dim_v), float("nan"),
                     dtype=q.dtype, device=q.device)
    operands = {"query": operand(q), "key": operand(k), "value": operand(v),
                "output": operand(out)}
    lse = None
    if kernel.lse:
        lse = torch.full((batch, kernel.heads_q, seq_q), float("nan"), device=q.device)
        operands["lse"] = operand(lse)
    if sink is not None:
        operands["sink"] = operand(sink)
    if used is not None:
        operands["seqused_k"] = operand(used)
    if table is not None:
        operands["page_table"] = operand(table)
    if rope is not None:
        operands["cos_sin"], operands["positions"] = (operand(t) for t in rope)
    grid = kernel.launch(operands, stream=torch.cuda.current_stream().cuda_stream,
                         device=q.device.index)
    torch.cuda.synchronize()

    softcap = kernel.softcap or 0.0
    want_o, want_lse = fa4_torch.reference_kvcache(
        q, k, v, used, table, kernel.causal, kernel.scale, dtype=torch.float64,
        window=kernel.window, softcap=softcap, sink=sink, **rope_arguments(kernel, rope))
    problems = []
    if not bool(torch.isfinite(out).all()):
        problems.append(f"{int((~torch.isfinite(out)).sum())} O elements not finite")
    norm = want_o.norm().item()
    relative = (out.double() - want_o).norm().item() / (norm or 1.0)
    bound = 4 * UNIT_ROUNDOFF[q.dtype]
    if not relative <= bound:
        problems.append(f"relative error {relative:.3g} > {bound:.3g}")
    text = f"grid {grid[0]}, O rel-err {relative:.2e}"
    if rope is not None:
        text += f", rope P={rope[0].shape[0]}"
    if lse is not None:
        if bool(torch.isnan(lse).any()):
            problems.append(f"{int(torch.isnan(lse).sum())} LSE elements NaN (not written, "
                            "or NaN)")
        got_lse = lse.double()
        finite = torch.isfinite(want_lse)
        if not bool((got_lse[~finite] == -math.inf).all()):
            problems.append("LSE not -inf where no key is seen")
        worst = ((got_lse[finite] - want_lse[finite]).abs().nan_to_num(math.inf).max().item()
                 if finite.any() else 0.0)
        lse_bound = 1e-3 + softcap * 2.0 ** -11
        if not worst <= lse_bound:
            problems.append(f"LSE error {worst:.3g} > {lse_bound:.3g}")
        text += f", LSE max-err {worst:.2e}"
    return problems, text, (q, k, v, used, table, sink, out, lse, rope)


def rope_arguments(kernel, rope):
    """The rope keyword arguments of fa4.torch's entry points and
    references for the (table, positions) of a kernel with rope; none
    without."""
    if rope is None:
        return {}
    return dict(rope_cos_sin=rope[0], rope_positions=rope[1], rope_start=kernel.rope.start,
                rope_output=kernel.rope.output)


def check_torch(kernel, directory, launched):
    """fa4.torch.attention_with_kvcache and flash_attn_with_kvcache on the
    batch `launched` (the direct launch's inputs and results), with the
    kernels of `directory`, give the same bits."""
    from fa4 import flash_attn_with_kvcache
    q, k, v, used, table, sink, out, lse, rope = launched
    softcap = kernel.softcap or 0.0
    rope = rope_arguments(kernel, rope)
    got = fa4_torch.attention_with_kvcache(q, k, v, cache_seqlens=used, page_table=table,
                                           causal=kernel.causal, window=kernel.window,
                                           softcap=softcap, sink=sink, return_lse=kernel.lse,
                                           kernel_dir=str(directory),
                                           num_splits=kernel.kv_splits, **rope)
    got_o, got_lse = got if kernel.lse else (got, None)
    same = torch.equal(got_o, out) and (lse is None or torch.equal(got_lse, lse))
    fa = flash_attn_with_kvcache(q, k, v, cache_seqlens=used, block_table=table,
                                 causal=kernel.causal, window_size=kernel.window,
                                 softcap=softcap, return_softmax_lse=kernel.lse, sink=sink,
                                 kernel_dir=str(directory), num_splits=kernel.kv_splits,
                                 **rope)
    fa_o, fa_lse = fa if kernel.lse else (fa, None)
    same_fa = torch.equal(fa_o, out) and (lse is None or torch.equal(fa_lse, lse))
    return same, same_fa


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--torch", action="store_true")
    args = parser.parse_args()
    directory = runtime.KernelDirectory(args.directory)
    capability = torch.cuda.get_device_capability()
    g = torch.Generator().manual_seed(13)
    failed = total = 0
    for kernel in directory:
        # A rope kernel of a plain dense batch runs as a cache without
        # seqused_k (every batch its whole K/V).
        if not (kernel.kvcache or kernel.rope) or not kernel.runs_on(capability):
            continue
        if kernel.captures:
            print(f"SKIP {kernel.name}: its regions have no reference here")
            continue
        keys = 700 if args.small else 2100
        if kernel.paged:
            page = kernel.page_size
            max_pages = -(-keys // page)
            capacity = max_pages * page
        else:
            page, max_pages, capacity = 64, None, keys
        launched = None
        for label, seq_q, lengths in cases(kernel, capacity, page, args.small, g):
            problems, text, launched = check(kernel, seq_q, lengths, capacity, max_pages, g)
            total += 1
            failed += bool(problems)
            shown = lengths if len(lengths) <= 10 else f"{len(lengths)} random"
            print(f"{'FAIL' if problems else 'PASS'} {kernel.name} {label} B={len(lengths)} "
                  f"Sq={seq_q} capacity={capacity} lengths={shown}: {text}"
                  f"{': ' + '; '.join(problems) if problems else ''}", flush=True)
        if args.torch and launched is not None:
            with kernel_alone(kernel) as alone:
                same, same_fa = check_torch(kernel, alone, launched)
            total += 1
            failed += not (same and same_fa)
            print(f"{'PASS' if same and same_fa else 'FAIL'} {kernel.name} through "
                  f"fa4.torch.attention_with_kvcache: {'same' if same else 'DIFFERENT'}, "
                  f"flash_attn_with_kvcache: {'same' if same_fa else 'DIFFERENT'}")
    if not total:
        print(f"no KV-cache or rope kernel of {args.directory} runs on this GPU")
        return 1
    print(f"{total - failed}/{total} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
