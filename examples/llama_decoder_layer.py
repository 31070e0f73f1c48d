#!/usr/bin/env python3
"""A Llama-style decoder layer whose attention is fa4.torch.attention,
checked against the same layer with PyTorch SDPA, and both timed.

The layer (Llama 3 8B's shapes, random weights): RMSNorm, Q/K/V projections
to 32 query heads and 8 key/value heads of dim 128 (GQA), rotary position
embeddings, causal attention, the output projection and a residual, then
RMSNorm, the SwiGLU MLP (hidden 14336) and a residual. The projections give
[B, S, H, D] tensors, fa4's layout, so fa4 takes them as they are; SDPA
takes [B, H, S, D] views and returns [B, H, S, D], transposed back before
the output projection.

The check: the two layers' outputs, and the two attentions' on the same
Q, K, V, agree within --tolerance (relative Frobenius norm; bf16 attention
outputs differ in their last bits, and the MLP carries that on). The
timing: CUDA events, the median of --iters calls of the whole layer and of
the attention alone.

usage: PYTHONPATH=python python3 examples/llama_decoder_layer.py --kernel-dir DIR
       [--batch 1] [--seqlen 2048] [--iters 20]
DIR needs the sm_90a (or sm_100a) kernel bf16, head dim 128, 32/8 heads,
causal, no LSE (bf16_d128_h32x8_causal_attention: test/gpu/torch_op.py
--compile-to writes it); without a directory fa4 compiles it on demand.
"""

import argparse
import functools
import statistics
import sys

import torch
import torch.nn.functional as F

import fa4.torch

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP_HIDDEN = 4096, 32, 8, 128, 14336
ROPE_THETA, EPS = 500000.0, 1e-5


def rms_norm(x, weight):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * weight


def rotary(seqlen, device):
    """cos and sin [S, 1, D] of the rotary embedding, halves rotated
    together (Llama's rotate_half convention)."""
    frequencies = ROPE_THETA ** (-torch.arange(0, HEAD_DIM, 2, device=device).float()
                                 / HEAD_DIM)
    angles = torch.outer(torch.arange(seqlen, device=device).float(), frequencies)
    angles = torch.cat([angles, angles], dim=-1)[:, None, :]
    return angles.cos(), angles.sin()


def apply_rotary(x, cos, sin):
    """x [B, S, H, D] rotated by position (computed in float32)."""
    x32 = x.float()
    half = torch.cat([-x32[..., HEAD_DIM // 2:], x32[..., :HEAD_DIM // 2]], dim=-1)
    return (x32 * cos + half * sin).to(x.dtype)


class DecoderLayer:
    def __init__(self, device, dtype, generator):
        def weight(rows, columns):
            return (torch.randn(rows, columns, device=device, generator=generator)
                    / columns ** 0.5).to(dtype)
        self.wq = weight(HEADS * HEAD_DIM, HIDDEN)
        self.wk = weight(KV_HEADS * HEAD_DIM, HIDDEN)
        self.wv = weight(KV_HEADS * HEAD_DIM, HIDDEN)
        self.wo = weight(HIDDEN, HEADS * HEAD_DIM)
        self.w_gate = weight(MLP_HIDDEN, HIDDEN)
        self.w_up = weight(MLP_HIDDEN, HIDDEN)
        self.w_down = weight(HIDDEN, MLP_HIDDEN)
        self.norm_attention = torch.ones(HIDDEN, device=device, dtype=dtype)
        self.norm_mlp = torch.ones(HIDDEN, device=device, dtype=dtype)

    def qkv(self, x, cos, sin):
        """Q [B, S, 32, 128], K and V [B, S, 8, 128], RoPE applied to Q and K."""
        batch, seqlen, _ = x.shape
        h = rms_norm(x, self.norm_attention)
        q = F.linear(h, self.wq).view(batch, seqlen, HEADS, HEAD_DIM)
        k = F.linear(h, self.wk).view(batch, seqlen, KV_HEADS, HEAD_DIM)
        v = F.linear(h, self.wv).view(batch, seqlen, KV_HEADS, HEAD_DIM)
        return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin), v

    def __call__(self, x, cos, sin, attention):
        """The layer's output; `attention` maps q, k, v [B, S, H, D] to
        [B, S, Hq, D]."""
        batch, seqlen, _ = x.shape
        x = x + F.linear(attention(*self.qkv(x, cos, sin)).reshape(batch, seqlen, -1),
                         self.wo)
        h = rms_norm(x, self.norm_mlp)
        return x + F.linear(F.silu(F.linear(h, self.w_gate)) * F.linear(h, self.w_up),
                            self.w_down)


def relative_difference(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def median_ms(call, iters):
    for _ in range(3):
        call()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel-dir", help="compiled fa4 kernels (default: "
                        "$FA4_KERNEL_DIR, else compiled on demand)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seqlen", type=int, default=2048)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--tolerance", type=float, default=2e-2)
    args = parser.parse_args(argv)

    device, dtype = torch.device("cuda"), torch.bfloat16
    generator = torch.Generator(device=device).manual_seed(0)
    layer = DecoderLayer(device, dtype, generator)
    x = torch.randn(args.batch, args.seqlen, HIDDEN, device=device, dtype=dtype,
                    generator=generator)
    cos, sin = rotary(args.seqlen, device)

    def fa4_attention(q, k, v):
        return fa4.torch.attention(q, k, v, causal=True, kernel_dir=args.kernel_dir)

    def sdpa_attention(q, k, v):
        # Sq == Skv: SDPA's top-left causal mask is fa4's bottom-right one.
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                             v.transpose(1, 2), is_causal=True,
                                             enable_gqa=True)
        return out.transpose(1, 2)

    print(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}; "
          f"B={args.batch} S={args.seqlen} hidden {HIDDEN}, heads {HEADS}/{KV_HEADS} x "
          f"{HEAD_DIM}, MLP {MLP_HIDDEN}, bf16")
    # fa4 has no backward: inference only.
    with torch.no_grad():
        ours = layer(x, cos, sin, fa4_attention)
        theirs = layer(x, cos, sin, sdpa_attention)
        q, k, v = layer.qkv(x, cos, sin)
        errors = [relative_difference(a, b) for a, b in (
            (ours, theirs), (fa4_attention(q, k, v), sdpa_attention(q, k, v)))]
        # The attention alone too: the residual could hide a wrong one.
        ok = max(errors) <= args.tolerance
        print(f"{'PASS' if ok else 'FAIL'} fa4 vs SDPA, ||difference|| / ||SDPA|| (limit "
              f"{args.tolerance:g}): layer output {errors[0]:.3g}, attention {errors[1]:.3g}")
        times = {}
        for name, attention in (("fa4", fa4_attention), ("SDPA", sdpa_attention)):
            times[name] = (median_ms(functools.partial(layer, x, cos, sin, attention),
                                     args.iters),
                           median_ms(functools.partial(attention, q, k, v), args.iters))
    for name, (layer_ms, attention_ms) in times.items():
        print(f"{name:5s} layer {layer_ms:.3f} ms, attention {attention_ms:.3f} ms")
    print(f"fa4 / SDPA: layer {times['fa4'][0] / times['SDPA'][0]:.3f}, attention "
          f"{times['fa4'][1] / times['SDPA'][1]:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
