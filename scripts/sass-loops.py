#!/usr/bin/env python3
"""Per-loop instruction counts of a kernel's SASS (cuobjdump -sass output).

A loop is the code between a branch target and a later branch back to it.
For each loop of each function the script prints its address range, how
many instructions it holds and how many of each opcode class (the mnemonic
before its first '.', so FSEL and ISETP.GE.AND count as FSEL and ISETP),
innermost loops first within a function. This is what the hot loops of a
kernel cost per iteration, up to the unit each instruction issues to.

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


def parse(text):
    """{function: [(address, opcode, operands text)], labels {name: address}}."""
    functions = collections.OrderedDict()
    current, pending = None, []
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = functions.setdefault(m.group(1), {"code": [], "labels": {}})
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
        body = PREDICATE.sub("", m.group(2))
        opcode, _, operands = body.partition(" ")
        for label in pending:
            current["labels"][label] = address
        pending = []
        current["code"].append((address, opcode, operands))
    return functions


def loops(function):
    """(start, end) address ranges of the loops, innermost first."""
    found = set()
    for address, opcode, operands in function["code"]:
        if opcode.split(".")[0] not in BRANCHES:
            continue
        m = TARGET.search(operands)
        if not m:
            continue
        target = (function["labels"].get(m.group(1)) if m.group(1)
                  else int(m.group(2), 16))
        # A branch to itself is the trap after EXIT, not a loop.
        if target is not None and target < address:
            found.add((target, address))
    return sorted(found, key=lambda r: (r[1] - r[0], r[0]))


def count(function, start, end):
    classes = collections.Counter()
    for address, opcode, _ in function["code"]:
        if start <= address <= end and opcode != "NOP":
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
        for start, end in loops(function):
            classes = count(function, start, end)
            shown = ({c: classes.get(c, 0) for c in wanted} if wanted
                     else dict(classes.most_common(8)))
            entry["loops"].append({"start": f"{start:#06x}", "end": f"{end:#06x}",
                                   "instructions": sum(classes.values()),
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
            print(f"  loop {loop['start']}-{loop['end']}: {loop['instructions']} "
                  f"instructions: {classes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
