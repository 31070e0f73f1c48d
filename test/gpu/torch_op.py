#!/usr/bin/env python3
"""fa4::attention, fa4::attention_varlen and fa4.flash_attn_func on real
PyTorch and a GPU.

Checks, printing PASS or FAIL per line and exiting 1 on any failure:
  - torch.library.opcheck on fa4::attention (schema, fake kernel, AOT
    dispatch with static and dynamic shapes), with and without LSE and on
    transposed views;
  - torch.compile(fullgraph=True, dynamic=True) of a function around
    fa4.torch.attention: one graph holding fa4::attention for two sequence
    lengths, bit-identical to eager;
  - q, k, v as [B, S, H, D] views of [B, H, S, D] tensors: no copy (the
    call allocates what it does on contiguous inputs), bit-identical to
    contiguous inputs, close to a float64 reference;
  - flash_attn_func against torch SDPA (GQA via enable_gqa), its LSE
    against a float32 reference and S_dmask None;
  - inputs that require grad in grad mode: RuntimeError eagerly and under
    torch.compile; under torch.no_grad() the compiled call runs;
  - torch.library.opcheck on fa4::attention_varlen (with LSE and
    seqused_k, and without), and torch.compile(fullgraph=True,
    dynamic=True) of fa4.torch.attention_varlen: one graph for two packed
    sizes, bit-identical to eager;
  - CUDA graph capture of fa4.torch.attention (after warm-up launches on
    the capture's inputs), replayed on new inputs.

It needs these kernels for sm_90a in DIR (FA4_JIT=0: the GPU machine has no
compiler library), as (dtype, head dim, Hq, Hkv, causal, LSE):
    bf16 128 32 8 causal        bf16_d128_h32x8_causal_attention
    bf16 128 32 8 causal LSE    bf16_d128_h32x8_causal_lse_attention
    f16   64 16 16              f16_d64_h16x16_attention
    bf16  64  8 8 LSE           bf16_d64_h8x8_lse_attention
    bf16 128 32 8 causal, packed sequences
                                bf16_d128_h32x8_causal_varlen_attention
    bf16 128 32 8 causal LSE, packed with seqused_k
                                bf16_d128_h32x8_causal_varlen_seqused_lse_attention
`--compile-to DIR` writes them (on a machine with build/lib/libFA4CAPI.so
and ptxas; PyTorch is not needed for that).

usage: PYTHONPATH=python python3 test/gpu/torch_op.py --kernel-dir DIR
       PYTHONPATH=python python3 test/gpu/torch_op.py --compile-to DIR
"""

import argparse
import os
import sys

# (element, head dim, Hq, Hkv, causal, LSE[, window, softcap, sink, varlen,
# seqused_k])
CONFIGURATIONS = [("bf16", 128, 32, 8, True, False), ("bf16", 128, 32, 8, True, True),
                  ("f16", 64, 16, 16, False, False), ("bf16", 64, 8, 8, False, True),
                  ("bf16", 128, 32, 8, True, False, None, None, False, True, False),
                  ("bf16", 128, 32, 8, True, True, None, None, False, True, True)]


def compile_to(directory):
    from fa4 import capi, jit
    with capi.Context() as context:
        for config in CONFIGURATIONS:
            name = jit.kernel_name(*config)
            context.compile(jit.module_text(name, *config), "arch=sm_90a").write(directory)
            print(f"wrote {name}_attention")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--kernel-dir", help="the kernels listed above, compiled for sm_90a")
    group.add_argument("--compile-to", metavar="DIR", help="compile those kernels into DIR")
    args = parser.parse_args(argv)
    if args.compile_to:
        compile_to(args.compile_to)
        return 0
    os.environ["FA4_JIT"] = "0"
    os.environ["FA4_KERNEL_DIR"] = args.kernel_dir
    return Checks(args.kernel_dir).run()


