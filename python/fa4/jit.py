"""Compile on demand: the kernel of a problem that no kernel directory holds,
compiled in-process through libFA4CAPI.so (no fa4-opt, no subprocess) and
kept in a cache directory that later calls and processes load from.

    from fa4 import jit
    kernel = jit.KernelCache().kernel("bf16", 28, 4, 128, causal=True, arch="sm_90a")

The cache is `FA4_CACHE_DIR`, else `$XDG_CACHE_HOME/fa4`, else `~/.cache/fa4`.
An entry is a directory named by a hash of the problem and the compiler's
identity (a hash of the C API library's bytes), holding the kernel's
`.ptx`, `.cubin` (when ptxas was found) and `.json` manifest. Entries are
written into a private temporary directory and renamed into place, so
processes that compile the same problem at once each get a complete entry
and one of them keeps it.

The problem is what shapes the code: dtype, head counts and head dims,
causal, LSE, window, whether there is a softcap, sinks, packed sequences
(varlen, seqused_k), a KV cache (seqused_k on a dense batch, the page size
of paged K/V), FP8's descales and output dtype, a rotary embedding of Q
(its first column, the table's columns, whether O is rotated back), how
the PV product takes P (p_precision 'hi_lo'), sm_100a's interleaved softmax
warpgroups (kv_interleave), shared keys (shared_key) and the decode family
(family), arch. The scale and
the softcap's value are launch arguments (`runtime.Kernel.scalars`).
"""

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from fa4 import capi, runtime

__all__ = ["KernelCache", "cache_directory", "compiler_identity", "kernel_name",
           "module_text"]


def _window_attribute(window, causal):
    """The window the op needs written out, or None: nothing beyond causal."""
    if not window or tuple(window) == (-1, -1) or (causal and tuple(window) == (-1, 0)):
        return None
    return tuple(window)


# How a kernel's PV product may take P (`KernelCache.kernel`'s p_precision;
# None is the default, 'single').
P_PRECISIONS = (None, "single", "hi_lo")


def _interleave(kv_interleave, q_stages, arch, kv_splits, p_precision):
    """A problem's (kv_interleave, q_stages) from `KernelCache.kernel`'s:
    2 takes one Q stage (both softmax warpgroups over one Q tile); 1 on
    sm_90a, whose plans never interleave, is None (fa4-plan's choice, the
    same kernel). Raises ValueError for a kv_interleave other than None, 1
    and 2, and for 2 outside sm_100a, with two Q stages, a split or P as
    hi + lo (the plan verifier's rules, said before compiling)."""
    if kv_interleave is None:
        return None, q_stages
    if not runtime._is_int(kv_interleave) or kv_interleave not in (1, 2):
        raise ValueError(f"kv_interleave must be 1 or 2 (or None: the planner's choice), "
                         f"got {kv_interleave!r}")
    if kv_interleave == 1:
        return (None if str(arch) == "sm_90a" else 1), q_stages
    if str(arch) != "sm_100a":
        raise ValueError(f"kv_interleave=2 interleaves sm_100a's softmax warpgroups; "
                         f"{arch} has none to interleave")
    if q_stages not in (None, 1):
        raise ValueError(f"kv_interleave=2 shares one Q tile between the softmax "
                         f"warpgroups: q_stages must be 1 or None, got {q_stages}")
    if int(kv_splits) != 1:
        raise ValueError(f"kv_interleave=2 does not combine with kv_splits={kv_splits}")
    if p_precision == "hi_lo":
        raise ValueError("kv_interleave=2 does not combine with p_precision 'hi_lo'")
    return 2, 1


def _shared_key(shared_key, arch, kv_interleave, p_precision, dtype, head_dim_v, rope):
    """A problem's shared_key from `KernelCache.kernel`'s: None (fa4-plan's
    choice, which is 1) or 1 is None; 2 and 4 on sm_100a only, with Dv 64,
    128 or 256, 16-bit inputs and P rounded once, neither interleaved
    warpgroups nor O rotated back (the plan verifier's rules, said before
    compiling). Raises ValueError otherwise."""
    if shared_key is None:
        return None
    if not runtime._is_int(shared_key) or shared_key not in (1, 2, 4):
        raise ValueError(f"shared_key must be 1, 2 or 4 (or None: one thread per row), "
                         f"got {shared_key!r}")
    if shared_key == 1:
        return None
    if str(arch) != "sm_100a":
        raise ValueError(f"shared_key={shared_key} needs sm_100a's weight-stationary "
                         f"MMA; {arch} has none")
    if head_dim_v not in (64, 128, 256):
        raise ValueError(f"shared_key={shared_key} needs a value head dim of 64, 128 or "
                         f"256 (the N of the PV MMA), got {head_dim_v}")
    for refused, what in ((kv_interleave == 2, "kv_interleave=2"),
                          (p_precision == "hi_lo", "p_precision 'hi_lo'"),
                          (dtype in runtime.EIGHT_BIT_ELEMENTS, f"{dtype} inputs"),
                          (bool(rope) and rope.output, "a rope that rotates O back")):
        if refused:
            raise ValueError(f"shared_key={shared_key} does not combine with {what}")
    return int(shared_key)


