"""fa4 attention on PyTorch tensors.

    import fa4.torch
    out = fa4.torch.attention(q, k, v, causal=True)            # [B, Sq, Hq, D]
    out, lse = fa4.torch.attention(q, k, v, return_lse=True)   # lse [B, Hq, Sq] f32
    out = fa4.torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k)  # packed [T, H, D]
    out = fa4.torch.attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths,
                                           page_table=pages)  # a (paged) KV cache
    out = fa4.torch.attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths,
                                           rope_cos_sin=table, rope_positions=positions)
                                           # Q rotated in the kernel (RoPE)
    out = fa4.torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, rope_cos_sin=table,
                                     rope_positions=packed_positions)  # [total_q] int32
    out = fa4.torch.attention(q, k, v, p_precision="hi_lo")   # P V with P as hi + lo:
                                                              # more precise, slower

The kernels come from a directory of compiled kernels (`kernel_dir`, else
the `FA4_KERNEL_DIR` environment variable), where `fa4.runtime` chooses one;
a problem no directory holds is compiled on demand (`fa4.jit`: in-process,
cached across processes; `FA4_JIT=0` turns that off). The kernel is
launched on the current stream. With torch.library (PyTorch 2.4 and later)
`attention` runs as the custom op `fa4::attention` (`attention_varlen` as
`fa4::attention_varlen`, `attention_with_kvcache` as
`fa4::attention_with_kvcache`), which torch.compile keeps as one node of its graph;
plain eager calls run the op's kernel directly. `python -m fa4.torch --check DIR` runs
every kernel of DIR for this GPU against a float32 PyTorch reference (FP8
kernels: a float64 one, each element within `fp8_tolerance`'s bound).
"""

import math
import numbers
import os
import re
from typing import Optional, Tuple

import torch

from fa4 import runtime

__all__ = ["apply_rope", "attention", "attention_varlen", "attention_with_kvcache",
           "arch_of", "fp8_tolerance", "jit_cache", "kernel_directory", "reference",
           "reference_kvcache", "reference_varlen", "fp8_tolerance_varlen"]

_ELEMENTS = {torch.bfloat16: "bf16", torch.float16: "f16"}
# FP8 inputs (e4m3), where this PyTorch has the dtype: dense attention
# only, O bf16 (or f16), V read key-major (copied into that layout unless
# it is in it).
_FLOAT8 = getattr(torch, "float8_e4m3fn", None)
if _FLOAT8 is not None:
    _ELEMENTS[_FLOAT8] = "e4m3"
_EIGHT_BIT = () if _FLOAT8 is None else (_FLOAT8,)
_DTYPES = {element: dtype for dtype, element in _ELEMENTS.items()}
_directories = {}   # resolved path -> KernelDirectory
_chosen = {}        # (directory, device index, problem) -> Kernel
_plans = {}         # everything an eager call's checks and choice read -> _Plan
_jit = []           # the process's fa4.jit.KernelCache, once made
#: Eager configurations remembered (`_plans`); all are forgotten when full.
PLAN_CACHE_SIZE = 1024
_Tensor = torch.Tensor
_C = getattr(torch, "_C", None)
# The current stream's raw handle and the current device without building
# Python objects (what Inductor's generated code calls), where PyTorch has
# them: torch.cuda.current_stream() and torch.cuda.device() cost microseconds.
_raw_stream = getattr(_C, "_cuda_getCurrentRawStream", None)
_current_device = getattr(_C, "_cuda_getDevice", None)


def kernel_directory(path=None):
    """The KernelDirectory of `path` (default: $FA4_KERNEL_DIR), read once."""
    path = path if path is not None else os.environ.get("FA4_KERNEL_DIR")
    if not path:
        raise ValueError("no kernel directory: pass kernel_dir= or set FA4_KERNEL_DIR "
                         "to a directory of compiled fa4 kernels")
    key = os.path.realpath(path)
    if key not in _directories:
        _directories[key] = runtime.KernelDirectory(key)
    return _directories[key]


def arch_of(device):
    """The kernel arch of a CUDA device: capability (10, 0) -> 'sm_100a'."""
    return runtime.arch_of_capability(torch.cuda.get_device_capability(device))


def _check(q, k, v, packed=False, paged=False):
    """Checks q, k, v: [B, S, H, D] each, or with `packed` [T, H, D], or
    with `paged` k, v pages [num_pages, page_size, Hkv, D] (q [B, Sq, Hq,
    D], or [T, Hq, D] with `packed`). An FP8 V may have any layout
    (`_value_of`)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype not in _ELEMENTS:
            raise TypeError(f"{name} has dtype {t.dtype}; fa4 kernels take torch.bfloat16 "
                            "or torch.float16"
                            + (", or torch.float8_e4m3fn" if _EIGHT_BIT else ""))
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, "
                        f"{v.dtype}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_cuda:
            raise ValueError(f"{name} is on {t.device}; fa4 kernels take CUDA tensors")
    if not q.device == k.device == v.device:
        raise ValueError(f"q, k and v must be on one device, got {q.device}, {k.device}, "
                         f"{v.device}")
    # Each shape read once: every read builds a torch.Size (host time per call).
    shape_q, shape_k, shape_v = q.shape, k.shape, v.shape
    layouts = ("[total_q, Hq, D]" if packed else "[B, Sq, Hq, D]",
               "[num_pages, page_size, Hkv, D]" if paged
               else "[total_k, Hkv, D]" if packed else "[B, Skv, Hkv, D]")
    for name, t, shape, layout in (("q", q, shape_q, layouts[0]),
                                   ("k", k, shape_k, layouts[1]),
                                   ("v", v, shape_v, layouts[1])):
        rank = 3 if packed and not (paged and name != "q") else 4
        if len(shape) != rank:
            raise ValueError(f"{name} must be {rank}-D {layout}, got shape {list(shape)}")
        # Any other stride TMA can describe is taken as it is (a [B, S, H, D]
        # view of a [B, H, S, D] tensor, say); the runtime checks them. FP8's
        # V is read key-major instead (unit-stride S).
        if t.stride()[-1] != 1 and shape[-1] > 1 and not (name == "v"
                                                           and t.dtype in _EIGHT_BIT):
            raise ValueError(f"{name} must have a unit-stride head dim (strides "
                             f"{list(t.stride())} for shape {list(shape)}): TMA reads "
                             "rows of contiguous elements; call .contiguous()")
    if not packed and not paged and not shape_q[0] == shape_k[0] == shape_v[0]:
        raise ValueError(f"batch sizes differ: q {shape_q[0]}, k {shape_k[0]}, "
                         f"v {shape_v[0]}")
    # V (and O) may have a head dim of their own; a kernel compiled for it
    # is found or compiled like any other.
    if shape_q[-1] != shape_k[-1]:
        raise ValueError(f"head dims differ: q {shape_q[-1]}, k {shape_k[-1]} (q and k "
                         "share one; v may have its own)")
    # Element by element: torch.compile compares symbolic sizes one by one.
    if (shape_k[-3] != shape_v[-3] or shape_k[-2] != shape_v[-2]
            or (paged and shape_k[0] != shape_v[0])):
        raise ValueError(f"k and v shapes differ: {list(shape_k)} and {list(shape_v)}")
    if shape_k[-2] == 0 or shape_q[-2] % shape_k[-2]:
        raise ValueError(f"query heads ({shape_q[-2]}) must be a multiple of key/value "
                         f"heads ({shape_k[-2]})")


def _options(q, k, v, sink, causal, scale, window, softcap, kernel_dir, descales=None,
             p_precision=None):
    """The arguments both entry points share, checked and normalized as
    their ops take them: (sink float32 or None, scale or None, the window
    as `runtime.effective_window` folds causal into it, softcap, the
    directory as a str or None). Raises RuntimeError for inputs that
    require grad in grad mode (`descales`, checked, and any other tensor
    given there, such as the rope table, among them), ValueError for a
    `p_precision` other than None, 'single' and 'hi_lo' and for 'hi_lo'
    with FP8 inputs (`_check_p_precision`)."""
    _check_p_precision(p_precision, q)
    sink = _check_sink(sink, q)
    # While torch.compile traces, a raise here would only say "Observed
    # exception"; the op's autograd kernel refuses instead, with this text.
    if (not (_HAS_OP and torch.compiler.is_compiling()) and torch.is_grad_enabled()
            and any(t is not None and t.requires_grad
                    for t in (q, k, v, sink, *(descales or ())))):
        raise RuntimeError(_NO_BACKWARD)
    scale, softcap = _check_scalars(scale, softcap)
    window = runtime.effective_window(window, causal)
    return sink, scale, window, softcap, None if kernel_dir is None else str(kernel_dir)


def _check_scalars(scale, softcap):
    """(scale or None, softcap as a float); raises ValueError unless scale
    is None or a positive, finite real and softcap 0 or one."""
    for what, value in (("scale", scale), ("softcap", softcap)):
        if value is not None and (not isinstance(value, numbers.Real)
                                  or isinstance(value, bool)):
            raise ValueError(f"{what} must be a real number, got {value!r}")
    if scale is not None:
        scale = float(scale)
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be positive and finite, got {scale}")
    softcap = float(softcap or 0.0)
    if not (math.isfinite(softcap) and softcap >= 0):
        raise ValueError(f"softcap must be 0 (none) or positive and finite, got {softcap}")
    return scale, softcap


_DESCALE_NAMES = ("q_descale", "k_descale", "v_descale")
_P_PRECISIONS = ("single", "hi_lo")


def _check_p_precision(p_precision, q):
    """Raises ValueError unless `p_precision` is None, 'single' or 'hi_lo',
    and for 'hi_lo' with FP8 q (the compiler takes P in two 16-bit parts
    only for 16-bit inputs)."""
    if p_precision is None:
        return
    if not isinstance(p_precision, str) or p_precision not in _P_PRECISIONS:
        raise ValueError(f"p_precision must be 'single', 'hi_lo' or None, got "
                         f"{p_precision!r}")
    if p_precision == "hi_lo" and q.dtype in _EIGHT_BIT:
        raise ValueError(f"p_precision='hi_lo' takes P in two 16-bit parts, for 16-bit "
                         f"inputs; q is {q.dtype} (FP8 kernels round P to e4m3 once)")


def _batch(q, tables):
    """The batch of a problem: q's (dense q [B, Sq, Hq, D]), or the
    sequences of packed ones (`tables` their cu_seqlens_q, ...)."""
    return q.shape[0] if tables is None else tables[0].shape[0] - 1


def _check_descales(descales, q, k, batch=None):
    """FP8's dequantization factors (q_descale, k_descale, v_descale) as the
    kernel reads them: None when none is given, else a triple of float32
    [B, Hkv] tensors on q's device (B `batch`: q's batch, or the sequences
    of packed ones), contiguous (copied where not), None where not given
    (the launch reads ones there). Raises TypeError or ValueError."""
    if descales is None or all(t is None for t in descales):
        return None
    if q.dtype not in _EIGHT_BIT:
        raise ValueError(f"q_descale, k_descale and v_descale dequantize FP8 inputs; q is "
                         f"{q.dtype}")
    batch = q.shape[0] if batch is None else batch
    heads_kv = k.shape[-2]
    checked = []
    for name, t in zip(_DESCALE_NAMES, descales):
        if t is None:
            checked.append(None)
            continue
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            raise TypeError(f"{name} must be a torch.float32 tensor [B, Hkv], got "
                            f"{t.dtype if isinstance(t, torch.Tensor) else type(t).__name__}")
        # Element by element: torch.compile compares symbolic sizes one by one.
        if t.dim() != 2 or t.shape[0] != batch or t.shape[1] != heads_kv:
            raise ValueError(f"{name} must have shape [B, Hkv] = [{batch}, {heads_kv}], got "
                             f"{list(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
        checked.append(t.contiguous())
    return tuple(checked)


def _check_out_dtype(out_dtype, q):
    """O's dtype as the op takes it: None for the default (q's dtype; bf16
    for FP8 inputs), torch.float16 where FP8 inputs ask for it. Raises
    ValueError for any other."""
    if out_dtype is None or out_dtype == _output_dtype(q.dtype, None):
        return None
    if q.dtype in _EIGHT_BIT and out_dtype == torch.float16:
        return out_dtype
    raise ValueError(f"out_dtype {out_dtype}: {q.dtype} inputs give "
                     + ("torch.bfloat16 or torch.float16" if q.dtype in _EIGHT_BIT
                        else f"{q.dtype}") + " outputs")


def _output_dtype(dtype, out_dtype):
    """O's dtype for inputs of `dtype` and a checked `out_dtype`."""
    if out_dtype is not None:
        return out_dtype
    return torch.bfloat16 if dtype in _EIGHT_BIT else dtype


def _rope_of(cos_sin, positions, start, output):
    """A call's rotary embedding as given: None without one (neither
    tensor, rope_start 0 and rope_output False), else (cos_sin, positions,
    start, output), unchecked (`_check_rope`). Raises ValueError for
    rope_start or rope_output without the tensors."""
    if cos_sin is None and positions is None:
        if start is not None and (not runtime._is_int(start) or start != 0) or output:
            raise ValueError(f"rope_start={start!r} and rope_output={output!r} need "
                             "rope_cos_sin and rope_positions")
        return None
    return (cos_sin, positions, start, output)


