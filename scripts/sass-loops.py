#!/usr/bin/env python3
"""Per-loop instruction counts of a kernel's SASS (cuobjdump -sass output).

The code is split into basic blocks; loops are natural loops (a branch to
a block that dominates it), so the branch back from an out-of-line wait
retry is no loop, and role code entered through the dispatch's jump table
(BRX) counts from its first block. For each loop the script prints its
header address and last address, how many instructions its blocks hold,
how many one iteration runs when every mbarrier wait succeeds at once (the
loop less the wait-retry loops nested in it, which are marked "(wait)"; a
conditional path inside counts as taken), and how many of each opcode
class one iteration runs (the mnemonic before its first '.', so FSEL and
ISETP.GE.AND count as FSEL and ISETP), innermost loops first. This is what
the hot loops of a kernel cost per iteration, up to the unit each
instruction issues to.

  cuobjdump -sass kernel.cubin > kernel.sass      (on the GPU machine)
  scripts/sass-loops.py kernel.sass [--classes FSEL,ISETP,MUFU] [--json]

Python 3 standard library only.
"""

import argparse
import collections
import json
import re
import sys

FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
# /*0a40*/  @!P0 BRA `(.L_x_12) ;   or   /*0a40*/  BRA 0xa00 ;
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")
PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")
TARGET = re.compile(r"`\((\.L_x_\d+)\)|\b0x([0-9a-fA-F]+)\b")
BRANCHES = {"BRA", "BRX", "JMP", "JMX"}
EXITS = {"EXIT", "RET"}


def parse(text):
    """{function: [(address, opcode, operands text)], labels {name: address}}."""
    functions = collections.OrderedDict()
    current, pending = None, []
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = functions.setdefault(m.group(1), {"code": [], "labels": {},
                                                        "predicated": []})
            pending = []
            continue
        if current is None:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTRUCTION.match(line)
        if not m:
            continue
        address = int(m.group(1), 16)
        current["predicated"].append(bool(PREDICATE.match(m.group(2))))
        body = PREDICATE.sub("", m.group(2))
        opcode, _, operands = body.partition(" ")
        for label in pending:
            current["labels"][label] = address
        pending = []
        current["code"].append((address, opcode, operands))
    return functions


def blocks(function):
    """Basic blocks [(first, last) instruction indices] and their successors:
    a block ends at a branch or exit or before a branch target; a predicated
    branch or exit also falls through."""
    code = function["code"]
    index = {address: i for i, (address, _, _) in enumerate(code)}
    leaders = {0}
    targets = {}
    for i, (address, opcode, operands) in enumerate(code):
        base = opcode.split(".")[0]
        if base in BRANCHES or base in EXITS:
            leaders.add(i + 1)
        if base in BRANCHES:
            m = TARGET.search(operands)
            target = None
            if m:
                target = (function["labels"].get(m.group(1)) if m.group(1)
                          else int(m.group(2), 16))
            if target in index:
                targets[i] = index[target]
                leaders.add(index[target])
    starts = sorted(x for x in leaders if x < len(code))
    spans = [(start, end - 1) for start, end in zip(starts, starts[1:] + [len(code)])]
    block_of = {start: n for n, (start, _) in enumerate(spans)}
    successors = []
    for n, (start, last) in enumerate(spans):
        _, opcode, _ = code[last]
        base = opcode.split(".")[0]
        # @P0 BRA, or a uniform predicate operand: BRA.U !UP0, target.
        predicated = (function["predicated"][last] or
                      bool(re.match(r"!?U?P[0-9T]+\s*,", code[last][2])))
        out = []
        if last in targets:
            out.append(block_of[targets[last]])
        falls = not (base in BRANCHES or base in EXITS) or predicated
        if falls and n + 1 < len(spans):
            out.append(n + 1)
        successors.append(out)
    return spans, successors


def dominators(successors):
    """dom[n]: the blocks that dominate block n. The entry is block 0; code
    that no branch from it reaches is entered through an indirect branch
    (the role dispatch's jump table, BRX) at its first block, so the first
    block not reached from the entries so far is an entry too. All entries
    hang off a virtual root, numbered len(successors)."""
    root = len(successors)
    entries, reached = [], set()
    for n in range(root):
        if n in reached:
            continue
        entries.append(n)
        stack = [n]
        reached.add(n)
        while stack:
            for m in successors[stack.pop()]:
                if m not in reached:
                    reached.add(m)
                    stack.append(m)
    graph = successors + [entries]
    order, seen, stack = [], {root}, [root]
    while stack:
        n = stack.pop()
        order.append(n)
        for m in graph[n]:
            if m not in seen:
                seen.add(m)
                stack.append(m)
    predecessors = collections.defaultdict(list)
    for n in order:
        for m in graph[n]:
            predecessors[m].append(n)
    dom = {n: set(order) for n in order}
    dom[root] = {root}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            new = set.intersection(*(dom[p] for p in predecessors[n] if p in dom)) | {n}
            if new != dom[n]:
                dom[n], changed = new, True
    del dom[root]
    return dom, predecessors


