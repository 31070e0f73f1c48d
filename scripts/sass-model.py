#!/usr/bin/env python3
"""Throughput model of an fa4 kernel from its SASS: cycles per KV block and
the unit that binds them, without running it.

Reads a kernel's SASS (cuobjdump -sass, which runs on the GPU machine; the
text can be kept as an artifact) and its launch manifest (the JSON next to
the cubin: arch, plan, roles and their warps). For each role it finds the
loop that runs once per KV block (scripts/sass-loops.py: natural loops,
one iteration with every wait succeeding at once) and how often that loop
runs per block:

  softmax (sm_100a)  the innermost loop with >= 32 MUFU per iteration and
                     the fewest instructions (the unmasked interior blocks)
  consumer (sm_90a)  the same among loops that also issue HGMMA (QGMMA
                     for FP8, whose tensor rate is twice the 16-bit one)
  mma (sm_100a)      the smallest loop that issues tcgen05 MMAs and commits
                     (UTCBAR); the MMA loops inside it (K steps) run
                     (MMAs per block - MMAs outside them) / (MMAs in one
                     pass over them) times each
  load               the innermost loop with TMA loads; it runs
                     2 * headDim / 64 loads per block (K and V boxes)
  correction, store  not counted: in the steady state the correction
                     warpgroup skips the O rescale (the conditional
                     rescale's threshold), and the store runs per tile

Warp w issues on sub-partition w % 4. Per KV block and sub-partition the
model adds every warp's issue slots (one per instruction) and each unit's
cycles; the tensor core's cycles are the block's MMA FLOPs over the chip's
rate per SM. The block takes the largest of them; that unit binds, and
TFLOP/s follow from the SM count and clock. Unit costs per warp
instruction (cycles of its unit in one sub-partition):

  fma   1 (FFMA FADD FMUL IMAD), 2 for packed FFMA2 FADD2 FMUL2 (32 lanes)
  alu   2 (ISETP FSEL SEL LOP3 SHF IADD3 LEA FMNMX F2FP PRMT VIADD ...)
  mufu  8 (MUFU.*, F2I I2F FRND F2F: 16 per SM and cycle)
  other instructions (uniform datapath, TMEM, barriers, TMA) cost issue
  slots only

The model ignores latency and stalls: it is an upper bound. --efficiency
scales it by a factor fitted on the H200 (docs/PERFORMANCE.md: measured
over predicted for the sm_90a kernels of the benchmark set).

  scripts/sass-model.py KERNEL.sass KERNEL.json [--target b200] [--json]
      [--efficiency 0.568] [--budget softmax=600,mma=840,load=80]

--budget makes it a regression check: the exit status is 1 when a role
issues more instructions per KV block and warp than its budget.

Python 3 standard library only.
"""

import argparse
import importlib.util
import json
import os
import re
import sys

_spec = importlib.util.spec_from_file_location(
    "sass_loops", os.path.join(os.path.dirname(os.path.abspath(__file__)), "sass-loops.py"))
sass_loops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_loops)

# Tensor FLOPs per clock and SM, SMs and clock (GHz) of each target
# (docs/PERFORMANCE.md and ANCHORS: B200 8192 x 148 x 1.856 = 2.25 PF dense
# bf16; H100/H200 4096 x 132 x 1.83 = 989 TF).
TARGETS = {
    "b200": {"arch": "sm_100a", "flops_per_clk": 8192, "sms": 148, "ghz": 1.856},
    "h200": {"arch": "sm_90a", "flops_per_clk": 4096, "sms": 132, "ghz": 1.83},
}
PACKED = {"FFMA2", "FADD2", "FMUL2", "HFMA2", "HADD2", "HMUL2"}
FMA = {"FFMA", "FADD", "FMUL", "IMAD"}
ALU = {"ISETP", "FSEL", "SEL", "LOP3", "SHF", "IADD3", "LEA", "FMNMX", "FMNMX3",
       "F2FP", "PRMT", "VIADD", "IADD", "IMNMX", "VIMNMX", "FSETP", "PLOP3", "MOV",
       "LOP", "ISCADD", "FCHK", "POPC", "FLO", "BREV"}
MUFU = {"MUFU", "F2I", "I2F", "FRND", "F2F", "I2FP", "F2IP"}


