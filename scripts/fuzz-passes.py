#!/usr/bin/env python3
"""Mutation fuzzing of every fa4-compile stage: bad IR must be diagnosed.

For each seed module (default examples/*.mlir) and target (sm_100a,
sm_90a; the example as written and with `causal` toggled), the script
runs the passes of `fa4-compile` one at a time and keeps the IR after
each one, the *stage IR* (semantic, planned, tiled, specialized,
canonicalized, cse, tmem-placed, smem-placed, barriers, warps-lowered,
strided-expanded, cf, nvvm, aligned, nvvm-canonicalized, nvvm-cse,
llvm, reconciled, assembled, llvm-verified, binary), printed both
generic and pretty. Each mutant takes one stage IR, applies one to three
random edits and runs what is left:

  parse     fa4-opt MUTANT (parse and verify only)
  passes    fa4-opt MUTANT --pass-pipeline='builtin.module(REST)' where
            REST are the passes after the stage, ending with
            fa4-emit-kernels into a temporary directory
  sim       fa4-sim on mutants of the synchronization level (barriers),
            small shapes, --max-steps a few times the unmutated kernel's

Edits (kinds, chosen at random; --kinds restricts them):

  int         an integer literal -> 0, 1, -1, +-1, x2, /2, -x, 2^31,
              2^31-1, 2^32, 2^63-1, -2^63, 2^64, a small or random value
  float       a float literal -> 0, -1, huge, NaN, inf, -inf, x2
  dim         a static or dynamic dimension of a shaped type (one
              occurrence, or every occurrence of that type)
  type        every occurrence of a type replaced by another type of the
              module with the same head (memref<...> by memref<...>)
  attr-drop   an entry of an attribute dictionary, of a property
              dictionary or of a parameter list (#fa4.plan<...>, the
              fa4.launch manifest and its nested dictionaries)
  attr-value  an entry's value replaced by another kind of value or by
              the value of another entry of the module
  attr-key    an entry's key renamed, or the entry duplicated
  attr-copy   an entry copied into another dictionary (over the entry
              of the same key there, if any)
  string      a string literal emptied, extended, truncated, swapped
  array       an array element dropped, duplicated, swapped or changed
  op-delete   an op deleted; the uses of its results take another value
              of the same type that is visible there (else the op must
              have no uses)
  op-dup      an op duplicated (new result names), its later uses
              possibly moved to the copy
  op-swap     two ops of a block exchanged (a sibling within 4 ops)
  operand     one operand replaced by another visible value of its type
  op-rename   an op renamed to another op of the module in the same
              dialect (generic form only)

Classification of each step and of the mutant (the worst step):

  invalid     the mutant does not parse or verify (exit 1 with error:)
  diagnosed   a pass or fa4-sim refused it with an error: diagnostic
  accepted    every step exited 0
  undiagnosed exit 1 without any error: line (for fa4-sim: nor a FAIL verdict)
  crash       a signal, an exit status other than 0/1 (0/1/2 for
              fa4-sim), or Assertion / LLVM ERROR / Stack dump /
              UNREACHABLE / PLEASE submit a bug report in the output
  upstream    a crash of the parse step whose stack trace has no fa4
              frame: an upstream dialect's parser or verifier failing
              on the mutant before any fa4 code runs (known in LLVM 22:
              the llvm.extractvalue and llvm.insertvalue parsers and
              verifier on a position of 2^32 or more, the
              llvm.mlir.addressof verifier on a global whose addr_space
              is not an integer); or a crash of the upstream passes
              after fa4-verify-llvm-ir (gpu-module-to-binary) on a
              mutant of a later stage that fa4-verify-llvm-ir refuses
              (the guard step)
  hang        a step ran past --timeout seconds

Crashes, hangs and undiagnosed failures are findings: each is saved as
OUT/findings/SIG/ID.mlir with ID.sh (the command) and ID.log (its
output), SIG grouping them by the assertion, error message or top stack
frame. Upstream crashes are saved the same way, to be reported where
they belong, but are not fa4's findings. OUT/report.json lists every
mutant (target, stage, edits, class per step, signature);
OUT/summary.txt has the tables per stage and class. The exit status is 1
when there is a finding in fa4's code (crash, hang or undiagnosed).

  scripts/fuzz-passes.py --mutants 1000 --seed 1 --out /tmp/fuzz
  scripts/fuzz-passes.py my.mlir --archs sm_90a --stages 'nvvm|llvm' \\
      --kinds int,attr-drop --mutants 50 --out /tmp/fuzz90

Python 3 standard library only.
"""

import argparse
import collections
import concurrent.futures
import copy
import glob
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The passes of fa4-compile (lib/Transforms/Pipeline.cpp) one by one: the
# stage each one produces and its element of a --pass-pipeline. The
# semantic stage is the input itself.
PIPELINE = [
    ("planned", "fa4-plan{arch=@ARCH@}"),
    ("tiled", "fa4-tile"),
    ("specialized", "fa4-specialize"),
    ("canonicalized", "canonicalize"),
    ("cse", "cse"),
    ("tmem-placed", "fa4-allocate-tmem"),
    ("smem-placed", "fa4-allocate-smem"),
    ("barriers", "fa4-insert-barriers"),
    ("warps-lowered", "fa4-lower-warp-specialize"),
    ("strided-expanded", "gpu.module(expand-strided-metadata)"),
    ("cf", "gpu.module(convert-scf-to-cf)"),
    ("nvvm", "gpu.module(convert-gpu-to-nvvm{index-bitwidth=32})"),
    ("aligned", "gpu.module(fa4-align-shared-memory)"),
    ("nvvm-canonicalized", "gpu.module(canonicalize)"),
    ("nvvm-cse", "gpu.module(cse)"),
    ("llvm", "convert-nvvm-to-llvm"),
    ("reconciled", "reconcile-unrealized-casts"),
    ("assembled", "fa4-assemble-manifest"),
    ("llvm-verified", "fa4-verify-llvm-ir"),
    ("binary", "gpu-module-to-binary{format=isa}"),
    ("emitted", "fa4-emit-kernels{emit-dir=@EMIT@ report=false@PTXAS@}"),
]
STAGES = ["semantic"] + [name for name, _ in PIPELINE[:-1]]
SYNC_STAGE = "barriers"
# The first stage after fa4-verify-llvm-ir, the check fa4-compile runs
# before the upstream gpu-module-to-binary.
GUARDED_STAGE = "llvm-verified"

KINDS = ["int", "float", "dim", "type", "attr-drop", "attr-value", "attr-key",
         "attr-copy", "string", "array", "op-delete", "op-dup", "op-swap", "operand",
         "op-rename"]
# Kinds that need the operand and result types of the generic form.
GENERIC_ONLY = {"operand", "op-rename"}

CRASH = re.compile(r"Assertion .* failed|LLVM ERROR|Stack dump|UNREACHABLE|"
                   r"PLEASE submit a bug report|Segmentation fault|"
                   r"terminate called|Aborted")
SEVERITY = ["accepted", "diagnosed", "invalid", "upstream", "undiagnosed", "hang",
            "crash"]
FINDINGS = {"crash", "hang", "undiagnosed"}
# Saved like findings but not failing the campaign: upstream code crashing on
# a mutant that fa4 never hands it (see "upstream" in the docstring).
UPSTREAM = {"upstream"}

# ---------------------------------------------------------------------------
# Running tools.


TOOL_ENV = dict(os.environ)
_symbolizer = shutil.which("llvm-symbolizer") or "/usr/lib/llvm-22/bin/llvm-symbolizer"
if os.path.exists(_symbolizer):
    TOOL_ENV.setdefault("LLVM_SYMBOLIZER_PATH", _symbolizer)


