#!/usr/bin/env python3
"""Compiles fa4.attention over a matrix of configurations to one target
(sm_100a by default) and checks each kernel with ptxas.

For every configuration it writes the attention module, runs the fa4
pipeline with fa4-opt up to PTX, assembles it with `ptxas -v` and prints one
line:

  <mask> <dtype> d<head dim> gqa<ratio>: spill <bytes> registers <n> smem <bytes>

over full and causal (with LSE) x dtype x head dim x GQA ratio, then the
score stages: a causal sliding window with LSE, softcap, and attention
sinks (causal, with LSE), at both head dims for MHA and a GQA ratio that
packs no heads (7), softcap with `polynomial-tanh=8` at GQA 7; packed sequences (causal, with LSE) with sinks and a
window, and over a paged cache of 64-key pages, at head dims 64 and 128
(GQA 1 and 7); with --fp8-head-dims, full and causal FP8 rows (e4m3
Q, K and key-major V with descale factors, O bf16) x GQA ratio, and causal
FP8 packed sequences (varlen, with LSE) at GQA 1 and 8; with --interleave,
sm_100a's interleaved softmax warpgroups (`kv-interleave=2`) over the
full, causal and score-stage masks, packed sequences over a paged cache,
O rotated back, and FP8, at head dims 64 and 128 (GQA 1 and 7), printed
as "interleave <mask> ..."; with --hi-lo, P as two 16-bit parts
(`p-precision=hi_lo`) over the 16-bit masks and kernel families at head
dims --hi-lo-head-dims (default 64 and 128; full and causal at GQA 1 and
8, the rest at 7), printed as "hi-lo <mask> ..."; with --shared-key,
sm_100a's shared keys (`shared-key=4`: four threads per row of a 32-row Q
stage) over the same masks and RoPE on Q at head dims 64 and 128, and
causal head dim 256 at `shared-key=2` and 4, printed as "shared-key ...";
with --decode, the decode family (`family=decode`, sm_100a swap-AB) over
the 16-bit masks, packed sequences over a paged cache and RoPE at head dim
128, causal head dim 256 and P as hi + lo, printed as "decode ...".

usage: config-matrix.py --fa4-opt PATH --ptxas PATH [--work DIR]
                        [--arch sm_100a|sm_90a] [--head-dims 64,128]
                        [--stage-head-dims 64,128] [--fp8-head-dims 64,128]

--head-dims sets the head dims of the full and causal rows, --stage-head-dims
those of the score-stage rows (default: the same as --head-dims).
"""

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile

PIPELINE = ("builtin.module(fa4-plan, fa4-tile, fa4-specialize, fa4-allocate-tmem, fa4-allocate-smem, fa4-insert-barriers, "
            "fa4-lower-warp-specialize, gpu.module(expand-strided-metadata, "
            "convert-scf-to-cf, convert-gpu-to-nvvm{index-bitwidth=32}, fa4-align-shared-memory, "
            "fa4-fold-cluster-address-casts), "
            "convert-nvvm-to-llvm, reconcile-unrealized-casts, fa4-assemble-manifest, "
            "gpu-module-to-binary{format=isa})")

DTYPES = ["bf16", "f16"]
HEAD_DIMS = [64, 128]
GQA_RATIOS = [1, 4, 8]
CAUSAL = [False, True]
KV_HEADS = 8


# The masks and their attributes; the causal ones also write LSE.
MASKS = {"full": "", "causal": "causal", "varlen": "causal",
         "window": "causal, window = array<i64: 1000, 0>",
         "softcap": "softcap = 30.0 : f32",
         "softcap-poly": "softcap = 30.0 : f32",
         "sink": "causal",
         "packed-sink": "causal, window = array<i64: 1000, 0>",
         "packed-paged": "causal",
         # Q rotated at each query's position (all its dims); O's last 64
         # rotated back too (the MLA layout).
         "rope": "causal",
         "rope-output": "causal, rope_start = HEAD_DIM_MINUS_64 : i64, rope_output"}