def unit_cycles(classes):
    cycles = {"fma": 0, "alu": 0, "mufu": 0}
    for op, n in classes.items():
        if op in PACKED:
            cycles["fma"] += 2 * n
        elif op in FMA:
            cycles["fma"] += n
        elif op in ALU:
            cycles["alu"] += 2 * n
        elif op in MUFU:
            cycles["mufu"] += 8 * n
    return cycles


def plan_fields(manifest):
    plan = manifest.get("plan", "")
    fields = dict(re.findall(r"(\w+) = (\w+)", plan))
    return {k: (int(v) if v.lstrip("-").isdigit() else v) for k, v in fields.items()}


def loop_table(function):
    """Every loop with its iteration's class counts, its blocks and the
    loops nested in it."""
    found = sass_loops.loops(function)
    table = []
    for loop in found:
        hot = sass_loops.iteration_blocks(function, loop, found)
        table.append({"loop": loop, "hot": hot,
                      "all": sass_loops.count(function, loop, loop["blocks"]),
                      "iteration": sass_loops.count(function, loop, hot),
                      "waits": sass_loops.waits(function, loop, found),
                      "start": function["code"][loop["spans"][loop["header"]][0]][0]})
    return table


def innermost(table, pick):
    """Loops that satisfy `pick` and hold no other loop that does."""
    chosen = [t for t in table if pick(t)]
    return [t for t in chosen
            if not any(o is not t and o["loop"]["blocks"] < t["loop"]["blocks"]
                       for o in chosen)]


