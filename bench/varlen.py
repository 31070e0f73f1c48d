#!/usr/bin/env python3
"""Times packed sequences of variable lengths (fa4.torch.attention_varlen)
against the same tokens run by fa4's dense kernel, and against the
anchors that run packed sequences here, in one run.

For each batch of mixed lengths (bf16, head dim 128, 16 heads, causal or
not) the table gives TFLOP/s counting only each sequence's own work:
- varlen: fa4's packed kernel on the batch;
- padded: fa4's dense kernel on the batch padded to its longest sequence
  (the work a dense-only library does), and the ratio varlen / padded;
- equal: fa4's dense kernel on the same number of tokens in sequences of
  the batch's mean length, which has no padding (the ratio says what the
  packing itself costs);
- paged: fa4's packed kernel with K and V in a paged cache (pages of 64
  keys in shuffled order, read through a page table), and the ratio
  paged / varlen (what reading through the pages costs);
- torch varlen: PyTorch's `torch.nn.attention.varlen.varlen_attn` (its
  FlashAttention varlen kernel) where this PyTorch has it (causal as its
  window (-1, 0)); cuDNN through SDPA on the padded batch.
Medians of --iters calls after --warmup, CUDA events. DIR holds the
kernels of `compile-kernels.py --set bench --set varlen-bench` (the
paged column is "-" where it has no paged kernel).

usage: PYTHONPATH=python python3 bench/varlen.py DIR [--iters 30]
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms, software  # noqa: E402

import fa4.torch as fa4_torch  # noqa: E402

HEAD_DIM, HEADS, PAGE = 128, 16, 64


def pairs(length, causal):
    return length * (length + 1) // 2 if causal else length * length


def tflops(work, ms):
    return 4 * HEAD_DIM * HEADS * work / ms / 1e9


def batches(generator):
    """(label, lengths): mixed lengths of about 16k tokens in all."""
    def draw(count, low, high):
        return [int(n) for n in torch.randint(low, high + 1, (count,), generator=generator)]
    return [("8 x U[512, 3584]", draw(8, 512, 3584)),
            ("32 x U[64, 960]", draw(32, 64, 960)),
            ("4 x U[1024, 7168]", draw(4, 1024, 7168)),
            ("2 long + 30 short", [6144, 6144] + draw(30, 16, 256))]


def torch_varlen():
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    return varlen_attn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    varlen_attn = torch_varlen()
    print(f"{software(device)}, torch varlen_attn {'yes' if varlen_attn else 'no'}")
    generator = torch.Generator().manual_seed(0)

    def time(call):
        return median_ms(call, args.warmup, args.iters)

    def randn(*shape):
        return torch.randn(shape, dtype=torch.bfloat16, device=device)

    print("\n| causal | batch | tokens | varlen TFLOP/s | padded | varlen / padded | "
          "equal | varlen / equal | paged | paged / varlen | torch varlen_attn | "
          "cuDNN padded |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for causal in (False, True):
        for label, lengths in batches(generator):
            total, longest = sum(lengths), max(lengths)
            work = sum(pairs(n, causal) for n in lengths)
            offsets = torch.tensor([0] + lengths, device=device).cumsum(0).int()
            q, k, v = randn(total, HEADS, HEAD_DIM), randn(total, HEADS, HEAD_DIM), \
                randn(total, HEADS, HEAD_DIM)
            varlen = tflops(work, time(lambda: fa4_torch.attention_varlen(
                q, k, v, offsets, offsets, causal=causal, kernel_dir=args.directory)))

            # The same keys in a paged cache: each sequence's pages drawn
            # from a shuffled pool.
            pages_of = [-(-n // PAGE) for n in lengths]
            order = torch.randperm(sum(pages_of), generator=generator).tolist()
            table = torch.zeros(len(lengths), max(pages_of), dtype=torch.int32)
            kc, vc = (randn(sum(pages_of), PAGE, HEADS, HEAD_DIM) for _ in range(2))
            for b, count in enumerate(pages_of):
                table[b, :count] = torch.tensor(order[:count])
                order = order[count:]
            table = table.to(device)
            try:
                paged = tflops(work, time(lambda: fa4_torch.attention_varlen(
                    q, kc, vc, offsets, offsets, causal=causal, page_table=table,
                    kernel_dir=args.directory)))
                paged_text = f"{paged:.0f} | {paged / varlen:.2f}"
            except (LookupError, RuntimeError):  # no paged kernel at hand
                paged_text = "- | -"
            del kc, vc

            qp, kp, vp = (randn(len(lengths), longest, HEADS, HEAD_DIM) for _ in range(3))
            padded = tflops(work, time(lambda: fa4_torch.attention(
                qp, kp, vp, causal=causal, kernel_dir=args.directory)))
            qt, kt, vt = (t.transpose(1, 2) for t in (qp, kp, vp))

            def cudnn():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
            cudnn_padded = tflops(work, time(cudnn))

            # The same tokens as equal sequences of the mean length.
            mean = max(total // len(lengths) // 128 * 128, 128)
            count = max(total // mean, 1)
            qe, ke, ve = (randn(count, mean, HEADS, HEAD_DIM) for _ in range(3))
            equal = tflops(count * pairs(mean, causal), time(lambda: fa4_torch.attention(
                qe, ke, ve, causal=causal, kernel_dir=args.directory)))

            anchor = "-"
            if varlen_attn is not None:
                try:
                    # Causal is the window (-1, 0) there.
                    window = (-1, 0) if causal else (-1, -1)
                    anchor = f"{tflops(work, time(lambda: varlen_attn(q, k, v, offsets, offsets, longest, longest, window_size=window))):.0f}"  # noqa: E501
                except Exception as err:  # an anchor that cannot run this case
                    anchor = f"n/a ({type(err).__name__})"
            print(f"| {'yes' if causal else 'no'} | {label} | {total} | {varlen:.0f} | "
                  f"{padded:.0f} | {varlen / padded:.2f} | {equal:.0f} | "
                  f"{varlen / equal:.2f} | {paged_text} | {anchor} | {cudnn_padded:.0f} |",
                  flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