# Plan options of a mask's rows.
PLAN_OPTIONS = {"softcap-poly": "polynomial-tanh=8"}
# Packed sequences: their masks, the page size of a paged cache.
PACKED = {"varlen": None, "packed-sink": None, "packed-paged": 64}
PACKED_HEAD_DIMS = [64, 128]


def stage_configs(head_dims):
    """The score-stage rows: MHA and a ratio that packs no heads (7); softcap
    with half its tanh from the FMA polynomial at GQA 7; then packed
    sequences with sinks and over a paged cache."""
    return [(mask, "bf16", head_dim, ratio)
            for mask in ("window", "softcap", "sink")
            for head_dim in head_dims for ratio in (1, 7)] + [
        ("softcap-poly", "bf16", head_dim, 7) for head_dim in head_dims] + [
        (mask, "bf16", head_dim, ratio)
        for mask in ("packed-sink", "packed-paged")
        for head_dim in PACKED_HEAD_DIMS for ratio in (1, 7)]


def module(dtype, head_dim, ratio, mask):
    """The attention op of one configuration."""
    hq, hkv = KV_HEADS * ratio, KV_HEADS
    # FP8 (e4m3): V key-major (unit-stride keys), O bf16, descale factors.
    fp8 = dtype == "e4m3"
    element = "f8E4M3FN" if fp8 else dtype
    # Packed sequences drop the batch dimension; a key-major V's keys are
    # then its dimension 0.
    varlen = mask in PACKED
    page = PACKED.get(mask)
    rows = "?" if varlen else "?x?"
    qt = f"memref<{rows}x{hq}x{head_dim}x{element}>"
    kv_rows = f"?x{page}" if page else rows
    kt = f"memref<{kv_rows}x{hkv}x{head_dim}x{element}>"
    key_major = "strided<[1, ?, ?]>" if varlen else "strided<[?, 1, ?, ?]>"
    vt = f"memref<{rows}x{hkv}x{head_dim}x{element}, {key_major}>" if fp8 else kt
    ot = f"memref<{rows}x{hq}x{head_dim}xbf16>" if fp8 else qt
    lt = f"memref<{hq}x?xf32>" if varlen else f"memref<?x{hq}x?xf32>"
    causal = MASKS[mask].startswith("causal")
    lse_arg = f", %lse: {lt}" if causal else ""
    lse = f" lse(%lse : {lt})" if causal else ""
    if mask in ("sink", "packed-sink"):
        lse_arg += f", %sink: memref<{hq}xf32>"
        lse += f" sink(%sink : memref<{hq}xf32>)"
    if fp8:
        dt = f"memref<?x{hkv}xf32>"
        lse_arg += f", %qd: {dt}, %kd: {dt}, %vd: {dt}"
        lse += f" descale(%qd, %kd, %vd : {dt}, {dt}, {dt})"
    if varlen:
        lse_arg += ", %cq: memref<?xi32>, %ck: memref<?xi32>"
        lse += " varlen(%cq, %ck : memref<?xi32>, memref<?xi32>)"
    if mask == "packed-sink":
        lse_arg += ", %used: memref<?xi32>"
        lse += " seqused_k(%used : memref<?xi32>)"
    if page:
        lse_arg += ", %pages: memref<?x?xi32>"
        lse += " paged(%pages : memref<?x?xi32>)"
    if mask.startswith("rope"):
        table = f"memref<?x{head_dim if mask == 'rope' else 64}xf32>"
        lse_arg += f", %cos_sin: {table}, %positions: memref<?x?xi32>"
        lse += f" rope(%cos_sin, %positions : {table}, memref<?x?xi32>)"
    attrs = MASKS[mask].replace("HEAD_DIM_MINUS_64", str(head_dim - 64))
    attrs = f" {{{attrs}}}" if attrs else ""
    return (f"func.func @attention(%q: {qt}, %k: {kt}, %v: {vt}, %o: {ot}{lse_arg}) {{\n"
            f"  fa4.attention ins(%q, %k, %v : {qt}, {kt}, {vt}) outs(%o : {ot}){lse}{attrs}\n"
            f"  return\n}}\n")


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stderr}")
    return result


