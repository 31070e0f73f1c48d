#!/usr/bin/env python3
"""fa4.torch.attention on real PyTorch: layouts and autograd.

For every kernel of a kernel directory that runs on this GPU:
  - q, k, v as [B, S, H, D] views of [B, H, S, D] tensors (transposed, not
    contiguous) give bit-identical O and LSE to their contiguous copies,
    and match a float64 reference (4 unit roundoffs, as attention-check.py);
  - a view whose sequence stride is not a multiple of 16 bytes is refused
    with a ValueError naming the stride;
  - inputs that require grad raise RuntimeError in grad mode, and run
    under torch.no_grad().
Exits 1 on any failure.

usage: PYTHONPATH=python torch-layout-check.py DIR
"""

import sys

import torch

import fa4.torch as fa4_torch

UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def main(path):
    device = torch.device("cuda")
    capability = torch.cuda.get_device_capability(device)
    directory = fa4_torch.kernel_directory(path)
    failures = ran = 0
    generator = torch.Generator(device=device).manual_seed(7)

    def report(ok, line):
        nonlocal failures
        failures += not ok
        print(("PASS " if ok else "FAIL ") + line)

    for kernel in directory:
        if not kernel.runs_on(capability):
            continue
        if kernel.kvcache or kernel.rope:
            # Its caches and tables, its rope table: kvcache-check.py.
            print(f"skip {kernel.name}: {'a KV cache' if kernel.kvcache else 'a rope'}")
            continue
        ran += 1
        dtype = next(t for t, e in fa4_torch._ELEMENTS.items() if e == kernel.element)
        heads_q = kernel.heads_q if kernel.heads_q != -1 else 4
        heads_kv = kernel.heads_kv if kernel.heads_kv != -1 else heads_q
        batch, seq_q, seq_kv, d = 2, 777, 1029, kernel.head_dim
        q, k, v = (torch.randn((batch, h, s, d), dtype=dtype, device=device,
                               generator=generator).transpose(1, 2)
                   for h, s in ((heads_q, seq_q), (heads_kv, seq_kv), (heads_kv, seq_kv)))
        args = dict(causal=kernel.causal, scale=kernel.scale, return_lse=kernel.lse,
                    kernel_dir=path)
        strided = fa4_torch.attention(q, k, v, **args)
        dense = fa4_torch.attention(q.contiguous(), k.contiguous(), v.contiguous(), **args)
        torch.cuda.synchronize()
        strided = strided if kernel.lse else (strided, None)
        dense = dense if kernel.lse else (dense, None)
        same = torch.equal(strided[0], dense[0]) and (
            not kernel.lse or torch.equal(strided[1], dense[1]))
        want_o, _ = fa4_torch.reference(q, k, v, kernel.causal, kernel.scale,
                                        dtype=torch.float64)
        error = ((strided[0].double() - want_o).norm() / want_o.norm()).item()
        limit = 4 * UNIT_ROUNDOFF[dtype]
        report(same and error <= limit,
               f"{kernel.name} transposed views: bit-identical to contiguous {same}, "
               f"||O - ref|| / ||ref|| {error:.3g} (limit {limit:.3g})")

        # Head dim padded by one element: the sequence stride is odd bytes.
        padded = torch.randn((batch, seq_q, heads_q, d + 1), dtype=dtype, device=device,
                             generator=generator)[..., :d]
        try:
            fa4_torch.attention(padded, k, v, **args)
            report(False, f"{kernel.name} unaligned stride: accepted")
        except ValueError as err:
            report("multiples of 16" in str(err), f"{kernel.name} unaligned stride: {err}")

        needs_grad = q.detach().clone().requires_grad_(True)
        try:
            fa4_torch.attention(needs_grad, k, v, **args)
            report(False, f"{kernel.name} requires grad: accepted")
        except RuntimeError as err:
            report("no backward" in str(err), f"{kernel.name} requires grad: {err}")
        with torch.no_grad():
            out = fa4_torch.attention(needs_grad, k, v, **args)
        out = out[0] if kernel.lse else out
        report(torch.equal(out, strided[0]), f"{kernel.name} requires grad under no_grad: "
               "same O")
    if not ran:
        print(f"no kernel of {path} runs on this GPU")
        return 1
    print(f"{ran} kernels, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