def run_tool(cmd, timeout):
    """(returncode or None on timeout, output, seconds). A tool past its
    time gets SIGABRT first, so that LLVM prints where it was."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            env=TOOL_ENV)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        # The tool and whatever it started (ptxas) form their own group.
        try:
            proc.send_signal(signal.SIGABRT)
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            out = b""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        rest, _ = proc.communicate()
        out = (out or b"") + (rest or b"")
        rc = None
    text = out.decode("utf-8", "replace")
    return rc, text, time.monotonic() - start


def classify(rc, out, ok=(0, 1), verdict=None):
    """`verdict`: besides error: diagnostics, what else counts as one (a
    failed fa4-sim seed)."""
    if rc is None:
        return "hang"
    if rc < 0 or rc not in ok or CRASH.search(out):
        return "crash"
    if rc == 0:
        return "accepted"
    if re.search(r"(^|\s)error:", out) or (verdict and re.search(verdict, out, re.M)):
        return "diagnosed"
    return "undiagnosed"


FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+ (.*)$", re.M)
BORING_FRAME = re.compile(
    r"llvm::sys::|SignalHandler|__restore_rt|\braise\b|\babort\b|__assert_fail|"
    r"libc\.so|llvm::report_fatal_error|llvm_unreachable_internal|"
    r"PrintStackTrace|RunSignalHandlers|CleanupOnSignal|__pthread_kill|"
    r"gsignal|^\(|^0x|std::terminate|__cxa|__gnu_cxx|llvm::llvm_unreachable")


def normalize(text):
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    text = re.sub(r"\d+", "N", text)
    return text.strip()[:200]


def fa4_frames(frames):
    """The frames of fa4's code: its namespace, or its binaries' own code
    (MLIR and LLVM are shared libraries), the entry point aside."""
    return [f for f in frames if (re.search(r"fa4::|/fa4-(opt|sim)\+", f) and
                                  not re.search(r"\bmain\b|_start\b", f))]


def upstream_only(out):
    """A crash with a stack trace none of whose frames is fa4's."""
    frames = FRAME.findall(out)
    return bool(frames) and not fa4_frames(frames)


def parse_class(cls, out):
    """The class of the parse step: a module that does not parse or verify
    is invalid, and a crash only upstream code is on the stack of is not
    fa4's."""
    if cls == "diagnosed":
        return "invalid"
    if cls == "crash" and upstream_only(out):
        return "upstream"
    return cls


def classify_files(args):
    """--classify: the parse step on given modules, as a mutant's."""
    for path in args.inputs:
        rc, out, _ = run_tool([args.fa4_opt, path, "-o", os.devnull], args.timeout)
        cls = parse_class(classify(rc, out), out)
        sig = signature(cls, out) if cls in FINDINGS | UPSTREAM else ""
        print(f"{path}: {cls}" + (f" {sig}" if sig else ""))
    return 0


def signature(kind, out):
    """What identifies a finding: its message and top interesting frame."""
    parts = [kind]
    m = re.search(r"Assertion `(.*)' failed", out)
    if m:
        parts.append("assert: " + m.group(1)[:200])
    else:
        m = (re.search(r"LLVM ERROR: (.*)", out) or
             re.search(r"(.*)\n?.*UNREACHABLE executed", out))
        if m:
            parts.append(normalize(m.group(1)))
    frames = FRAME.findall(out)
    for frame in frames:
        if not BORING_FRAME.search(frame):
            frame = re.sub(r"\s*\(/.*\)$", "", frame)      # (path+0x...)
            frame = re.sub(r"\s*\+ \d+$", "", frame)
            parts.append(frame[:160])
            break
    if frames:
        # Whether fa4's code is on the stack (its binaries' frames or its
        # namespace), or only upstream MLIR/LLVM.
        ours = fa4_frames(frames)
        parts.insert(1, "fa4" if ours else "upstream")
        if ours:
            first = re.sub(r"\s*\(/.*\)$", "", ours[0])[:160]
            if first not in parts:
                parts.append("in " + first)
    if kind == "undiagnosed":
        lines = [l for l in out.splitlines() if l.strip()]
        parts.append(normalize(lines[-1]) if lines else "no output")
    return " | ".join(parts)


# ---------------------------------------------------------------------------
# A tiny reader of the textual form: strings, brackets, ops, values, types.

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
VALUE = r"%[\w$.-]+"
GENERIC_OP = re.compile(r'^(\s*)(?:(%[\w$.-]+)(?::(\d+))? = )?"([\w$.-]+)"\(')
PRETTY_OP = re.compile(
    r"^(\s*)(?:((?:%[\w$.-]+(?::\d+)?)(?:, %[\w$.-]+(?::\d+)?)*) = )?"
    r"([a-z_][\w$-]*\.[\w$.-]+)\b")
LABEL = re.compile(r"^\s*\^[\w$.-]+(\((.*)\))?:")
TERMINATOR = re.compile(r"(yield|return|terminator|\.br$|cond_br|switch|"
                        r"unreachable|module_end|\.end$)")
OPENERS, CLOSERS = "([{<", ")]}>"


def string_mask(line):
    """Per character: inside a string literal."""
    mask = [False] * len(line)
    for m in STRING.finditer(line):
        for i in range(m.start(), m.end()):
            mask[i] = True
    return mask


def brace_delta(line):
    return sum((c == "{") - (c == "}") for c, s in zip(line, string_mask(line)) if not s)


def match_bracket(text, start, mask=None):
    """Index of the bracket closing text[start], or -1. '->' and '>=' are
    not closers."""
    if mask is None:
        mask = string_mask(text)
    stack = []
    i = start
    while i < len(text):
        c = text[i]
        if not mask[i]:
            if c in OPENERS:
                stack.append(CLOSERS[OPENERS.index(c)])
            elif c in CLOSERS:
                if c == ">" and i > 0 and text[i - 1] == "-":
                    i += 1
                    continue
                if not stack or stack[-1] != c:
                    return -1
                stack.pop()
                if not stack:
                    return i
        i += 1
    return -1


def split_top(text, mask=None):
    """Top-level comma-separated pieces of text as (start, end) spans."""
    if mask is None:
        mask = string_mask(text)
    spans, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if mask[i]:
            continue
        if c in OPENERS:
            depth += 1
        elif c in CLOSERS and not (c == ">" and i > 0 and text[i - 1] == "-"):
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(text)))
    return spans


def split_types(text):
    return [text[a:b].strip() for a, b in split_top(text) if text[a:b].strip()]


def function_type(line):
    """(operand types, result types) of the trailing ': (..) -> ..' of a
    generic op's last line, or None."""
    for m in re.finditer(r" : \(", line):
        start = m.end() - 1
        close = match_bracket(line, start)
        if close < 0:
            continue
        rest = line[close + 1:]
        arrow = re.match(r"\s*->\s*(.*?)\s*$", rest)
        if not arrow:
            continue
        results = arrow.group(1)
        if results.startswith("("):
            end = match_bracket(results, 0)
            if end != len(results) - 1:
                continue
            results = results[1:-1]
        return split_types(line[start + 1:close]), split_types(results)
    return None


class Op:
    __slots__ = ("start", "end", "name", "results", "depth", "parent", "indent")


