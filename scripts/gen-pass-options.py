#!/usr/bin/env python3
"""Writes the options of one pass of Passes.td as an X-macro list.

An option of a pass is declared once, in Passes.td. C++ that has to repeat
the list (the fa4-compile pipeline's options, the copy into the pass's
options struct) expands the generated file instead:

    #define FA4_PASS_OPTION(TYPE, NAME, ARGUMENT, DEFAULT, DESCRIPTION) ...
    #include "fa4/Transforms/PlanOptions.inc"

Usage: gen-pass-options.py RECORDS.json PASS OUT.inc, where RECORDS.json is
`llvm-tblgen --dump-json Passes.td` and PASS the record name (FA4Plan).
"""

import json
import sys


def c_string(text):
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def main():
    records_path, pass_name, out_path = sys.argv[1:4]
    with open(records_path) as f:
        records = json.load(f)
    if pass_name not in records:
        sys.exit(f"gen-pass-options: no record {pass_name}")
    lines = [
        f"// The options of {pass_name}, generated from Passes.td by",
        "// scripts/gen-pass-options.py: do not edit.",
        "#ifndef FA4_PASS_OPTION",
        '#error "define FA4_PASS_OPTION(TYPE, NAME, ARGUMENT, DEFAULT, '
        'DESCRIPTION) before including this file"',
        "#endif",
    ]
    for ref in records[pass_name]["options"]:
        option = records[ref["def"]]
        if "ListOption" in option["!superclasses"]:
            sys.exit(f"gen-pass-options: {pass_name}: list options are not supported")
        default = option["defaultValue"] or "{}"
        lines.append(
            "FA4_PASS_OPTION({}, {}, {}, {}, {})".format(
                option["type"], option["cppName"], c_string(option["argument"]),
                default, c_string(option["description"])))
    lines.append("#undef FA4_PASS_OPTION")
    text = "\n".join(lines) + "\n"
    # Leave an unchanged file alone so that nothing including it rebuilds.
    try:
        with open(out_path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(out_path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
