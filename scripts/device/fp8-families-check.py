#!/usr/bin/env python3
"""Checks the FP8 (e4m3) kernels of DIR that read a KV cache (paged or
dense, split or not) or packed sequences on this GPU against float64,
within the project's FP8 tolerance (fa4.torch.fp8_tolerance), batch by
batch (sequence by sequence).

Inputs are random e4m3 (standard normal, rounded), V key-major as the
kernels read it (pages over [pages, Hkv, Dv, P]), descales random in
[0.5, 2) per (batch, KV head). Caches take lengths 0, 1, a page less one,
a page and one more, not a multiple of a page, the whole capacity (Sq 1, 4
and 200), with pages from a shuffled pool whose unused entries point at a
NaN page. O and the LSE are NaN-poisoned before the launch
(fa4.torch._run's fill). A batch passes when every O element and LSE entry
of its rows is within the bound (elementwise) and finite where the
reference is. Each kernel also runs once through
fa4.torch.attention_with_kvcache (its num_splits, from a directory of the
kernel alone: scripts/device/alone.py) and must agree with the direct
launch bit for bit.

Packed sequences take query lengths 1, 130, 0, 77, 200, 3 over key lengths
5, 300, 17, 0, 333, 1 (starts that are not multiples of 16; seqused_k, where
the kernel takes it, 5, 250, 17, 0, 333, 1), and five more K and V rows
after the last sequence that hold NaN (owned by none: never read as keys);
V in the token layout [Tk, Hkv, Dv], which fa4.torch copies per sequence
into the kernel's layout. The public fa4.torch.attention_varlen must agree
with the direct launch bit for bit.

usage: PYTHONPATH=python fp8-families-check.py DIR
"""

import argparse
import sys

import torch

import fa4.torch as fa4_torch
from alone import kernel_alone
from fa4 import runtime

FP8 = torch.float8_e4m3fn


def e4m3(*shape):
    return torch.randn(*shape, device="cuda").to(FP8)


def descales(batch, heads_kv, g):
    return [torch.rand(batch, heads_kv, device="cuda", generator=g) * 1.5 + 0.5
            for _ in range(3)]


def worst_share(got, ref, bound):
    """The largest |got - ref| / bound (0 where both are 0 or -inf alike);
    inf where got is not finite but ref is, or a bound of 0 is exceeded."""
    got, ref, bound = got.double(), ref.double(), bound.double()
    error = (got - ref).abs().masked_fill(got == ref, 0.0)
    if bool((~torch.isfinite(got) & torch.isfinite(ref)).any()):
        return float("inf")
    share = torch.where(bound > 0, error / bound.clamp_min(1e-300),
                        torch.where(error > 0, torch.inf, 0.0))
    return float(share.max()) if share.numel() else 0.0


def reference_and_bound(kernel, q, k, v, d):
    """The float64 O and LSE of one dense problem and their FP8 bounds."""
    ref_o, ref_lse = fa4_torch.reference(
        q, k, v, causal=kernel.causal, dtype=torch.float64, window=kernel.window,
        q_descale=d[0], k_descale=d[1], v_descale=d[2])
    bound_o, bound_lse = fa4_torch.fp8_tolerance(
        q, k, v, causal=kernel.causal, window=kernel.window, q_descale=d[0],
        k_descale=d[1], v_descale=d[2], out_dtype=fa4_torch._DTYPES[kernel.output_element])
    return ref_o, ref_lse, bound_o, bound_lse