def _family(family, arch, dtype, head_dim_v, rope, kv_interleave, p_precision,
            shared_key):
    """A problem's family from `KernelCache.kernel`'s: None or 'prefill' is
    None (the default problem); 'decode' (sm_100a's swap-AB decode kernel)
    needs a value head dim of 128 or 256 and 16-bit inputs, with neither
    interleaved warpgroups nor shared keys (the
    planner's rules, said before compiling). Raises ValueError otherwise."""
    if family is None or family == "prefill":
        return None
    if family != "decode":
        raise ValueError(f"family must be 'prefill', 'decode' or None, got {family!r}")
    if str(arch) != "sm_100a":
        raise ValueError(f"family 'decode' is sm_100a's swap-AB kernel; {arch} has "
                         "none")
    if head_dim_v not in (128, 256):
        raise ValueError(f"family 'decode' needs a value head dim of 128 or 256 (O^T "
                         f"is Dv / 128 MMA tiles), got {head_dim_v}")
    for refused, what in ((dtype in runtime.EIGHT_BIT_ELEMENTS, f"{dtype} inputs"),
                          (kv_interleave == 2, "kv_interleave=2"),
                          (shared_key is not None, f"shared_key={shared_key}")):
        if refused:
            raise ValueError(f"family 'decode' does not combine with {what}")
    return "decode"


# The runtime's element spellings to MLIR's types.
_MLIR_TYPES = {"bf16": "bf16", "f16": "f16", "e4m3": "f8E4M3FN"}


def _output_element(element, output_element):
    """O's element: the inputs' for 16-bit ones, bf16 (default) or f16 for
    8-bit ones; raises ValueError for another."""
    if element not in runtime.EIGHT_BIT_ELEMENTS:
        if output_element not in (None, element):
            raise ValueError(f"a {element} kernel's output is {element}, not "
                             f"{output_element}")
        return element
    if output_element not in (None, "bf16", "f16"):
        raise ValueError(f"an {element} kernel's output is bf16 or f16, not {output_element}")
    return output_element or "bf16"


def _check_eight_bit(element, descale, page_size):
    """Raises ValueError for FP8 options a problem cannot have: descale
    without 8-bit inputs, 8-bit inputs over pages of fewer than 128 keys
    (a key-major V block is one TMA box, within one page)."""
    eight_bit = element in runtime.EIGHT_BIT_ELEMENTS
    if eight_bit and page_size and page_size < runtime.FP8_MIN_PAGE_SIZE:
        least = runtime.FP8_MIN_PAGE_SIZE
        raise ValueError(f"{element} inputs read V key-major in {least}-key TMA boxes, each "
                         f"within one page: pages must hold at least {least} keys, got "
                         f"{page_size}")
    if descale and not eight_bit:
        raise ValueError(f"descale dequantizes 8-bit inputs, not {element}")


def _rope(rope):
    """A problem's rotary embedding: None, or a runtime.Rope(start,
    columns, output) with start and columns multiples of 8 (columns
    positive); raises ValueError for another."""
    rope = runtime._rope_problem(rope)
    granule = runtime.ROPE_GRANULE
    if rope and (rope.columns < granule or rope.columns % granule or rope.start < 0
                 or rope.start % granule):
        raise ValueError(f"rope start {rope.start} and columns {rope.columns} must be "
                         f"multiples of {granule}, columns positive")
    return rope


def _check_page_size(page_size):
    """Raises ValueError unless `page_size` is None or a power of two."""
    if page_size is None:
        return
    if not runtime._is_int(page_size) or page_size < 1 or page_size & (page_size - 1):
        raise ValueError(f"page_size must be a power of two, got {page_size!r}")