# Shared memory (dynamic + static) one CTA may use on sm_100a.
SMEM_LIMIT = 227 * 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fa4-opt", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--work")
    parser.add_argument("--arch", default="sm_100a", choices=["sm_100a", "sm_90a"])
    parser.add_argument("--head-dims", default=",".join(map(str, HEAD_DIMS)))
    parser.add_argument("--stage-head-dims")
    parser.add_argument("--fp8-head-dims", default="",
                        help="head dims of FP8 (e4m3, with descale factors) rows, full "
                             "and causal x GQA ratio")
    parser.add_argument("--rope", action="store_true",
                        help="rows with the rotary embedding (of Q; and of Q and O's "
                             "last 64 dims) at every stage head dim, GQA 1 and 7")
    parser.add_argument("--interleave", action="store_true",
                        help="rows with kv-interleave=2 (sm_100a) at head dims 64 "
                             "and 128")
    parser.add_argument("--shared-key", action="store_true",
                        help="rows with shared-key=4 (sm_100a: four threads per row, "
                             "32-row Q stages) over the masks at head dims 64 and 128, "
                             "and shared-key=2 and 4 at head dim 256")
    parser.add_argument("--decode", action="store_true",
                        help="rows of the decode family (family=decode, sm_100a "
                             "swap-AB) over the 16-bit masks at head dim 128, and "
                             "causal head dim 256")
    parser.add_argument("--hi-lo", action="store_true",
                        help="rows with p-precision=hi_lo (P as two 16-bit parts)")
    parser.add_argument("--hi-lo-head-dims", default="64,128",
                        help="head dims of the --hi-lo rows")
    args = parser.parse_args()
    head_dims = [int(d) for d in args.head_dims.split(",")]
    stage_dims = ([int(d) for d in args.stage_head_dims.split(",")]
                  if args.stage_head_dims else head_dims)
    work = args.work or tempfile.mkdtemp(prefix="fa4-matrix-")
    os.makedirs(work, exist_ok=True)
    extract = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "extract-ptx.py")

    configs = [("causal" if causal else "full", dtype, head_dim, ratio)
               for causal, dtype, head_dim, ratio in itertools.product(
                   CAUSAL, DTYPES, head_dims, GQA_RATIOS)]
    fp8_dims = [int(d) for d in args.fp8_head_dims.split(",") if d]
    configs += [("causal" if causal else "full", "e4m3", head_dim, ratio)
                for causal, head_dim, ratio in itertools.product(
                    CAUSAL, fp8_dims, GQA_RATIOS)]
    configs += [("varlen", "e4m3", head_dim, ratio)
                for head_dim, ratio in itertools.product(fp8_dims, (1, 8))]
    configs += stage_configs(stage_dims)
    if args.rope:
        configs += [(mask, "bf16", head_dim, ratio)
                    for mask in ("rope", "rope-output")
                    for head_dim in stage_dims for ratio in (1, 7)]
    configs = [config + ("", "") for config in configs]
    if args.interleave:
        configs += [(mask, dtype, head_dim, ratio, "kv-interleave=2", "interleave")
                    for mask, dtype in (("full", "bf16"), ("causal", "bf16"),
                                        ("causal", "f16"), ("window", "bf16"),
                                        ("softcap", "bf16"), ("sink", "bf16"),
                                        ("packed-paged", "bf16"),
                                        ("rope-output", "bf16"), ("causal", "e4m3"))
                    for head_dim in (64, 128) for ratio in (1, 7)]
    if args.shared_key:
        masks = [("full", "bf16"), ("causal", "bf16"), ("causal", "f16"),
                 ("window", "bf16"), ("softcap", "bf16"), ("sink", "bf16"),
                 ("packed-paged", "bf16"), ("rope", "bf16")]
        configs += [(mask, dtype, head_dim, ratio, "shared-key=4", "shared-key")
                    for mask, dtype in masks for head_dim in (64, 128)
                    for ratio in ((1, 8) if dtype == "bf16" and
                                  mask in ("full", "causal") else (7,))]
        configs += [("causal", "bf16", 256, 8, f"shared-key={shares}",
                     f"shared-key{shares}") for shares in (2, 4)]
    if args.decode:
        masks = [("full", "bf16"), ("causal", "bf16"), ("causal", "f16"),
                 ("window", "bf16"), ("softcap", "bf16"), ("sink", "bf16"),
                 ("packed-paged", "bf16"), ("rope", "bf16"), ("rope-output", "bf16")]
        configs += [(mask, dtype, 128, ratio, "family=decode", "decode")
                    for mask, dtype in masks
                    for ratio in ((1, 8) if dtype == "bf16" and
                                  mask in ("full", "causal") else (7,))]
        configs += [("causal", "bf16", 256, 8, "family=decode", "decode")]
        configs += [("causal", "bf16", 128, 8, "family=decode p-precision=hi_lo",
                     "decode hi-lo")]
    if args.hi_lo:
        hi_lo_dims = [int(d) for d in args.hi_lo_head_dims.split(",")]
        masks = [("full", "bf16"), ("causal", "bf16"), ("causal", "f16"),
                 ("window", "bf16"), ("softcap", "bf16"), ("sink", "bf16"),
                 ("packed-paged", "bf16"), ("rope-output", "bf16")]
        # Full and causal with and without packed heads, the rest at a
        # ratio that packs none.
        configs += [(mask, dtype, head_dim, ratio, "p-precision=hi_lo", "hi-lo")
                    for mask, dtype in masks for head_dim in hi_lo_dims
                    for ratio in ((1, 8) if dtype == "bf16" and
                                  mask in ("full", "causal") else (7,))]
    for mask, dtype, head_dim, ratio, extra, label in configs:
        options = " ".join([f"arch={args.arch}"] + (
            [PLAN_OPTIONS[mask]] if mask in PLAN_OPTIONS else []) + (
            [extra] if extra else []))
        pipeline = PIPELINE.replace("fa4-plan,", f"fa4-plan{{{options}}},")
        prefix = label + " " if label else ""
        name = (label.replace(" ", "_").replace("-", "_") + "_" if label else ""
                ) + f"{mask}_{dtype}_d{head_dim}_gqa{ratio}"
        source = os.path.join(work, name + ".mlir")
        binary = os.path.join(work, name + ".bin.mlir")
        ptx = os.path.join(work, name + ".ptx")
        with open(source, "w") as f:
            f.write(module(dtype, head_dim, ratio, mask))
        run([args.fa4_opt, source, f"--pass-pipeline={pipeline}", "-o", binary])
        run([sys.executable, extract, binary, ptx])
        report = run([args.ptxas, f"-arch={args.arch}", "-v", ptx, "-o",
                      os.path.join(work, name + ".cubin")]).stderr
        spill = re.search(r"(\d+) bytes spill stores", report).group(1)
        registers = re.search(r"Used (\d+) registers", report).group(1)
        static = re.search(r"(\d+) bytes smem", report)
        static = int(static.group(1)) if static else 0
        # What the allocation passes recorded, assembled into the launch manifest.
        with open(binary) as f:
            text = f.read()
        dynamic = int(re.search(r"dynamic_smem_bytes = (\d+)", text).group(1))
        columns = int(re.search(r"tmem_columns = (\d+)", text).group(1))
        # fa4-allocate-smem bounds the dynamic part; ptxas adds the static
        # part (the mbarriers).
        smem_fits = "fits" if dynamic + static <= SMEM_LIMIT else "EXCEEDS"
        print(f"{prefix}{mask} {dtype} d{head_dim} gqa{ratio}: spill {spill} registers "
              f"{registers} smem {dynamic}+{static} {smem_fits} "
              f"tmem {columns}")

if __name__ == "__main__":
    main()
