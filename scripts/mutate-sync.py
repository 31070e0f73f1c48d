#!/usr/bin/env python3
"""Mutation testing of fa4-sim: how many single-edit protocol bugs does it
catch?

Takes a synchronization-level kernel (the output of
`fa4-opt X --fa4-synchronize`), generates single-edit mutants of its
protocol, runs fa4-sim on each and classifies them:

  caught   fa4-sim fails: wrong numbers, deadlock, race or another error
  missed   every run passes
  invalid  the mutant does not parse or verify (fa4-sim exit status 2)
  timeout  a run exceeded --timeout seconds

Mutations (each mutant makes exactly one):

  drop-OP        delete one synchronization op: an mbarrier init, wait,
                 arrive or arrive.expect_tx, an MMA commit, tcgen05.wait,
                 tcgen05.fence, fence.proxy.async, TMA store commit or wait,
                 named barrier sync or arrive, gpu.barrier, wgmma commit; a
                 wgmma.wait is bypassed (its results become its operands)
  sink-OP        move a synchronization op after the next statement of its
                 block that synchronizes or accesses memory (for a fence,
                 the next that is not a fence)
  hoist-OP       move a release (arrive, commit, fence, wait) before the
                 previous such statement of its block (by moving that
                 statement after it)
  count          an mbarrier's arrival count +1, -1, doubled or halved
  parity         a wait on the other phase parity
  tx-bytes       an arrive.expect_tx's byte count halved, doubled, +128
  tmem-column    a TMEM view 32 columns left or right
  tmem-offset    a tcgen05.ld/st 16 elements left or right
  tma-coord      one coordinate of a TMA load or store +1 or +64
  wait-depth     a TMA store wait or wgmma.wait allows one more group
  threads        a named barrier op counts 128 threads more or fewer
  tcgen05-kind   a tcgen05.wait or tcgen05.fence of the other kind

Each mutant runs fa4-sim once per --sim-args (all must pass for a miss;
by default two seeds on two small ragged shapes), with --max-steps four
times the unmutated kernel's. The unmutated kernel
must pass. With --out, the directory gets report.json (every mutant: its
mutation, line, verdict and the first line of fa4-sim's report), and the
missed mutants as DIR/missed/ID.mlir with a one-line .txt description.

  scripts/mutate-sync.py kernel.sync.mlir --fa4-sim build/bin/fa4-sim \\
      --mutants 100 --seed 1 --jobs 2 --out /tmp/mutants

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

# Ops that synchronize or whose order matters to the protocol.
SYNC = re.compile(
    r"nvgpu\.mbarrier\.(init|try_wait\.parity|arrive\.expect_tx|arrive)\b|"
    r"fa4\.(mma\.commit|named_barrier\.(sync|arrive)|wgmma\.wait)\b|"
    r"nvvm\.(tcgen05\.wait|tcgen05\.fence|fence\.proxy|cp\.async\.bulk\.commit\.group|"
    r"cp\.async\.bulk\.wait_group|wgmma\.commit\.group\.sync\.aligned)\b|gpu\.barrier\b")
# Ops that access shared memory, Tensor Memory or global memory.
MEMORY = re.compile(
    r"\b(memref\.(load|store)|vector\.(load|store)|nvgpu\.tma\.async\.(load|store)|"
    r"fa4\.(tmem\.load|tmem\.store|mma|wgmma|tmem\.alloc|tmem\.dealloc|tmem\.base)|"
    r"llvm\.store)\b")
RELEASES = re.compile(
    r"nvgpu\.mbarrier\.(arrive\.expect_tx|arrive)\b|"
    r"fa4\.(mma\.commit|named_barrier\.arrive)\b|"
    r"nvvm\.(cp\.async\.bulk\.commit\.group|wgmma\.commit\.group\.sync\.aligned|"
    r"tcgen05\.fence <before>|fence\.proxy|tcgen05\.wait|cp\.async\.bulk\.wait_group)(\b|$)")
# Two seeds on two small ragged shapes: one CTA over several work tiles and
# a K/V ring that wraps (seed 1 draws rising keys, so O is rescaled), and
# Sq > Skv over two CTAs (causal tiles whose rows see no key).
DEFAULT_RUNS = ["--batch 1 --seq-q 300 --seq-kv 650 --ctas 1 --seed 1",
                "--batch 1 --seq-q 400 --seq-kv 130 --seed 2"]
FENCE = re.compile(r"nvvm\.(tcgen05\.fence|fence\.proxy)\b")
TERMINATOR = re.compile(r"^\s*(scf\.yield|gpu\.return|return|func\.return)\b")


def op_name(line):
    m = re.search(r"\b((nvgpu|nvvm|fa4|gpu|memref|vector|llvm)\.[\w.]+)", line)
    return m.group(1) if m else line.strip()[:40]


def short(line):
    text = line.strip()
    return text if len(text) <= 110 else text[:107] + "..."


def braces(line):
    """Net braces of a line, outside string literals."""
    net, quoted = 0, False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "{":
            net += 1
        elif not quoted and ch == "}":
            net -= 1
    return net


class Kernel:
    """The lines of a kernel with their block structure."""

    def __init__(self, text):
        self.lines = text.split("\n")
        n = len(self.lines)
        self.depth = [0] * (n + 1)  # depth before line i
        for i, line in enumerate(self.lines):
            self.depth[i + 1] = self.depth[i] + braces(line)
        # The last line of each statement starting at i.
        self.end = list(range(n))
        stack = []
        for i, line in enumerate(self.lines):
            closes = line.lstrip().startswith("}")
            if closes and stack and self.depth[i + 1] <= stack[-1][1]:
                start, _ = stack.pop()
                self.end[start] = i
            elif self.depth[i + 1] > self.depth[i] and not closes:
                stack.append((i, self.depth[i]))
        self.start_of = {e: s for s, e in enumerate(self.end) if e != s}
        # Roles and barrier names.
        self.role = [""] * n
        for i, line in enumerate(self.lines):
            m = re.search(r'fa4\.role "([\w.]+)"', line)
            if m:
                for j in range(i, self.end[i] + 1):
                    self.role[j] = m.group(1)
        self.barriers = {}
        for line in self.lines:
            m = re.match(r'\s*(%\w+) = nvgpu\.mbarrier\.create \{fa4\.name = "([^"]+)"\}',
                         line)
            if m:
                self.barriers[m.group(1)] = m.group(2)
        self.constants = {}
        for line in self.lines:
            m = re.match(r"\s*(%\w+) = arith\.constant (-?\d+) : (index|i32|i64)\b", line)
            if m:
                self.constants[m.group(1)] = int(m.group(2))

    def is_statement(self, i):
        line = self.lines[i].strip()
        return bool(line) and not line.startswith("}") and not line.startswith("//")

    def relevant(self, i):
        return any(SYNC.search(l) or MEMORY.search(l)
                   for l in self.lines[i:self.end[i] + 1])

    def next_statement(self, i):
        """The statement after the one starting at i, in the same block."""
        j = self.end[i] + 1
        if j >= len(self.lines) or self.depth[j] != self.depth[i] or \
                not self.is_statement(j):
            return None
        return j

    def previous_statement(self, i):
        j = i - 1
        if j < 0 or self.depth[j + 1] != self.depth[i]:
            return None
        if self.lines[j].lstrip().startswith("}"):
            return self.start_of.get(j)
        if not self.is_statement(j) or self.depth[j] != self.depth[i]:
            return None
        return j

    def where(self, i):
        role = self.role[i] or "kernel"
        return "line %d (%s)" % (i + 1, role)


def move_after(lines, first, last, target_end):
    """Moves lines [first, last] to just after line target_end (> last)."""
    block = lines[first:last + 1]
    rest = lines[:first] + lines[last + 1:]
    at = target_end - (last - first + 1) + 1
    return rest[:at] + block + rest[at:]


def insert_constant(lines, i, name, value, kind="index"):
    indent = re.match(r"\s*", lines[i]).group(0)
    return [indent + "%s = arith.constant %d : %s" % (name, value, kind)]


def mutations(k):
    """Yields (kind, description, apply) for every single-edit mutant."""
    lines = k.lines
    for i, line in enumerate(lines):
        if not k.role[i] and "nvgpu.mbarrier.init" not in line and \
                "gpu.barrier" not in line and "tcgen05.fence" not in line:
            continue
        where = k.where(i)
        sync = SYNC.search(line)
        name = op_name(line)
        bar = re.search(r"nvgpu\.mbarrier\.[\w.]+ (%\w+)\[|fa4\.mma\.commit (%\w+)\[", line)
        barrier = ""
        if bar:
            barrier = " on '%s'" % k.barriers.get(bar.group(1) or bar.group(2), "?")

        # drop
        if sync and "wgmma.wait" not in line:
            def drop(i=i):
                out = list(lines)
                del out[i]
                return out
            yield ("drop-" + name.split(".", 1)[1], "%s: delete %s%s" % (where, name, barrier),
                   drop)
        if "fa4.wgmma.wait" in line:
            m = re.match(r"\s*(%\w+)(:\d+)? = fa4\.wgmma\.wait \d+, ([^:]+) :", line)
            if m:
                def bypass(i=i, m=m):
                    result, fragments = m.group(1), [f.strip() for f in m.group(3).split(",")]
                    out = list(lines)
                    del out[i]
                    # The result is visible to the end of its block (sibling
                    # regions reuse names).
                    scope = i
                    while scope < len(out) and k.depth[scope + 2] >= k.depth[i]:
                        scope += 1
                    for j in range(i, scope):
                        if m.group(2):
                            for n, f in enumerate(fragments):
                                out[j] = re.sub(re.escape(result) + "#%d\\b" % n, f, out[j])
                        else:
                            out[j] = re.sub(re.escape(result) + r"\b(?!#)", fragments[0], out[j])
                    return out
                yield ("drop-wgmma.wait", "%s: bypass %s" % (where, short(line)), bypass)

        # sink: delay the op past the next relevant statement of its block
        # (for a fence, past the next one that is not a fence: two fences
        # commute)
        if sync and "wgmma.wait" not in line and "mbarrier.init" not in line:
            fence = FENCE.search(line)
            j = k.next_statement(i)
            while j is not None and (not k.relevant(j) or
                                     (fence and FENCE.search(lines[j]))):
                j = k.next_statement(j)
            if j is not None and not TERMINATOR.match(lines[j]):
                def sink(i=i, j=j):
                    return move_after(lines, i, i, k.end[j])
                yield ("sink-" + name.split(".", 1)[1],
                       "%s: move %s%s after %s (line %d)"
                       % (where, name, barrier, op_name(lines[j]), j + 1), sink)

        # hoist a release above the previous relevant statement
        if RELEASES.search(line):
            j = k.previous_statement(i)
            while j is not None and not k.relevant(j):
                j = k.previous_statement(j)
            if j is not None:
                def hoist(i=i, j=j):
                    return move_after(lines, j, k.end[j], i)
                yield ("hoist-" + name.split(".", 1)[1],
                       "%s: move %s%s before %s (line %d)"
                       % (where, name, barrier, op_name(lines[j]), j + 1), hoist)

        # arrival counts
        m = re.match(r"(\s*)nvgpu\.mbarrier\.init (%\w+)\[(%\w+)\], (%\w+)", line)
        if m and m.group(4) in k.constants:
            count = k.constants[m.group(4)]
            values = {count + 1, count - 1, 2 * count}
            if count % 2 == 0:
                values.add(count // 2)
            for value in sorted(v for v in values if v >= 1 and v != count):
                def recount(i=i, m=m, value=value):
                    out = list(lines)
                    out[i] = out[i].replace(", %s " % m.group(4), ", %mut_count ", 1)
                    out[i:i] = insert_constant(out, i, "%mut_count", value)
                    return out
                yield ("count", "%s: '%s' initialized with %d arrivals instead of %d"
                       % (where, k.barriers.get(m.group(2), m.group(2)), value, count),
                       recount)

        # parity
        m = re.search(r"nvgpu\.mbarrier\.try_wait\.parity %\w+\[%\w+\], (%\w+), ", line)
        if m:
            def flip(i=i, m=m):
                out = list(lines)
                indent = re.match(r"\s*", out[i]).group(0)
                out[i] = out[i].replace("], %s, " % m.group(1), "], %mut_parity, ", 1)
                out[i:i] = [indent + "%mut_true = arith.constant true",
                            indent + "%%mut_parity = arith.xori %s, %%mut_true : i1"
                            % m.group(1)]
                return out
            yield ("parity", "%s: wait%s on the other parity" % (where, barrier), flip)

        # transaction bytes
        m = re.search(r"nvgpu\.mbarrier\.arrive\.expect_tx %\w+\[%\w+\], (%\w+)", line)
        if m and m.group(1) in k.constants:
            tx = k.constants[m.group(1)]
            for value in sorted({tx // 2, 2 * tx, tx + 128}):
                def retx(i=i, m=m, value=value):
                    out = list(lines)
                    out[i] = re.sub(re.escape(m.group(1)) + r"\b", "%mut_tx", out[i], count=1)
                    out[i:i] = insert_constant(out, i, "%mut_tx", value)
                    return out
                yield ("tx-bytes", "%s: expect_tx%s of %d bytes instead of %d"
                       % (where, barrier, value, tx), retx)

        # TMEM columns and offsets
        m = re.search(r"fa4\.tmem\.view (%\w+)\[(\d+)\]", line)
        if m:
            for delta in (-32, 32):
                column = int(m.group(2)) + delta
                if column < 0:
                    continue
                def recolumn(i=i, m=m, column=column):
                    out = list(lines)
                    out[i] = out[i].replace(m.group(0), "fa4.tmem.view %s[%d]"
                                            % (m.group(1), column), 1)
                    return out
                named = re.search(r'fa4\.name = "(\w+)"', line)
                yield ("tmem-column", "%s: TMEM view %s at column %d instead of %s"
                       % (where, named.group(1) if named else "", column, m.group(2)),
                       recolumn)
        m = re.search(r"fa4\.tmem\.(load|store) (%\w+, )?(%\w+)\[(\d+)\]", line)
        if m:
            for delta in (-16, 16):
                offset = int(m.group(4)) + delta
                if offset < 0:
                    continue
                def reoffset(i=i, m=m, offset=offset):
                    out = list(lines)
                    old = m.group(0)
                    new = old[:old.rindex("[")] + "[%d]" % offset
                    out[i] = out[i].replace(old, new, 1)
                    return out
                yield ("tmem-offset", "%s: tmem.%s at element %d instead of %s"
                       % (where, m.group(1), offset, m.group(4)), reoffset)

        # TMA coordinates
        m = re.search(r"nvgpu\.tma\.async\.(load|store) .*?(%\w+)\[([^\]]+)\]", line) \
            if "nvgpu.tma.async" in line else None
        if m:
            if m.group(1) == "load":
                coords = re.search(r"nvgpu\.tma\.async\.load %\w+\[([^\]]+)\]", line)
            else:
                coords = re.search(r" to %\w+\[([^\]]+)\]", line)
            if coords:
                values = [c.strip() for c in coords.group(1).split(",")]
                for n, value in enumerate(values):
                    for delta in (1, 64):
                        def recoord(i=i, coords=coords, values=values, n=n, delta=delta):
                            out = list(lines)
                            indent = re.match(r"\s*", out[i]).group(0)
                            new = list(values)
                            new[n] = "%mut_coord"
                            start, stop = coords.span(1)
                            out[i] = out[i][:start] + ", ".join(new) + out[i][stop:]
                            out[i:i] = [indent + "%%mut_delta = arith.constant %d : index" % delta,
                                        indent + "%%mut_coord = arith.addi %s, %%mut_delta : index"
                                        % values[n]]
                            return out
                        yield ("tma-coord", "%s: TMA %s coordinate %d (%s) + %d"
                               % (where, m.group(1), n, values[n], delta), recoord)

        # wait depths
        m = re.search(r"(nvvm\.cp\.async\.bulk\.wait_group|fa4\.wgmma\.wait) (\d+)", line)
        if m:
            def deepen(i=i, m=m):
                out = list(lines)
                out[i] = out[i].replace(m.group(0), "%s %d" % (m.group(1), int(m.group(2)) + 1), 1)
                return out
            yield ("wait-depth", "%s: %s allows %d pending groups instead of %s"
                   % (where, m.group(1), int(m.group(2)) + 1, m.group(2)), deepen)

        # named barrier thread counts
        m = re.search(r"fa4\.named_barrier\.(sync|arrive) (\d+), (\d+) threads", line)
        if m:
            for delta in (-128, 128):
                threads = int(m.group(3)) + delta
                if threads <= 0:
                    continue
                def rethread(i=i, m=m, threads=threads):
                    out = list(lines)
                    out[i] = out[i].replace(m.group(0), "fa4.named_barrier.%s %s, %d threads"
                                            % (m.group(1), m.group(2), threads), 1)
                    return out
                yield ("threads", "%s: named_barrier.%s %s counts %d threads instead of %s"
                       % (where, m.group(1), m.group(2), threads, m.group(3)), rethread)

        # tcgen05 wait and fence kinds
        for pattern, a, b in ((r"nvvm\.tcgen05\.wait <(load|store)>", "load", "store"),
                              (r"nvvm\.tcgen05\.fence <(before|after)>",
                               "before", "after")):
            m = re.search(pattern, line)
            if m:
                other = b if m.group(1) == a else a
                def rekind(i=i, m=m, other=other):
                    out = list(lines)
                    out[i] = out[i].replace(m.group(0), m.group(0).replace(m.group(1), other), 1)
                    return out
                yield ("tcgen05-kind", "%s: %s instead of %s" % (where, short(
                    m.group(0).replace(m.group(1), other)), m.group(1)), rekind)


def classify(output):
    """What fa4-sim reported first: deadlock, race, numbers (O or LSE wrong
    or never written), phase (an arrival not ordered after the barrier's
    previous phase), early-use (a result used before its wait returns it),
    contract (a wait that does not retire what it promises), or error."""
    report = first_report(output, None)
    if "deadlock" in report:
        return "deadlock"
    if report.startswith("race on"):
        return "race"
    if re.search(r"error: (O differs|O\[.*\] was never written|LSE differs)", report):
        return "numbers"
    if "is not ordered after the completion of phase" in report:
        return "phase"
    if re.search(r"uses the result of .* before|which may still run", report):
        return "early-use"
    if re.search(r"retires \w+ accesses, but|exits with TMA stores", report):
        return "contract"
    return "error"


def first_report(output, limit=300):
    """The first line of fa4-sim's report that is not a seed's verdict."""
    lines = [l.strip() for l in output.split("\n") if l.strip()]
    for line in lines:
        if not line.startswith("seed "):
            return line[:limit]
    for line in lines:
        if "FAIL" in line:
            return line[:limit]
    return output.strip()[:limit]


def run_sim(fa4_sim, path, sim_args, max_steps, timeout):
    """Returns (verdict, category, report, steps) over all runs."""
    steps = 0
    for args in sim_args:
        command = [fa4_sim, path] + shlex.split(args)
        if max_steps:
            command += ["--max-steps", str(max_steps)]
        try:
            result = subprocess.run(command, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, timeout=timeout,
                                    universal_newlines=True)
        except subprocess.TimeoutExpired:
            return "timeout", "timeout", "over %d s: %s" % (timeout, " ".join(command)), steps
        if result.returncode == 2:
            return "invalid", "invalid", first_report(result.stdout), steps
        if result.returncode != 0:
            return "caught", classify(result.stdout), first_report(result.stdout), steps
        for m in re.finditer(r"(\d+) steps", result.stdout):
            steps = max(steps, int(m.group(1)))
    return "missed", "missed", "", steps


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel", help="synchronization-level kernel (.mlir)")
    parser.add_argument("--fa4-sim", default="fa4-sim", help="the fa4-sim binary")
    parser.add_argument("--mutants", type=int, default=0,
                        help="mutants to run, drawn at random (default: all)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the draw")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", help="directory for report.json and the missed mutants")
    parser.add_argument("--sim-args", action="append",
                        help="fa4-sim options of one run, repeatable (default: "
                             "two runs: '%s' and '%s')" % tuple(DEFAULT_RUNS))
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds per fa4-sim run")
    parser.add_argument("--kinds", help="comma-separated mutation kinds to keep "
                        "(prefixes: drop, sink, hoist, count, ...)")
    parser.add_argument("--ids", help="comma-separated mutant ids to run (as "
                        "--list and report.json number them), instead of a draw")
    parser.add_argument("--list", action="store_true",
                        help="list the mutants and exit")
    args = parser.parse_args()
    sim_args = args.sim_args or DEFAULT_RUNS

    with open(args.kernel) as f:
        kernel = Kernel(f.read())
    candidates = list(mutations(kernel))
    if args.kinds:
        keep = args.kinds.split(",")
        candidates = [c for c in candidates if any(c[0].startswith(p) for p in keep)]
    rng = random.Random(args.seed)
    chosen = list(range(len(candidates)))
    if args.ids:
        chosen = [int(n) for n in args.ids.split(",")]
    elif args.mutants and args.mutants < len(chosen):
        chosen = sorted(rng.sample(chosen, args.mutants))
    if args.list:
        for n in chosen:
            print("%4d %-22s %s" % (n, candidates[n][0], candidates[n][1]))
        return 0

    workdir = tempfile.mkdtemp(prefix="mutate-sync-")
    base = os.path.join(workdir, "base.mlir")
    with open(base, "w") as f:
        f.write("\n".join(kernel.lines))
    started = time.time()
    verdict, category, report, steps = run_sim(args.fa4_sim, base, sim_args, 0,
                                               args.timeout)
    if verdict != "missed":
        sys.exit("mutate-sync: the unmutated kernel does not pass (%s): %s"
                 % (category, report))
    max_steps = 4 * steps
    print("mutate-sync: %s: %d candidate mutants, running %d (baseline %.1f s, "
          "%d steps)" % (args.kernel, len(candidates), len(chosen),
                         time.time() - started, steps), flush=True)

    def one(n):
        kind, description, apply = candidates[n]
        path = os.path.join(workdir, "m%04d.mlir" % n)
        text = "\n".join(apply())
        with open(path, "w") as f:
            f.write(text)
        t = time.time()
        result = run_sim(args.fa4_sim, path, sim_args, max_steps, args.timeout)
        os.unlink(path)
        return n, text, result, time.time() - t

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for n, text, (verdict, category, report, _), seconds in pool.map(one, chosen):
            kind, description, _ = candidates[n]
            results.append({"id": n, "kind": kind, "mutation": description,
                            "verdict": verdict, "category": category,
                            "report": report, "seconds": round(seconds, 1)})
            print("%4d %-8s %-9s %-20s %s" % (n, verdict, category, kind, description),
                  flush=True)
            if verdict == "missed" and args.out:
                os.makedirs(os.path.join(args.out, "missed"), exist_ok=True)
                with open(os.path.join(args.out, "missed", "%04d.mlir" % n), "w") as f:
                    f.write(text)
                with open(os.path.join(args.out, "missed", "%04d.txt" % n), "w") as f:
                    f.write("%s: %s\n" % (kind, description))
    os.unlink(base)
    os.rmdir(workdir)

    counts = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    valid = counts.get("caught", 0) + counts.get("missed", 0)
    rate = 100.0 * counts.get("caught", 0) / valid if valid else 0.0
    summary = ("mutate-sync: %d mutants: %d caught, %d missed, %d invalid, %d timeout; "
               "detection rate %.1f%% of the valid ones (%.0f s)"
               % (len(results), counts.get("caught", 0), counts.get("missed", 0),
                  counts.get("invalid", 0), counts.get("timeout", 0), rate,
                  time.time() - started))
    print(summary)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump({"kernel": args.kernel, "sim_args": sim_args,
                       "candidates": len(candidates), "summary": summary,
                       "mutants": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