def module_text(name, element, head_dim, heads_q, heads_kv, causal, lse, window=None,
                softcap=None, sink=False, varlen=False, seqused_k=False, head_dim_v=None,
                page_size=None, descale=False, output_element=None, rope=None):
    """The fa4.attention module of one configuration: dynamic batch and
    sequence lengths, the function named `name`. With `varlen` the batch
    is packed sequences ([T, H, D] tensors, the cu_seqlens tables, LSE
    [Hq, Tq]), with `seqused_k` also the keys each sequence uses; without
    `varlen`, `seqused_k` gives the keys each batch of a KV cache uses;
    `page_size` (a power of two) makes K and V pages [pages, page_size,
    Hkv, D] read through a page table [B, max_pages] (packed sequences: a
    row per sequence, its keys counted by cu_seqlens_k);
    `head_dim_v` is V's and O's head dim (None: `head_dim`).

    FP8 (`element` 'e4m3'): Q, K, V f8E4M3FN, O `output_element` (bf16 by
    default, or f16), V key-major (`strided<[?, 1, ?, ?]>`: unit-stride
    keys: the PV MMA reads an 8-bit B operand K-major; packed, `strided<[1,
    ?, ?]>` with V's own rows, sequence b's from align16(cu_seqlens_k[b]) +
    16 b), and with `descale` the dequantization factors q/k/v_descale [B,
    Hkv] f32. Pages of fewer than 128 keys raise ValueError.

    `rope` (start, columns, output) rotates Q's columns [start, start +
    columns) inside the kernel: `rope(%cos_sin, %positions)` with the table
    f32 [?, columns] and the positions i32 [B, Sq] (with `varlen` [Tq], a
    position per packed query row), attributes `rope_start` (where not 0)
    and `rope_output` (O rotated back)."""
    page_size = page_size or None
    rope = _rope(rope)
    _check_page_size(page_size)
    output_element = _output_element(element, output_element)
    _check_eight_bit(element, descale, page_size)
    eight_bit = element in runtime.EIGHT_BIT_ELEMENTS

    def tensor(heads, depth, rows="?", element=element, key_major=False, cache=False):
        element = _MLIR_TYPES.get(element, element)
        if varlen and not (cache and page_size):
            layout = ", strided<[1, ?, ?]>" if key_major else ""
            return f"memref<?x{heads}x{depth}x{element}{layout}>"
        layout = ", strided<[?, 1, ?, ?]>" if key_major else ""
        return f"memref<?x{rows}x{heads}x{depth}x{element}{layout}>"
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    pages = page_size or "?"
    q, k = tensor(heads_q, head_dim), tensor(heads_kv, head_dim, pages, cache=True)
    # FP8's V: [B, Skv, Hkv, Dv] with unit-stride Skv (memory [B, Hkv, Dv,
    # Skv]); packed [R, Hkv, Dv] with unit-stride R (its own rows).
    v = tensor(heads_kv, head_dim_v, pages, key_major=eight_bit, cache=True)
    o = tensor(heads_q, head_dim_v, element=output_element)
    arguments = f"%q: {q}, %k: {k}, %v: {v}, %o: {o}"
    clauses = ""
    if lse:
        lse_type = f"memref<{heads_q}x?xf32>" if varlen else f"memref<?x{heads_q}x?xf32>"
        arguments += f", %lse: {lse_type}"
        clauses = f" lse(%lse : {lse_type})"
    if sink:
        arguments += f", %sink: memref<{heads_q}xf32>"
        clauses += f" sink(%sink : memref<{heads_q}xf32>)"
    if descale:
        scales = f"memref<?x{heads_kv}xf32>"
        arguments += "".join(f", %{n}: {scales}" for n in runtime.DESCALES)
        clauses += (f" descale(%q_descale, %k_descale, %v_descale : {scales}, {scales}, "
                    f"{scales})")
    table = "memref<?xi32>"
    if varlen:
        arguments += f", %cu_q: {table}, %cu_k: {table}"
        clauses += f" varlen(%cu_q, %cu_k : {table}, {table})"
    if seqused_k:
        arguments += f", %used_k: {table}"
        clauses += f" seqused_k(%used_k : {table})"
    if page_size:
        arguments += ", %page_table: memref<?x?xi32>"
        clauses += " paged(%page_table : memref<?x?xi32>)"
    if rope:
        rope_table = f"memref<?x{rope.columns}xf32>"
        positions = "memref<?xi32>" if varlen else "memref<?x?xi32>"
        arguments += f", %cos_sin: {rope_table}, %positions: {positions}"
        clauses += f" rope(%cos_sin, %positions : {rope_table}, {positions})"
    attributes = ["causal"] if causal else []
    window = _window_attribute(window, causal)
    if window:
        attributes.append(f"window = array<i64: {window[0]}, {window[1]}>")
    if softcap:
        attributes.append(f"softcap = {float(softcap)} : f32")
    if rope and rope.start:
        attributes.append(f"rope_start = {rope.start} : i64")
    if rope and rope.output:
        attributes.append("rope_output")
    attributes = f" {{{', '.join(attributes)}}}" if attributes else ""
    return (f"func.func @{name}({arguments}) {{\n"
            f"  fa4.attention ins(%q, %k, %v : {q}, {k}, {v}) outs(%o : {o})"
            f"{clauses}{attributes}\n"
            f"  return\n}}\n")


