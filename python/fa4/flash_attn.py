"""FlashAttention 2's Python entry points over fa4 kernels.

    from fa4 import flash_attn_func
    out = flash_attn_func(q, k, v, causal=True)   # q [B, Sq, Hq, D], k, v [B, Skv, Hkv, D]
    out, softmax_lse, S_dmask = flash_attn_func(q, k, v, return_attn_probs=True)

The arguments, their order, defaults, layouts and results are flash-attn
2.x's (`flash_attn.flash_attn_func`), so that code written for it runs by
changing the import. `flash_attn_func` runs `fa4.torch.attention` (one
`fa4::attention` op under torch.compile), `flash_attn_varlen_func`
`fa4.torch.attention_varlen` (`fa4::attention_varlen`),
`flash_attn_with_kvcache` `fa4.torch.attention_with_kvcache`
(`fa4::attention_with_kvcache`). What fa4's kernels do not have raises
NotImplementedError naming the argument: dropout (`dropout_p > 0`), ALiBi
(`alibi_slopes`), paged K/V of packed sequences (`flash_attn_varlen_func`'s
`block_table`), and in `flash_attn_with_kvcache` appending new keys to the
cache (`k`, `v`), rotary embeddings (`rotary_cos`, `rotary_sin`),
`cache_batch_idx` and `cache_leftpad`. Differences from flash-attn 2:

- `S_dmask` is None. flash-attn returns attention probabilities there only
  with dropout (without it, older releases return None and those that
  register torch custom ops an empty tensor); fa4 has no dropout, so there
  is never a dropout mask to return.
- A query row that sees no key (possible with a window, or causal with
  Sq > Skv) has LSE -inf, the log of its empty sum; flash-attn 2 writes
  +inf (-inf when it splits the keys). Its output row is 0 in both.
- There is no backward: inputs that require grad in grad mode raise
  RuntimeError (fa4.torch.attention's), rather than training.
- `deterministic` is accepted and changes nothing: it concerns flash-attn's
  backward, and fa4's forward is deterministic.
- Keyword-only extras: `sink` (a float logit per query head joining each
  row's softmax denominator, as fa4.torch.attention's) and `kernel_dir`;
  `flash_attn_varlen_func` also takes `seqused_k` (int32 [B]: sequence b
  uses the first seqused_k[b] keys of its range, as in flash-attn 3), and
  `flash_attn_func` and `flash_attn_with_kvcache` take flash-attn 3's FP8
  descales `q_descale`, `k_descale`, `v_descale` (float32 [B, Hkv]) for
  torch.float8_e4m3fn q, k, v, whose output is bfloat16 as flash-attn 3's
  (fa4.torch.attention's FP8; V is read key-major, copied so where it is
  not); `flash_attn_varlen_func` takes them too (descales one row per
  sequence; V copied per call into the packed key-major layout).
  `flash_attn_with_kvcache` and `flash_attn_varlen_func` also take fa4's
  fused rotary embedding of q, `rope_cos_sin`, `rope_positions`,
  `rope_start` and `rope_output` (fa4.torch.attention_with_kvcache's and
  attention_varlen's: positions int32 [B, Sq], packed sequences int32
  [total_q]; the keys already rotated); flash-attn's `rotary_cos` and
  `rotary_sin`, which rotate the appended keys too, are not built.
- `max_seqlen_q` and `max_seqlen_k` are checked and otherwise unused: the
  kernel's persistent schedule reads the lengths on the device.
- `flash_attn_with_kvcache`'s `num_splits` is fa4's split-KV (0 chooses,
  as flash-attn's heuristic; the combine is deterministic), and its paged K/V takes
  any power-of-two page size the kernels hold (a multiple of their KV
  block), not only flash-attn 2's multiples of 256.
"""

import math
import numbers

import torch

from fa4 import torch as fa4_torch

__all__ = ["flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache"]