def _check_rope(rope, q, v, packed=False):
    """The rotary embedding as the kernel reads it, for q [B, Sq, Hq, D]
    (`packed`: [Tq, Hq, D]) and v (Dv): None without one, else (cos_sin
    float32 [P, R] with P >= 1 and R a positive multiple of 8, positions
    int32 [B, Sq] (packed: [Tq], a position per query row, as the kernel
    reads positions[cu_seqlens_q[b] + i]), both on q's device and
    contiguous (copied where not), rope_start an int, a multiple of 8 with
    rope_start + R <= D (and <= Dv with rope_output), rope_output a bool).
    Raises TypeError or ValueError."""
    if rope is None:
        return None
    cos_sin, positions, start, output = rope
    if cos_sin is None or positions is None:
        raise ValueError("rope_cos_sin and rope_positions go together: pass both or neither")
    where = "[total_q]" if packed else "[B, Sq]"
    for name, t, dtype, layout, rank in (
            ("rope_cos_sin", cos_sin, torch.float32, "[P, R]", 2),
            ("rope_positions", positions, torch.int32, where, 1 if packed else 2)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != dtype or t.dim() != rank:
            raise ValueError(f"{name} must be a {dtype} tensor {layout}, got {t.dtype} of "
                             f"shape {list(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
    if not runtime._is_int(start):
        raise TypeError(f"rope_start must be an int, got {type(start).__name__}")
    if not isinstance(output, bool):
        raise TypeError(f"rope_output must be a bool, got {type(output).__name__}")
    if q.dtype in _EIGHT_BIT:
        raise ValueError(f"rope rotates 16-bit queries; q is {q.dtype} (rotate the queries "
                         "before quantizing them)")
    rows, columns = cos_sin.shape
    if rows < 1:
        raise ValueError(f"rope_cos_sin must hold at least one position, got shape "
                         f"{list(cos_sin.shape)}")
    granule = runtime.ROPE_GRANULE
    if columns < granule or columns % granule or start < 0 or start % granule:
        raise ValueError(f"rope_start ({start}) and rope_cos_sin's columns R ({columns}) must "
                         f"be multiples of {granule}, R positive: the kernel rotates pairs "
                         "four at a time")
    depth = q.shape[-1] if not output else min(q.shape[-1], v.shape[-1])
    if start + columns > depth:
        raise ValueError(f"rope rotates columns [{start}, {start + columns}) of q"
                         f"{' and O' if output else ''}, past the head dim {depth}")
    # Element by element: torch.compile compares symbolic sizes one by one.
    if packed and positions.shape[0] != q.shape[0]:
        raise ValueError(f"rope_positions must be [total_q] = [{q.shape[0]}] (a position per "
                         f"packed query row), got {list(positions.shape)}")
    if not packed and (positions.shape[0] != q.shape[0] or positions.shape[1] != q.shape[1]):
        raise ValueError(f"rope_positions must be [B, Sq] = [{q.shape[0]}, {q.shape[1]}] "
                         f"(q's), got {list(positions.shape)}")
    return cos_sin.contiguous(), positions.contiguous(), int(start), output


def _rope_key(rope):
    """The kernel's rope for a checked one: None, or runtime.Rope(start,
    R, output), R being the table's columns."""
    return None if rope is None else runtime.Rope(rope[2], rope[0].shape[1], rope[3])


def _rope_arguments(trailing, rope):
    """The ops' trailing arguments: `trailing` (the FP8 ones), then the
    rope's (rope_cos_sin, rope_positions, rope_start, rope_output) only
    where a call has one, the FP8 ones filled in before them."""
    if rope is None:
        return trailing
    return (*(trailing or (None, None, None, None)), *rope)


# The defaults of the ops' trailing arguments before p_precision: the FP8
# ones (q/k/v_descale, out_dtype), then the rope's (cos_sin, positions,
# start, output); attention_varlen's page_table between them.
_TRAILING_DEFAULTS = (None, None, None, None, None, None, 0, False)
_VARLEN_TRAILING_DEFAULTS = (None, None, None, None, None, None, None, 0, False)


def _precision_arguments(trailing, p_precision, defaults=_TRAILING_DEFAULTS):
    """The ops' trailing arguments: `trailing`, then p_precision only where
    a call gives one, the arguments before it filled in with `defaults`
    (the ops' defaults of the trailing arguments before p_precision)."""
    if p_precision is None:
        return trailing
    return (*trailing, *defaults[len(trailing):], p_precision)


def _rope_given(cos_sin, positions, start, output):
    """The rope of an op's arguments: None where it has no table."""
    return None if cos_sin is None else (cos_sin, positions, start, output)


def _key_major_in_place(v):
    """Whether a key-major tensor map reads v [B, Skv, Hkv, Dv] (or pages
    [num_pages, page_size, Hkv, Dv]) as it is: Skv unit-stride (or 1), the
    other strides positive multiples of 16 bytes (TMA's rule; the runtime
    checks the address). Packed sequences never are: their V is laid out
    per sequence (`_key_major_copy`)."""
    if v.dim() == 3:
        return False
    stride, size = v.stride(), runtime.ELEMENT_BYTES[_ELEMENTS[v.dtype]]
    return ((stride[1] == 1 or v.shape[1] == 1)
            and all(stride[d] > 0 and stride[d] * size % 16 == 0 for d in (0, 2, 3)))


def _packed_value_rows(keys, sequences):
    """The rows of `_key_major_copy`'s packed V: every sequence's (at most
    keys + 16 sequences, from 16-aligned starts) rounded up to 16, and one
    more 16-row group whose last row takes the keys no sequence owns (as
    zeros)."""
    align = runtime.PACKED_VALUE_ALIGNMENT
    return -(-(keys + align * sequences) // align) * align + align


def _key_major_copy(v, cu_seqlens_k=None):
    """v [B, Skv, Hkv, Dv] copied key-major: memory [B, Hkv, Dv, S'], S'
    being Skv rounded up to 16 bytes (TMA's stride rule; the map's Skv
    leaves the padding unread), seen as [B, Skv, Hkv, Dv] (pages likewise).
    One read and one write of V, and its memory once more.

    Packed v [Tk, Hkv, Dv] with its `cu_seqlens_k`: memory [Hkv, Dv, R]
    seen as [R, Hkv, Dv], sequence b's keys from row align16(cu_seqlens_k[b])
    + 16 b (the kernel's packed key-major layout: every TMA box starts
    16-byte aligned), zeros elsewhere (read under masked keys), R a multiple
    of 16 of at least Tk + 16 B. Computed on the device (the tables are not
    read on the host); keys outside every sequence are not copied."""
    per_16 = 16 // runtime.ELEMENT_BYTES[_ELEMENTS[v.dtype]]
    if v.dim() == 3:
        keys, heads, depth = v.shape
        sequences = cu_seqlens_k.shape[0] - 1
        align, rows = runtime.PACKED_VALUE_ALIGNMENT, _packed_value_rows(keys, sequences)
        # Moved as integers of the element's size: the copy needs no
        # arithmetic, and FP8 has few torch kernels.
        bits = torch.uint8 if per_16 == 16 else torch.int16
        storage = torch.zeros((heads, depth, rows), dtype=bits, device=v.device)
        view = storage.as_strided((rows, heads, depth), (1, depth * rows, rows))
        if keys and sequences:
            bounds = cu_seqlens_k.to(torch.int64)
            token = torch.arange(keys, device=v.device)
            sequence = torch.searchsorted(bounds, token, right=True) - 1
            owned = (sequence >= 0) & (sequence < sequences)
            sequence = sequence.clamp(0, sequences - 1)
            start = bounds[sequence]
            row = (start + align - 1) // align * align + align * sequence + (token - start)
            # Tables that are not prefix sums (the kernel clamps what it
            # reads of them) must not place a key outside the copy.
            owned &= (token >= start) & (row < rows - 1)
            row = torch.where(owned, row, rows - 1)
            values = torch.where(owned[:, None, None], v.view(bits),
                                 torch.zeros((), dtype=bits, device=v.device))
            view.index_copy_(0, row, values)
        return view.view(v.dtype)
    batch, keys, heads, depth = v.shape
    padded = -(-keys // per_16) * per_16
    storage = torch.empty((batch, heads, depth, padded), dtype=v.dtype, device=v.device)
    view = storage.as_strided((batch, keys, heads, depth),
                              (heads * depth * padded, 1, depth * padded, padded))
    view.copy_(v)
    return view


def _value_of(kernel, v, tables=None):
    """V as `kernel` reads it: key-major (copied into that layout unless it
    is in it; packed sequences always, from `tables`' cu_seqlens_k) where
    its value map is, else v."""
    if not kernel.key_major or _key_major_in_place(v):
        return v
    return _key_major_copy(v, None if tables is None else tables[1])


def _descale_operands(kernel, q, k, descales, operands, batch):
    """Adds a descale kernel's q_descale, k_descale and v_descale to
    `operands`: the checked ones given, ones [batch, Hkv] for the others
    (allocated per call: pass all three to avoid it). Returns the ones
    tensor (or None), which the caller keeps until the launch is enqueued."""
    if not kernel.descale:
        return None
    given = descales or (None, None, None)
    ones = None
    for name, t in zip(_DESCALE_NAMES, given):
        if t is None:
            if ones is None:
                ones = torch.ones((batch, k.shape[-2]), dtype=torch.float32,
                                  device=q.device)
            t = ones
        operands[name] = _operand(t, "f32")
    return ones


def _operand(t, element):
    # A plain tuple of the size and stride tuples as PyTorch gives them: what
    # the runtime's remembered launches are keyed by, built cheaply.
    return (t.data_ptr(), t.shape, element, t.stride())


_NO_BACKWARD = ("fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the "
                "rope table requires grad, and its gradient would silently stop here; call "
                "it under torch.no_grad() or on detached tensors")


def attention(q, k, v, causal=False, scale=None, return_lse=False, kernel_dir=None,
              window=(-1, -1), softcap=0.0, sink=None, q_descale=None, k_descale=None,
              v_descale=None, out_dtype=None, rope_cos_sin=None, rope_positions=None,
              rope_start=0, rope_output=False, p_precision=None):
    """softmax(scale * q k^T) v per head, with grouped K/V heads.

    q and k [B, Sq or Skv, Hq or Hkv, D], v [B, Skv, Hkv, Dv]: CUDA tensors of one dtype
    (bfloat16 or float16) with a unit-stride head dim and 16-byte aligned
    other strides (views such as a transposed [B, H, S, D] tensor are taken
    without a copy), Hq a multiple of Hkv. `causal` masks
    bottom-right aligned (query row i sees keys up to i + Skv - Sq).
    `window = (left, right)` keeps keys j with i + Skv - Sq - left <= j <=
    i + Skv - Sq + right (-1: that side unbounded; with causal, right is 0).
    `softcap` > 0 caps scores to softcap * tanh(scale q k / softcap) before
    the softmax. `sink` [Hq] (a floating tensor on q's device, read as
    float32) adds one logit per query head to each row's softmax denominator
    and nothing else (attention sinks, gpt-oss style; -inf is none). `scale`
    defaults to 1/sqrt(D). Dv is D unless a kernel for another V head dim
    exists or compiles (e.g. D 192, Dv 128). Returns O [B, Sq, Hq, Dv] in q's dtype, and with
    `return_lse` also the natural-log LSE [B, Hq, Sq] in float32, which
    includes the sink. Rows that see no key give O = 0 and LSE = -inf (the
    sink with sinks).

    FP8: q, k and v torch.float8_e4m3fn (all three) give O in bfloat16
    (`out_dtype=torch.float16` for float16). `q_descale`, `k_descale` and
    `v_descale` (float32 [B, Hkv] on q's device, flash-attn 3's) dequantize
    them: the scores are scale * q_descale * k_descale * q k^T and O is
    softmax(scores) v * v_descale, per batch and KV head (ones where not
    given); the LSE is of those scores. The kernels read V key-major
    (unit-stride Skv: a [B, Skv, Hkv, Dv] view of a [B, Hkv, Dv, Skv]
    tensor, `vt.permute(0, 3, 1, 2)`, is read in place); any other V is
    copied into that layout first, one more read and write of V and its
    memory once more per call. FP8 is dense attention only (not
    attention_varlen or a KV cache).

    Rotary embedding (RoPE, fused into the kernel; 16-bit q): with
    `rope_cos_sin` (float32 [P, R] on q's device: row p holds the R / 2
    cosines, then the R / 2 sines, of position p; R a multiple of 8) and
    `rope_positions` (int32 [B, Sq]; packed sequences: [total_q],
    `attention_varlen`), query row i of batch b is rotated
    at p = rope_positions[b, i] clamped into [0, P): its column pairs (x,
    y) = (rope_start + 2k, rope_start + 2k + 1) become (x c - y s, y c +
    x s), c = cos_sin[p, k], s = cos_sin[p, R / 2 + k] (GPT-J's adjacent
    pairs; `apply_rope`), computed in float32 and rounded to q's dtype
    before the scores. K is taken as already rotated. `rope_output` rotates
    O's same pairs back, (x c + y s, y c - x s), before O is rounded.
    `rope_start` is a multiple of 8 with rope_start + R at most the head
    dim (and Dv with rope_output). The kernel is one compiled for that
    rope (start, R, output): never a kernel without one, nor a rope kernel
    for a call without.

    `p_precision` says how the kernel's PV product takes the probabilities
    P (16-bit q only): 'single' (P rounded once to q's dtype), 'hi_lo' (P
    as its rounded value plus the rounded rounding residual, each
    multiplied by V: fa4-compile's `p-precision=hi_lo`), or None (the
    default: whichever the directory's kernel for the problem has; the
    'single' one when compiled on demand). On an H100, hi_lo's O error
    against float64 was 0.71-0.85x single's, at 0.57-0.75x its prefill
    throughput, 1-6% slower in memory-bound decode. A kernel of the
    precision asked for is found or compiled, never the other.

    The kernel comes from `kernel_dir` (else `FA4_KERNEL_DIR`) when one
    there computes the problem, else it is compiled on demand and cached
    (`fa4.jit`; the first call of a problem pays the compile, about a
    second; `FA4_JIT=0` turns it off). On sm_100a, a call whose work tiles
    (of the problem's two-Q-stage kernel) are fewer than the device's SMs
    takes that problem's kernel with interleaved softmax warpgroups
    (kv_interleave 2: half the rows per tile) where one is found or
    compiles, fa4-plan's rule for static sizes applied per call (16-bit
    inputs, P rounded once, not split; not timed). The work runs as the
    custom op `fa4::attention` when torch.library has custom ops
    (torch.compile traces this function and keeps the op as one graph
    node); eagerly, when nothing would intercept the op (no dispatch or
    function mode, functorch transform, profiler or TorchScript trace, and
    q, k, v and sink exactly torch.Tensor), the op's kernel is called
    directly, without the dispatcher's cost, and the checks and kernel
    choice of a configuration are remembered.

    Raises TypeError/ValueError for unusable inputs, RuntimeError for inputs
    that require grad in grad mode (there is no backward yet; under
    torch.compile the op's autograd kernel raises it, wrapped in
    torch.compile's error) or when the compiler library is missing,
    LookupError when no kernel computes the problem and none could be
    compiled, fa4.MLIRError when the compiler refuses the problem,
    fa4.runtime.CudaError when the driver fails."""
    return _attend(q, k, v, causal, scale, return_lse, kernel_dir, window, softcap, sink,
                   False, (q_descale, k_descale, v_descale), out_dtype,
                   _rope_of(rope_cos_sin, rope_positions, rope_start, rope_output),
                   p_precision)


def _attend(q, k, v, causal, scale, return_lse, kernel_dir, window, softcap, sink,
            copy_strided_heads, descales=None, out_dtype=None, rope=None, p_precision=None):
    """`attention`; with `copy_strided_heads` (flash_attn_func) a q, k or v
    whose head dim is not unit-stride is copied first instead of refused;
    `descales` the (q, k, v) descales as given, `rope` the rotary
    embedding (`_rope_of`), `p_precision` as given."""
    # Eagerly, with nothing that would intercept the op, its kernel is
    # called directly (see _eager); traced code always reaches the op.
    if not (_HAS_OP and torch.compiler.is_compiling()) and _nothing_intercepts():
        result = _eager(q, k, v, None, causal, scale, return_lse, kernel_dir, window,
                        softcap, sink, copy_strided_heads, descales=descales,
                        out_dtype=out_dtype, rope=rope, p_precision=p_precision)
        if result is not None:
            return result
    if copy_strided_heads:
        q, k, v = _copy_strided_heads(q, k, v)
    _check(q, k, v)
    descales = _check_descales(descales, q, k)
    out_dtype = _check_out_dtype(out_dtype, q)
    rope = _check_rope(rope, q, v)
    sink, scale, (left, right), softcap, kernel_dir = _options(
        q, k, v, sink, causal, scale, window, softcap, kernel_dir,
        (*(descales or ()), *(rope[:1] if rope else ())), p_precision)
    output, lse = _entry(q, k, v, sink, bool(causal), scale, left, right, softcap,
                         bool(return_lse), kernel_dir,
                         *_precision_arguments(
                             _rope_arguments(_fp8_arguments(descales, out_dtype), rope),
                             p_precision))
    return (output, lse) if return_lse else output


def _copy_strided_heads(q, k, v):
    """q, k, v with a head dim that is not unit-stride copied, as flash-attn
    does (not FP8's V, which is read key-major: `_value_of`)."""
    return tuple(t.contiguous() if isinstance(t, torch.Tensor) and t.dim()
                 and t.stride()[-1] != 1 and not (i == 2 and t.dtype in _EIGHT_BIT)
                 else t for i, t in enumerate((q, k, v)))


def _interception_probe():
    """A function saying whether nothing would intercept a call of the op
    (no torch dispatch or function mode, no functorch transform, no
    profiler, no TorchScript trace), or None where this PyTorch lacks one
    of the probes (then `attention` always calls the op)."""
    functorch = getattr(_C, "_functorch", None)
    probes = (getattr(_C, "_len_torch_dispatch_stack", None),
              getattr(_C, "_is_torch_function_mode_enabled", None),
              getattr(functorch, "peek_interpreter_stack", None),
              getattr(getattr(torch, "autograd", None), "_profiler_enabled", None),
              getattr(_C, "_get_tracing_state", None))
    if not all(callable(probe) for probe in probes):
        return None
    dispatch_modes, function_modes, transforms, profiling, tracing = probes

    def nothing_intercepts():
        return not (dispatch_modes() or function_modes() or transforms() is not None
                    or profiling() or tracing() is not None)
    return nothing_intercepts


class _Plan:
    """What an eager call's checks and kernel choice decided for one
    configuration (the key of `_plans` holds everything they read): the
    kernel, the scalars it launches with and the outputs' layout."""

    __slots__ = ("kernel", "element", "dtype", "device", "index", "shape_q", "shape_o",
                 "lse_shape", "output_element", "like_q",
                 "scale", "softcap", "convert_sink", "copy_tables", "copy_cache",
                 "copy_value", "copy_descales", "copy_rope", "output_strides",
                 "lse_strides")

    def run(self, q, k, v, sink, tables, cache, shape_k, shape_v, stride_q, stride_k,
            stride_v, descales=None, rope=None):
        """Allocates the outputs and launches; the shapes and strides are
        the ones the key was made of."""
        device, element, shape_q, shape_o = self.device, self.element, self.shape_q, self.shape_o
        output = (_empty_like(q) if self.like_q
                  else torch.empty(shape_o, dtype=self.dtype, device=device))
        if self.output_strides is None:
            # One shape and dtype are laid out the same way each time.
            self.output_strides = output.stride()
        # The copies made for this launch, kept until it is enqueued: freed
        # earlier, the caching allocator could give their memory to an
        # allocation filled before the kernel reads them.
        copies = []
        if self.copy_value:
            # A paged V is the cache's pages, not packed rows.
            v = _key_major_copy(v, None if tables is None or cache is not None else tables[1])
            copies.append(v)
            shape_v, stride_v = v.shape, v.stride()
        operands = {"query": (q.data_ptr(), shape_q, element, stride_q),
                    "key": (k.data_ptr(), shape_k, element, stride_k),
                    "value": (v.data_ptr(), shape_v, element, stride_v),
                    "output": (output.data_ptr(), shape_o, self.output_element,
                               self.output_strides)}
        lse = None
        if self.lse_shape is not None:
            lse = torch.empty(self.lse_shape, dtype=torch.float32, device=device)
            if self.lse_strides is None:
                self.lse_strides = lse.stride()
            operands["lse"] = (lse.data_ptr(), self.lse_shape, "f32", self.lse_strides)
        if sink is not None:
            if self.convert_sink:
                sink = sink.to(torch.float32).contiguous()
            operands["sink"] = _operand(sink, "f32")
        if tables is not None:
            for name, table, copy in zip(runtime.TABLES, tables, self.copy_tables):
                if table is not None:
                    if copy:
                        table = table.contiguous()
                        copies.append(table)
                    operands[name] = _operand(table, "i32")
        if cache is not None:
            for name, table, copy in zip(runtime.KV_TABLES, cache, self.copy_cache):
                if table is not None:
                    if copy:
                        table = table.contiguous()
                        copies.append(table)
                    operands[name] = _operand(table, "i32")
        if self.copy_descales is not None:
            if descales is not None:
                descales = tuple(None if t is None else t.contiguous() if copy else t
                                 for t, copy in zip(descales, self.copy_descales))
                copies.append(descales)
            copies.append(_descale_operands(self.kernel, q, k, descales, operands,
                                            _batch(q, tables)))
        if rope is not None:
            for name, t, element, copy in zip(runtime.ROPE, rope, ("f32", "i32"),
                                              self.copy_rope):
                if copy:
                    t = t.contiguous()
                    copies.append(t)
                operands[name] = _operand(t, element)
        _launch(self.kernel, device, self.index, operands, self.scale, self.softcap)
        return output if lse is None else (output, lse)


def _output_shape(shape_q, head_dim_v):
    """O's shape: q's with v's head dim (`shape_q` itself where they agree,
    which `_Plan.run` tells by identity)."""
    return shape_q if head_dim_v == shape_q[-1] else (*shape_q[:-1], head_dim_v)


def _empty_like(q):
    """O for q: q's shape, dtype and device, contiguous (also for a strided
    view). torch.empty_like takes about half torch.empty's host time."""
    return torch.empty_like(q, memory_format=torch.contiguous_format)


def _plain_options(scale, window, softcap):
    """Whether the options are of the plain types, for which equal values
    check the same way (True == 1 but a bool scale is refused)."""
    return ((scale is None or scale.__class__ is float)
            and (softcap.__class__ is float or softcap.__class__ is int)
            and window.__class__ is tuple and len(window) == 2
            and window[0].__class__ is int and window[1].__class__ is int)


def _signature(t):
    """What the checks read of an optional tensor: None, or its dtype,
    device, shape and strides (its type: the caller knows it is a Tensor)."""
    return None if t is None else (t.dtype, t.device, t.shape, t.stride())


def _eager(q, k, v, tables, causal, scale, return_lse, kernel_dir, window, softcap, sink,
           copy_strided_heads, cache=None, splits=1, descales=None, out_dtype=None,
           rope=None, p_precision=None):
    """`attention` (`tables` and `cache` None; `descales` and `out_dtype` its
    FP8 arguments as given, `rope` its rotary embedding as `_rope_of`
    gives it, `p_precision` as given), `attention_varlen` (`tables`
    the sequence tables) or `attention_with_kvcache` (`cache` the KV cache's
    (seqused_k, page_table)) eagerly: the op's kernel called directly, the checks
    and the kernel choice done once per configuration. The key of `_plans`
    is everything they read: the dtypes, devices, shapes and strides of
    every tensor, the options with their types, the kernel directory (the
    environment's when none is given). A plan is made only after the full
    checks passed, so a call equal to its key would pass them too; whether
    an input requires grad (not in the key) is checked on every call.
    Returns None where this path does not apply: a tensor that is not
    exactly a torch.Tensor (subclasses, fake tensors) or options of other
    than the plain types (`_plain_options`)."""
    if not (q.__class__ is _Tensor and k.__class__ is _Tensor and v.__class__ is _Tensor
            and (sink is None or sink.__class__ is _Tensor)
            and _plain_options(scale, window, softcap)):
        return None
    if tables is not None and not (
            tables[0].__class__ is _Tensor and tables[1].__class__ is _Tensor
            and (tables[2] is None or tables[2].__class__ is _Tensor)):
        return None
    if cache is not None and not (
            (cache[0] is None or cache[0].__class__ is _Tensor)
            and (cache[1] is None or cache[1].__class__ is _Tensor)):
        return None
    if descales is not None:
        if all(t is None for t in descales):
            descales = None
        elif not all(t is None or t.__class__ is _Tensor for t in descales):
            return None
    if rope is not None and not (rope[0].__class__ is _Tensor and rope[1].__class__ is _Tensor
                                 and rope[2].__class__ is int and rope[3].__class__ is bool):
        return None
    shape_q, shape_k, shape_v = q.shape, k.shape, v.shape
    stride_q, stride_k, stride_v = q.stride(), k.stride(), v.stride()
    key = (q.dtype, k.dtype, v.dtype, q.device, k.device, v.device, shape_q, shape_k,
           shape_v, stride_q, stride_k, stride_v, None if sink is None else _signature(sink),
           None if tables is None else tuple(_signature(t) for t in tables),
           None if cache is None else (_signature(cache[0]), _signature(cache[1])),
           causal, scale, window, softcap, return_lse, kernel_dir,
           os.environ.get("FA4_KERNEL_DIR") if kernel_dir is None else None, splits,
           None if descales is None else tuple(_signature(t) for t in descales), out_dtype,
           None if rope is None else (_signature(rope[0]), _signature(rope[1]), *rope[2:]),
           p_precision)
    try:
        plan = _plans.get(key)
    except TypeError:
        # Something unhashable (a list as kernel_dir): the checked path.
        return None
    if plan is None:
        if copy_strided_heads:
            copies = _copy_strided_heads(q, k, v)
            if any(c is not t for c, t in zip(copies, (q, k, v))):
                return _eager(*copies, tables, causal, scale, return_lse, kernel_dir,
                              window, softcap, sink, False, cache, splits, descales,
                              out_dtype, rope, p_precision)
        plan = _make_plan(q, k, v, tables, causal, scale, return_lse, kernel_dir, window,
                          softcap, sink, cache, splits, descales, out_dtype, rope,
                          p_precision)
        if plan.__class__ is not _Plan:
            return plan   # the result of a call that launches nothing
        if len(_plans) >= PLAN_CACHE_SIZE:
            _plans.clear()
        _plans[key] = plan
    elif torch.is_grad_enabled() and (
            q.requires_grad or k.requires_grad or v.requires_grad
            or (sink is not None and sink.requires_grad)
            or (descales is not None
                and any(t is not None and t.requires_grad for t in descales))
            or (rope is not None and rope[0].requires_grad)):
        raise RuntimeError(_NO_BACKWARD)
    return plan.run(q, k, v, sink, tables, cache, shape_k, shape_v, stride_q, stride_k,
                    stride_v, descales, rope)


def _make_plan(q, k, v, tables, causal, scale, return_lse, kernel_dir, window, softcap,
               sink, cache=None, splits=1, descales=None, out_dtype=None, rope=None,
               p_precision=None):
    """The full checks of a call, then its plan; for a call that launches
    nothing (no query rows or sequences, no keys), its result instead."""
    varlen = tables is not None
    _check(q, k, v, packed=varlen, paged=cache is not None and cache[1] is not None)
    checked_tables = _check_tables(q, *tables) if varlen else None
    checked_cache = (_check_cache(q, k, *cache,
                                  batch=tables[0].shape[0] - 1 if varlen else None)
                     if cache is not None else None)
    checked_descales = _check_descales(descales, q, k, _batch(q, tables))
    out_dtype = _check_out_dtype(out_dtype, q)
    checked_rope = _check_rope(rope, q, v, packed=varlen)
    sink_f32, scale, (left, right), softcap, kernel_dir = _options(
        q, k, v, sink, causal, scale, window, softcap, kernel_dir,
        (*(checked_descales or ()), *(checked_rope[:1] if checked_rope else ())),
        p_precision)
    if varlen:
        total_q, heads_q, _ = q.shape
        work, keys = total_q and tables[0].shape[0] > 1, k.shape[0]
        lse_shape = (heads_q, total_q)
    else:
        batch, seq_q, heads_q, _ = q.shape
        work, keys = batch and seq_q, _capacity(k, checked_cache)
        lse_shape = (batch, heads_q, seq_q)
    if not (work and keys):
        output, lse = _choose_and_run(q, k, v, sink_f32, bool(causal), scale, left, right,
                                      softcap, bool(return_lse), kernel_dir, checked_tables,
                                      checked_cache, splits, checked_descales, out_dtype,
                                      checked_rope, p_precision)
        return (output, lse) if return_lse else output
    plan = _Plan()
    plan.kernel, plan.scale = _kernel_of(q, k, v, sink_f32, bool(causal), scale, left, right,
                                         softcap, bool(return_lse), kernel_dir,
                                         checked_tables, checked_cache, splits,
                                         checked_descales is not None, out_dtype,
                                         _rope_key(checked_rope), p_precision)
    plan.softcap = softcap or None
    plan.element, plan.device = _ELEMENTS[q.dtype], q.device
    # O's dtype is the kernel's (q's, or bf16/f16 for FP8 inputs).
    plan.output_element = plan.kernel.output_element
    plan.dtype = _DTYPES[plan.output_element]
    plan.index, plan.shape_q = q.device.index, q.shape
    plan.shape_o = _output_shape(plan.shape_q, v.shape[-1])
    plan.like_q = plan.shape_o is plan.shape_q and plan.dtype == q.dtype
    plan.copy_value = plan.kernel.key_major and not _key_major_in_place(v)
    plan.copy_descales = (None if not plan.kernel.descale
                          else (False,) * 3 if checked_descales is None
                          else tuple(c is not t for c, t in zip(checked_descales, descales)))
    plan.lse_shape = lse_shape if return_lse else None
    plan.convert_sink = sink_f32 is not sink
    plan.copy_tables = (tuple(c is not t for c, t in zip(checked_tables, tables))
                        if varlen else None)
    plan.copy_cache = (tuple(c is not t for c, t in zip(checked_cache, cache))
                       if cache is not None else None)
    plan.copy_rope = (tuple(c is not t for c, t in zip(checked_rope[:2], rope[:2]))
                      if rope is not None else None)
    plan.output_strides = plan.lse_strides = None
    return plan


def _launch(kernel, device, index, operands, scale, softcap):
    """Launches on the current stream of q's device, with that device current."""
    if _raw_stream is not None:
        stream = _raw_stream(index)
    else:
        stream = torch.cuda.current_stream(device).cuda_stream
    if _current_device is not None and _current_device() == index:
        kernel.launch(operands, stream, index, scale, softcap)
        return
    with torch.cuda.device(device):
        kernel.launch(operands, stream, index, scale, softcap)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               sink: Optional[torch.Tensor], causal: bool, scale: Optional[float],
               window_left: int, window_right: int, softcap: float, return_lse: bool,
               kernel_dir: Optional[str], q_descale: Optional[torch.Tensor] = None,
               k_descale: Optional[torch.Tensor] = None,
               v_descale: Optional[torch.Tensor] = None,
               out_dtype: Optional[torch.dtype] = None,
               rope_cos_sin: Optional[torch.Tensor] = None,
               rope_positions: Optional[torch.Tensor] = None, rope_start: int = 0,
               rope_output: bool = False,
               p_precision: Optional[str] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """The kernel of `fa4::attention`: the arguments as `attention` checked
    and normalized them (sink float32 [Hq], scale None for 1/sqrt(D), the
    window as `runtime.effective_window` gives it, the FP8 descales float32
    [B, Hkv] contiguous or None, out_dtype None for the default, the rope
    table float32 [P, R] and positions int32 [B, Sq] contiguous or None,
    p_precision 'single', 'hi_lo' or None for either).
    Returns O and the LSE, an empty float32 tensor without `return_lse` (an
    op returns a fixed number of tensors)."""
    descales = (q_descale, k_descale, v_descale)
    return _choose_and_run(q, k, v, sink, causal, scale, window_left, window_right,
                           softcap, return_lse, kernel_dir,
                           descales=None if all(t is None for t in descales) else descales,
                           out_dtype=out_dtype,
                           rope=_rope_given(rope_cos_sin, rope_positions, rope_start,
                                            rope_output),
                           p_precision=p_precision)


def _choose_and_run(q, k, v, sink, causal, scale, window_left, window_right, softcap,
                    return_lse, kernel_dir, tables=None, cache=None, splits=1,
                    descales=None, out_dtype=None, rope=None, p_precision=None):
    """The ops' kernel: chooses the kernel of the problem (cached per
    problem and device) and runs it; `tables` are the sequence tables of
    packed q, k, v, `cache` the (seqused_k, page_table) of a KV cache,
    `descales` the checked FP8 descales (None: none given), `out_dtype`
    O's (None: the default), `rope` the checked rotary embedding (cos_sin,
    positions, start, output) or None, `p_precision` the kernel's ('single'
    or 'hi_lo'; None: either). Returns O and the LSE, an empty float32
    tensor without `return_lse` (an op returns a fixed number of
    tensors)."""
    kernel, scale = _kernel_of(q, k, v, sink, causal, scale, window_left, window_right, softcap,
                               return_lse, kernel_dir, tables, cache, splits,
                               descales is not None, out_dtype, _rope_key(rope), p_precision)
    result = _run(kernel, q, k, v, return_lse, sink=sink, scale=scale,
                  softcap=softcap or None, tables=tables, cache=cache, descales=descales,
                  rope=rope)
    if return_lse:
        return result
    return result, torch.empty((0,), dtype=torch.float32, device=q.device)


def _kernel_of(q, k, v, sink, causal, scale, window_left, window_right, softcap,
               return_lse, kernel_dir, tables, cache=None, splits=1, descale=False,
               out_dtype=None, rope=None, p_precision=None):
    """The kernel of a checked problem (cached per problem and device) and
    the scale it launches with (None: 1/sqrt(D)); `tables` as
    `_choose_and_run`'s, `cache` the KV cache's (seqused_k, page_table),
    `splits` the split-KV CTAs per work tile (1: none; 0: the runtime's
    rule, `runtime.kv_splits_for`, on the unsplit kernel's tiles, the
    cache's capacity and the device's SMs), `descale` whether descales
    were given (without them an FP8 problem takes a kernel with or without
    descale: ones are passed to one with), `out_dtype` O's (None: the
    default), `rope` the kernel's rotary embedding (a runtime.Rope, or
    None: a kernel without one), `p_precision` how its PV product takes P
    ('single' or 'hi_lo'; None: either, and the variants chosen for speed,
    a split-KV count, one Q stage or interleaved softmax warpgroups
    (`_variant`), keep the precision of the kernel they replace)."""
    heads_q, head_dim = q.shape[-2], q.shape[-1]
    heads_kv, head_dim_v = k.shape[-2], v.shape[-1]
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    path = kernel_dir if kernel_dir is not None else os.environ.get("FA4_KERNEL_DIR")
    device = q.device
    varlen = tables is not None
    if varlen:
        # Over a paged cache (cache: (None, page_table)), K is its pages.
        used = tables[2] is not None
        page_size = k.shape[1] if cache is not None and cache[1] is not None else 0
    elif cache is not None:
        # Paged K/V: [pages, page_size, Hkv, D].
        used, page_size = cache[0] is not None, (k.shape[1] if cache[1] is not None else 0)
    else:
        used, page_size = False, 0
    eight_bit = q.dtype in _EIGHT_BIT
    # A 16-bit kernel's output is its inputs' element: said for FP8 only.
    output = _ELEMENTS[_output_dtype(q.dtype, out_dtype)] if eight_bit else None
    descale = True if descale else None if eight_bit else False

    def key_of(splits, precision=p_precision, stages=None, interleave=None):
        # Everything the choice depends on, the device standing for its arch.
        return (path, device.index, q.dtype, heads_q, heads_kv, head_dim, causal, scale,
                return_lse, window_left, window_right, softcap, sink is not None, varlen,
                used, head_dim_v, page_size, splits, descale, output, stages, rope,
                precision, interleave)

    def chosen(splits, precision=p_precision, stages=None, interleave=None):
        key = key_of(splits, precision, stages, interleave)
        kernel = _chosen.get(key)
        if kernel is None:
            # find's positional arguments, up to rope.
            problem = (_ELEMENTS[q.dtype], heads_q, heads_kv, head_dim, causal, scale,
                       return_lse, arch_of(device), (window_left, window_right), softcap,
                       sink is not None, varlen, used, head_dim_v, page_size, splits,
                       descale, output, stages, rope)
            kernel = _chosen[key] = _choose(path, problem, precision, interleave)
        return kernel

    def same_precision(kernel):
        # A variant chosen for speed keeps the precision of the kernel it
        # replaces: the one asked for, else that kernel's.
        return p_precision if p_precision is not None else kernel.p_precision

    def preferred(splits, fallback):
        # A choice of speed: the kernel of a variant (`_variant`: one Q
        # stage, interleaved softmax warpgroups) where one is at hand, else
        # `fallback`; a variant neither found nor compilable is not looked
        # for again.
        variant = _variant(fallback, q, varlen, splits)
        if variant is None:
            return fallback
        variant["precision"] = same_precision(fallback)
        key = key_of(splits, **variant)
        if key in _unavailable:
            return fallback
        try:
            return chosen(splits, **variant)
        except (LookupError, RuntimeError, ValueError):
            _unavailable.add(key)
            return fallback

    if splits > 1:
        return preferred(splits, chosen(splits)), scale
    kernel = chosen(1)
    if splits == 0:
        # The heuristic's split where a kernel of it is at hand (the
        # directory's, or compiled on demand); else the unsplit one.
        auto = 1 if varlen else _auto_splits(kernel, q, k, cache)
        precision = same_precision(kernel)
        if auto > 1 and key_of(auto, precision) not in _unavailable:
            try:
                return preferred(auto, chosen(auto, precision)), scale
            except (LookupError, RuntimeError, ValueError):
                # Not looked for again by the heuristic (an explicit
                # num_splits still is, and fails).
                _unavailable.add(key_of(auto, precision))
    return preferred(1, kernel), scale


def _variant(kernel, q, varlen, splits):
    """The variant of `kernel` that the call's sizes make faster, as
    `_kernel_of`'s `chosen` takes it ({'stages': 1} or {'interleave': 2}),
    or None: sm_90a's one Q stage for decode (`_decode_stages`), sm_100a's
    interleaved softmax warpgroups for an unsplit call of few work tiles
    (`_interleave`)."""
    stages = _decode_stages(kernel, q, varlen)
    if stages is not None:
        return {"stages": stages}
    interleave = _interleave(kernel, q, varlen, splits)
    if interleave is not None:
        return {"interleave": interleave}
    return None


def _decode_stages(kernel, q, varlen):
    """1 where `kernel` (sm_90a, two or three Q stages) gets a query that
    one Q stage holds (decode: few new tokens times the packed heads), else
    None. The other consumers' Q tiles would hold only padding rows, whose
    MMAs and softmax slow the first: one stage took 0.68-0.81x the time of
    two on an H100 (docs/HOPPER.md, "Split-KV decode"). fa4-plan chooses
    one stage where the query length is static; the runtime's kernels take
    any length, so the call's decides."""
    if varlen or kernel.arch != "sm_90a" or kernel.q_stages not in (2, 3):
        return None
    rows_per_stage = kernel.query_rows_per_cta // kernel.q_stages
    return 1 if q.shape[1] <= rows_per_stage else None


def _interleave(kernel, q, varlen, splits):
    """2 where `kernel` (sm_100a, two Q stages, not interleaved, P rounded
    once, 16-bit inputs, no split) gets a dense, unsplit call (`splits` 1)
    whose two-stage work tiles are fewer than the device's SMs, else None.
    Both softmax warpgroups then take one Q tile, each every other KV
    block (fa4-compile's kv-interleave=2): a work tile of half the rows,
    so twice the tiles to spread over idle SMs. fa4-plan chooses that for
    static sizes (its `fewTiles` rule); the runtime's kernels take any
    size, so the call's decides. Not timed: no Blackwell GPU was at hand."""
    if (varlen or splits != 1 or kernel.arch != "sm_100a" or kernel.q_stages != 2
            or kernel.kv_interleave != 1 or kernel.kv_splits != 1
            or kernel.p_precision == "hi_lo"
            or kernel.element in runtime.EIGHT_BIT_ELEMENTS):
        return None
    # query_rows_per_cta is both Q stages' rows: a two-stage work tile.
    tiles = q.shape[0] * kernel.head_blocks * -(-q.shape[1] // kernel.query_rows_per_cta)
    sm_count = torch.cuda.get_device_properties(q.device).multi_processor_count
    return 2 if tiles < sm_count else None


# The kernels `_kernel_of`'s heuristics (a split-KV count, one Q stage,
# interleaved softmax warpgroups) found neither in a directory nor
# compilable: keys of its choice.
_unavailable = set()


def _auto_splits(kernel, q, k, cache):
    """Split-KV CTAs for a dense problem by the runtime's rule: `kernel`'s
    work tiles for q's batch and rows against the keys K holds (a paged
    cache's capacity: the lengths stay on the device)."""
    block_n = re.search(r"blockN = (\d+)", str(kernel.manifest.get("plan", "")))
    if block_n is None:
        return 1
    batch, seq_q = q.shape[0], q.shape[1]
    keys = (cache[1].shape[1] * k.shape[1] if cache is not None and cache[1] is not None
            else k.shape[1])
    tiles = batch * kernel.head_blocks * -(-seq_q // kernel.query_rows_per_cta)
    sm_count = torch.cuda.get_device_properties(q.device).multi_processor_count
    return runtime.kv_splits_for(sm_count, tiles, -(-keys // int(block_n.group(1))))


def _attention_fake(q, k, v, sink, causal, scale, window_left, window_right, softcap,
                    return_lse, kernel_dir, q_descale=None, k_descale=None, v_descale=None,
                    out_dtype=None, rope_cos_sin=None, rope_positions=None, rope_start=0,
                    rope_output=False, p_precision=None):
    """What `fa4::attention` returns, for tracing: O like q with v's head
    dim (bf16 for FP8 inputs, or out_dtype), the LSE float32 [B, Hq, Sq]
    (or empty), both contiguous."""
    batch, seq_q, heads_q, _ = q.shape
    output = q.new_empty((batch, seq_q, heads_q, v.shape[3]),
                         dtype=_output_dtype(q.dtype, out_dtype))
    lse = q.new_empty((batch, heads_q, seq_q) if return_lse else (0,), dtype=torch.float32)
    return output, lse


def _no_backward(*args, **kwargs):
    """Both ops' autograd: its setup_context (called in the forward
    whenever an input requires grad in grad mode, eagerly and while
    torch.compile traces) refuses, so that gradients never stop silently."""
    raise RuntimeError(_NO_BACKWARD)


def _register_op(name, kernel, fake):
    """The custom op `name` running `kernel`, traced through `fake`, or None
    where torch.library has no custom ops (PyTorch before 2.4, the tests'
    stand-in torch)."""
    library = getattr(torch, "library", None)
    if not hasattr(library, "custom_op"):
        return None
    op = library.custom_op(name, mutates_args=(), device_types="cuda")(kernel)
    op.register_fake(fake)
    # The same function as backward: it is never reached, setup_context
    # raises first.
    op.register_autograd(_no_backward, setup_context=_no_backward)
    return op


def jit_cache():
    """The KernelCache of this process (`fa4.jit`, in its default directory)."""
    if not _jit:
        from fa4 import jit
        _jit.append(jit.KernelCache())
    return _jit[0]


def _choose(path, problem, p_precision=None, kv_interleave=None):
    """The kernel of `problem` (find's positional arguments, up to rope)
    with `p_precision` and `kv_interleave` (find's) from the directory at
    `path`, else compiled on demand unless `FA4_JIT=0`."""
    missing = None
    if path:
        try:
            return kernel_directory(path).find(*problem, p_precision=p_precision,
                                               kv_interleave=kv_interleave)
        except LookupError as err:
            missing = err
    if os.environ.get("FA4_JIT", "1") == "0":
        if missing:
            raise missing
        raise ValueError("no kernel directory: pass kernel_dir= or set FA4_KERNEL_DIR to a "
                         "directory of compiled fa4 kernels (compiling on demand is off: "
                         "FA4_JIT=0)")
    (element, heads_q, heads_kv, head_dim, causal, _, lse, arch, window, softcap, sink,
     varlen, seqused_k, head_dim_v, page_size, kv_splits, descale, output, stages,
     rope) = problem
    try:
        # Without descales given, the kernel compiled takes none.
        return jit_cache().kernel(element, heads_q, heads_kv, head_dim, causal=causal,
                                  lse=lse, arch=arch, window=window, softcap=bool(softcap),
                                  sink=sink, varlen=varlen, seqused_k=seqused_k,
                                  head_dim_v=head_dim_v, page_size=page_size or None,
                                  kv_splits=kv_splits, descale=bool(descale),
                                  output_dtype=output, q_stages=stages, rope=rope,
                                  p_precision=p_precision, kv_interleave=kv_interleave)
    except RuntimeError as err:
        if missing:
            raise LookupError(f"{missing.args[0]}\nand compiling it on demand failed: "
                              f"{err}") from err
        raise


def _check_sink(sink, q):
    """The sinks as the kernel reads them (contiguous float32 [Hq] on q's
    device), or None; raises TypeError/ValueError."""
    if sink is None:
        return None
    if not isinstance(sink, torch.Tensor) or not sink.is_floating_point():
        raise TypeError(f"sink must be a floating-point tensor, got {type(sink).__name__}"
                        f"{f' of {sink.dtype}' if isinstance(sink, torch.Tensor) else ''}")
    heads_q = q.shape[-2]
    if sink.dim() != 1 or sink.shape[0] != heads_q:
        raise ValueError(f"sink must have shape [heads_q] = [{heads_q}], got "
                         f"{list(sink.shape)}")
    if sink.device != q.device:
        raise ValueError(f"sink is on {sink.device}, q on {q.device}")
    return sink.to(torch.float32).contiguous()


def _run(kernel, q, k, v, return_lse, fill=None, sink=None, scale=None,
         softcap=None, tables=None, cache=None, descales=None, rope=None):
    """Allocates O (and LSE), filled with `fill` when given (checks poison
    them), and launches `kernel` on checked q, k, v (and sink) with `scale`
    and `softcap` (None: the kernel's own). `tables` are the sequence
    tables of packed q, k, v (cu_seqlens_q, cu_seqlens_k, seqused_k or
    None), `cache` the tables of a KV cache k, v (seqused_k or None,
    page_table or None), `descales` FP8's (q, k, v) descales (None or
    None entries: ones where the kernel takes them), checked, `rope` the
    checked rotary embedding (cos_sin, positions, start, output) or None. O has the
    kernel's output element; V is made key-major where the kernel reads it
    so (`_value_of`)."""
    element, device = _ELEMENTS[q.dtype], q.device
    output_element = kernel.output_element
    dtype_o = _DTYPES[output_element]

    def allocate(shape, dtype):
        if fill is None:
            return torch.empty(shape, dtype=dtype, device=device)
        return torch.full(shape, fill, dtype=dtype, device=device)

    shape_q = q.shape
    shape_o = _output_shape(shape_q, v.shape[-1])
    output = (_empty_like(q) if fill is None and shape_o is shape_q and dtype_o == q.dtype
              else allocate(tuple(shape_o), dtype_o))
    if tables is not None:
        total_q, heads_q, _ = q.shape
        lse = allocate((heads_q, total_q), torch.float32) if return_lse else None
        work, keys = total_q and tables[0].shape[0] > 1, k.shape[0]
    else:
        batch, seq_q, heads_q, _ = q.shape
        lse = allocate((batch, heads_q, seq_q), torch.float32) if return_lse else None
        work, keys = batch and seq_q, _capacity(k, cache)
    if work and not keys and (tables is not None or cache is not None):
        # Packed sequences that all have no keys, or a KV cache without
        # room for any: every row sees none.
        output.zero_()
        if lse is not None:
            lse[:] = (float("-inf") if sink is None else sink[:, None] if tables is not None
                      else sink[None, :, None])
    elif work:
        if not keys:
            raise ValueError("k and v have no keys (Skv = 0)")
        # Kept (as the ones below) until the launch is enqueued: see _Plan.run.
        # A paged V is the cache's, not packed rows.
        v = _value_of(kernel, v, None if cache is not None else tables)
        operands = {"query": _operand(q, element), "key": _operand(k, element),
                    "value": _operand(v, element), "output": _operand(output, output_element)}
        if lse is not None:
            operands["lse"] = _operand(lse, "f32")
        if sink is not None:
            operands["sink"] = _operand(sink, "f32")
        if tables is not None:
            for name, table in zip(runtime.TABLES, tables):
                if table is not None:
                    operands[name] = _operand(table, "i32")
        if cache is not None:
            for name, table in zip(runtime.KV_TABLES, cache):
                if table is not None:
                    operands[name] = _operand(table, "i32")
        kept = _descale_operands(kernel, q, k, descales, operands, _batch(q, tables))
        if rope is not None:
            operands["cos_sin"] = _operand(rope[0], "f32")
            operands["positions"] = _operand(rope[1], "i32")
        # Eager code, also under torch.compile (the op's kernel runs outside
        # the trace), so the stream is a real one.
        _launch(kernel, device, device.index, operands, scale, softcap)
        del kept, v
    return (output, lse) if return_lse else output


_op = _register_op("fa4::attention", _attention, _attention_fake)
# Decided once: torch.compile traces `attention` and guards on these.
_HAS_OP = _op is not None
_entry = _op if _HAS_OP else _attention
# Without the op nothing can intercept it; with it, where PyTorch cannot say
# that nothing would, the op is always called.
_nothing_intercepts = ((lambda: True) if not _HAS_OP
                       else _interception_probe() or (lambda: False))


def _check_tables(q, cu_seqlens_q, cu_seqlens_k, seqused_k):
    """The sequence tables of packed q [Tq, Hq, D]: contiguous int32 vectors on q's device, B + 1 prefix sums each (and B
    used-key counts). Their values stay on the device, unread: rows they
    name past the tensors are clamped by the kernel."""
    tables = (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k),
              ("seqused_k", seqused_k))
    for name, t in tables:
        if t is None and name == "seqused_k":
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.int32 or t.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch.int32 tensor, got {t.dtype} of "
                             f"shape {list(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
    if cu_seqlens_q.shape[0] < 1 or cu_seqlens_k.shape[0] != cu_seqlens_q.shape[0]:
        raise ValueError(f"cu_seqlens_q and cu_seqlens_k must each hold batch + 1 >= 1 "
                         f"offsets, got {cu_seqlens_q.shape[0]} and {cu_seqlens_k.shape[0]}")
    if seqused_k is not None and seqused_k.shape[0] != cu_seqlens_q.shape[0] - 1:
        raise ValueError(f"seqused_k must hold one count per sequence "
                         f"({cu_seqlens_q.shape[0] - 1}), got {seqused_k.shape[0]}")
    return tuple(None if t is None else t.contiguous() for _, t in tables)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k=None, causal=False,
                     scale=None, return_lse=False, kernel_dir=None, window=(-1, -1),
                     softcap=0.0, sink=None, q_descale=None, k_descale=None,
                     v_descale=None, out_dtype=None, page_table=None, rope_cos_sin=None,
                     rope_positions=None, rope_start=0, rope_output=False,
                     p_precision=None):
    """`attention` over packed sequences of variable lengths.

    q [Tq, Hq, D], k [Tk, Hkv, D] and v [Tk, Hkv, Dv]: sequence b is query rows
    cu_seqlens_q[b] to cu_seqlens_q[b + 1] and key rows cu_seqlens_k[b]
    to cu_seqlens_k[b + 1] (contiguous int32 prefix sums of B + 1 entries
    on q's device), of which it uses the first seqused_k[b] keys when
    `seqused_k` (int32 [B]) is given. Sequences may be empty or hold one
    token; causal and the window are aligned to each sequence's
    bottom-right corner. Returns O [Tq, Hq, Dv], and with `return_lse` also
    the LSE [Hq, Tq] float32 (flash-attn's varlen layout). Rows no sequence
    owns are left as they are in the (uninitialized) results. The tables
    are not read on the host: offsets past the tensors are clamped to them
    by the kernel, never read or written out of bounds. FP8 inputs take
    descales [B, Hkv], one row per sequence, and out_dtype; V is copied on
    every call into the kernel's packed key-major layout (`_key_major_copy`:
    each sequence from a 16-aligned row).

    With `page_table` (int32 [B, max_pages] on q's device) k and v are a
    paged KV cache [num_pages, page_size, Hkv, D] the sequences share
    (vLLM's layout; page_size a power of two): key j of sequence b is
    k[page_table[b, j // page_size], j % page_size], and cu_seqlens_k only
    counts each sequence's keys (cu_seqlens_k[b + 1] - cu_seqlens_k[b],
    at most max_pages * page_size; seqused_k[b] of them where given).

    The rotary embedding is `attention`'s with `rope_positions` int32
    [total_q], a position per packed query row: row t is rotated at
    rope_positions[t] (the kernel reads positions[cu_seqlens_q[b] + i] for
    row i of sequence b, so each sequence numbers its own tokens, usually
    from its cached length on); K is taken as already rotated.

    `p_precision` ('single', 'hi_lo' or None: whichever the directory's
    kernel has, 'single' compiled on demand) is `attention`'s: how the PV
    product takes P, 'hi_lo' as P's rounded value plus its rounding
    residual (on an H100 O's error against float64 0.71-0.85x single's,
    prefill throughput 0.57-0.75x; 16-bit inputs only). The other
    arguments, the kernel choice (a varlen kernel of that rope, never
    another) and the errors are `attention`'s."""
    descales = (q_descale, k_descale, v_descale)
    cache = None if page_table is None else (None, page_table)
    rope = _rope_of(rope_cos_sin, rope_positions, rope_start, rope_output)
    if not (_HAS_OP and torch.compiler.is_compiling()) and _nothing_intercepts():
        result = _eager(q, k, v, (cu_seqlens_q, cu_seqlens_k, seqused_k), causal, scale,
                        return_lse, kernel_dir, window, softcap, sink, False, cache=cache,
                        descales=descales, out_dtype=out_dtype, rope=rope,
                        p_precision=p_precision)
        if result is not None:
            return result
    _check(q, k, v, packed=True, paged=page_table is not None)
    tables = _check_tables(q, cu_seqlens_q, cu_seqlens_k, seqused_k)
    if page_table is not None:
        page_table = _check_cache(q, k, None, page_table,
                                  batch=cu_seqlens_q.shape[0] - 1)[1]
    descales = _check_descales(descales, q, k, _batch(q, tables))
    out_dtype = _check_out_dtype(out_dtype, q)
    rope = _check_rope(rope, q, v, packed=True)
    sink, scale, (left, right), softcap, kernel_dir = _options(
        q, k, v, sink, causal, scale, window, softcap, kernel_dir,
        (*(descales or ()), *(rope[:1] if rope else ())), p_precision)
    trailing = _fp8_arguments(descales, out_dtype)
    if page_table is not None or rope is not None:
        # The op's page_table, then its rope arguments, follow the FP8 ones.
        trailing = (*(trailing or (None, None, None, None)), page_table, *(rope or ()))
    trailing = _precision_arguments(trailing, p_precision, _VARLEN_TRAILING_DEFAULTS)
    output, lse = _varlen_entry(q, k, v, *tables, sink, bool(causal), scale, left, right,
                                softcap, bool(return_lse), kernel_dir, *trailing)
    return (output, lse) if return_lse else output


def _fp8_arguments(descales, out_dtype):
    """The ops' trailing FP8 arguments (q/k/v_descale, out_dtype) only where
    a call has them: 16-bit calls keep the ops' other arguments as they
    were."""
    return (() if descales is None and out_dtype is None
            else (*(descales or (None, None, None)), out_dtype))


def _attention_varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                      seqused_k: Optional[torch.Tensor], sink: Optional[torch.Tensor],
                      causal: bool, scale: Optional[float], window_left: int,
                      window_right: int, softcap: float, return_lse: bool,
                      kernel_dir: Optional[str], q_descale: Optional[torch.Tensor] = None,
                      k_descale: Optional[torch.Tensor] = None,
                      v_descale: Optional[torch.Tensor] = None,
                      out_dtype: Optional[torch.dtype] = None,
                      page_table: Optional[torch.Tensor] = None,
                      rope_cos_sin: Optional[torch.Tensor] = None,
                      rope_positions: Optional[torch.Tensor] = None, rope_start: int = 0,
                      rope_output: bool = False, p_precision: Optional[str] = None
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    """The kernel of `fa4::attention_varlen`: `_attention` for packed
    sequences, over a paged cache with `page_table`, the rope positions
    int32 [total_q] (arguments checked by `attention_varlen`)."""
    descales = (q_descale, k_descale, v_descale)
    return _choose_and_run(q, k, v, sink, causal, scale, window_left, window_right,
                           softcap, return_lse, kernel_dir,
                           tables=(cu_seqlens_q, cu_seqlens_k, seqused_k),
                           cache=None if page_table is None else (None, page_table),
                           descales=None if all(t is None for t in descales) else descales,
                           out_dtype=out_dtype,
                           rope=_rope_given(rope_cos_sin, rope_positions, rope_start,
                                            rope_output),
                           p_precision=p_precision)


def _attention_varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, sink, causal,
                           scale, window_left, window_right, softcap, return_lse,
                           kernel_dir, q_descale=None, k_descale=None, v_descale=None,
                           out_dtype=None, page_table=None, rope_cos_sin=None,
                           rope_positions=None, rope_start=0, rope_output=False,
                           p_precision=None):
    """What `fa4::attention_varlen` returns, for tracing: O like q (bf16
    for FP8 inputs, or out_dtype), the LSE float32 [Hq, Tq] (or empty)."""
    total_q, heads_q, _ = q.shape
    output = q.new_empty((total_q, heads_q, v.shape[-1]),
                         dtype=_output_dtype(q.dtype, out_dtype))
    lse = q.new_empty((heads_q, total_q) if return_lse else (0,), dtype=torch.float32)
    return output, lse


_varlen_op = _register_op("fa4::attention_varlen", _attention_varlen,
                          _attention_varlen_fake)
_varlen_entry = _varlen_op if _varlen_op is not None else _attention_varlen


def _capacity(k, cache):
    """The keys a batch of a KV cache can hold: Skv of a dense k [B, Skv,
    Hkv, D] (also without `cache`), max_pages * page_size of paged k
    [num_pages, page_size, Hkv, D] (none when it has no pages)."""
    if cache is None or cache[1] is None:
        return k.shape[1]
    return cache[1].shape[1] * k.shape[1] if k.shape[0] else 0


def _check_cache(q, k_cache, cache_seqlens, page_table, batch=None):
    """The tables of a KV cache read by q [B, Sq, Hq, D]: cache_seqlens an
    int32 [B] vector, page_table an int32 [B, max_pages] matrix, on q's
    device, contiguous as the kernel reads them (copied where they are
    not); paged K/V has a power-of-two page size. Their values stay on the
    device, unread: the kernel clamps the lengths to [0, capacity] and reads
    no page entry past a batch's keys. Packed q: `batch` is the number of
    sequences."""
    owner = "q's batch" if batch is None else "the sequences"
    batch = q.shape[0] if batch is None else batch
    for name, t, rank, layout in (("cache_seqlens", cache_seqlens, 1, "[B]"),
                                  ("page_table", page_table, 2, "[B, max_pages]")):
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.int32 or t.dim() != rank:
            raise ValueError(f"{name} must be a torch.int32 tensor {layout}, got {t.dtype} of "
                             f"shape {list(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
        if t.shape[0] != batch:
            raise ValueError(f"{name} must be {layout} with B = {batch} ({owner}), got shape "
                             f"{list(t.shape)}")
    if page_table is not None:
        # A kernel's own (static) size: traced code specializes on it.
        page_size = int(k_cache.shape[1])
        if page_size < 1 or page_size & (page_size - 1):
            raise ValueError(f"k_cache's page size (dimension 1 of [num_pages, page_size, Hkv, "
                             f"D]) must be a power of two, got {page_size}")
        least = runtime.FP8_MIN_PAGE_SIZE
        if q.dtype in _EIGHT_BIT and page_size < least:
            raise ValueError(f"FP8 reads V key-major in {least}-key TMA boxes, each within "
                             f"one page: pages must hold at least {least} keys, got "
                             f"{page_size}")
    return tuple(None if t is None else t.contiguous() for t in (cache_seqlens, page_table))


def _cache_lengths(cache_seqlens, q, k_cache, v_cache, paged):
    """cache_seqlens as the kernel reads it: an int (flash-attn's
    convention: every batch the same) becomes an int32 [B] tensor on q's
    device; None and tensors are left to `_check_cache`."""
    if cache_seqlens is None or isinstance(cache_seqlens, torch.Tensor):
        return cache_seqlens
    sym_int = getattr(torch, "SymInt", None)
    if not (runtime._is_int(cache_seqlens)
            or (sym_int is not None and isinstance(cache_seqlens, sym_int))):
        raise TypeError(f"cache_seqlens must be None, an int or a torch.int32 tensor [B], got "
                        f"{type(cache_seqlens).__name__}")
    if not -2 ** 31 <= cache_seqlens < 2 ** 31:
        raise ValueError(f"cache_seqlens = {cache_seqlens} does not fit an int32")
    _check(q, k_cache, v_cache, paged=paged)
    return torch.full((q.shape[0],), cache_seqlens, dtype=torch.int32, device=q.device)


def attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, page_table=None,
                           causal=False, scale=None, window=None, softcap=None, sink=None,
                           return_lse=False, kernel_dir=None, num_splits=0, q_descale=None,
                           k_descale=None, v_descale=None, out_dtype=None,
                           rope_cos_sin=None, rope_positions=None, rope_start=0,
                           rope_output=False, p_precision=None):
    """`attention` of q against a KV cache: each batch uses the first keys
    of its cache, read in place, possibly through a page table.

    q [B, Sq, Hq, D]; k_cache [B, Skv, Hkv, D] and v_cache [B, Skv, Hkv,
    Dv], or with `page_table` (int32 [B, max_pages], on q's device) pages
    [num_pages, page_size, Hkv, D] (page_size a power of two; key j of
    batch b is k_cache[page_table[b, j // page_size], j % page_size]).
    Batch b uses its first min(max(cache_seqlens[b], 0), capacity) keys,
    capacity being Skv or max_pages * page_size (`cache_seqlens` an int32
    [B] tensor on q's device, or an int for every batch; None: the whole
    capacity). Causal and the window are aligned to each batch's length:
    row i sees key j only if j <= i + len_b - Sq when causal (decoding
    Sq new tokens whose keys are already in the cache). Page entries past
    a batch's keys are never read (they may hold anything, -1 say); the
    lengths and the page table stay on the device, unread by the host. Keys
    past a batch's length within its last KV block (of its last page) are
    read and masked: their values must be finite (0 x NaN is NaN), as
    `attention_varlen`'s.

    `window` None is (-1, -1), `softcap` None is 0. Returns O [B, Sq, Hq,
    Dv] and, with `return_lse`, the LSE [B, Hq, Sq] float32; a batch with no
    keys gives O = 0 and LSE -inf (the sink with sinks). Without
    cache_seqlens and page_table this is `attention(q, k_cache, v_cache,
    ...)`.

    `num_splits` is split-KV: the CTAs that share each work tile's keys
    (each computes a partial O over its share; the last to finish combines
    them in a fixed order, so the result does not depend on the timing). 1
    never splits; 0 (the default) splits where the work tiles leave most
    SMs idle and the cache is long (`runtime.kv_splits_for`: decoding few
    tokens of few sequences); N > 1 asks for N (at most 64). FP8 as
    `attention` (the cache's V read key-major: unit-stride keys within
    each page, else copied so; pages of at least 128 keys). The rotary
    embedding (`rope_cos_sin` [P, R], `rope_positions` [B, Sq],
    `rope_start`, `rope_output`) is `attention`'s: decoding, row i of
    batch b usually sits at position cache_seqlens[b] - Sq + i, and the
    cache holds keys rotated at their own positions. `p_precision`
    ('single', 'hi_lo' or None: whichever the directory's kernel has,
    'single' compiled on demand; 16-bit inputs only) is `attention`'s:
    'hi_lo' takes P as its rounded value plus its rounding residual (on an
    H100 O's error against float64 0.71-0.85x single's; memory-bound
    decode 1-6% slower, prefill 0.57-0.75x the throughput); a split-KV,
    one-Q-stage or interleaved kernel the runtime picks keeps the
    precision. The other arguments, the kernel choice (a kernel compiled for the
    cache: seqused_k, the page size, the rope) and the errors are
    `attention`'s; the work runs as the custom op
    `fa4::attention_with_kvcache`."""
    window = (-1, -1) if window is None else window
    softcap = 0.0 if softcap is None else softcap
    if (not isinstance(num_splits, numbers.Integral) or isinstance(num_splits, bool)
            or not 0 <= num_splits <= 64):
        raise ValueError(f"num_splits must be an int in [0, 64] (0: the heuristic, 1: no "
                         f"split), got {num_splits!r}")
    num_splits = int(num_splits)
    paged = page_table is not None
    descales = (q_descale, k_descale, v_descale)
    rope = _rope_of(rope_cos_sin, rope_positions, rope_start, rope_output)
    cache_seqlens = _cache_lengths(cache_seqlens, q, k_cache, v_cache, paged)
    if cache_seqlens is None and not paged:
        return _attend(q, k_cache, v_cache, causal, scale, return_lse, kernel_dir, window,
                       softcap, sink, False, descales, out_dtype, rope, p_precision)
    if not (_HAS_OP and torch.compiler.is_compiling()) and _nothing_intercepts():
        result = _eager(q, k_cache, v_cache, None, causal, scale, return_lse, kernel_dir,
                        window, softcap, sink, False, (cache_seqlens, page_table),
                        num_splits, descales, out_dtype, rope, p_precision)
        if result is not None:
            return result
    _check(q, k_cache, v_cache, paged=paged)
    cache = _check_cache(q, k_cache, cache_seqlens, page_table)
    descales = _check_descales(descales, q, k_cache)
    out_dtype = _check_out_dtype(out_dtype, q)
    rope = _check_rope(rope, q, v_cache)
    sink, scale, (left, right), softcap, kernel_dir = _options(
        q, k_cache, v_cache, sink, causal, scale, window, softcap, kernel_dir,
        (*(descales or ()), *(rope[:1] if rope else ())), p_precision)
    output, lse = _kvcache_entry(q, k_cache, v_cache, *cache, sink, bool(causal), scale, left,
                                 right, softcap, bool(return_lse), kernel_dir, num_splits,
                                 *_precision_arguments(
                                     _rope_arguments(_fp8_arguments(descales, out_dtype),
                                                     rope),
                                     p_precision))
    return (output, lse) if return_lse else output


def _attention_with_kvcache(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                            cache_seqlens: Optional[torch.Tensor],
                            page_table: Optional[torch.Tensor], sink: Optional[torch.Tensor],
                            causal: bool, scale: Optional[float], window_left: int,
                            window_right: int, softcap: float, return_lse: bool,
                            kernel_dir: Optional[str], num_splits: int,
                            q_descale: Optional[torch.Tensor] = None,
                            k_descale: Optional[torch.Tensor] = None,
                            v_descale: Optional[torch.Tensor] = None,
                            out_dtype: Optional[torch.dtype] = None,
                            rope_cos_sin: Optional[torch.Tensor] = None,
                            rope_positions: Optional[torch.Tensor] = None,
                            rope_start: int = 0, rope_output: bool = False,
                            p_precision: Optional[str] = None
                            ) -> Tuple[torch.Tensor, torch.Tensor]:
    """The kernel of `fa4::attention_with_kvcache`: `_attention` over a KV
    cache (arguments checked by `attention_with_kvcache`; at least one of
    cache_seqlens and page_table given)."""
    descales = (q_descale, k_descale, v_descale)
    return _choose_and_run(q, k_cache, v_cache, sink, causal, scale, window_left,
                           window_right, softcap, return_lse, kernel_dir,
                           cache=(cache_seqlens, page_table), splits=num_splits,
                           descales=None if all(t is None for t in descales) else descales,
                           out_dtype=out_dtype,
                           rope=_rope_given(rope_cos_sin, rope_positions, rope_start,
                                            rope_output),
                           p_precision=p_precision)


def _attention_with_kvcache_fake(q, k_cache, v_cache, cache_seqlens, page_table, sink, causal,
                                 scale, window_left, window_right, softcap, return_lse,
                                 kernel_dir, num_splits, q_descale=None, k_descale=None,
                                 v_descale=None, out_dtype=None, rope_cos_sin=None,
                                 rope_positions=None, rope_start=0, rope_output=False,
                                 p_precision=None):
    """What `fa4::attention_with_kvcache` returns, for tracing: O like q
    with v's head dim (bf16 for FP8 inputs, or out_dtype), the LSE float32
    [B, Hq, Sq] (or empty)."""
    return _attention_fake(q, k_cache, v_cache, sink, causal, scale, window_left,
                           window_right, softcap, return_lse, kernel_dir,
                           out_dtype=out_dtype)


_kvcache_op = _register_op("fa4::attention_with_kvcache", _attention_with_kvcache,
                           _attention_with_kvcache_fake)
_kvcache_entry = _kvcache_op if _kvcache_op is not None else _attention_with_kvcache


def _softmax_terms(q, k, v, causal, scale, dtype, window, softcap, sink, q_descale,
                   k_descale):
    """`reference`'s work up to the probabilities, in `dtype`: a dict of
    qf, kf, vf ([B, Hq, S, D], the KV heads repeated per query head),
    `per_query_head` ([B, Hkv] -> [B, Hq, 1, 1]), `factor` (scale times the
    q and k descales: the scores' factor, a float or [B, Hq, 1, 1]),
    `hidden` (bool [Sq, Skv], the masked keys, or None), `scores` [B, Hq,
    Sq, Skv] (after softcap, -inf where hidden), `column` (the sink as a
    last score per row [B, Hq, Sq, 1], or None), `lse` [B, Hq, Sq] and
    `probabilities` (exp(scores - lse), 0 in rows that see nothing)."""
    heads_q, heads_kv = q.shape[2], k.shape[2]
    seq_q, seq_kv = q.shape[1], k.shape[1]
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[3])
    group = heads_q // heads_kv
    qf = q.to(dtype).transpose(1, 2)
    kf = k.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)
    vf = v.to(dtype).transpose(1, 2).repeat_interleave(group, dim=1)

    def per_query_head(descale):
        # [B, Hkv] -> [B, Hq, 1, 1], query head h taking KV head h // group.
        return descale.to(dtype).repeat_interleave(group, dim=1)[:, :, None, None]
    scores = (qf @ kf.transpose(-1, -2)) * scale
    factor = scale
    for descale in (q_descale, k_descale):
        if descale is not None:
            scores = scores * per_query_head(descale)
            factor = factor * per_query_head(descale)
    if softcap:
        scores = softcap * torch.tanh(scores / softcap)
    left, right = runtime.effective_window(window, causal)
    diagonal = (torch.arange(seq_q, device=q.device)[:, None] + seq_kv - seq_q)
    keys = torch.arange(seq_kv, device=q.device)[None, :]
    hidden = None
    if right >= 0:
        hidden = keys > diagonal + right
    if left >= 0:
        before = keys < diagonal - left
        hidden = before if hidden is None else hidden | before
    if hidden is not None:
        scores = scores.masked_fill(hidden, float("-inf"))
    column = None
    if sink is not None:
        # One more column per row: the head's sink, which has no value.
        column = sink.to(dtype).view(1, heads_q, 1, 1).expand(*scores.shape[:3], 1)
        lse = torch.logsumexp(torch.cat([scores, column], dim=-1), dim=-1)
    else:
        lse = torch.logsumexp(scores, dim=-1)
    probabilities = torch.exp(scores - lse[..., None]).nan_to_num(0.0)
    return dict(qf=qf, kf=kf, vf=vf, per_query_head=per_query_head, factor=factor,
                hidden=hidden, scores=scores, column=column, lse=lse,
                probabilities=probabilities)


def apply_rope(x, cos_sin, positions, start=0, inverse=False, dtype=None):
    """x [B, S, H, D] rotated as fa4's kernels rotate Q (RoPE, GPT-J's
    adjacent pairs): for row i of batch b, p = positions[b, i] clamped into
    [0, P) (cos_sin [P, R]: row p holds the R / 2 cosines, then the R / 2
    sines), c = cos_sin[p, k] and s = cos_sin[p, R / 2 + k], the column
    pair (x, y) = (start + 2k, start + 2k + 1) becomes (x c - y s, y c +
    x s), with `inverse` (x c + y s, y c - x s) (how `rope_output` rotates
    O back); the other columns are kept. Computed in float64, returned in
    `dtype` (None: x's). The kernels take K already rotated: this is how
    keys written to a cache, at their own positions, are."""
    rows, columns = cos_sin.shape
    half = columns // 2
    table = cos_sin.to(torch.float64)[positions.to(torch.int64).clamp(0, rows - 1)]
    cos, sin = table[..., None, :half], table[..., None, half:]   # [B, S, 1, R / 2]
    if inverse:
        sin = -sin
    xf = x.to(torch.float64)
    even, odd = xf[..., start:start + columns:2], xf[..., start + 1:start + columns:2]
    rotated = torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1)
    out = torch.cat((xf[..., :start], rotated.flatten(-2), xf[..., start + columns:]), dim=-1)
    return out.to(x.dtype if dtype is None else dtype)


def reference(q, k, v, causal=False, scale=None, dtype=torch.float32,
              window=(-1, -1), softcap=0.0, sink=None, q_descale=None, k_descale=None,
              v_descale=None, rope_cos_sin=None, rope_positions=None, rope_start=0,
              rope_output=False):
    """O [B, Sq, Hq, D] and LSE [B, Hq, Sq] computed in `dtype` (float32 or
    float64) with PyTorch operations (for checking); the arguments mean what
    they mean for `attention` (FP8 inputs upcast exactly, the descales
    applied to the scores and O; with `rope_cos_sin` and `rope_positions`
    q is rotated in float64 and rounded to its dtype first, and with
    `rope_output` O is rotated back in `dtype`: `apply_rope`)."""
    if rope_cos_sin is not None:
        q = apply_rope(q, rope_cos_sin, rope_positions, rope_start)
    terms = _softmax_terms(q, k, v, causal, scale, dtype, window, softcap, sink, q_descale,
                           k_descale)
    output = terms["probabilities"] @ terms["vf"]
    if v_descale is not None:
        output = output * terms["per_query_head"](v_descale)
    output = output.transpose(1, 2)
    if rope_cos_sin is not None and rope_output:
        output = apply_rope(output, rope_cos_sin, rope_positions, rope_start, inverse=True)
    return output, terms["lse"]


# Unit roundoffs of fp8_tolerance's formats.
_E4M3_RELATIVE = 2.0 ** -4     # half an ulp of 3 mantissa bits
_E4M3_NORMAL = 2.0 ** -6       # e4m3's smallest normal
_E4M3_SUBNORMAL = 2.0 ** -10   # half the subnormal spacing (2^-9)
_FP8_MMA_STEP = 2.0 ** -13     # one 8-bit wgmma (K = 32) adding into its accumulator, assumed
_TANH_APPROX = 2.0 ** -11      # tanh.approx.f32's relative error (softcap)
_OUTPUT_ROUNDOFF = {torch.bfloat16: (2.0 ** -8, 0.0), torch.float16: (2.0 ** -11, 2.0 ** -25)}


def fp8_tolerance(q, k, v, causal=False, scale=None, window=(-1, -1), softcap=0.0,
                  sink=None, q_descale=None, k_descale=None, v_descale=None,
                  out_dtype=torch.bfloat16):
    """Bounds on how far an FP8 kernel's results may be from `reference(...,
    dtype=torch.float64)` for FP8 q, k, v (the arguments mean what they
    mean for `attention`; `out_dtype` is O's, bfloat16 or float16): (O
    bound [B, Sq, Hq, Dv], LSE bound [B, Hq, Sq]), float64, elementwise
    limits on |O - O_ref| and |LSE - LSE_ref|: 0 for O in rows that see no
    key (O is 0 in both) and for an LSE of -inf (no key, no sink).

    Derived from the formats, per row (pi_i the exact probabilities, m the
    largest score with the sink, Z = sum_i exp(s_i - m) with the sink's
    term, vd the row's v_descale, A_j = vd sum_i pi_i |v_ij|): each 8-bit
    MMA instruction (K = 32) is taken to add into its accumulator with at
    least 13 bits (2^-13 of the magnitudes summed; Hopper's FP8 tensor
    cores align to about 14), its errors adding up over the instructions
    of a product: eps = ceil(D / 32) 2^-13 for Q K^T, ceil(Skv / 32) 2^-13
    for P V (one accumulator over every KV block). Each score is off by at
    most delta = eps |scale qd kd| max over visible keys of |q|.|k|
    (softcap's tanh has slope <= 1; its tanh.approx.f32 adds 2^-11 of the
    largest capped score), which moves each probability, a
    ratio to the normalizer, by a factor within exp(+-2 delta): (g - 1) A_j
    with g = exp(2 delta). The kernel rounds P (at most 256 in its units,
    exp2 of the scores less a reference at most 8 below the row's max) to
    e4m3 for P V but sums it unrounded: 2^-4 relatively where normal
    (2^-4 g A_j), at most 2^-10 absolutely below 2^-6 in units no smaller
    than the final ones (2^-10 g vd sum |v_ij| / Z over the keys with
    exp(s_i - m) < 2^-6 g). P V adds its eps times the sum of those
    terms' magnitudes, (1 + 2^-4) g A_j and the subnormal term. Rounding O to `out_dtype` (unit roundoff u = 2^-8 for
    bfloat16, 2^-11 for float16, plus 2^-25 absolutely for float16's
    subnormals) adds u (|O_ref| + E) to the sum E of the rest. The LSE is
    off by the scores' delta, plus 1e-5 and 2^-21 |LSE| for its float32
    arithmetic. Other float32 arithmetic (exp2, the sums, the rescaling)
    is far below these terms."""
    if out_dtype not in _OUTPUT_ROUNDOFF:
        raise ValueError(f"out_dtype must be torch.bfloat16 or torch.float16, got {out_dtype}")
    roundoff, tiny = _OUTPUT_ROUNDOFF[out_dtype]
    dtype = torch.float64
    terms = _softmax_terms(q, k, v, causal, scale, dtype, window, softcap, sink, q_descale,
                           k_descale)
    scores, lse, probabilities = terms["scores"], terms["lse"], terms["probabilities"]
    hidden, column = terms["hidden"], terms["column"]
    magnitudes = terms["vf"].abs()
    vd = 1.0 if v_descale is None else terms["per_query_head"](v_descale)
    # delta: the score error of the MMA's accumulation, per row.
    dots = terms["qf"].abs() @ terms["kf"].abs().transpose(-1, -2)
    if hidden is not None:
        dots = dots.masked_fill(hidden, 0.0)
    largest = dots.amax(dim=-1) if dots.shape[-1] else dots.new_zeros(dots.shape[:-1])
    factor = terms["factor"]
    factor = factor.abs()[..., 0] if isinstance(factor, torch.Tensor) else abs(factor)
    steps = lambda depth: math.ceil(depth / 32) * _FP8_MMA_STEP
    delta = steps(q.shape[-1]) * factor * largest            # [B, Hq, Sq]
    if softcap:
        # tanh.approx.f32: relative 2^-11 of the capped score.
        capped = scores.abs() if hidden is None else scores.masked_fill(hidden, 0.0).abs()
        delta = delta + _TANH_APPROX * (capped.amax(dim=-1) if capped.shape[-1]
                                        else torch.zeros_like(delta))
    grow = torch.exp(2 * delta)[..., None]                   # [B, Hq, Sq, 1]
    weighted = (probabilities @ magnitudes) * vd             # A [B, Hq, Sq, Dv]
    # The subnormal probabilities: exp(s - m) below 2^-6 g, visible keys only.
    m = scores.amax(dim=-1) if scores.shape[-1] else lse.new_full(lse.shape, -math.inf)
    if column is not None:
        m = torch.maximum(m, column[..., 0])
    relative = torch.exp(scores - m[..., None])
    small = relative < _E4M3_NORMAL * grow
    if hidden is not None:
        small = small & ~hidden
    z = torch.exp(lse - m).nan_to_num(1.0)[..., None]        # >= 1 where any key
    subnormal = (_E4M3_SUBNORMAL * grow * vd * (small.to(dtype) @ magnitudes) / z)
    rest = ((grow - 1) * weighted + _E4M3_RELATIVE * grow * weighted + subnormal
            + steps(k.shape[1]) * ((1 + _E4M3_RELATIVE) * grow * weighted + subnormal))
    output = probabilities @ terms["vf"] * vd
    bound = rest * (1 + roundoff) + roundoff * output.abs() + tiny
    # Rows that see a key (the others: O 0 and the LSE exact in both).
    seen = (torch.ones(lse.shape, dtype=torch.bool, device=lse.device) if hidden is None
            else (~hidden).any(dim=-1).expand(lse.shape))
    if not scores.shape[-1]:
        seen = torch.zeros_like(seen)
    bound = torch.where(seen[..., None], bound.nan_to_num(math.inf), 0.0)
    # delta is 0 in rows that see no key: their LSE is the sink's (float32
    # arithmetic) or -inf (bound 0).
    lse_bound = torch.where(torch.isfinite(lse), delta + 1e-5 + 2.0 ** -21 * lse.abs(), 0.0)
    return bound.transpose(1, 2), lse_bound


def _per_sequence(compute, q, v, cu_seqlens_q, cu_seqlens_k, seqused_k, dtype, descales):
    """Runs `compute(rows, keys, descales_b)` (rows and keys the slices of
    the sequence's query and key rows, descales_b its [1, Hkv] rows or
    None) for each sequence of packed q that has query rows and
    assembles its (O-like [1, Sq, Hq, Dv], LSE-like [1, Hq, Sq]) results
    into [Tq, Hq, Dv] and [Hq, Tq] in `dtype`, NaN in the rows no sequence
    owns (the tables read on the host)."""
    starts_q, starts_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    used = seqused_k.tolist() if seqused_k is not None else None
    output = torch.full((*q.shape[:-1], v.shape[-1]), float("nan"), dtype=dtype,
                        device=q.device)
    lse = torch.full((q.shape[1], q.shape[0]), float("nan"), dtype=dtype, device=q.device)
    for b in range(len(starts_q) - 1):
        q0, q1 = starts_q[b], starts_q[b + 1]
        k0, k1 = starts_k[b], starts_k[b + 1]
        if used is not None:
            k1 = k0 + used[b]
        if q1 <= q0:
            continue
        per_batch = tuple(None if t is None else t[b:b + 1] for t in descales)
        o, l = compute(slice(q0, q1), slice(k0, k1), per_batch)
        output[q0:q1] = o[0]
        lse[:, q0:q1] = l[0]
    return output, lse


def reference_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k=None, causal=False,
                     scale=None, dtype=torch.float32, window=(-1, -1), softcap=0.0,
                     sink=None, q_descale=None, k_descale=None, v_descale=None,
                     rope_cos_sin=None, rope_positions=None, rope_start=0,
                     rope_output=False):
    """`reference` per sequence of packed q [Tq, Hq, D], k and v [Tk, Hkv,
    D] (the tables read on the host; the descales [B, Hkv] per sequence;
    the rotary embedding's rope_positions [Tq], sequence b's rows at
    rope_positions[cu_seqlens_q[b]:cu_seqlens_q[b + 1]], as the kernel
    reads them): O [Tq, Hq, D] and LSE [Hq, Tq] in `dtype`, NaN in the
    rows no sequence owns."""
    def compute(rows, keys, descales):
        rope = ({} if rope_cos_sin is None else
                dict(rope_cos_sin=rope_cos_sin, rope_positions=rope_positions[None, rows],
                     rope_start=rope_start, rope_output=rope_output))
        return reference(q[None, rows], k[None, keys], v[None, keys], causal, scale, dtype,
                         window, softcap, sink, *descales, **rope)
    return _per_sequence(compute, q, v, cu_seqlens_q, cu_seqlens_k, seqused_k, dtype,
                         (q_descale, k_descale, v_descale))


def fp8_tolerance_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k=None, causal=False,
                         scale=None, window=(-1, -1), softcap=0.0, sink=None,
                         q_descale=None, k_descale=None, v_descale=None,
                         out_dtype=torch.bfloat16):
    """`fp8_tolerance` per sequence of packed FP8 q, k, v (as
    `reference_varlen` takes them): the bounds (O [Tq, Hq, Dv], LSE [Hq,
    Tq]) float64, NaN in the rows no sequence owns."""
    def compute(rows, keys, descales):
        return fp8_tolerance(q[None, rows], k[None, keys], v[None, keys], causal, scale,
                             window, softcap, sink, *descales, out_dtype=out_dtype)
    return _per_sequence(compute, q, v, cu_seqlens_q, cu_seqlens_k, seqused_k,
                         torch.float64, (q_descale, k_descale, v_descale))