class Checks:
    def __init__(self, kernel_dir):
        import torch
        import fa4.torch
        from fa4 import flash_attn_func
        self.torch, self.fa4_torch, self.flash_attn_func = torch, fa4.torch, flash_attn_func
        self.kernel_dir = kernel_dir
        self.device = torch.device("cuda")
        self.generator = torch.Generator(device=self.device).manual_seed(11)
        self.failures = 0

    def report(self, ok, line):
        self.failures += not ok
        print(("PASS " if ok else "FAIL ") + line, flush=True)

    def randn(self, *shape, dtype=None):
        return self.torch.randn(shape, dtype=dtype or self.torch.bfloat16, device=self.device,
                                generator=self.generator)

    def gqa_inputs(self, batch=2, seq=512):
        """bf16 [B, S, 32, 128] queries and [B, S, 8, 128] keys and values."""
        return self.randn(batch, seq, 32, 128), self.randn(batch, seq, 8, 128), \
            self.randn(batch, seq, 8, 128)

    def run(self):
        torch = self.torch
        print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
        # The CUDA graph last: a failed capture can leave errors behind.
        for check in (self.opcheck, self.compiled, self.transposed_views,
                      self.flash_attn_against_sdpa, self.requires_grad, self.varlen,
                      self.cuda_graph):
            try:
                check()
            except Exception as err:  # a check that crashes fails; the others still run
                cause = err.__cause__ or err.__context__
                self.report(False, f"{check.__name__}: {type(err).__name__}: {err}" + (
                    f" (after {type(cause).__name__}: {cause})" if cause else ""))
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0

    def opcheck(self):
        torch = self.torch
        op = torch.ops.fa4.attention.default
        q, k, v = self.gqa_inputs(batch=1, seq=300)
        transposed = [self.randn(2, 8, s, 64).transpose(1, 2) for s in (200, 333, 333)]
        cases = [
            ("bf16 32/8 causal LSE", (q, k, v, None, True, None, -1, 0, 0.0, True)),
            ("bf16 32/8 causal, scale 0.1", (q, k, v, None, True, 0.1, -1, 0, 0.0, False)),
            ("f16 16/16", (*(self.randn(2, s, 16, 64, dtype=torch.float16)
                             for s in (129, 257, 257)),
                           None, False, None, -1, -1, 0.0, False)),
            ("bf16 8/8 LSE, transposed views", (*transposed, None, False, None, -1, -1, 0.0,
                                                True)),
        ]
        self.opcheck_cases("fa4::attention", op, cases)

    def opcheck_cases(self, name, op, cases):
        """torch.library.opcheck of `op` on each (label, arguments)."""
        for label, args in cases:
            try:
                self.torch.library.opcheck(op, args + (self.kernel_dir,))
                self.report(True, f"opcheck {name} {label}")
            except Exception as err:  # opcheck raises an OpCheckError or what the op raised
                self.report(False, f"opcheck {name} {label}: {type(err).__name__}: {err}")

    def compile_counting(self, f):
        """torch.compile(f, fullgraph=True, dynamic=True), and the list the
        graphs it compiles are added to."""
        from torch._inductor.compile_fx import compile_fx
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return compile_fx(gm, example_inputs)

        self.torch._dynamo.reset()
        return self.torch.compile(f, fullgraph=True, dynamic=True, backend=backend), graphs

    def compiled(self):
        torch, fa4_torch = self.torch, self.fa4_torch

        def f(q, k, v):
            # Scaling by 2 is exact, so compiled and eager agree bit for bit.
            return fa4_torch.attention(q * 2, k, v, causal=True).float()

        compiled, graphs = self.compile_counting(f)
        with torch.no_grad():
            for seq in (256, 384):
                q, k, v = self.gqa_inputs(seq=seq)
                same = torch.equal(compiled(q, k, v), f(q, k, v))
                self.report(same, f"torch.compile(fullgraph=True, dynamic=True) S={seq}: "
                            f"bit-identical to eager {same}")
        ops = [node for gm in graphs for node in gm.graph.nodes
               if node.target is torch.ops.fa4.attention.default]
        self.report(len(graphs) == 1 and len(ops) == 1,
                    f"torch.compile: {len(graphs)} graph(s) for two sequence lengths (want "
                    f"1), fa4::attention nodes {len(ops)} (want 1)")

    def cuda_graph(self):
        torch = self.torch
        q, k, v = self.gqa_inputs()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(stream):
            for _ in range(3):
                self.fa4_torch.attention(q, k, v, causal=True)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        # Captured on the warm-up stream: the runtime remembers launches per stream.
        with torch.no_grad(), torch.cuda.graph(graph, stream=stream):
            out = self.fa4_torch.attention(q, k, v, causal=True)
        for t, new in zip((q, k, v), self.gqa_inputs()):
            t.copy_(new)
        graph.replay()
        with torch.no_grad():
            want = self.fa4_torch.attention(q, k, v, causal=True)
        torch.cuda.synchronize()
        same = torch.equal(out, want)
        self.report(same, f"CUDA graph: replay on new inputs bit-identical to eager {same}")

    def transposed_views(self):
        torch = self.torch
        batch, heads, seq_q, seq_kv, d = 2, 16, 777, 1029, 64
        q, k, v = (self.randn(batch, heads, s, d, dtype=torch.float16).transpose(1, 2)
                   for s in (seq_q, seq_kv, seq_kv))
        dense = [t.contiguous() for t in (q, k, v)]

        def allocations(inputs):
            torch.cuda.synchronize()
            before = torch.cuda.memory_stats()["allocation.all.allocated"]
            with torch.no_grad():
                out = self.fa4_torch.attention(*inputs)
            return out, torch.cuda.memory_stats()["allocation.all.allocated"] - before

        out_view, view_allocations = allocations((q, k, v))
        out_dense, dense_allocations = allocations(dense)
        want, _ = self.fa4_torch.reference(q, k, v, dtype=torch.float64)
        error = ((out_view.double() - want).norm() / want.norm()).item()
        same = torch.equal(out_view, out_dense)
        limit = 4 * 2.0 ** -11
        self.report(view_allocations == dense_allocations and same and error <= limit,
                    f"[B, H, S, D] views: {view_allocations} allocation(s) (contiguous "
                    f"inputs: {dense_allocations}), bit-identical to contiguous {same}, "
                    f"||O - ref|| / ||ref|| {error:.3g} (limit {limit:.3g})")

    def flash_attn_against_sdpa(self):
        torch = self.torch
        import torch.nn.functional as F
        q, k, v = self.gqa_inputs()
        with torch.no_grad():
            for scale in (None, 0.1):
                out = self.flash_attn_func(q, k, v, softmax_scale=scale, causal=True)
                # Sq == Skv: SDPA's top-left causal mask is fa4's bottom-right one.
                want = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
                    scale=scale, enable_gqa=True).transpose(1, 2)
                error = (out.float() - want.float()).abs().max().item()
                self.report(error <= 2e-2, f"flash_attn_func(causal=True, softmax_scale="
                            f"{scale}) vs SDPA: max |difference| {error:.3g} (limit 0.02)")
            out, lse, s_dmask = self.flash_attn_func(q, k, v, causal=True,
                                                     return_attn_probs=True)
        want_o, want_lse = self.fa4_torch.reference(q, k, v, causal=True)
        o_error = (out.float() - want_o).abs().max().item()
        lse_error = (lse - want_lse).abs().max().item()
        ok = (s_dmask is None and lse.shape == (2, 32, 512) and lse.dtype == torch.float32
              and o_error <= 2e-2 and lse_error <= 1e-3)
        self.report(ok, f"flash_attn_func(return_attn_probs=True): S_dmask {s_dmask}, LSE "
                    f"{list(lse.shape)} {lse.dtype}, max |O - ref| {o_error:.3g} (limit "
                    f"0.02), max |LSE - ref| {lse_error:.3g} (limit 0.001)")

    def packed(self, lengths):
        """bf16 packed q [T, 32, 128], k, v [T, 8, 128] and the int32 offsets
        of sequences of `lengths`."""
        total = sum(lengths)
        offsets = self.torch.tensor([0] + lengths, device=self.device).cumsum(0).int()
        return (self.randn(total, 32, 128), self.randn(total, 8, 128),
                self.randn(total, 8, 128), offsets)

    def varlen(self):
        torch, fa4_torch = self.torch, self.fa4_torch
        op = torch.ops.fa4.attention_varlen.default
        q, k, v, offsets = self.packed([300, 0, 1, 129])
        used = (offsets[1:] - offsets[:-1]).clamp(max=100).int()
        cases = [("causal", (q, k, v, offsets, offsets, None, None, True, None, -1, 0, 0.0,
                             False)),
                 ("causal LSE seqused_k", (q, k, v, offsets, offsets, used, None, True, None,
                                           -1, 0, 0.0, True))]
        self.opcheck_cases("fa4::attention_varlen", op, cases)

        def f(q, k, v, offsets):
            return fa4_torch.attention_varlen(q * 2, k, v, offsets, offsets,
                                              causal=True).float()

        compiled, graphs = self.compile_counting(f)
        with torch.no_grad():
            for lengths in ([300, 0, 1, 129], [513, 64, 700, 2]):
                q, k, v, offsets = self.packed(lengths)
                same = torch.equal(compiled(q, k, v, offsets), f(q, k, v, offsets))
                self.report(same, f"torch.compile(attention_varlen) T={sum(lengths)}: "
                            f"bit-identical to eager {same}")
        ops = [node for gm in graphs for node in gm.graph.nodes
               if node.target is torch.ops.fa4.attention_varlen.default]
        self.report(len(graphs) == 1 and len(ops) == 1,
                    f"torch.compile(attention_varlen): {len(graphs)} graph(s) for two packed "
                    f"sizes (want 1), fa4::attention_varlen nodes {len(ops)} (want 1)")

    def requires_grad(self):
        torch, fa4_torch = self.torch, self.fa4_torch
        q, k, v = self.gqa_inputs(seq=256)
        q.requires_grad_(True)

        def f(q, k, v):
            return fa4_torch.attention(q, k, v, causal=True)

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True)
        for label, call in (("eager", f), ("torch.compile", compiled)):
            try:
                call(q, k, v)
                self.report(False, f"requires grad, {label}: accepted")
            except RuntimeError as err:
                self.report("no backward" in str(err),
                            f"requires grad, {label}: {str(err).splitlines()[0][:300]}")
        with torch.no_grad():
            same = torch.equal(compiled(q, k, v), f(q, k, v))
        self.report(same, f"requires grad under torch.no_grad(), torch.compile: runs, "
                    f"bit-identical to eager {same}")


if __name__ == "__main__":
    sys.exit(main())