def kernel_name(element, head_dim, heads_q, heads_kv, causal, lse, window=None,
                softcap=None, sink=False, varlen=False, seqused_k=False, head_dim_v=None,
                page_size=None, descale=False, output_element=None, rope=None):
    """A name that says the configuration, e.g. bf16_d128_h16x16_causal_lse
    (bf16_d192v128_... where V's head dim is another;
    ..._seqused_paged256_lse for a KV cache of 256-key pages;
    e4m3_d128_h32x8_causal_descale_lse for FP8 with descales and O bf16,
    e4m3of16_... with O f16; ..._rope0x128_... for a rotary embedding of
    128 columns from column 0, ..._rope64x64o_... with O rotated back)."""
    rope = _rope(rope)
    window = _window_attribute(window, causal)
    left, right = (("m1" if b < 0 else str(b)) for b in window) if window else ("", "")
    depth_v = "" if head_dim_v in (None, head_dim) else f"v{head_dim_v}"
    # The output is said where it is not the default (the inputs', bf16 for FP8).
    output = _output_element(element, output_element)
    default = "bf16" if element in runtime.EIGHT_BIT_ELEMENTS else element
    return (f"{element}{'' if output == default else f'o{output}'}"
            f"_d{head_dim}{depth_v}_h{heads_q}x{heads_kv}"
            f"{'_causal' if causal else ''}"
            f"{f'_window{left}x{right}' if window else ''}"
            f"{f'_softcap{softcap:g}' if softcap else ''}{'_sink' if sink else ''}"
            f"{'_descale' if descale else ''}"
            f"{'_varlen' if varlen else ''}{'_seqused' if seqused_k else ''}"
            f"{f'_paged{page_size}' if page_size else ''}"
            f"{f'_rope{rope.start}x{rope.columns}' if rope else ''}"
            f"{'o' if rope and rope.output else ''}{'_lse' if lse else ''}")