class Module:
    """The lines of a module with its ops, blocks and typed values."""

    _parsed = {}  # (stage text, generic) -> Module, for the unmutated IR

    @classmethod
    def parse(cls, text, generic):
        """A Module of `text` whose lines may be edited; the unmutated stage
        IR, which every mutant's first edit starts from, is parsed once."""
        key = (hash(text), len(text), generic)
        cached = cls._parsed.get(key)
        if cached is None or cached.source != text:
            module = cls(text, generic)
            cls._parsed[key] = cached = module
        module = copy.copy(cached)
        module.lines = list(cached.lines)
        return module

    def __init__(self, text, generic):
        self.generic = generic
        self.source = text
        self.lines = text.split("\n")
        # The ops, depths and values of `source`, built when an edit first
        # asks (many need only the lines) and shared by copies (parse).
        self._index = {}

    INDEX = ("depth", "_scope_cache", "ops", "types", "defined_at", "uses", "op_at")

    def __getattr__(self, name):
        index = self.__dict__["_index"] if "_index" in self.__dict__ else None
        if index is None:
            raise AttributeError(name)
        if name == "entries":
            if "entries" not in index:
                index["entries"] = scan_dict_entries(Module(self.source, self.generic))
        elif name in Module.INDEX:
            if "ops" not in index:
                index.update(vars(self._build()))
        else:
            raise AttributeError(name)
        # Later reads are plain attribute reads.
        self.__dict__.update(index)
        return index[name]

    def _build(self):
        generic = self.generic
        lines = self.source.split("\n")
        ix = types.SimpleNamespace()
        n = len(lines)
        ix.depth = [0] * (n + 1)
        for i, line in enumerate(lines):
            ix.depth[i + 1] = ix.depth[i] + brace_delta(line)
        ix._scope_cache = {}
        ix.ops = []
        ix.types = {}       # value -> type (generic form only)
        ix.defined_at = {}  # value -> line
        ix.uses = collections.defaultdict(list)  # value -> lines using it
        op_re = GENERIC_OP if generic else PRETTY_OP
        for i, line in enumerate(lines):
            label = LABEL.match(line)
            if label:
                if label.group(2):
                    for a, b in split_top(label.group(2)):
                        piece = label.group(2)[a:b].strip()
                        mm = re.match(r"(%[\w$.-]+)\s*:\s*(.*)", piece)
                        if mm:
                            ix.types[mm.group(1)] = re.sub(r"\s+loc\(.*\)$", "", mm.group(2))
                            ix.defined_at[mm.group(1)] = i
                continue
            m = op_re.match(line)
            if not m:
                continue
            op = Op()
            op.start = i
            op.indent = m.group(1)
            op.depth = ix.depth[i]
            end = i
            while end < n - 1 and ix.depth[end + 1] > op.depth:
                end += 1
            op.end = end
            if generic:
                op.name = m.group(4)
                names = []
                if m.group(2):
                    count = int(m.group(3) or 1)
                    names = ([m.group(2)] if m.group(3) is None else
                             [f"{m.group(2)}#{k}" for k in range(count)])
                op.results = names
                ft = function_type(lines[end])
                if ft:
                    for name, ty in zip(names, ft[1]):
                        ix.types[name] = ty
            else:
                op.name = m.group(3)
                names = []
                if m.group(2):
                    for piece in m.group(2).split(", "):
                        base, _, count = piece.partition(":")
                        names += ([base] if not count else
                                  [f"{base}#{k}" for k in range(int(count))])
                op.results = names
            for name in op.results:
                ix.defined_at[name] = i
            ix.ops.append(op)
        for i, line in enumerate(lines):
            for m in re.finditer(r"%[\w$.-]+(?:#\d+)?", line):
                ix.uses[m.group(0)].append(i)
        ix.op_at = {op.start: op for op in ix.ops}
        return ix

    def scope_end(self, line):
        """Last line of the region containing `line`."""
        if line in self._scope_cache:
            return self._scope_cache[line]
        d = self.depth[line + 1] if LABEL.match(self.lines[line]) else self.depth[line]
        j = line
        n = len(self.lines)
        while j + 1 < n and self.depth[j + 1] >= d:
            j += 1
        self._scope_cache[line] = j
        return j

    def visible(self, value, line):
        """Whether `value` (defined earlier) may be used at `line`."""
        at = self.defined_at.get(value)
        if at is None or at >= line:
            return False
        op = self.op_at.get(at)
        if op and op.start <= line <= op.end:
            return False  # inside the defining op's own regions
        return line <= self.scope_end(at)

    def candidates(self, ty, line, exclude=()):
        """Values of type `ty` visible at `line`."""
        return [v for v, t in self.types.items()
                if t == ty and v not in exclude and self.visible(v, line)]

    def text(self):
        return "\n".join(self.lines)


def use_count(module, value, lines_range=None):
    pat = re.compile(re.escape(value) + r"(?![\w$.#-])")
    total = 0
    for i in module.uses.get(value, []):
        if lines_range and lines_range[0] <= i <= lines_range[1]:
            continue
        total += len(pat.findall(module.lines[i]))
    return total


def replace_value(lines, value, new, first, last):
    """Replace uses of `value` by `new` in lines[first..last]."""
    pat = re.compile(re.escape(value) + r"(?![\w$.#-])")
    for i in range(first, min(last, len(lines) - 1) + 1):
        if value in lines[i]:
            lines[i] = pat.sub(new, lines[i])


# ---------------------------------------------------------------------------
# Edits. Each returns a description, or None when it found nothing to do.

INT = re.compile(r"(?<![\w%#^.$:+-])-?\d+(?![\w.])")
FLOAT = re.compile(r"(?<![\w%#^.$])-?\d+\.\d+(?:[eE][+-]?\d+)?|0x[0-9A-Fa-f]{4,16}\b")
TYPE_HEAD = re.compile(r"(?<![\w$.])(memref|tensor|vector|!fa4\.[\w.]+|!nvgpu\.[\w.]+|"
                       r"!llvm\.[\w.]+|!gpu\.[\w.]+)<")
DIM = re.compile(r"(?<=[<x])(\d+|\?)(?=x)")


def outside_strings(line, matches):
    mask = string_mask(line)
    return [m for m in matches if not mask[m.start()]]


FOCUS = re.compile(r"fa4|nvgpu|nvvm\.|gpu\.(func|launch|binary|module)")


def focused(rng, module, hits):
    """A random hit, half of the time among those on lines of fa4, nvgpu,
    NVVM or kernel ops and attributes (what our code reads)."""
    if not hits:
        return None
    if rng.random() < 0.5:
        near = [h for h in hits if FOCUS.search(module.lines[h[0]])]
        if near:
            return rng.choice(near)
    return rng.choice(hits)


def pick_line_match(rng, module, regex, filt=None):
    """A random (line, match) of regex outside strings."""
    hits = []
    for i, line in enumerate(module.lines):
        if line.lstrip().startswith("//"):
            continue
        for m in outside_strings(line, regex.finditer(line)):
            if filt is None or filt(line, m):
                hits.append((i, m))
    return focused(rng, module, hits)


def interesting_int(rng, v):
    choices = [0, 1, -1, v + 1, v - 1, 2 * v, v // 2, -v, 2**31, 2**31 - 1,
               -2**31, 2**32, 2**63 - 1, -2**63, 2**64, 3, 7, 31, 32, 33, 64,
               127, 255, 256, 512, 1024, 65536, rng.randint(0, max(8, 4 * abs(v)))]
    choices = [c for c in choices if c != v] or [v + 1]
    return rng.choice(choices)