def check_cache(kernel, g):
    hq, hkv, dim, dim_v = kernel.heads_q, kernel.heads_kv, kernel.head_dim, kernel.head_dim_v
    page = kernel.page_size or 128
    max_pages = 6
    capacity = page * max_pages
    lengths = [0, 1, page - 1, page + 1, 3 * page + 37, capacity, 2 * page]
    batch = len(lengths)
    results = []
    for sq in (1, 4, 200):
        q = e4m3(batch, sq, hq, dim)
        d = descales(batch, hkv, g)
        if kernel.paged:
            pool = batch * max_pages + 3
            k_pages = e4m3(pool, page, hkv, dim)
            v_pages = fa4_torch._key_major_copy(e4m3(pool, page, hkv, dim_v))
            order = torch.randperm(pool - 3, generator=torch.Generator().manual_seed(7))
            table = order[:batch * max_pages].view(batch, max_pages).to(torch.int32).cuda()
            # Entries past a batch's pages point at a NaN page (never read).
            for b, n in enumerate(lengths):
                table[b, -(-n // page):] = pool - 1
            k_pages[pool - 1] = torch.full((page, hkv, dim), float("nan"),
                                           device="cuda").to(FP8)
            k, v = k_pages, v_pages
            cache_k = k_pages[table.long()].flatten(1, 2)
            cache_v = v_pages[table.long()].flatten(1, 2)
        else:
            k = e4m3(batch, capacity, hkv, dim)
            v = fa4_torch._key_major_copy(e4m3(batch, capacity, hkv, dim_v))
            table, cache_k, cache_v = None, k, v
        used = torch.tensor(lengths, dtype=torch.int32, device="cuda")
        out, lse = fa4_torch._run(kernel, q, k, v, True, fill=float("nan"),
                                  cache=(used, table), descales=d)
        for b, n in enumerate(lengths):
            db = [t[b:b + 1] for t in d]
            if n == 0:
                ok = bool((out[b] == 0).all()) and bool(torch.isinf(lse[b]).all())
                results.append((f"Sq={sq} batch {b} no keys", 0.0 if ok else float("inf"),
                                0.0))
                continue
            ref_o, ref_lse, bound_o, bound_lse = reference_and_bound(
                kernel, q[b:b + 1], cache_k[b:b + 1, :n], cache_v[b:b + 1, :n], db)
            results.append((f"Sq={sq} batch {b} Skv={n}",
                            worst_share(out[b:b + 1], ref_o, bound_o),
                            worst_share(lse[b:b + 1], ref_lse, bound_lse)))
        with kernel_alone(kernel) as alone:
            public = fa4_torch.attention_with_kvcache(
                q, k, v, cache_seqlens=used, page_table=table, causal=kernel.causal,
                window=kernel.window, return_lse=True, kernel_dir=alone,
                num_splits=kernel.kv_splits, q_descale=d[0], k_descale=d[1],
                v_descale=d[2])
        same = (torch.equal(public[0].view(torch.int16), out.view(torch.int16))
                and torch.equal(public[1], lse))
        results.append((f"Sq={sq} attention_with_kvcache agrees", 0.0 if same else
                        float("inf"), 0.0))
    return results


def check_varlen(kernel, g):
    hq, hkv, dim, dim_v = kernel.heads_q, kernel.heads_kv, kernel.head_dim, kernel.head_dim_v
    lengths_q = [1, 130, 0, 77, 200, 3]
    lengths_k = [5, 300, 17, 0, 333, 1]
    used_k = [5, 250, 17, 0, 333, 1] if kernel.seqused_k else lengths_k
    def bounds(lengths):
        return torch.tensor([0] + lengths, device="cuda").cumsum(0).to(torch.int32)
    cu_q, cu_k = bounds(lengths_q), bounds(lengths_k)
    tail = 5
    q = e4m3(sum(lengths_q), hq, dim)
    k, v = e4m3(sum(lengths_k) + tail, hkv, dim), e4m3(sum(lengths_k) + tail, hkv, dim_v)
    nan = torch.full((tail, hkv, dim), float("nan"), device="cuda").to(FP8)
    k[-tail:], v[-tail:] = nan, nan[..., :dim_v]
    d = descales(len(lengths_q), hkv, g)
    used = (torch.tensor(used_k, dtype=torch.int32, device="cuda") if kernel.seqused_k
            else None)
    tables = (cu_q, cu_k, used)
    out, lse = fa4_torch._run(kernel, q, k, v, True, fill=float("nan"), tables=tables,
                              descales=d)
    results = []
    for b, (sq, n) in enumerate(zip(lengths_q, used_k)):
        if sq == 0:
            continue
        q0, k0 = int(cu_q[b]), int(cu_k[b])
        rows = slice(q0, q0 + sq)
        db = [t[b:b + 1] for t in d]
        if n == 0:
            ok = bool((out[rows] == 0).all()) and bool(torch.isinf(lse[:, rows]).all())
            results.append((f"sequence {b} no keys", 0.0 if ok else float("inf"), 0.0))
            continue
        ref_o, ref_lse, bound_o, bound_lse = reference_and_bound(
            kernel, q[None, rows], k[None, k0:k0 + n], v[None, k0:k0 + n], db)
        results.append((f"sequence {b} Sq={sq} Skv={n}",
                        worst_share(out[None, rows], ref_o, bound_o),
                        worst_share(lse[None, :, rows], ref_lse, bound_lse)))
    public = fa4_torch.attention_varlen(
        q, k, v, cu_q, cu_k, seqused_k=used, causal=kernel.causal, window=kernel.window,
        return_lse=True, kernel_dir=ARGS.dir, q_descale=d[0], k_descale=d[1],
        v_descale=d[2], out_dtype=fa4_torch._DTYPES[kernel.output_element])
    owned = slice(0, sum(lengths_q))
    same = (torch.equal(public[0][owned].view(torch.int16), out[owned].view(torch.int16))
            and torch.equal(public[1][:, owned], lse[:, owned]))
    results.append(("attention_varlen agrees", 0.0 if same else float("inf"), 0.0))
    return results


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    ARGS = parser.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    torch.manual_seed(0)
    failures = total = 0
    for kernel in runtime.KernelDirectory(ARGS.dir):
        if kernel.element != "e4m3" or not (kernel.kvcache or kernel.varlen):
            continue
        results = check_varlen(kernel, g) if kernel.varlen else check_cache(kernel, g)
        bad = [r for r in results if r[1] > 1.0 or r[2] > 1.0]
        total += 1
        failures += bool(bad)
        print(f"{'FAIL' if bad else 'ok'}   {kernel.name}: {len(results)} cases, worst O "
              f"{max(r[1] for r in results):.2f} LSE {max(r[2] for r in results):.2f} of "
              f"the bound")
        for label, o, l in bad[:5]:
            print(f"       {label}: O {o:.3g} LSE {l:.3g}")
    print(f"{total - failures}/{total} kernels pass")
    return 1 if failures or not total else 0


if __name__ == "__main__":
    sys.exit(main())