def _options(dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes):
    """Checks the arguments both entry points share; returns fa4's window
    (flash-attn 2 forces the right bound to 0 when causal)."""
    try:
        dropout_p = float(dropout_p)
    except (TypeError, ValueError):
        raise ValueError(f"dropout_p must be a probability in [0, 1], got {dropout_p!r}") \
            from None
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout_p must be a probability in [0, 1], got {dropout_p}")
    if dropout_p > 0:
        raise NotImplementedError(f"dropout_p={dropout_p}: fa4's kernels have no dropout; "
                                  "pass dropout_p=0.0")
    if alibi_slopes is not None:
        raise NotImplementedError("alibi_slopes: fa4's kernels have no ALiBi biases; pass "
                                  "alibi_slopes=None")
    if softmax_scale is not None and not (isinstance(softmax_scale, numbers.Real)
                                          and math.isfinite(softmax_scale)
                                          and softmax_scale > 0):
        raise ValueError("softmax_scale must be None (1/sqrt(headdim)) or a positive, finite "
                         f"number, got {softmax_scale!r}")
    if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
            or not all(isinstance(side, numbers.Integral) for side in window_size)):
        raise ValueError("window_size must be (left, right) integers (-1: unbounded), got "
                         f"{window_size!r}")
    if not (isinstance(softcap, numbers.Real) and math.isfinite(softcap) and softcap >= 0):
        raise ValueError(f"softcap must be 0.0 (none) or a positive, finite number, got "
                         f"{softcap!r}")
    return (window_size[0], 0 if causal else window_size[1])


_checked = {}   # flash_attn_func's options (plain types only) -> fa4's window


def _checked_options(dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes):
    """`_options`, remembered for options of the plain types (for which equal
    values check the same way: True == 1, but a bool softcap is refused)."""
    if not (alibi_slopes is None and dropout_p.__class__ in (float, int)
            and (softmax_scale is None or softmax_scale.__class__ is float)
            and softcap.__class__ in (float, int) and window_size.__class__ is tuple
            and len(window_size) == 2 and window_size[0].__class__ is int
            and window_size[1].__class__ is int and causal.__class__ is bool):
        return _options(dropout_p, softmax_scale, causal, window_size, softcap,
                        alibi_slopes)
    key = (dropout_p, softmax_scale, causal, window_size, softcap)
    window = _checked.get(key)
    if window is None:
        window = _options(dropout_p, softmax_scale, causal, window_size, softcap,
                          alibi_slopes)
        if len(_checked) >= 256:
            _checked.clear()
        _checked[key] = window
    return window


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False, *, sink=None,
                    kernel_dir=None, q_descale=None, k_descale=None, v_descale=None):
    """flash-attn 2's `flash_attn_func` on fa4 kernels.

    q [B, Sq, Hq, D], k [B, Skv, Hkv, D], v [B, Skv, Hkv, Dv] (Hq a multiple of Hkv),
    bfloat16 or float16 CUDA tensors; a head dim that is not unit-stride is
    copied first, as flash-attn does. FP8: torch.float8_e4m3fn q, k, v with
    flash-attn 3's optional `q_descale`, `k_descale`, `v_descale` (float32
    [B, Hkv]) give a bfloat16 out (V copied into the key-major layout the
    kernels read unless it is in it: fa4.torch.attention). `softmax_scale` defaults to
    1/sqrt(D); `causal` is aligned to the bottom-right corner; query row i
    sees keys i + Skv - Sq - window_size[0] to i + Skv - Sq +
    window_size[1] (-1: unbounded; causal makes the right bound 0);
    `softcap` > 0 caps the scores to softcap * tanh(s / softcap).

    Returns out [B, Sq, Hq, Dv], or with `return_attn_probs` (out,
    softmax_lse, S_dmask): softmax_lse [B, Hq, Sq] float32, the natural log
    of each row's sum of exp(scale * q k), and S_dmask None (the module
    docstring says how this differs from flash-attn). Raises
    NotImplementedError for dropout_p > 0 and alibi_slopes."""
    window = _checked_options(dropout_p, softmax_scale, causal, window_size, softcap,
                              alibi_slopes)
    # fa4.torch.attention, copying a q, k or v whose head dim is not
    # unit-stride first.
    result = fa4_torch._attend(q, k, v, causal, softmax_scale, return_attn_probs,
                               kernel_dir, window, softcap, sink, True,
                               (q_descale, k_descale, v_descale))
    if return_attn_probs:
        out, softmax_lse = result
        return out, softmax_lse, None
    return result