def edit_int(rng, module):
    hit = pick_line_match(rng, module, INT)
    if not hit:
        return None
    i, m = hit
    old = int(m.group(0))
    new = interesting_int(rng, old)
    line = module.lines[i]
    for a, b in type_spans(line):
        if a <= m.start() < b and rng.random() < 0.7:
            # A parameter of a type: the same type everywhere, else the
            # uses no longer match the definitions.
            oldtype = line[a:b]
            newtype = line[a:m.start()] + str(new) + line[m.end():b]
            for j, text in enumerate(module.lines):
                if oldtype in text:
                    module.lines[j] = text.replace(oldtype, newtype)
            return f"int everywhere: {oldtype} -> {newtype}"
    module.lines[i] = line[:m.start()] + str(new) + line[m.end():]
    return f"int line {i + 1}: {old} -> {new}"


def edit_float(rng, module):
    hit = pick_line_match(rng, module, FLOAT)
    if not hit:
        return None
    i, m = hit
    old = m.group(0)
    new = rng.choice(["0.000000e+00", "-1.000000e+00", "1.000000e+30", "-0.000000e+00",
                      "0x7FC00000", "0x7F800000", "0xFF800000", "1.000000e+00",
                      "3.402823e+38", "1.401298e-45"] +
                     ([f"{2 * float(old):e}"] if not old.startswith("0x") else []))
    line = module.lines[i]
    module.lines[i] = line[:m.start()] + new + line[m.end():]
    return f"float line {i + 1}: {old} -> {new}"


def type_spans(line, mask=None):
    """(start, end) of every shaped or dialect type in line."""
    if mask is None:
        mask = string_mask(line)
    spans = []
    for m in TYPE_HEAD.finditer(line):
        if mask[m.start()]:
            continue
        close = match_bracket(line, m.end() - 1, mask)
        if close > 0:
            spans.append((m.start(), close + 1))
    return spans


