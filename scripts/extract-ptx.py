#!/usr/bin/env python3
"""Writes the PTX held by a gpu.binary (gpu-module-to-binary format=isa) to a file.

usage: extract-ptx.py IN.mlir OUT.ptx [--kernel-module NAME]

MLIR prints the assembly as an escaped string: \\XX is a byte in hex, \\\\ and
\\" are a backslash and a quote.
"""

import re
import sys


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
                continue
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        out.extend(c.encode())
        i += 1
    return out.decode()


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    source = open(argv[1]).read()
    assemblies = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', source)
    if len(assemblies) != 1:
        sys.exit(f"{argv[1]}: expected exactly one gpu.binary object with "
                 f"assembly (format=isa), found {len(assemblies)}")
    with open(argv[2], "w") as out:
        out.write(unescape(assemblies[0]))


if __name__ == "__main__":
    main(sys.argv)
