#!/usr/bin/env python3
"""Times decode against a paged KV cache (fa4.torch.attention_with_kvcache)
and reports the HBM bandwidth it reaches against the measured copy
bandwidth, and its time against SDPA on the same cache gathered into a
contiguous tensor (what a library without paging runs), in one run.

The problem is examples/kvcache/decode_paged.mlir's (bf16, Llama-3 8B's 32
query heads over 8 KV heads, head dim 128, pages of 256 keys, causal,
LSE): each batch decodes --new-tokens tokens against a cache of L keys whose
pages are a random permutation of the pool. Bytes moved are the cache's K
and V (B x L x Hkv x D x 2 x 2) plus Q, O and LSE; the bandwidth is bytes
over the kernel's device time (kernel_ms); the copy bandwidth is a device-to-device
copy of 1 GiB (read + write). The SDPA column is cuDNN / flash /
efficient as SDPA picks them on the gathered [B, Hq, L, D] cache
(`enable_gqa`), non-causal (one new token sees every key).

RoPE (--rope): the same problem with the query's rotary embedding fused
(examples/kvcache/decode_rope.mlir: all 128 dims rotated at each token's
position) timed in the same run, at the same split, beside the kernel
without it: the cost of the rotation (the columns `rope us` and
`rope/plain`). DIR then holds decode_rope kernels of the same splits.

Split-KV: each problem runs without a split (num_splits=1) and with the
runtime's choice (num_splits=0: `runtime.kv_splits_for`, where DIR holds a
decode_paged kernel of that split; compile them with kv-splits=N). The
bandwidth columns are the faster one's.

usage: PYTHONPATH=python python3 bench/decode.py DIR [--new-tokens 1]
         [--batches 1,8,32,128] [--lengths 2048,8192,32768] [--rope]
  DIR holds decode_paged_attention (fa4-opt --fa4-compile emit-dir=DIR on
  examples/kvcache/decode_paged.mlir)
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import median_ms, software  # noqa: E402

import fa4.torch as fa4_torch  # noqa: E402
from fa4 import runtime  # noqa: E402

HEADS_Q, HEADS_KV, HEAD_DIM, PAGE = 32, 8, 128, 256
# decode_rope's rotary embedding: (start, columns, O rotated back).
ROPE = (0, HEAD_DIM, False)
BATCHES = [1, 8, 32, 128]
LENGTHS = [2048, 8192, 32768]


def kernel_ms(call, warmup, iters):
    """GPU time of one `call`: the device time of its kernels (memory
    copies excluded) over `iters` calls, from the profiler. A decode kernel
    takes tens of microseconds, about what the host needs to enqueue a
    call: timed with events around calls, the host would be measured (and
    the runtime's launches are not captured in CUDA graphs). The kernels
    launch without programmatic dependent launch (FA4_PDL=0, set by main):
    with it a kernel starts while the previous one runs and its duration
    would count that wait."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as profile:
        for _ in range(iters):
            call()
        torch.cuda.synchronize()
    total_us = sum(entry.self_device_time_total for entry in profile.key_averages()
                   if not entry.key.startswith(("Memcpy", "Memset")))
    return total_us / iters / 1e3


def copy_bandwidth(device, warmup, iters):
    """Bytes per second of a device-to-device copy (read + write)."""
    source = torch.empty(1 << 30, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    ms = median_ms(lambda: target.copy_(source), warmup, iters)
    return 2 * source.numel() / (ms * 1e-3)


def ints(text):
    """A comma-separated list of positive integers."""
    values = [int(part) for part in text.split(",")]
    if any(value <= 0 for value in values):
        raise argparse.ArgumentTypeError(f"{text!r}: positive integers only")
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--new-tokens", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--batches", type=ints, default=BATCHES,
                        help="comma-separated batch sizes (default: %(default)s)")
    parser.add_argument("--lengths", type=ints, default=LENGTHS,
                        help="comma-separated cache lengths, multiples of the "
                             f"{PAGE}-key page (default: %(default)s)")
    parser.add_argument("--rope", action="store_true",
                        help="also time decode_rope (Q rotated in the kernel) at the "
                             "same split")
    args = parser.parse_args(argv)
    if any(length % PAGE or length <= 0 for length in args.lengths):
        parser.error(f"--lengths must be positive multiples of {PAGE}")
    os.environ["FA4_PDL"] = "0"
    device = torch.device("cuda")
    print(software(device))
    copy = copy_bandwidth(device, args.warmup, args.iters)
    print(f"copy bandwidth: {copy / 1e9:.0f} GB/s")
    generator = torch.Generator(device="cpu").manual_seed(0)
    sq = args.new_tokens
    directory = runtime.KernelDirectory(args.directory)
    unsplit = directory.find("bf16", HEADS_Q, HEADS_KV, HEAD_DIM, causal=True, lse=True,
                             seqused_k=True, page_size=PAGE)
    block_n = int(str(unsplit.manifest["plan"]).split("blockN = ")[1].split(",")[0])
    sm_count = torch.cuda.get_device_properties(device).multi_processor_count
    if args.rope:
        directory.find("bf16", HEADS_Q, HEADS_KV, HEAD_DIM, causal=True, lse=True,
                       seqused_k=True, page_size=PAGE, rope=ROPE)
    print(f"{'B':>4} {'L':>6} {'split':>5} {'1 us':>8} {'split us':>8} {'GB/s':>6} "
          f"{'of copy':>7} {'sdpa us':>8} {'fa4/sdpa':>8}"
          + (f" {'rope us':>8} {'rope/plain':>10}" if args.rope else ""))
    for batch in args.batches:
        for length in args.lengths:
            pages_per = length // PAGE
            pool = batch * pages_per
            if pool * PAGE * HEADS_KV * HEAD_DIM * 2 * 2 > 24 << 30:
                continue
            k = torch.randn(pool, PAGE, HEADS_KV, HEAD_DIM, dtype=torch.bfloat16,
                            device=device)
            v = torch.randn_like(k)
            q = torch.randn(batch, sq, HEADS_Q, HEAD_DIM, dtype=torch.bfloat16,
                            device=device)
            table = torch.randperm(pool, generator=generator).view(batch, pages_per)
            table = table.to(torch.int32).to(device)
            lengths = torch.full((batch,), length, dtype=torch.int32, device=device)

            # RoPE: a table past the cache, each new token at its position.
            rope = {}
            if args.rope:
                angles = torch.arange(length + 64, dtype=torch.float32)[:, None] * (
                    10000.0 ** (-torch.arange(0, HEAD_DIM, 2) / HEAD_DIM))
                rope = dict(rope_cos_sin=torch.cat([angles.cos(), angles.sin()], 1)
                            .to(device),
                            rope_positions=(length - sq + torch.arange(sq))
                            .to(torch.int32).expand(batch, sq).contiguous().to(device))

            def run(splits, rotate=False):
                return lambda: fa4_torch.attention_with_kvcache(
                    q, k, v, cache_seqlens=lengths, page_table=table, causal=True,
                    return_lse=True, kernel_dir=args.directory, num_splits=splits,
                    **(rope if rotate else {}))
            tiles = (batch * unsplit.head_blocks
                     * -(-sq // unsplit.query_rows_per_cta))
            splits = runtime.kv_splits_for(sm_count, tiles, -(-length // block_n))
            try:
                directory.find("bf16", HEADS_Q, HEADS_KV, HEAD_DIM, causal=True, lse=True,
                               seqused_k=True, page_size=PAGE, kv_splits=splits)
            except LookupError:
                splits = 1   # no kernel of the choice in DIR
            ms_one = kernel_ms(run(1), args.warmup, args.iters)
            ms_split = (kernel_ms(run(0), args.warmup, args.iters) if splits > 1
                        else ms_one)
            ms = min(ms_one, ms_split)
            rope_columns = ""
            if args.rope:
                # At the split the plain kernel ran fastest with.
                ms_rope = kernel_ms(run(0 if ms_split < ms_one else 1, rotate=True),
                                    args.warmup, args.iters)
                rope_columns = f" {ms_rope * 1e3:>8.1f} {ms_rope / ms:>10.2f}"
            moved = (2 * batch * length * HEADS_KV * HEAD_DIM * 2
                     + 2 * q.numel() * 2 + batch * HEADS_Q * sq * 4)
            bandwidth = moved / (ms * 1e-3)

            # The same cache gathered contiguous, for SDPA.
            kg = k[table.long()].reshape(batch, length, HEADS_KV, HEAD_DIM)
            vg = v[table.long()].reshape(batch, length, HEADS_KV, HEAD_DIM)
            qt, kt, vt = (t.transpose(1, 2) for t in (q, kg, vg))
            sdpa_ms = kernel_ms(lambda: F.scaled_dot_product_attention(
                qt, kt, vt, is_causal=False, enable_gqa=True), args.warmup, args.iters)
            print(f"{batch:>4} {length:>6} {splits:>5} {ms_one * 1e3:>8.1f} "
                  f"{ms_split * 1e3:>8.1f} {bandwidth / 1e9:>6.0f} "
                  f"{bandwidth / copy:>7.2f} {sdpa_ms * 1e3:>8.1f} {sdpa_ms / ms:>8.2f}"
                  + rope_columns,
                  flush=True)
            del k, v, kg, vg, rope
    return 0


if __name__ == "__main__":
    sys.exit(main())