def reference_kvcache(q, k_cache, v_cache, cache_seqlens=None, page_table=None, causal=False,
                      scale=None, dtype=torch.float64, window=(-1, -1), softcap=0.0,
                      sink=None, rope_cos_sin=None, rope_positions=None, rope_start=0,
                      rope_output=False):
    """`reference` per batch of a KV cache (the lengths and the page table
    read on the host), in `dtype` (float64 by default): q [B, Sq, Hq, D];
    k_cache, v_cache [B, Skv, Hkv, D], or with `page_table` [B, max_pages]
    pages [num_pages, P, Hkv, D], key j of batch b being
    k_cache[page_table[b, j // P], j % P]. Batch b uses its first
    min(max(cache_seqlens[b], 0), capacity) keys (capacity Skv or
    max_pages * P; cache_seqlens a [B] tensor, an int, or None: all), only
    the page entries that hold them read; the rotary embedding (`rope_*`)
    as `reference`'s, rope_positions [B, Sq]. Returns O [B, Sq, Hq, Dv] and
    LSE [B, Hq, Sq]."""
    batch, seq_q, heads_q, _ = q.shape
    paged = page_table is not None
    page = k_cache.shape[1]
    capacity = page_table.shape[1] * page if paged else k_cache.shape[1]
    if cache_seqlens is None:
        lengths = [capacity] * batch
    elif isinstance(cache_seqlens, torch.Tensor):
        lengths = cache_seqlens.tolist()
    else:
        lengths = [int(cache_seqlens)] * batch
    rows = page_table.tolist() if paged else None
    output = torch.empty((batch, seq_q, heads_q, v_cache.shape[-1]), dtype=dtype,
                         device=q.device)
    lse = torch.empty((batch, heads_q, seq_q), dtype=dtype, device=q.device)
    for b in range(batch):
        n = min(max(int(lengths[b]), 0), capacity)
        if paged:
            pages = torch.tensor(rows[b][:-(-n // page)], dtype=torch.long,
                                 device=k_cache.device)
            k_b, v_b = (t[pages].flatten(0, 1)[:n] for t in (k_cache, v_cache))
        else:
            k_b, v_b = k_cache[b, :n], v_cache[b, :n]
        rope = ({} if rope_cos_sin is None else
                dict(rope_cos_sin=rope_cos_sin, rope_positions=rope_positions[b:b + 1],
                     rope_start=rope_start, rope_output=rope_output))
        o, l = reference(q[b:b + 1], k_b[None], v_b[None], causal, scale, dtype, window,
                         softcap, sink, **rope)
        output[b], lse[b] = o[0], l[0]
    return output, lse


def _test_sinks(heads_q, seq_kv, device, generator=None):
    """Sinks for checks: about a row's log-sum-exp for unit-normal inputs
    (log Skv), so that a sink's share of the denominator ranges from
    negligible to most of it; every fourth head has none (-inf)."""
    sink = math.log(max(seq_kv, 1)) + 2 * torch.randn(heads_q, device=device,
                                                      generator=generator)
    sink[3::4] = float("-inf")
    return sink


def _test_sequences(seq_q, seq_kv, seqused, device):
    """Packed sequences for checks: [seq_q, 0, 1, seq_q // 3 + 1] query rows
    over [seq_kv, 3, 0, seq_kv // 2 + 1] keys (a sequence without queries,
    a 1-token one without keys, a ragged one); with `seqused`, each key
    range has 5 slots more than the keys it uses. Returns (cu_seqlens_q,
    cu_seqlens_k, seqused_k or None, total_q, total_k)."""
    lengths_q = [seq_q, 0, 1, seq_q // 3 + 1]
    lengths_k = [seq_kv, 3, 0, seq_kv // 2 + 1]
    slack = 5 if seqused else 0

    def prefix(lengths, extra):
        offsets = [0]
        for n in lengths:
            offsets.append(offsets[-1] + n + extra)
        return offsets
    cu_q, cu_k = prefix(lengths_q, 0), prefix(lengths_k, slack)
    table = (lambda values: torch.tensor(values, dtype=torch.int32, device=device))
    used = table(lengths_k) if seqused else None
    return table(cu_q), table(cu_k), used, cu_q[-1], cu_k[-1]


def _within_fp8_bounds(output, lse, want_o, want_lse, o_bound, lse_bound):
    """(ok, text): whether an FP8 kernel's O (and LSE, unless None) are
    within `fp8_tolerance`'s bounds of the float64 reference, element by
    element (NaN is not), the LSE -inf exactly where the reference's is;
    the text gives the largest errors and their largest share of the
    bound."""
    def compare(got, want, bound):
        error = (got.double() - want).abs().nan_to_num(float("inf"))
        ok = bool((error <= bound).all())
        # 0 where both are 0 (rows that see no key), inf past a 0 bound.
        share = torch.where(error == 0, 0.0, error / bound)
        largest = error.max().item() if error.numel() else 0.0
        return ok, largest, share.max().item() if share.numel() else 0.0
    ok, o_error, o_share = compare(output, want_o, o_bound)
    text = f"max |O - ref| {o_error:.3g}, at most {o_share:.2g} of the FP8 bound"
    if lse is not None:
        finite = torch.isfinite(want_lse)
        lse_ok, lse_error, lse_share = compare(lse[finite], want_lse[finite],
                                               lse_bound[finite])
        same_inf = bool((lse[~finite] == want_lse[~finite]).all())
        ok = ok and lse_ok and same_inf
        text += (f", max |LSE - ref| {lse_error:.3g}, at most {lse_share:.2g} of its bound"
                 f"{'' if same_inf else ', LSE of fully masked rows is not -inf'}")
    return ok, text


def _check_kernels(path, shapes, batch, repeat):
    """Runs every kernel of `path` for this GPU against `reference`."""
    device = torch.device("cuda", torch.cuda.current_device())
    capability = torch.cuda.get_device_capability(device)
    directory = kernel_directory(path)
    failures, ran = 0, 0
    for name, why in directory.errors:
        print(f"skip {name}: {why}")
    for kernel in directory:
        if not kernel.runs_on(capability):
            print(f"skip {kernel.name}: {kernel.arch} does not run on {arch_of(device)}")
            continue
        if kernel.regions:
            # Its captures and their reference are the region's own
            # (scripts/device/regions-check.py).
            print(f"skip {kernel.name}: it inlines {' and '.join(kernel.regions)} regions")
            continue
        if kernel.kvcache:
            # Lengths and page tables: scripts/device/kvcache-check.py.
            print(f"skip {kernel.name}: it reads a KV cache "
                  f"({'paged' if kernel.paged else 'seqused_k'})")
            continue
        if kernel.rope:
            # Its table and positions: scripts/device/kvcache-check.py.
            print(f"skip {kernel.name}: it applies a rotary embedding")
            continue
        ran += 1
        dtype = next(t for t, e in _ELEMENTS.items() if e == kernel.element)
        heads_q = kernel.heads_q if kernel.heads_q != -1 else 4
        heads_kv = kernel.heads_kv if kernel.heads_kv != -1 else heads_q
        for seq_q, seq_kv in shapes:
            torch.manual_seed(0)
            tables = None
            if kernel.varlen:
                *tables, total_q, total_k = _test_sequences(seq_q, seq_kv,
                                                            kernel.seqused_k, device)
                shape_q = (total_q, heads_q, kernel.head_dim)
                shape_kv = (total_k, heads_kv, kernel.head_dim)
            else:
                shape_q = (batch, seq_q, heads_q, kernel.head_dim)
                shape_kv = (batch, seq_kv, heads_kv, kernel.head_dim)
            eight_bit = dtype in _EIGHT_BIT
            # FP8 has no randn: unit normals rounded to e4m3 (the reference
            # upcasts them exactly).
            random = ((lambda shape: torch.randn(shape, device=device).to(dtype)) if eight_bit
                      else (lambda shape: torch.randn(shape, dtype=dtype, device=device)))
            q, k = random(shape_q), random(shape_kv)
            v = random((*shape_kv[:-1], kernel.head_dim_v))
            if kernel.key_major and tables is None:
                # Laid out as the kernel reads it, so that the timing is the
                # kernel's alone (another V is copied per call, as packed
                # sequences' always is).
                v = _key_major_copy(v)
            _check(q, k, v, packed=kernel.varlen)
            sink = _test_sinks(heads_q, seq_kv, device) if kernel.sink else None
            rows = batch if tables is None else tables[0].shape[0] - 1
            descales = (tuple(torch.rand((rows, heads_kv), device=device) * 1.5 + 0.5
                              for _ in range(3)) if kernel.descale else None)
            # NaN-poisoned: every row a sequence owns must be written.
            result = _run(kernel, q, k, v, kernel.lse, fill=float("nan"), sink=sink,
                          tables=tables, descales=descales)
            output, lse = result if kernel.lse else (result, None)
            torch.cuda.synchronize()
            options = dict(window=kernel.window, softcap=kernel.softcap or 0.0, sink=sink)
            if descales is not None:
                options.update(zip(_DESCALE_NAMES, descales))
            if tables is not None:
                want_o, want_lse = reference_varlen(
                    q, k, v, *tables, kernel.causal, kernel.scale,
                    dtype=torch.float64 if eight_bit else torch.float32, **options)
                if eight_bit:
                    bounds = fp8_tolerance_varlen(
                        q, k, v, *tables, kernel.causal, kernel.scale,
                        out_dtype=_DTYPES[kernel.output_element], **options)
                # Rows no sequence owns: unwritten, so NaN in both.
                owned = ~torch.isnan(want_lse[0])
                output, want_o = output[owned], want_o[owned]
                if eight_bit:
                    bounds = (bounds[0][owned], bounds[1][:, owned])
                if lse is not None:
                    lse, want_lse = lse[:, owned], want_lse[:, owned]
            elif eight_bit:
                # FP8: float64, each element within fp8_tolerance's bound.
                want_o, want_lse = reference(q, k, v, kernel.causal, kernel.scale,
                                             dtype=torch.float64, **options)
                bounds = fp8_tolerance(q, k, v, kernel.causal, kernel.scale,
                                       out_dtype=_DTYPES[kernel.output_element], **options)
            else:
                want_o, want_lse = reference(q, k, v, kernel.causal, kernel.scale,
                                             **options)
            what = (f"varlen Tq={shape_q[0]} Tk={shape_kv[0]}" if tables is not None
                    else f"B={batch}")
            if eight_bit:
                ok, verdict = _within_fp8_bounds(output, lse, want_o, want_lse, *bounds)
                line = f"{kernel.name} {what} Sq={seq_q} Skv={seq_kv}: {verdict}"
            else:
                # A few units in the last place of a 16-bit output.
                o_error = (output.float() - want_o).abs().nan_to_num(float("inf")).max().item()
                o_limit = 2e-2 if dtype == torch.bfloat16 else 4e-3
                lse_limit = 1e-3
                ok = o_error <= o_limit
                line = (f"{kernel.name} {what} Sq={seq_q} Skv={seq_kv}: max |O - ref| "
                        f"{o_error:.3g} (limit {o_limit})")
            if lse is not None and not eight_bit:
                finite = torch.isfinite(want_lse)
                lse_error = ((lse[finite] - want_lse[finite]).abs().max().item()
                             if finite.any() else 0.0)
                same_inf = bool((lse[~finite] == want_lse[~finite]).all())
                ok = ok and lse_error <= lse_limit and same_inf
                line += (f", max |LSE - ref| {lse_error:.3g} (limit {lse_limit:g})"
                         f"{'' if same_inf else ', LSE of fully masked rows is not -inf'}")
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeat):
                _run(kernel, q, k, v, kernel.lse, sink=sink, tables=tables, descales=descales)
            end.record()
            torch.cuda.synchronize()
            line += f", {start.elapsed_time(end) / max(repeat, 1):.3f} ms per call"
            print(("PASS " if ok else "FAIL ") + line)
            failures += not ok
    if not ran:
        print(f"no kernel of {path} runs on {arch_of(device)}")
        return 1
    return 1 if failures else 0


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(
        prog="python -m fa4.torch",
        description="Check the compiled fa4 kernels of a directory on this GPU: each "
                    "kernel runs at (seq-q, seq-kv) and the swapped lengths against a "
                    "float32 PyTorch reference (FP8 kernels: float64, within "
                    "fp8_tolerance's bound), then is timed.")
    parser.add_argument("--check", metavar="DIR", default=os.environ.get("FA4_KERNEL_DIR"),
                        help="kernel directory (default: $FA4_KERNEL_DIR)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq-q", type=int, default=1000)
    parser.add_argument("--seq-kv", type=int, default=1100)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    if not args.check:
        parser.error("give --check DIR or set FA4_KERNEL_DIR")
    shapes = [(args.seq_q, args.seq_kv), (args.seq_kv, args.seq_q)]
    return _check_kernels(args.check, shapes, args.batch, args.repeat)


if __name__ == "__main__":
    raise SystemExit(main())