def cache_directory():
    """`FA4_CACHE_DIR`, else `$XDG_CACHE_HOME/fa4`, else `~/.cache/fa4`."""
    if os.environ.get("FA4_CACHE_DIR"):
        return Path(os.environ["FA4_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fa4"


_identities = {}  # library path -> (size, mtime, digest)


def compiler_identity(library=None):
    """A hash of the C API library's bytes: kernels compiled by another
    build of the compiler never match."""
    path = Path(library) if library else capi._default_library_path()
    try:
        stat = path.stat()
    except OSError as err:
        raise RuntimeError(f"fa4 cannot compile kernels on demand: no C API library at "
                           f"{path} (set FA4_CAPI_LIB): {err.strerror}") from None
    known = _identities.get(str(path))
    if known is None or known[:2] != (stat.st_size, stat.st_mtime_ns):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        known = _identities[str(path)] = (stat.st_size, stat.st_mtime_ns, digest)
    return known[2]


class KernelCache:
    """Kernels compiled on demand, by problem, in `path` (default
    `cache_directory()`), with the C API library `library` (default: the
    one `fa4.capi` finds)."""

    def __init__(self, path=None, library=None):
        self.path = Path(path) if path is not None else cache_directory()
        self.library = library
        self.compiled = 0               # kernels this object compiled
        self.last_compile_seconds = None
        self._kernels = {}              # key -> Kernel
        self._lock = threading.Lock()

    def key(self, problem):
        """The entry name of a problem (a dict of `kernel`'s arguments)."""
        text = json.dumps(dict(problem, compiler=compiler_identity(self.library)),
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def kernel(self, dtype, heads_q, heads_kv, head_dim, causal=False, lse=False,
               arch="sm_100a", window=(-1, -1), softcap=False, sink=False, varlen=False,
               seqused_k=False, head_dim_v=None, page_size=None, kv_splits=1,
               descale=False, output_dtype=None, q_stages=None, rope=None,
               p_precision=None, kv_interleave=None, shared_key=None, family=None):
        """The kernel of the problem from the cache, compiled first if no
        entry has it; `kv_splits` CTAs share each work tile's KV blocks
        (split-KV; 1: none); `q_stages` the Q tiles in flight per CTA (1 or
        2; None: fa4-plan's choice). `softcap` says whether there is one
        (its value is an argument); `varlen`, `seqused_k`, `head_dim_v` and `page_size` as
        `module_text`'s (page_size 0 is None: not paged); for `dtype` 'e4m3'
        (FP8), `descale` whether it takes dequantization factors and
        `output_dtype` O's element (None: bf16); `rope` (start, columns,
        output) a rotary embedding of Q (`module_text`). `p_precision` how
        the PV product takes P: None or 'single' (the default: P rounded
        once to the 16-bit element) or 'hi_lo' (fa4-compile's
        `p-precision=hi_lo`: P as its rounded value plus its rounded
        rounding residual, both multiplied by V; O's error against float64
        about 0.7-0.85x, prefill about 0.57-0.75x the throughput on an
        H100; a problem of its own, its entry's kernel named ..._hilo;
        16-bit inputs only). `kv_interleave` (sm_100a) the softmax
        warpgroups sharing each Q tile: None for fa4-plan's choice, 2 for
        both over one Q tile, each taking every other KV block
        (fa4-compile's `kv-interleave=2 q-stages=1`: a work tile of half
        the rows of two Q stages', for grids with fewer tiles than SMs; a
        problem of its own, its entry's kernel named ..._q1_kvi2), 1 for
        none (`kv-interleave=1`; on sm_90a, which never interleaves, the
        default problem). `shared_key` (sm_100a) the threads of a softmax
        warpgroup sharing each query row: None or 1 for one (the default),
        2 or 4 for Q stages of 64 or 32 rows, each row's threads over their
        share of every KV block's keys (fa4-compile's `shared-key=N`, for
        decode-sized tiles; a problem of its own, its entry's kernel named
        ..._skN). `family` None or 'prefill' for the prefill kernels (the
        default), 'decode' for sm_100a's swap-AB decode kernel (fa4-compile's
        `family=decode`: the KV block's keys are the MMAs' M and a Q tile of
        16 or 32 rows their N, for few new tokens; a problem of its own, its
        entry's kernel named ..._dec). Raises ValueError for a page size that
        is not a power of two, a rope whose start or columns are not
        multiples of 8, FP8 options the dtype does not have (hi_lo among
        them), a p_precision other than None, 'single' and 'hi_lo', and a
        kv_interleave other than None, 1 and 2, or 2 outside sm_100a or
        with two Q stages, a split or hi_lo, and a shared_key other than
        None, 1, 2 and 4, or above 1 where `_shared_key` refuses it, and a
        family other than None, 'prefill' and 'decode' or 'decode' where
        `_family` refuses it;
        RuntimeError when the
        compiler is missing and fa4.MLIRError when it refuses the
        problem."""
        page_size = page_size or None
        _check_page_size(page_size)
        dtype = runtime.canonical_element(str(dtype))
        output = _output_element(dtype, output_dtype)
        _check_eight_bit(dtype, descale, page_size)
        rope = _rope(rope)
        if p_precision not in P_PRECISIONS:
            raise ValueError(f"p_precision must be 'single', 'hi_lo' or None, got "
                             f"{p_precision!r}")
        if p_precision == "hi_lo" and dtype in runtime.EIGHT_BIT_ELEMENTS:
            raise ValueError(f"p_precision 'hi_lo' takes P in two 16-bit parts: {dtype} "
                             "inputs have one 8-bit P")
        kv_interleave, q_stages = _interleave(kv_interleave, q_stages, arch, kv_splits,
                                              p_precision)
        value_dim = int(head_dim if head_dim_v is None else head_dim_v)
        shared_key = _shared_key(shared_key, arch, kv_interleave, p_precision, dtype,
                                 value_dim, rope)
        family = _family(family, arch, dtype, value_dim, rope, kv_interleave,
                         p_precision, shared_key)
        page_size = None if page_size is None else int(page_size)
        window = runtime.effective_window(window, causal)
        problem = dict(dtype=dtype, heads_q=int(heads_q), heads_kv=int(heads_kv),
                       head_dim=int(head_dim), causal=bool(causal), lse=bool(lse),
                       arch=str(arch), window=list(window), softcap=bool(softcap),
                       sink=bool(sink))
        # Only where set, so that the entries of dense problems keep their keys.
        if varlen:
            problem.update(varlen=True, seqused_k=bool(seqused_k))
        elif seqused_k:
            problem.update(seqused_k=True)
        if page_size:
            problem.update(page_size=page_size)
        if head_dim_v is not None and int(head_dim_v) != int(head_dim):
            problem.update(head_dim_v=int(head_dim_v))
        if int(kv_splits) != 1:
            problem.update(kv_splits=int(kv_splits))
        if q_stages is not None:
            # sm_90a has up to three consumer warpgroups.
            stages = (1, 2, 3) if str(arch) == "sm_90a" else (1, 2)
            if int(q_stages) not in stages:
                raise ValueError(f"q_stages must be {', '.join(map(str, stages[:-1]))} or "
                                 f"{stages[-1]} on {arch} (or None: the planner's "
                                 f"choice), got {q_stages}")
            problem.update(q_stages=int(q_stages))
        if descale:
            problem.update(descale=True)
        if rope:
            problem.update(rope=list(rope))
        if p_precision == "hi_lo":
            problem.update(p_precision="hi_lo")
        if kv_interleave is not None:
            problem.update(kv_interleave=kv_interleave)
        if shared_key is not None:
            problem.update(shared_key=shared_key)
        if family is not None:
            problem.update(family=family)
        if output != ("bf16" if dtype in runtime.EIGHT_BIT_ELEMENTS else dtype):
            problem.update(output_dtype=output)
        key = self.key(problem)
        with self._lock:
            if key not in self._kernels:
                self._kernels[key] = self._load_or_compile(key, problem)
            return self._kernels[key]

    @staticmethod
    def _configuration(problem):
        """`kernel_name`'s and `module_text`'s arguments for `problem` (a
        softcap's value is an argument of the kernel: 1.0 stands for any)."""
        return (problem["dtype"], problem["head_dim"], problem["heads_q"],
                problem["heads_kv"], problem["causal"], problem["lse"], problem["window"],
                1.0 if problem["softcap"] else None, problem["sink"],
                problem.get("varlen", False), problem.get("seqused_k", False),
                problem.get("head_dim_v"), problem.get("page_size"),
                problem.get("descale", False), problem.get("output_dtype"),
                problem.get("rope"))

    def _load_or_compile(self, key, problem):
        entry = self.path / key
        name = kernel_name(*self._configuration(problem))
        if problem.get("kv_splits"):
            name += f"_split{problem['kv_splits']}"
        if problem.get("q_stages"):
            name += f"_q{problem['q_stages']}"
        if problem.get("p_precision"):
            name += "_hilo"
        if problem.get("kv_interleave"):
            name += f"_kvi{problem['kv_interleave']}"
        if problem.get("shared_key"):
            name += f"_sk{problem['shared_key']}"
        if problem.get("family"):
            name += "_dec"
        manifest = entry / f"{name}_attention.json"
        if not manifest.exists():
            self._compile(entry, name, problem)
        return runtime.Kernel.load(manifest)

    def _compile(self, entry, name, problem):
        source = module_text(name, *self._configuration(problem))
        start = time.perf_counter()
        options = f"arch={problem['arch']}"
        if problem.get("kv_splits"):
            options += f" kv-splits={problem['kv_splits']}"
        if problem.get("q_stages"):
            options += f" q-stages={problem['q_stages']}"
        if problem.get("p_precision"):
            options += f" p-precision={problem['p_precision']}"
        if problem.get("kv_interleave"):
            options += f" kv-interleave={problem['kv_interleave']}"
        if problem.get("shared_key"):
            options += f" shared-key={problem['shared_key']}"
        if problem.get("family"):
            options += f" family={problem['family']}"
        with capi.Context(self.library) as context:
            compilation = context.compile(source, options)
        self.path.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=self.path))
        try:
            compilation.write(staging)
            (staging / "problem.json").write_text(json.dumps(problem, indent=2) + "\n")
            try:
                os.rename(staging, entry)
            except OSError:
                # Another process renamed its entry first: keep that one.
                if not entry.is_dir():
                    raise
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        self.compiled += 1
        self.last_compile_seconds = time.perf_counter() - start