def _check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                  block_table):
    for name, t in (("q", q), ("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype not in fa4_torch._ELEMENTS:
            raise TypeError(f"{name} has dtype {t.dtype}; fa4 kernels take torch.bfloat16 "
                            "or torch.float16")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, "
                        f"{v.dtype}")
    kv_layout = ("[num_blocks, page_block_size, Hkv, D] (paged: block_table is given)"
                 if block_table is not None else "[total_k, Hkv, D]")
    for name, t, layout in (("q", q, "[total_q, Hq, D]"), ("k", k, kv_layout),
                            ("v", v, kv_layout)):
        if t.dim() != (4 if name != "q" and block_table is not None else 3):
            raise ValueError(f"{name} must be {layout}, got shape {list(t.shape)}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"head dims differ: q {q.shape[-1]}, k {k.shape[-1]} (q and k "
                         "share one; v may have its own)")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"k and v shapes differ: {list(k.shape)} and {list(v.shape)}")
    heads_q, heads_kv = q.shape[-2], k.shape[-2]
    if heads_kv == 0 or heads_q % heads_kv:
        raise ValueError(f"query heads ({heads_q}) must be a multiple of key/value heads "
                         f"({heads_kv})")
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if t.dtype != torch.int32 or t.dim() != 1 or t.shape[0] < 1:
            raise ValueError(f"{name} must be a 1-D torch.int32 tensor of batch + 1 offsets, "
                             f"got {t.dtype} of shape {list(t.shape)}")
    if cu_seqlens_q.shape[0] != cu_seqlens_k.shape[0]:
        raise ValueError(f"cu_seqlens_q and cu_seqlens_k must have one entry per sequence "
                         f"plus one, got {cu_seqlens_q.shape[0]} and {cu_seqlens_k.shape[0]}")
    for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if (not isinstance(value, numbers.Integral) or isinstance(value, bool)
                or value < 0):
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    if block_table is not None:
        if not isinstance(block_table, torch.Tensor):
            raise TypeError("block_table must be None or a torch.Tensor, got "
                            f"{type(block_table).__name__}")
        batch = cu_seqlens_q.shape[0] - 1
        if (block_table.dtype != torch.int32 or block_table.dim() != 2
                or block_table.shape[0] != batch):
            raise ValueError(f"block_table must be a [batch = {batch}, max_blocks] "
                             f"torch.int32 tensor, got {block_table.dtype} of shape "
                             f"{list(block_table.shape)}")
    if not q.is_cuda:
        raise ValueError(f"q is on {q.device}; fa4 kernels take CUDA tensors")
    for name, t in (("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k), ("block_table", block_table)):
        if t is not None and t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None,
                           *, seqused_k=None, sink=None, kernel_dir=None, q_descale=None,
                           k_descale=None, v_descale=None, rope_cos_sin=None,
                           rope_positions=None, rope_start=0, rope_output=False):
    """flash-attn 2's `flash_attn_varlen_func` on fa4 kernels: q [total_q,
    Hq, D], k [total_k, Hkv, D] and v [total_k, Hkv, Dv], sequence b being query rows
    cu_seqlens_q[b] to cu_seqlens_q[b + 1] and key rows cu_seqlens_k[b] to
    cu_seqlens_k[b + 1] (int32, batch + 1 entries). causal and the window
    are aligned to each sequence's bottom-right corner, as flash-attn does.

    With `block_table` (int32 [batch, max_blocks]) k and v are a paged
    cache [num_blocks, page_block_size, Hkv, D]: key j of sequence b is
    k[block_table[b, j // page_block_size], j % page_block_size], and
    cu_seqlens_k counts each sequence's keys (seqused_k, where given, the
    ones it uses), as flash-attn's paged varlen call.

    fa4's rotary embedding of q (keyword-only `rope_cos_sin` float32 [P,
    R], `rope_positions` int32 [total_q], a position per packed query row,
    `rope_start`, `rope_output`: k already rotated) is
    fa4.torch.attention_varlen's.

    Returns out [total_q, Hq, Dv], or with `return_attn_probs` (out,
    softmax_lse [Hq, total_q] float32, None). Raises NotImplementedError
    for dropout_p > 0 and alibi_slopes, after checking the arguments
    (TypeError/ValueError)."""
    _check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                  block_table)
    window = _checked_options(dropout_p, softmax_scale, causal, window_size, softcap,
                              alibi_slopes)
    q, k, v = fa4_torch._copy_strided_heads(q, k, v)
    result = fa4_torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                        seqused_k=seqused_k, causal=causal,
                                        scale=softmax_scale, return_lse=return_attn_probs,
                                        kernel_dir=kernel_dir, window=window,
                                        softcap=softcap, sink=sink, q_descale=q_descale,
                                        k_descale=k_descale, v_descale=v_descale,
                                        page_table=block_table, rope_cos_sin=rope_cos_sin,
                                        rope_positions=rope_positions,
                                        rope_start=rope_start, rope_output=rope_output)
    if return_attn_probs:
        out, softmax_lse = result
        return out, softmax_lse, None
    return result


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None,
                            rotary_sin=None, cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None, softmax_scale=None,
                            causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0,
                            return_softmax_lse=False, *, sink=None, kernel_dir=None,
                            q_descale=None, k_descale=None, v_descale=None,
                            rope_cos_sin=None, rope_positions=None, rope_start=0,
                            rope_output=False):
    """flash-attn 2's `flash_attn_with_kvcache` on fa4 kernels, for decoding
    and for prefill against a cache: q [B, Sq, Hq, D] attends to the first
    cache_seqlens[b] keys of batch b's cache.

    k_cache, v_cache [B, Skv, Hkv, D] (Dv for v_cache), or with
    `block_table` (int32 [B, max_blocks]) pages [num_blocks,
    page_block_size, Hkv, D], page_block_size a power of two; key j of
    batch b is k_cache[block_table[b, j // page_block_size], j %
    page_block_size]. `cache_seqlens` is an int32 [B] tensor or an int (every
    batch the same); None uses the whole cache (Skv, or max_blocks *
    page_block_size keys). `causal` and `window_size` are aligned to each
    batch's cache length (bottom-right), as flash-attn does;
    `softmax_scale` and `softcap` as `flash_attn_func`'s. The caches are
    read in place (a head dim that is not unit-stride is refused, as
    flash-attn refuses it; q's is copied).

    Returns out [B, Sq, Hq, Dv], or with `return_softmax_lse` (out,
    softmax_lse [B, Hq, Sq] float32). Raises NotImplementedError for what
    fa4 does not do: appending `k`/`v` to the cache (write them into
    k_cache/v_cache and pass the new lengths), rotary embeddings
    (`rotary_cos`/`rotary_sin`: rotate q and the new keys first),
    `cache_batch_idx`, `cache_leftpad` and `alibi_slopes`; fa4's own
    rotary embedding of q (keyword-only `rope_cos_sin` float32 [P, R],
    `rope_positions` int32 [B, Sq], `rope_start`, `rope_output`: the keys
    in the cache already rotated) is fa4.torch.attention_with_kvcache's.
    `num_splits` is
    flash-attn's split-KV count (0: the heuristic, 1: no split, N: N
    splits, at most 64; see `fa4.torch.attention_with_kvcache`); ValueError
    for any other value."""
    if k is not None or v is not None:
        raise NotImplementedError("k, v: fa4 does not append new keys to the cache; write "
                                  "them into k_cache/v_cache at each batch's cache_seqlens, "
                                  "pass the new lengths, and k=None, v=None")
    if rotary_cos is not None or rotary_sin is not None:
        raise NotImplementedError("rotary_cos, rotary_sin: fa4 does not append keys to "
                                  "rotate; write the keys rotated into the cache, pass "
                                  "rotary_cos=None, rotary_sin=None and rotate q in the "
                                  "kernel with rope_cos_sin= and rope_positions=")
    if cache_batch_idx is not None:
        raise NotImplementedError("cache_batch_idx: fa4 reads batch b's cache at index b; "
                                  "index k_cache, v_cache (or the block_table rows) first and "
                                  "pass cache_batch_idx=None")
    if cache_leftpad is not None:
        raise NotImplementedError("cache_leftpad: fa4's caches start at key 0; pass "
                                  "cache_leftpad=None")
    if (not isinstance(num_splits, numbers.Integral) or isinstance(num_splits, bool)
            or not 0 <= num_splits <= 64):
        raise ValueError(f"num_splits must be an int in [0, 64] (0: heuristic), got "
                         f"{num_splits!r}")
    if not isinstance(rotary_interleaved, bool):
        raise ValueError(f"rotary_interleaved must be a bool, got {rotary_interleaved!r}")
    window = _checked_options(0.0, softmax_scale, causal, window_size, softcap, alibi_slopes)
    # As flash-attn: q's head dim is made unit-stride, the caches are taken
    # as they are (fa4.torch refuses a strided head dim).
    if isinstance(q, torch.Tensor) and q.dim() and q.stride()[-1] != 1:
        q = q.contiguous()
    result = fa4_torch.attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=cache_seqlens,
                                              page_table=block_table, causal=causal,
                                              scale=softmax_scale, window=window,
                                              softcap=softcap, sink=sink,
                                              return_lse=return_softmax_lse,
                                              kernel_dir=kernel_dir,
                                              num_splits=num_splits, q_descale=q_descale,
                                              k_descale=k_descale, v_descale=v_descale,
                                              rope_cos_sin=rope_cos_sin,
                                              rope_positions=rope_positions,
                                              rope_start=rope_start, rope_output=rope_output)
    return result