def edit_dim(rng, module):
    hits = []
    for i, line in enumerate(module.lines):
        for a, b in type_spans(line):
            for m in DIM.finditer(line, a, b):
                hits.append((i, a, b, m))
    if not hits:
        return None
    i, a, b, m = focused(rng, module, hits)
    old = m.group(0)
    v = 0 if old == "?" else int(old)
    new = rng.choice(["?", "0", "1", "3", str(v + 1), str(max(v - 1, 0)), str(2 * v),
                      str(v // 2), "?", "1", str(2 * v), str(v // 2),
                      "2147483648", "4294967296", "9223372036854775807"])
    if new == old:
        new = "?" if old != "?" else "7"
    line = module.lines[i]
    oldtype = line[a:b]
    newtype = line[a:m.start()] + new + line[m.end():b]
    if rng.random() < 0.15:
        module.lines[i] = line[:a] + newtype + line[b:]
        return f"dim line {i + 1}: {oldtype} -> {newtype}"
    for j, text in enumerate(module.lines):
        if oldtype in text:
            module.lines[j] = text.replace(oldtype, newtype)
    return f"dim everywhere: {oldtype} -> {newtype}"


def edit_type(rng, module):
    by_head = collections.defaultdict(set)
    for line in module.lines:
        for a, b in type_spans(line):
            text = line[a:b]
            by_head[text[:text.index("<")]].add(text)
    heads = [h for h, ts in by_head.items() if len(ts) > 1]
    if not heads:
        return None
    head = rng.choice(sorted(heads))
    old, new = rng.sample(sorted(by_head[head]), 2)
    for j, text in enumerate(module.lines):
        if old in text:
            # Only whole types: not inside a longer type of the same text.
            module.lines[j] = re.sub(re.escape(old) + r"(?![\w<])", new, text)
    return f"type everywhere: {old} -> {new}"


ENTRY_KEY = re.compile(r'\s*([A-Za-z_][\w$.-]*|"[^"]*")\s*(=\s*)?')


# An entry of a dictionary or parameter list: its line, its span, its key,
# where its value starts (None for a unit entry) and the brackets around it.
Entry = collections.namedtuple("Entry", "line start end key value open close")


def dict_entries(module):
    """Every entry of an attribute/property dictionary or a parameter list
    on one line (of the module as parsed: edits read it before they
    change a line)."""
    return module.entries


def scan_dict_entries(module):
    entries = []
    for i, line in enumerate(module.lines):
        if "=" not in line:
            continue
        mask = string_mask(line)
        for j, c in enumerate(line):
            if c not in "{<" or mask[j]:
                continue
            close = match_bracket(line, j, mask)
            if close < 0:
                continue
            inner_start = j + 1
            body = line[inner_start:close]
            body_mask = mask[inner_start:close]
            spans = split_top(body, body_mask)
            pieces = []
            for a, b in spans:
                text = body[a:b]
                km = ENTRY_KEY.match(text)
                if not km or not text.strip():
                    pieces = None
                    break
                rest = text[km.end():].strip()
                if km.group(2) is None and rest:
                    pieces = None
                    break
                if km.group(1).startswith("%"):
                    pieces = None
                    break
                pieces.append((inner_start + a, inner_start + b, km.group(1),
                               inner_start + a + km.end() if km.group(2) else None))
            if not pieces or not any(p[3] is not None for p in pieces):
                continue
            for a, b, key, vstart in pieces:
                entries.append(Entry(i, a, b, key, vstart, j, close))
    return entries


def pick_entry(rng, module, with_value=False):
    """A random entry (with a value, if asked), or None."""
    entries = [e for e in dict_entries(module) if not with_value or e.value is not None]
    return focused(rng, module, entries)


def attr_values(module, entries):
    return [module.lines[e.line][e.value:e.end].strip() for e in entries
            if e.value is not None]


def edit_attr_drop(rng, module):
    entry = pick_entry(rng, module)
    if entry is None:
        return None
    i, a, b, key, _, open_, close = entry
    line = module.lines[i]
    # Remove the entry with one neighbouring comma.
    if b < close and line[b] == ",":
        new = line[:a] + line[b + 1:]
        if new[a:a + 1] == " " and line[a - 1:a] in "{<":
            new = new[:a] + new[a + 1:]
    elif a > open_ + 1 and line[a - 1] == ",":
        new = line[:a - 1] + line[b:]
    else:
        new = line[:a] + line[b:]
    module.lines[i] = new
    return f"attr-drop line {i + 1}: {key}"


ATTR_KINDS = ["0 : i64", "-1 : i32", "2147483648 : i64", '"fuzz"', '""', "unit",
              "[]", "[1, 2]", "{}", "{a = 1 : i64}", "1.500000e+00 : f32", "true",
              "false", "@nowhere", "array<i64: 0, 1>", "array<i32>", "i32", "index",
              "dense<0> : vector<2xi32>", "#gpu.address_space<workgroup>",
              "affine_map<(d0) -> (d0)>", "9223372036854775807 : i64"]


def value_kind(value):
    """What kind of attribute value text is: its type suffix, quotes,
    brackets or dialect prefix."""
    m = re.search(r" : ([\w.]+)$", value)
    if m and not value.startswith(("[", "{", "#", "dense")):
        return ("typed", m.group(1))
    m = re.match(r"(#[\w]+\.[\w]+|[\w]+)<", value)
    if m:
        return ("params", m.group(1))
    return ("char", value[:1])


def edit_attr_value(rng, module):
    entry = pick_entry(rng, module, with_value=True)
    if entry is None:
        return None
    i, a, b, key, vstart, _, _ = entry
    line = module.lines[i]
    old = line[vstart:b].strip()
    pool = [v for v in attr_values(module, dict_entries(module)) if v != old]
    same = [v for v in pool if value_kind(v) == value_kind(old)]
    r = rng.random()
    if r < 0.5 and same:
        # A value of the same kind (an integer of the same type, a string,
        # an array, an attribute of the same dialect) from elsewhere.
        new = rng.choice(same)
    elif r < 0.75 and pool:
        new = rng.choice(pool)
    else:
        new = rng.choice(ATTR_KINDS)
    trail = line[vstart:b][len(line[vstart:b].rstrip()):]
    module.lines[i] = line[:vstart] + new + trail + line[b:]
    return f"attr-value line {i + 1}: {key} = {old[:60]} -> {new[:60]}"


def edit_attr_key(rng, module):
    entry = pick_entry(rng, module)
    if entry is None:
        return None
    i, a, b, key = entry[:4]
    line = module.lines[i]
    text = line[a:b]
    if rng.random() < 0.3:
        module.lines[i] = line[:b] + "," + text + line[b:]
        return f"attr-key line {i + 1}: {key} duplicated"
    if key.startswith('"'):
        newkey = '"' + key[1:-1] + 'x"'
    else:
        newkey = rng.choice([key + "x", key[:-1] or "k", key.upper(), "fuzz"])
    at = text.index(key)
    module.lines[i] = line[:a] + text[:at] + newkey + text[at + len(key):] + line[b:]
    return f"attr-key line {i + 1}: {key} -> {newkey}"


def edit_attr_copy(rng, module):
    """An entry of one dictionary copied into another (or the same kind of
    op elsewhere), replacing an entry of the same key there."""
    entries = dict_entries(module)
    if len(entries) < 2:
        return None
    src = focused(rng, module, entries)
    dicts = sorted({(e.line, e.open, e.close) for e in entries
                    if (e.line, e.open) != (src.line, src.open)})
    braces = [d for d in dicts if module.lines[d[0]][d[1]] == "{"]
    if braces and rng.random() < 0.8:
        dicts = braces  # mostly attribute dictionaries, not parameter lists
    if not dicts:
        return None
    i, open_, close = rng.choice(dicts)
    entry = module.lines[src.line][src.start:src.end].strip()
    line = module.lines[i]
    same = [e for e in entries if (e.line, e.open) == (i, open_) and e.key == src.key]
    if same:
        a, b = same[0].start, same[0].end
        module.lines[i] = line[:a] + (" " if line[a] == " " else "") + entry + line[b:]
    elif line[open_ + 1:close].strip():
        module.lines[i] = line[:open_ + 1] + entry + ", " + line[open_ + 1:]
    else:
        module.lines[i] = line[:open_ + 1] + entry + line[open_ + 1:]
    return f"attr-copy line {src.line + 1} -> line {i + 1}: {entry[:80]}"


def edit_string(rng, module):
    hits = []
    for i, line in enumerate(module.lines):
        if line.lstrip().startswith("//"):
            continue
        for m in STRING.finditer(line):
            # Not the op name of the generic form.
            if module.generic and line[m.end():m.end() + 1] == "(" and \
                    GENERIC_OP.match(line) and GENERIC_OP.match(line).end() == m.end() + 1:
                continue
            hits.append((i, m))
    if not hits:
        return None
    i, m = focused(rng, module, hits)
    old = m.group(0)[1:-1]
    others = sorted({h[1].group(0)[1:-1] for h in hits} - {old})
    choices = ["", old + "x", old[:-1], old.upper(), "x" * 300, "a b", "../x",
               "\\00", "sm_90a", "sm_100a", "sm_80", "0", "-1", old + "." + old]
    if others:
        choices += [rng.choice(others)] * 3
    if old:
        k = rng.randrange(len(old))
        choices.append(old[:k] + rng.choice("._0aZ") + old[k + 1:])
    new = rng.choice([c for c in choices if c != old] or ["x"])
    line = module.lines[i]
    module.lines[i] = line[:m.start()] + '"' + new + '"' + line[m.end():]
    return f"string line {i + 1}: {old[:40]!r} -> {new[:40]!r}"


def edit_array(rng, module):
    hits = []
    for i, line in enumerate(module.lines):
        mask = string_mask(line)
        for j, c in enumerate(line):
            if mask[j]:
                continue
            if c == "[":
                close = match_bracket(line, j, mask)
                if close > j + 1 and "%" not in line[j:close]:
                    hits.append((i, j + 1, close))
            elif line.startswith("array<", j):
                close = match_bracket(line, j + 5, mask)
                colon = line.find(":", j, close)
                if close > 0 and colon > 0:
                    hits.append((i, colon + 1, close))
    if not hits:
        return None
    i, a, b = focused(rng, module, hits)
    line = module.lines[i]
    body = line[a:b]
    elems = [body[x:y].strip() for x, y in split_top(body)]
    elems = [e for e in elems if e]
    if not elems:
        return None
    old = ", ".join(elems)
    action = rng.choice(["drop", "dup", "swap", "change", "empty", "append"])
    if action == "swap" and len(elems) < 2:
        action = "change"
    k = rng.randrange(len(elems))
    if action == "drop":
        del elems[k]
    elif action == "dup":
        elems.insert(k, elems[k])
    elif action == "swap":
        l = rng.randrange(len(elems))
        elems[k], elems[l] = elems[l], elems[k]
    elif action == "change":
        mm = re.match(r"(-?\d+)(.*)", elems[k])
        if mm:
            elems[k] = str(interesting_int(rng, int(mm.group(1)))) + mm.group(2)
        else:
            elems[k] = rng.choice(elems + ATTR_KINDS[:4])
    elif action == "empty":
        elems = []
    else:
        elems.append(rng.choice(elems))
    new = ", ".join(elems)
    prefix = " " if line[a - 1] == ":" and new else ""
    module.lines[i] = line[:a] + prefix + new + line[b:]
    return f"array line {i + 1}: [{old[:50]}] -> [{new[:50]}] ({action})"


def is_terminator(op):
    return bool(TERMINATOR.search(op.name))


def edit_op_delete(rng, module):
    ops = [op for op in module.ops if not is_terminator(op) and op.depth > 0]
    if not module.generic:
        # Without the types of the generic form the uses cannot be given
        # another value: only ops whose results are unused.
        ops = [op for op in ops if all(use_count(module, r, (op.start, op.start)) == 0
                                       for r in op.results)]
    if not ops:
        return None
    if rng.random() < 0.5:
        near = [op for op in ops if FOCUS.search(op.name)]
        ops = near or ops
    for _ in range(20):
        op = rng.choice(ops)
        plan, ok = [], True
        for r in op.results:
            if use_count(module, r, (op.start, op.start)) == 0:
                continue
            ty = module.types.get(r)
            later = [i for i in module.uses[r] if i > op.end]
            if ty is None or not later:
                ok = False
                break
            cands = module.candidates(ty, later[0], exclude=op.results)
            cands = [c for c in cands if module.defined_at[c] < op.start]
            if not cands:
                ok = False
                break
            plan.append((r, rng.choice(cands)))
        if ok or rng.random() < 0.1:
            break
    for r, new in plan:
        replace_value(module.lines, r, new, op.end + 1, len(module.lines) - 1)
    del module.lines[op.start:op.end + 1]
    repl = ", ".join(f"{r}->{n}" for r, n in plan)
    return f"op-delete line {op.start + 1}: {op.name}" + (f" ({repl})" if repl else "")


def rename_defs(lines, suffix):
    """Give every value defined in lines (results and block arguments) a
    new name; returns the renamed lines and the map."""
    names = {}
    for line in lines:
        m = re.match(r"^\s*((?:%[\w$.-]+(?::\d+)?)(?:, %[\w$.-]+(?::\d+)?)*) = ", line)
        if m:
            for piece in m.group(1).split(", "):
                names[piece.partition(":")[0]] = None
        lm = LABEL.match(line)
        if lm and lm.group(2):
            for v in re.findall(r"(%[\w$.-]+)\s*:", lm.group(2)):
                names[v] = None
    mapping = {n: f"%fz{suffix}_{k}" for k, n in enumerate(names)}
    if not mapping:
        return list(lines), mapping
    pat = re.compile("(" + "|".join(re.escape(n) for n in
                                    sorted(mapping, key=len, reverse=True)) + r")(?![\w$.-])")
    return [pat.sub(lambda m: mapping[m.group(1)], l) for l in lines], mapping


def edit_op_dup(rng, module):
    ops = [op for op in module.ops if not is_terminator(op) and op.depth > 0]
    if not ops:
        return None
    op = rng.choice(ops)
    suffix = rng.randrange(10**6)
    copy, mapping = rename_defs(module.lines[op.start:op.end + 1], suffix)
    redirect = op.results and rng.random() < 0.5
    if redirect:
        for r in op.results:
            base, _, k = r.partition("#")
            new = mapping.get(base)
            if new:
                replace_value(module.lines, r, new + (f"#{k}" if k else ""),
                              op.end + 1, len(module.lines) - 1)
    module.lines[op.end + 1:op.end + 1] = copy
    return f"op-dup line {op.start + 1}: {op.name}" + (" (uses moved)" if redirect else "")


def siblings(module, op):
    """Ops of op's block after op, up to the block's end."""
    out = []
    i = op.end + 1
    n = len(module.lines)
    while i < n and module.depth[i] >= op.depth:
        if module.depth[i] == op.depth:
            if LABEL.match(module.lines[i]):
                break
            other = module.op_at.get(i)
            if other is not None:
                out.append(other)
                i = other.end + 1
                continue
            if module.lines[i].strip().startswith("}"):
                break
        i += 1
    return out


def edit_op_swap(rng, module):
    ops = [op for op in module.ops if op.depth > 0]
    if not ops:
        return None

    def names(o):
        return [r.partition("#")[0] for r in o.results]

    def uses(o, values):
        text = "\n".join(module.lines[o.start:o.end + 1])
        return any(re.search(re.escape(v) + r"(?![\w$.-])", text) for v in values)

    keep_order = rng.random() < 0.8
    for _ in range(30):
        a = rng.choice(ops)
        sibs = siblings(module, a)[:4]
        if not sibs:
            continue
        k = rng.randrange(len(sibs))
        b, between = sibs[k], sibs[:k]
        # Mostly swaps that keep every definition before its uses: b, the
        # ops between and a are reordered to b, between, a.
        if keep_order and (uses(b, names(a) + [n for o in between for n in names(o)]) or
                           any(uses(o, names(a)) for o in between)):
            continue
        break
    else:
        return None
    lines = module.lines
    first = lines[a.start:a.end + 1]
    middle = lines[a.end + 1:b.start]
    second = lines[b.start:b.end + 1]
    lines[a.start:b.end + 1] = second + middle + first
    return f"op-swap lines {a.start + 1} and {b.start + 1}: {a.name} <-> {b.name}"


def edit_operand(rng, module):
    hits = []
    for op in module.ops:
        line = module.lines[op.start]
        m = GENERIC_OP.match(line)
        if not m:
            continue
        close = match_bracket(line, m.end() - 1)
        if close < 0:
            continue
        ft = function_type(module.lines[op.end])
        if not ft:
            continue
        names = re.findall(r"%[\w$.-]+(?:#\d+)?", line[m.end():close])
        if len(names) != len(ft[0]):
            continue
        for k, (name, ty) in enumerate(zip(names, ft[0])):
            hits.append((op, k, name, ty, m.end(), close))
    rng.shuffle(hits)
    for op, k, name, ty, a, b in hits[:50]:
        cands = module.candidates(ty, op.start, exclude=(name,))
        if cands:
            new = rng.choice(cands)
            line = module.lines[op.start]
            args = [s.strip() for s in line[a:b].split(",")]
            args[k] = new
            module.lines[op.start] = line[:a] + ", ".join(args) + line[b:]
            return f"operand line {op.start + 1}: {op.name} operand {k} {name} -> {new}"
    return None


def edit_op_rename(rng, module):
    by_dialect = collections.defaultdict(set)
    for op in module.ops:
        by_dialect[op.name.split(".")[0]].add(op.name)
    ops = [op for op in module.ops if len(by_dialect[op.name.split(".")[0]]) > 1]
    if not ops:
        return None
    op = rng.choice(ops)
    new = rng.choice(sorted(by_dialect[op.name.split(".")[0]] - {op.name}))
    line = module.lines[op.start]
    module.lines[op.start] = line.replace(f'"{op.name}"', f'"{new}"', 1)
    return f"op-rename line {op.start + 1}: {op.name} -> {new}"


EDITS = {
    "int": edit_int, "float": edit_float, "dim": edit_dim, "type": edit_type,
    "attr-drop": edit_attr_drop, "attr-value": edit_attr_value,
    "attr-key": edit_attr_key, "attr-copy": edit_attr_copy, "string": edit_string,
    "array": edit_array,
    "op-delete": edit_op_delete, "op-dup": edit_op_dup, "op-swap": edit_op_swap,
    "operand": edit_operand, "op-rename": edit_op_rename,
}
# How often each kind is drawn.
WEIGHTS = {"int": 5, "float": 1, "dim": 2, "type": 1, "attr-drop": 3,
           "attr-value": 3, "attr-key": 1, "attr-copy": 2, "string": 2, "array": 2,
           "op-delete": 3, "op-dup": 2, "op-swap": 2, "operand": 3, "op-rename": 1}


def mutate(rng, text, generic, kinds):
    """(mutant text, edit descriptions)."""
    count = rng.choices([1, 2, 3], [6, 3, 1])[0]
    done = []
    usable = [k for k in kinds if generic or k not in GENERIC_ONLY]
    for _ in range(count):
        for _attempt in range(10):
            kind = rng.choices(usable, [WEIGHTS[k] for k in usable])[0]
            # The stage IR (no edit yet) is parsed once per campaign.
            module = (Module(text, generic) if done else
                      Module.parse(text, generic))
            what = EDITS[kind](rng, module)
            if what:
                text = module.text()
                done.append(what)
                break
    return text, done


# ---------------------------------------------------------------------------
# Seeds and stages.


def toggle_causal(generic_text):
    """The generic seed with `causal` added to or removed from every
    fa4.attention, or None if there is none."""
    out, changed = [], False
    for line in generic_text.split("\n"):
        if '"fa4.attention"(' in line and "<{" in line:
            if re.search(r"<\{causal(, |\}>)", line) or ", causal" in line:
                line = re.sub(r"causal, |, causal(?=[,}])|<\{causal\}> ?", lambda m:
                              "<{}>" if m.group(0).startswith("<") else "", line, count=1)
            else:
                line = line.replace("<{", "<{causal, ", 1)
            changed = True
        out.append(line)
    return "\n".join(out) if changed else None


class Target:
    """One seed module for one arch: its stage IRs."""

    def __init__(self, name, arch, path):
        self.name, self.arch, self.path = name, arch, path
        self.stages = {}   # stage -> {"generic": text, "pretty": text, file paths}
        self.sim_steps = None


def pass_element(index, arch, emit_dir, ptxas):
    element = PIPELINE[index][1].replace("@ARCH@", arch).replace("@EMIT@", emit_dir)
    return element.replace("@PTXAS@", f" ptxas={ptxas}" if ptxas else "")


def remaining_pipeline(stage, arch, emit_dir, ptxas):
    first = STAGES.index(stage)
    return "builtin.module(" + ",".join(
        pass_element(i, arch, emit_dir, ptxas) for i in range(first, len(PIPELINE))) + ")"


def build_stages(args, target, workdir):
    """Runs the pipeline pass by pass from the seed and records each stage."""
    current = target.path
    for k, stage in enumerate(STAGES):
        base = os.path.join(workdir, f"{k:02d}-{stage}")
        if k > 0:
            element = pass_element(k - 1, target.arch, "", "")
            rc, out, _ = run_tool([args.fa4_opt, current, "--pass-pipeline=builtin.module(" +
                                   element + ")", "-o", base + ".mlir"], args.stage_timeout)
            if rc != 0:
                raise SystemExit(f"fuzz-passes: {target.name}: {element} failed on the "
                                 f"unmutated stage {STAGES[k - 1]}:\n{out}")
        else:
            shutil.copyfile(current, base + ".mlir")
        rc, out, _ = run_tool([args.fa4_opt, base + ".mlir", "--mlir-print-op-generic",
                               "-o", base + ".generic.mlir"], args.stage_timeout)
        if rc != 0:
            raise SystemExit(f"fuzz-passes: {target.name}: stage {stage} does not re-parse:\n{out}")
        with open(base + ".mlir") as f:
            pretty = f.read()
        with open(base + ".generic.mlir") as f:
            generic = f.read()
        target.stages[stage] = {"pretty": pretty, "generic": generic}
        current = base + ".mlir"


def make_targets(args, workdir):
    targets = []
    for path in args.inputs:
        stem = os.path.splitext(os.path.basename(path))[0]
        rc, generic, _ = run_tool([args.fa4_opt, path, "--mlir-print-op-generic"],
                                  args.stage_timeout)
        if rc != 0:
            raise SystemExit(f"fuzz-passes: {path} does not parse:\n{generic}")
        variants = [("", path)]
        if not args.no_toggle_causal:
            toggled = toggle_causal(generic)
            if toggled:
                tpath = os.path.join(workdir, f"{stem}.toggled.mlir")
                with open(tpath, "w") as f:
                    f.write(toggled)
                label = "-noncausal" if "causal" in generic.split('"fa4.attention"')[1]\
                    .split("\n")[0] else "-causal"
                variants.append((label, tpath))
        for label, source in variants:
            for arch in args.archs:
                name = f"{stem}{label}@{arch}"
                target = Target(name, arch, source)
                tdir = os.path.join(workdir, re.sub(r"[^\w.-]", "_", name))
                os.makedirs(tdir, exist_ok=True)
                t0 = time.monotonic()
                build_stages(args, target, tdir)
                print(f"fuzz-passes: {name}: {len(target.stages)} stages "
                      f"({time.monotonic() - t0:.1f} s)", flush=True)
                targets.append(target)
    return targets


def sim_baseline(args, target, workdir):
    path = os.path.join(workdir, re.sub(r"[^\w.-]", "_", target.name) + ".sync.mlir")
    with open(path, "w") as f:
        f.write(target.stages[SYNC_STAGE]["pretty"])
    rc, out, secs = run_tool([args.fa4_sim, path] + shlex.split(args.sim_args),
                             args.timeout * 4)
    steps = [int(s) for s in re.findall(r"(\d+) steps", out)]
    if rc != 0 or not steps:
        print(f"fuzz-passes: {target.name}: the unmutated kernel does not pass fa4-sim "
              f"(exit {rc}); no simulation of its mutants:\n{out[-2000:]}", flush=True)
        return None
    print(f"fuzz-passes: {target.name}: fa4-sim {max(steps)} steps, {secs:.1f} s", flush=True)
    return max(steps)


# ---------------------------------------------------------------------------
# One mutant.


def run_mutant(args, index, target, stage, form, work_root):
    rng = random.Random(f"{args.seed}:{index}")
    text, edits = mutate(rng, target.stages[stage][form], form == "generic", args.kinds)
    mid = f"m{index:06d}"
    work = tempfile.mkdtemp(prefix=mid + "-", dir=work_root)
    path = os.path.join(work, "mutant.mlir")
    with open(path, "w") as f:
        f.write(text)
    steps = []   # (step, class, rc, seconds, cmd, output)

    def step(name, cmd, ok=(0, 1), timeout=None, verdict=None):
        rc, out, secs = run_tool(cmd, timeout or args.timeout)
        cls = classify(rc, out, ok, verdict)
        steps.append((name, cls, rc, secs, cmd, out))
        return cls

    record = {"id": mid, "target": target.name, "stage": stage, "form": form,
              "edits": edits}
    if not edits:
        result = "unchanged"
    else:
        step("parse", [args.fa4_opt, path, "-o", os.devnull])
        cls = parse_class(steps[-1][1], steps[-1][5])
        steps[-1] = ("parse", cls) + steps[-1][2:]
        if cls in ("invalid", "upstream"):
            result = cls
        elif cls != "accepted":
            result = cls
        else:
            emit = os.path.join(work, "emit")
            os.makedirs(emit, exist_ok=True)
            pipeline = remaining_pipeline(stage, target.arch, emit, args.ptxas)
            cls = step("passes", [args.fa4_opt, path, "--pass-pipeline=" + pipeline,
                                  "-o", os.devnull])
            # After fa4-verify-llvm-ir only upstream passes remain; a crash
            # there that only upstream code is on, of a module the check
            # refuses, is upstream's (fa4-compile never gets there).
            if (cls == "crash" and upstream_only(steps[-1][5]) and
                    STAGES.index(stage) >= STAGES.index(GUARDED_STAGE)):
                guard = step("guard", [args.fa4_opt, path, "--fa4-verify-llvm-ir", "-o",
                                       os.devnull])
                if guard == "diagnosed":
                    steps[-2] = ("passes", "upstream") + steps[-2][2:]
            if stage == SYNC_STAGE and target.sim_steps and not args.no_sim:
                step("sim", [args.fa4_sim, path] + shlex.split(args.sim_args) +
                     ["--max-steps", str(target.sim_steps * 4)], ok=(0, 1, 2),
                     timeout=args.sim_timeout, verdict=r"^seed \d+: FAIL")
            result = max((s[1] for s in steps), key=SEVERITY.index)
    record["class"] = result
    record["steps"] = {s[0]: s[1] for s in steps}
    # The first diagnostic of the step that decided the class.
    for name, cls, rc, secs, cmd, out in steps:
        if cls == result:
            m = re.search(r"error: (.*)", out)
            if m:
                record["message"] = m.group(1)[:200]
            break
    record["seconds"] = round(sum(s[3] for s in steps), 2)
    findings = []
    for name, cls, rc, secs, cmd, out in steps:
        if cls in FINDINGS | UPSTREAM:
            findings.append({"step": name, "class": cls, "rc": rc,
                             "signature": signature(cls, out), "cmd": cmd, "output": out})
    record["findings"] = [{"step": f["step"], "class": f["class"],
                           "signature": f["signature"]} for f in findings]
    if findings:
        save_finding(args, mid, text, edits, findings, path)
    shutil.rmtree(work, ignore_errors=True)
    return record


def save_finding(args, mid, text, edits, findings, path):
    for f in findings:
        sig = hashlib.sha1(f["signature"].encode()).hexdigest()[:10]
        d = os.path.join(args.out, "findings", f"{f['class']}-{sig}")
        os.makedirs(d, exist_ok=True)
        sigfile = os.path.join(d, "signature.txt")
        if not os.path.exists(sigfile):
            with open(sigfile, "w") as out:
                out.write(f["signature"] + "\n")
        repro = os.path.join(d, mid + ".mlir")
        with open(repro, "w") as out:
            out.write("".join(f"// fuzz-passes edit: {e}\n" for e in edits) + text)
        cmd = [repro if c == path else c for c in f["cmd"]]
        cmd = [re.sub(r"emit-dir=[^ }]*", "emit-dir=/tmp/fuzz-emit", c) for c in cmd]
        with open(os.path.join(d, mid + ".sh"), "w") as out:
            out.write("#!/bin/sh\nmkdir -p /tmp/fuzz-emit\n" + shlex.join(cmd) + "\n")
        with open(os.path.join(d, mid + ".log"), "w") as out:
            out.write(f["output"])


# ---------------------------------------------------------------------------


def summarize(records, targets):
    classes = ["invalid", "diagnosed", "accepted", "upstream", "undiagnosed", "crash",
               "hang", "unchanged"]
    table = collections.OrderedDict((s, collections.Counter()) for s in STAGES)
    for r in records:
        table[r["stage"]][r["class"]] += 1
    lines = ["stage".ljust(20) + "".join(c.rjust(12) for c in classes) + "total".rjust(8)]
    total = collections.Counter()
    for stage, counts in table.items():
        if not counts:
            continue
        total.update(counts)
        lines.append(stage.ljust(20) + "".join(str(counts[c]).rjust(12) for c in classes) +
                     str(sum(counts.values())).rjust(8))
    lines.append("total".ljust(20) + "".join(str(total[c]).rjust(12) for c in classes) +
                 str(sum(total.values())).rjust(8))
    sim = collections.Counter(r["steps"].get("sim") for r in records if "sim" in r["steps"])
    if sim:
        lines.append("fa4-sim on barriers mutants: " +
                     ", ".join(f"{k} {v}" for k, v in sorted(sim.items())))
    sigs = collections.defaultdict(list)
    for r in records:
        for f in r["findings"]:
            sigs[(f["class"], f["signature"])].append(r["id"])
    if sigs:
        lines.append(f"{len(sigs)} distinct findings:")
        for (cls, sig), ids in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {len(ids):5d} x {sig}  (e.g. {ids[0]})")
    return "\n".join(lines), sigs


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("inputs", nargs="*", help="seed modules (default examples/*.mlir)")
    parser.add_argument("--mutants", type=int, default=100, help="mutants to run")
    parser.add_argument("--seed", type=int, default=1, help="campaign seed")
    parser.add_argument("--first", type=int, default=0,
                        help="index of the first mutant (to continue a campaign)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="fuzz-out", help="report and findings directory")
    parser.add_argument("--timeout", type=float, default=20, help="seconds per step")
    parser.add_argument("--stage-timeout", type=float, default=300,
                        help="seconds per pass when building the stages")
    parser.add_argument("--fa4-opt", default=os.path.join(ROOT, "build", "bin", "fa4-opt"))
    parser.add_argument("--fa4-sim", default=os.path.join(ROOT, "build", "bin", "fa4-sim"))
    parser.add_argument("--ptxas", default="",
                        help="ptxas for fa4-emit-kernels (default: its own search)")
    parser.add_argument("--archs", default="sm_100a,sm_90a")
    parser.add_argument("--stages", default="",
                        help="regex: only stages whose name matches")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma-separated edit kinds (default all)")
    parser.add_argument("--forms", default="generic,pretty",
                        help="printed forms to mutate: generic, pretty")
    parser.add_argument("--no-toggle-causal", action="store_true",
                        help="only the seeds as written, not with causal toggled")
    parser.add_argument("--sim-args", default="--batch 1 --seq-q 130 --seq-kv 200 --ctas 1",
                        help="fa4-sim arguments for barriers-stage mutants")
    parser.add_argument("--sim-timeout", type=float, default=60)
    parser.add_argument("--no-sim", action="store_true", help="do not run fa4-sim")
    parser.add_argument("--list-stages", action="store_true",
                        help="print each stage and the passes that follow it")
    parser.add_argument("--classify", action="store_true",
                        help="only parse and verify the inputs and print each "
                             "one's class (and signature), as a mutant's")
    args = parser.parse_args(argv)
    args.archs = [a for a in args.archs.split(",") if a]
    args.kinds = [k for k in args.kinds.split(",") if k]
    for k in args.kinds:
        if k not in EDITS:
            parser.error(f"unknown kind {k!r} (expected one of {', '.join(KINDS)})")
    forms = [f for f in args.forms.split(",") if f]
    if args.list_stages:
        for stage in STAGES:
            print(f"{stage}: {remaining_pipeline(stage, args.archs[0], 'DIR', args.ptxas)}")
        return 0
    if args.classify:
        return classify_files(args)
    if not args.inputs:
        args.inputs = sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    stages = [s for s in STAGES if re.search(args.stages, s)]
    if not stages:
        parser.error(f"no stage matches {args.stages!r}")
    os.makedirs(args.out, exist_ok=True)
    stage_dir = os.path.join(args.out, "stages")
    os.makedirs(stage_dir, exist_ok=True)
    t0 = time.monotonic()
    targets = make_targets(args, stage_dir)
    if SYNC_STAGE in stages and not args.no_sim:
        for t in targets:
            t.sim_steps = sim_baseline(args, t, stage_dir)
    # Consecutive mutants go to consecutive stages, then targets and forms.
    combos = [(t, s, f) for f in forms for t in targets for s in stages]
    work_root = tempfile.mkdtemp(prefix="fuzz-passes-")
    records, lock = [], threading.Lock()
    progress = {"done": 0, "last": time.monotonic()}
    log = open(os.path.join(args.out, "progress.jsonl"), "a" if args.first else "w")

    def one(index):
        t, s, f = combos[index % len(combos)]
        rec = run_mutant(args, index, t, s, f, work_root)
        with lock:
            records.append(rec)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            progress["done"] += 1
            if rec["findings"]:
                print(f"fuzz-passes: {rec['id']} {rec['target']} {rec['stage']}: "
                      f"{rec['class']}: {rec['findings'][0]['signature'][:160]}", flush=True)
            now = time.monotonic()
            if now - progress["last"] > 60 or progress["done"] == args.mutants:
                progress["last"] = now
                c = collections.Counter(r["class"] for r in records)
                print(f"fuzz-passes: {progress['done']}/{args.mutants} mutants, "
                      f"{now - t0:.0f} s: " + ", ".join(f"{k} {v}" for k, v in
                                                       sorted(c.items())), flush=True)
        return rec

    try:
        indices = range(args.first, args.first + args.mutants)
        if args.jobs <= 1:
            for i in indices:
                one(i)
        else:
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                list(pool.map(one, indices))
    finally:
        log.close()
        shutil.rmtree(work_root, ignore_errors=True)
    records.sort(key=lambda r: r["id"])
    text, sigs = summarize(records, targets)
    report = {"seed": args.seed, "first": args.first, "mutants": len(records),
              "targets": [t.name for t in targets], "stages": stages,
              "classes": dict(collections.Counter(r["class"] for r in records)),
              "findings": [{"class": c, "signature": s, "mutants": ids}
                           for (c, s), ids in sigs.items()],
              "records": records}
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    nfind = sum(len(ids) for ids in sigs.values())
    failing = {k for k in sigs if k[0] in FINDINGS}
    print(f"fuzz-passes: {len(records)} mutants: {nfind} findings "
          f"({len(sigs)} distinct, {len(failing)} in fa4's passes), "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
