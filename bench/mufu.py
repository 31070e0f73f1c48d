#!/usr/bin/env python3
"""Throughput of the MUFU forms a softcapped softmax could use, on this GPU.

A softcap adds a tanh per score to the exp2 the softmax already takes, both
on the special-function unit (MUFU). This measures elements per second of
long dependent chains (enough threads to saturate the unit) of
tanh.approx.f32, tanh.approx.f16x2 and .bf16x2 (with the f32 <-> 16-bit
conversions a kernel would need, and on 16-bit values throughout),
ex2.approx.ftz.f32 and ex2.approx.f16x2, written as inline PTX through
Triton (which PyTorch ships). Equal rates say the packed forms take one
MUFU issue per element, not per pair: they cannot halve a softcap's cost.

usage: python3 bench/mufu.py
"""
import torch
import triton
import triton.language as tl

@triton.jit
def chain(x_ptr, y_ptr, ITERS: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs)
    h = acc.to(tl.float16)
    for _ in range(ITERS):
        if MODE == 0:    # tanh.approx.f32
            acc = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [acc], dtype=tl.float32, is_pure=True, pack=1)
        elif MODE == 1:  # f32 -> f16x2, tanh.approx.f16x2, back to f32
            t = tl.inline_asm_elementwise("tanh.approx.f16x2 $0, $1;", "=r,r", [acc.to(tl.float16)], dtype=tl.float16, is_pure=True, pack=2)
            acc = t.to(tl.float32)
        elif MODE == 2:  # tanh.approx.f16x2 on f16 throughout
            h = tl.inline_asm_elementwise("tanh.approx.f16x2 $0, $1;", "=r,r", [h], dtype=tl.float16, is_pure=True, pack=2)
        elif MODE == 3:  # ex2.approx.ftz.f32
            acc = tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [acc], dtype=tl.float32, is_pure=True, pack=1) - 1.0
        elif MODE == 4:  # ex2.approx.f16x2 on f16 throughout
            h = tl.inline_asm_elementwise("ex2.approx.f16x2 $0, $1;", "=r,r", [h], dtype=tl.float16, is_pure=True, pack=2) - 1.0
        elif MODE == 5:  # tanh.approx.bf16x2
            h2 = tl.inline_asm_elementwise("tanh.approx.bf16x2 $0, $1;", "=r,r", [acc.to(tl.bfloat16)], dtype=tl.bfloat16, is_pure=True, pack=2)
            acc = h2.to(tl.float32)
    if MODE == 2 or MODE == 4:
        acc = h.to(tl.float32)
    tl.store(y_ptr + offs, acc)

names = ["tanh.f32", "cvt+tanh.f16x2+cvt", "tanh.f16x2 (f16)", "ex2.f32", "ex2.f16x2 (f16)", "cvt+tanh.bf16x2+cvt"]
n, block, iters = 1 << 24, 1024, 256
x = torch.randn(n, device="cuda") * 0.1
y = torch.empty_like(x)
for mode, name in enumerate(names):
    grid = (n // block,)
    chain[grid](x, y, iters, mode, block)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        chain[grid](x, y, iters, mode, block)
    end.record(); torch.cuda.synchronize()
    ms = start.elapsed_time(end) / 5
    elements = n * iters
    print(f"{name:22s} {elements / ms / 1e9:6.2f} T elements/s ({ms:.2f} ms)")