def role_loops(table, manifest, plan):
    """{role kind: (instructions per block as a class Counter, where)}."""
    arch = manifest.get("arch")
    head_dim, block_n = plan.get("headDim", 128), plan.get("blockN", 128)
    stages = plan.get("qStages", 1)
    found = {}
    exps = innermost(table, lambda t: not t["waits"] and t["iteration"].get("MUFU", 0) >= 32 and
                     (arch != "sm_90a" or t["iteration"].get("HGMMA", 0) > 0
                      or t["iteration"].get("QGMMA", 0) > 0))
    if exps:
        best = min(exps, key=lambda t: sum(t["iteration"].values()))
        found["softmax" if arch != "sm_90a" else "consumer"] = (dict(best["iteration"]),
                                                              best["start"])
    loads = innermost(table, lambda t: not t["waits"] and t["iteration"].get("UTMALDG", 0) > 0)
    if loads:
        best = min(loads, key=lambda t: sum(t["iteration"].values()))
        trips = 2 * max(1, head_dim // 64) / best["iteration"]["UTMALDG"]
        found["load"] = ({k: v * trips for k, v in best["iteration"].items()}, best["start"])
    if arch == "sm_100a":
        # The KV loop issues the block's MMAs and commits them (UTCBAR); the
        # loops inside it that issue MMAs are K-step loops, which together
        # run the MMAs it does not issue itself.
        mmas_per_block = stages * (head_dim + block_n) // 16
        mma_loops = [t for t in table if not t["waits"] and t["all"].get("UTCHMMA", 0) > 0]
        outer = [t for t in mma_loops if t["all"].get("UTCBAR", 0) > 0]
        if outer:
            best = min(outer, key=lambda t: len(t["loop"]["blocks"]))
            inner = [t for t in mma_loops if t["loop"]["blocks"] < best["loop"]["blocks"]]
            counts = dict(best["iteration"])
            per_trip = sum(t["iteration"].get("UTCHMMA", 0) for t in inner)
            if per_trip:
                outside = counts.get("UTCHMMA", 0) - per_trip
                trips = max(1.0, (mmas_per_block - outside) / per_trip)
                for t in inner:
                    for op, n in t["iteration"].items():
                        counts[op] = counts.get(op, 0) + (trips - 1) * n
            found["mma"] = (counts, best["start"])
    return found


def model(sass_text, manifest, target):
    functions = sass_loops.parse(sass_text)
    if not functions:
        raise ValueError("no function in the SASS (is it cuobjdump -sass output?)")
    function = next(iter(functions.values()))
    plan = plan_fields(manifest)
    table = loop_table(function)
    loops = role_loops(table, manifest, plan)
    spec = TARGETS[target]
    head_dim, block_n = plan.get("headDim", 128), plan.get("blockN", 128)
    rows = plan.get("qStages", 1) * plan.get("blockM", 128)
    flops = 4 * rows * block_n * head_dim
    # 8-bit operands (operandBytes 1: QGMMA, kind::f8f6f4) run at twice the
    # 16-bit rate.
    tensor = flops / (spec["flops_per_clk"] * (2 if plan.get("operandBytes") == 1 else 1))
    sub = [{"issue": 0.0, "fma": 0.0, "alu": 0.0, "mufu": 0.0} for _ in range(4)]
    roles = []
    for role in manifest.get("roles", []):
        name = role["name"]
        kind = ("softmax" if name.startswith("softmax") else
                "consumer" if name.startswith("consumer") else name)
        if kind not in loops:
            roles.append({"role": name, "loop": None})
            continue
        counts, start = loops[kind]
        issue = sum(n for op, n in counts.items() if op != "NOP")
        units = unit_cycles(counts)
        for warp in range(role["warps"][0], role["warps"][1]):
            s = sub[warp % 4]
            s["issue"] += issue
            for unit, cycles in units.items():
                s[unit] += cycles
        roles.append({"role": name, "loop": f"{start:#06x}", "issue": round(issue, 1),
                      **{u: round(c, 1) for u, c in units.items()}})
    bounds = {"tensor": tensor}
    for unit in ("issue", "fma", "alu", "mufu"):
        bounds[unit] = max(s[unit] for s in sub)
    binding = max(bounds, key=bounds.get)
    cycles = bounds[binding]
    tflops = flops / cycles * spec["sms"] * spec["ghz"] * 1e9 / 1e12
    return {"kernel": manifest.get("kernel"), "target": target,
            "flops_per_block": flops, "cycles_per_block": round(cycles, 1),
            "bounds": {k: round(v, 1) for k, v in bounds.items()},
            "binding": binding, "tflops": round(tflops, 1),
            "peak_fraction": round(tensor / cycles, 3),
            "subpartitions": [{k: round(v, 1) for k, v in s.items()} for s in sub],
            "roles": roles}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sass", help="cuobjdump -sass output of the kernel's cubin")
    parser.add_argument("manifest", help="the kernel's launch manifest (JSON)")
    parser.add_argument("--target", choices=sorted(TARGETS),
                        help="chip to predict for (default: the manifest's arch)")
    parser.add_argument("--efficiency", type=float, default=1.0,
                        help="measured over predicted, from the H200 calibration")
    parser.add_argument("--budget", default="",
                        help="ROLE=N,...: fail when a role (softmax, consumer, mma, load) "
                             "issues more than N instructions per KV block and warp")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    budgets = {}
    for item in filter(None, args.budget.split(",")):
        role, _, limit = item.partition("=")
        if role not in ("softmax", "consumer", "mma", "load") or not limit.isdigit():
            parser.error(f"bad budget {item!r} (expected softmax|consumer|mma|load=N)")
        budgets[role] = int(limit)
    manifest = json.load(open(args.manifest))
    target = args.target or next((t for t, s in TARGETS.items()
                                  if s["arch"] == manifest.get("arch")), None)
    if target is None:
        parser.error(f"no target for arch {manifest.get('arch')!r}")
    try:
        result = model(open(args.sass).read(), manifest, target)
    except ValueError as e:
        print(f"sass-model: {args.sass}: {e}", file=sys.stderr)
        return 1
    if not 0 < args.efficiency <= 1:
        parser.error("--efficiency must be in (0, 1]")
    result["calibrated_tflops"] = round(result["tflops"] * args.efficiency, 1)
    over = []
    for role, limit in budgets.items():
        issued = [r["issue"] for r in result["roles"]
                  if r["loop"] is not None and r["role"].startswith(role)]
        if not issued:
            over.append(f"{role}: no loop found")
        elif max(issued) > limit:
            over.append(f"{role}: {max(issued)} instructions per KV block and warp, "
                        f"budget {limit}")
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return report_budgets(over)
    print(f"{result['kernel']} on {target}: {result['cycles_per_block']} cycles per KV block "
          f"({result['binding']}-bound), {result['tflops']} TFLOP/s "
          f"({100 * result['peak_fraction']:.0f}% of peak)"
          + (f", {result['calibrated_tflops']} calibrated" if args.efficiency != 1 else ""))
    print("  per block: " + " ".join(f"{k} {v}" for k, v in result["bounds"].items()))
    for r in result["roles"]:
        if r["loop"] is None:
            print(f"  {r['role']}: not counted")
        else:
            print(f"  {r['role']}: loop {r['loop']}, {r['issue']} issue, fma {r['fma']}, "
                  f"alu {r['alu']}, mufu {r['mufu']} per block and warp")
    return report_budgets(over)


def report_budgets(over):
    for line in over:
        print(f"sass-model: over budget: {line}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