def loops(function):
    """The natural loops: for each header (the target of a branch from a
    block it dominates), the blocks that reach such a branch without passing
    the header. A branch back to a block that does not dominate it (the
    return from an out-of-line wait, say) is no loop. Innermost first; each
    loop as {"header", "blocks", and the function's "spans" and
    "successors"}."""
    spans, successors = blocks(function)
    dom, predecessors = dominators(successors)
    bodies = collections.defaultdict(set)
    for n in dom:
        for h in successors[n]:
            if h in dom[n]:
                body, stack = {h, n}, [n]
                while stack:
                    m = stack.pop()
                    if m == h:
                        continue
                    for p in predecessors[m]:
                        if p not in body:
                            body.add(p)
                            stack.append(p)
                bodies[h] |= body
    # A block that is one branch to itself is the trap after EXIT.
    found = [{"header": h, "blocks": body, "spans": spans, "successors": successors}
             for h, body in bodies.items()
             if not (body == {h} and spans[h][0] == spans[h][1])]
    return sorted(found, key=lambda l: (len(l["blocks"]), l["header"]))


def waits(function, loop, found):
    """Whether a loop only retries an mbarrier wait: an innermost loop of a
    few instructions that test the barrier and sleep. An iteration of a
    loop around it runs it only when the wait does not succeed at once."""
    if any(inner["blocks"] < loop["blocks"] for inner in found):
        return False
    code = function["code"]
    body = [code[i][1] for b in loop["blocks"]
            for i in range(loop["spans"][b][0], loop["spans"][b][1] + 1)]
    return len(body) <= 16 and any(op.startswith("NANOSLEEP") for op in body)


def iteration_blocks(function, loop, found):
    """The blocks one iteration of `loop` runs when every wait succeeds at
    once: its blocks less the wait loops nested in it and the blocks only
    they reach (their exits back into the loop)."""
    cold = set()
    for inner in found:
        if inner["blocks"] < loop["blocks"] and waits(function, inner, found):
            cold |= inner["blocks"]
    successors = loop["successors"]
    hot, stack = {loop["header"]}, [loop["header"]]
    while stack:
        n = stack.pop()
        for m in successors[n]:
            if m in loop["blocks"] and m not in cold and m not in hot:
                hot.add(m)
                stack.append(m)
    return hot


def count(function, loop, which):
    classes = collections.Counter()
    code = function["code"]
    for b in which:
        first, last = loop["spans"][b]
        for _, opcode, _ in code[first:last + 1]:
            if opcode != "NOP":
                classes[opcode.split(".")[0]] += 1
    return classes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sass", help="cuobjdump -sass output ('-' for stdin)")
    parser.add_argument("--classes", default="",
                        help="comma-separated opcode classes to print (default: the 8 "
                             "most frequent of each loop)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.sass == "-" else open(args.sass).read()
    functions = parse(text)
    if not functions:
        print(f"sass-loops: no function in {args.sass} (is it cuobjdump -sass output?)",
              file=sys.stderr)
        return 1
    wanted = [c for c in args.classes.split(",") if c]
    report = []
    for name, function in functions.items():
        size = sum(1 for _, opcode, _ in function["code"] if opcode != "NOP")
        entry = {"function": name, "instructions": size, "loops": []}
        found = loops(function)
        for loop in found:
            code = function["code"]
            addresses = [code[i][0] for b in loop["blocks"]
                         for i in range(loop["spans"][b][0], loop["spans"][b][1] + 1)]
            classes = count(function, loop, loop["blocks"])
            iteration = count(function, loop, iteration_blocks(function, loop, found))
            shown = ({c: iteration.get(c, 0) for c in wanted} if wanted
                     else dict(iteration.most_common(8)))
            entry["loops"].append({"start": f"{code[loop['spans'][loop['header']][0]][0]:#06x}",
                                   "end": f"{max(addresses):#06x}",
                                   "instructions": sum(classes.values()),
                                   "iteration": sum(iteration.values()),
                                   "waits": waits(function, loop, found),
                                   "classes": shown})
        report.append(entry)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    for entry in report:
        print(f"{entry['function']}: {entry['instructions']} instructions, "
              f"{len(entry['loops'])} loops")
        for loop in entry["loops"]:
            classes = " ".join(f"{k} {v}" for k, v in loop["classes"].items())
            kind = " (wait)" if loop["waits"] else ""
            print(f"  loop {loop['start']}-{loop['end']}{kind}: {loop['instructions']} "
                  f"instructions, {loop['iteration']} per iteration: {classes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
