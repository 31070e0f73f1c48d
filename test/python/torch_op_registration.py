# RUN: %python %s | FileCheck %s
"""fa4.torch's custom ops `fa4::attention`, `fa4::attention_varlen` and
`fa4::attention_with_kvcache`, against a stand-in torch whose
torch.library records what is registered: the op's name and schema (from
the kernel's annotations, as torch.library.custom_op infers it), its fake
kernel's shapes, its autograd registration refusing inputs that require
grad, and that fa4.torch.attention calls the op with normalized arguments
(FP8's descales and out_dtype, and p_precision, only where a call has
them).
(The real torch.library, opcheck and torch.compile: test/gpu/torch_op.py.)"""

import atexit
import inspect
import os
import shutil
import sys
import tempfile
import types
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "Inputs"))
import torch_standin  # noqa: E402
from torch_standin import FakeCuda, grad_mode, tensor  # noqa: E402

torch = torch_standin.install()
registered = {}
compiling = [False]


class CustomOp:
    """What torch.library.custom_op returns, recording its registrations."""

    def __init__(self, name, kernel, mutates_args, device_types):
        self.name, self.kernel = name, kernel
        self.mutates_args, self.device_types = mutates_args, device_types
        self.fake = self.backward = self.setup_context = None
        self.calls = []

    def register_fake(self, fn):
        self.fake = fn
        return fn

    def register_autograd(self, backward, *, setup_context=None):
        self.backward, self.setup_context = backward, setup_context

    def __call__(self, *args):
        self.calls.append(args)
        return self.kernel(*args)


def custom_op(name, fn=None, *, mutates_args, device_types=None):
    def wrap(kernel):
        registered[name] = CustomOp(name, kernel, mutates_args, device_types)
        return registered[name]
    return wrap if fn is None else wrap(fn)


torch.library = types.SimpleNamespace(custom_op=custom_op)
torch.compiler = types.SimpleNamespace(is_compiling=lambda: compiling[0])
# PyTorch's probes of what would intercept a call of the op (attention calls
# the op's kernel directly only when none does); a dispatch mode until the
# end, so that the calls below reach the op.
probes = {"dispatch modes": 1, "function modes": False, "transforms": None,
          "profiler": False, "tracing": None}
torch._C = types.SimpleNamespace(
    _len_torch_dispatch_stack=lambda: probes["dispatch modes"],
    _is_torch_function_mode_enabled=lambda: probes["function modes"],
    _functorch=types.SimpleNamespace(peek_interpreter_stack=lambda: probes["transforms"]),
    _get_tracing_state=lambda: probes["tracing"])
torch.autograd = types.SimpleNamespace(_profiler_enabled=lambda: probes["profiler"])
os.environ["FA4_JIT"] = "0"

import fa4.torch  # noqa: E402
from fa4 import runtime  # noqa: E402

op = registered["fa4::attention"]
print("registered:", list(registered), "mutates", op.mutates_args, "on", op.device_types,
      "fa4.torch._op is it:", fa4.torch._op is op)
# CHECK: registered: ['fa4::attention', 'fa4::attention_varlen', 'fa4::attention_with_kvcache'] mutates () on cuda fa4.torch._op is it: True

# The schema torch.library.custom_op infers from the annotations (and the
# defaults); an annotation it does not support would be a KeyError here.
SCHEMA_TYPES = {torch.Tensor: "Tensor", typing.Optional[torch.Tensor]: "Tensor?",
                bool: "bool", int: "SymInt", float: "float",
                typing.Optional[float]: "float?", typing.Optional[str]: "str?",
                typing.Optional[torch.dtype]: "ScalarType?"}
for name, custom in registered.items():
    signature = inspect.signature(custom.kernel)
    arguments = ", ".join(f"{SCHEMA_TYPES[p.annotation]} {name}"
                          + ("" if p.default is p.empty else f"={p.default}")
                          for name, p in signature.parameters.items())
    returns = ", ".join(SCHEMA_TYPES[t] for t in typing.get_args(signature.return_annotation))
    print(f"schema: {name}({arguments}) -> ({returns})")
# CHECK: schema: fa4::attention(Tensor q, Tensor k, Tensor v, Tensor? sink, bool causal, float? scale, SymInt window_left, SymInt window_right, float softcap, bool return_lse, str? kernel_dir, Tensor? q_descale=None, Tensor? k_descale=None, Tensor? v_descale=None, ScalarType? out_dtype=None, Tensor? rope_cos_sin=None, Tensor? rope_positions=None, SymInt rope_start=0, bool rope_output=False, str? p_precision=None) -> (Tensor, Tensor)
# CHECK-NEXT: schema: fa4::attention_varlen(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, Tensor? seqused_k, Tensor? sink, bool causal, float? scale, SymInt window_left, SymInt window_right, float softcap, bool return_lse, str? kernel_dir, Tensor? q_descale=None, Tensor? k_descale=None, Tensor? v_descale=None, ScalarType? out_dtype=None, Tensor? page_table=None, Tensor? rope_cos_sin=None, Tensor? rope_positions=None, SymInt rope_start=0, bool rope_output=False, str? p_precision=None) -> (Tensor, Tensor)
# CHECK-NEXT: schema: fa4::attention_with_kvcache(Tensor q, Tensor k_cache, Tensor v_cache, Tensor? cache_seqlens, Tensor? page_table, Tensor? sink, bool causal, float? scale, SymInt window_left, SymInt window_right, float softcap, bool return_lse, str? kernel_dir, SymInt num_splits, Tensor? q_descale=None, Tensor? k_descale=None, Tensor? v_descale=None, ScalarType? out_dtype=None, Tensor? rope_cos_sin=None, Tensor? rope_positions=None, SymInt rope_start=0, bool rope_output=False, str? p_precision=None) -> (Tensor, Tensor)
varlen_op = registered["fa4::attention_varlen"]
print("varlen op:", varlen_op.mutates_args, varlen_op.device_types,
      varlen_op.setup_context is op.setup_context)
packed = tensor((700, 4, 64)), tensor((900, 2, 64)), tensor((900, 2, 64))
tables = tensor((4,), torch.int32), tensor((4,), torch.int32)
for return_lse in (True, False):
    o, lse = varlen_op.fake(*packed, *tables, None, None, True, None, -1, 0, 0.0, return_lse,
                            None)
    print(f"varlen fake return_lse={return_lse}:", o.shape, o.dtype, lse.shape, lse.dtype)
# CHECK-NEXT: varlen op: () cuda True
# CHECK-NEXT: varlen fake return_lse=True: (700, 4, 64) torch.bfloat16 (4, 700) torch.float32
# CHECK-NEXT: varlen fake return_lse=False: (700, 4, 64) torch.bfloat16 (0,) torch.float32

# The KV cache's fake kernel: O like q with v's head dim, LSE [B, Hq, Sq];
# paged K/V [pages, page_size, Hkv, D] shapes neither.
kvcache_op = registered["fa4::attention_with_kvcache"]
pages = tensor((40, 256, 2, 64)), tensor((40, 256, 2, 32))
for return_lse in (True, False):
    o, lse = kvcache_op.fake(tensor((3, 4, 4, 64)), *pages, tensor((3,), torch.int32),
                             tensor((3, 9), torch.int32), None, True, None, -1, 0, 0.0,
                             return_lse, None, 0)
    print(f"kvcache fake return_lse={return_lse}:", o.shape, lse.shape, lse.dtype,
          kvcache_op.setup_context is op.setup_context)
# CHECK-NEXT: kvcache fake return_lse=True: (3, 4, 4, 32) (3, 4, 4) torch.float32 True
# CHECK-NEXT: kvcache fake return_lse=False: (3, 4, 4, 32) (0,) torch.float32 True

# The fake kernel: O like q with v's head dim, LSE float32 [B, Hq, Sq] or
# empty.
q, k, v = tensor((2, 300, 4, 64)), tensor((2, 500, 2, 64)), tensor((2, 500, 2, 64))
for return_lse in (True, False):
    o, lse = op.fake(q, k, v, None, True, None, -1, 0, 0.0, return_lse, None)
    print(f"fake return_lse={return_lse}:", o.shape, o.dtype, lse.shape, lse.dtype)
# CHECK: fake return_lse=True: (2, 300, 4, 64) torch.bfloat16 (2, 4, 300) torch.float32
# CHECK-NEXT: fake return_lse=False: (2, 300, 4, 64) torch.bfloat16 (0,) torch.float32

# Autograd: setup_context runs in the forward whenever an input requires
# grad in grad mode, and refuses.
for label, fn in (("setup_context", lambda: op.setup_context(ctx=None, inputs=(), output=())),
                  ("backward", lambda: op.backward(None, None, None))):
    try:
        fn()
        print(f"{label}: returned")
    except RuntimeError as err:
        print(f"{label}: RuntimeError: {err}")
# CHECK-NEXT: setup_context: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a descale or the rope table requires grad, and its gradient would silently stop here; call it under torch.no_grad() or on detached tensors
# CHECK-NEXT: backward: RuntimeError: fa4.torch.attention has no backward yet

TMP = Path(tempfile.mkdtemp(prefix="fa4-op-"))
atexit.register(shutil.rmtree, TMP, True)
torch_standin.write_kernel(TMP, "gqa_causal_lse", "bf16", 4, 2, True, True)
torch_standin.write_kernel(TMP, "gqa_causal", "bf16", 4, 2, True, False)
torch_standin.write_kernel(TMP, "gqa_packed", "bf16", 4, 2, True, False, varlen=True)
torch_standin.write_kernel(TMP, "gqa_paged", "bf16", 4, 2, True, False, seqused_k=True,
                           page_size=256)
fake = FakeCuda()
runtime.set_driver(fake)
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True).params]


def scalars(args):
    return [a for a in args if not isinstance(a, torch.Tensor)]


# fa4.torch.attention goes through the op, with the arguments normalized:
# no scale (the kernel's default), the causal window, a str directory.
out = fa4.torch.attention(q, k, v, causal=True, kernel_dir=TMP)
print("through the op:", len(op.calls), scalars(op.calls[-1]), type(out).__name__, out.shape,
      fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: through the op: 1 [None, True, None, -1, 0, 0.0, False, '{{.*}}fa4-op-{{.*}}'] Tensor (2, 300, 4, 64) gqa_causal
out, lse = fa4.torch.attention(q, k, v, causal=True, return_lse=True, scale=0.2,
                               window=(-7, -1), kernel_dir=TMP)
print("with lse:", scalars(op.calls[-1]), lse.shape)
# CHECK-NEXT: with lse: [None, True, 0.2, -1, 0, 0.0, True, '{{.*}}'] (2, 4, 300)
o, lse = op(q, k, v, None, True, None, -1, 0, 0.0, False, str(TMP))
print("op without lse:", o.shape, lse.shape, lse.dtype)
# CHECK-NEXT: op without lse: (2, 300, 4, 64) (0,) torch.float32

# Inputs that require grad: refused before the op eagerly; while
# torch.compile traces, the op is called and its autograd refuses.
grad_q = tensor((2, 300, 4, 64), requires_grad=True)
for now in (False, True):
    compiling[0] = now
    calls = len(op.calls)
    try:
        fa4.torch.attention(grad_q, k, v, causal=True, kernel_dir=TMP)
        print(f"compiling={now}: op called {len(op.calls) - calls}")
    except RuntimeError as err:
        print(f"compiling={now}: op called {len(op.calls) - calls}, {err}")
compiling[0], grad_mode[0] = False, False
calls = len(op.calls)
fa4.torch.attention(grad_q, k, v, causal=True, kernel_dir=TMP)
print("no_grad: op called", len(op.calls) - calls)
# CHECK-NEXT: compiling=False: op called 0, fa4.torch.attention has no backward yet
# CHECK-NEXT: compiling=True: op called 1
# CHECK-NEXT: no_grad: op called 1

# With nothing to intercept it, an eager call runs the op's kernel directly
# (the dispatcher's cost saved); each probe that says something would, and
# torch.compile's tracing, sends it through the op again.
probes["dispatch modes"] = 0
varlen_calls = len(varlen_op.calls)
for label, change in [("nothing", {}), ("dispatch mode", {"dispatch modes": 1}),
                      ("function mode", {"function modes": True}),
                      ("functorch transform", {"transforms": object()}),
                      ("profiler", {"profiler": True}), ("jit trace", {"tracing": object()}),
                      ("compiling", {})]:
    saved = dict(probes)
    probes.update(change)
    compiling[0] = label == "compiling"
    calls, launches = len(op.calls), len(fake.launches)
    fa4.torch.attention(q, k, v, causal=True, kernel_dir=TMP)
    print(f"{label}: op called {len(op.calls) - calls}, launched "
          f"{len(fake.launches) - launches}")
    probes.update(saved)
compiling[0] = False
# CHECK-NEXT: nothing: op called 0, launched 1
# CHECK-NEXT: dispatch mode: op called 1, launched 1
# CHECK-NEXT: function mode: op called 1, launched 1
# CHECK-NEXT: functorch transform: op called 1, launched 1
# CHECK-NEXT: profiler: op called 1, launched 1
# CHECK-NEXT: jit trace: op called 1, launched 1
# CHECK-NEXT: compiling: op called 1, launched 1

# A tensor of another type (a subclass: fake tensors, parameters) reaches
# the op too.
class Subclass(torch.Tensor):
    pass


calls = len(op.calls)
fa4.torch.attention(Subclass((2, 300, 4, 64), torch.bfloat16, q.device), k, v, causal=True,
                    kernel_dir=TMP)
print("subclass: op called", len(op.calls) - calls)
# CHECK-NEXT: subclass: op called 1

# The direct call is as checked as the op's: the same errors, in grad mode
# the same refusal.
grad_mode[0] = True
for label, args, kwargs in [("grad", (grad_q, k, v), {}),
                            ("heads", (tensor((2, 300, 3, 64)), k, v), {}),
                            ("scale", (q, k, v), {"scale": -1.0})]:
    try:
        fa4.torch.attention(*args, causal=True, kernel_dir=TMP, **kwargs)
        print(f"direct {label}: accepted")
    except (RuntimeError, ValueError) as err:
        print(f"direct {label}: {type(err).__name__}: {str(err)[:60]}")
# CHECK-NEXT: direct grad: RuntimeError: fa4.torch.attention has no backward yet: q, k, v, sink, a d
# CHECK-NEXT: direct heads: ValueError: query heads (3) must be a multiple of key/value heads (2)
# CHECK-NEXT: direct scale: ValueError: scale must be positive and finite, got -1.0

# attention_varlen likewise.
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True, varlen=True).params]
launches = len(fake.launches)
fa4.torch.attention_varlen(*packed, *tables, causal=True, kernel_dir=TMP)
probes["profiler"] = True
fa4.torch.attention_varlen(*packed, *tables, causal=True, kernel_dir=TMP)
print("varlen: op called", len(varlen_op.calls) - varlen_calls, "launched",
      len(fake.launches) - launches)
# CHECK-NEXT: varlen: op called 1 launched 2

# attention_with_kvcache likewise (the profiler still on), with its
# arguments normalized: the int length an int32 tensor, window None (-1,
# -1) folded with causal, softcap None 0.0.
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True, seqused_k=True, page_size=256).params]
paged_q, paged_k = tensor((3, 4, 4, 64)), tensor((40, 256, 2, 64))
table = tensor((3, 9), torch.int32)
launches = len(fake.launches)
fa4.torch.attention_with_kvcache(paged_q, paged_k, paged_k, cache_seqlens=1000,
                                 page_table=table, causal=True, kernel_dir=TMP)
args = kvcache_op.calls[-1]
print("kvcache through the op:", len(kvcache_op.calls), args[3].shape, args[3].dtype,
      args[3].filled, args[4] is table, scalars(args))
probes["profiler"] = False
fa4.torch.attention_with_kvcache(paged_q, paged_k, paged_k, cache_seqlens=1000,
                                 page_table=table, causal=True, kernel_dir=TMP)
print("kvcache: op called", len(kvcache_op.calls), "launched",
      len(fake.launches) - launches, fake.launches[-1].split(" grid")[0])
# CHECK-NEXT: kvcache through the op: 1 (3,) torch.int32 1000 True [None, True, None, -1, 0, 0.0, False, '{{.*}}', 0]
# CHECK-NEXT: kvcache: op called 1 launched 2 gqa_paged

# FP8: the fake kernel's O is bfloat16 (or out_dtype); through the op, the
# descales and out_dtype follow the other arguments, normalized (out_dtype
# None for bf16, the default), and only where the call has them.
fp8 = torch.float8_e4m3fn
q8, k8 = tensor((2, 300, 4, 64), fp8), tensor((2, 500, 2, 64), fp8)
v8 = tensor((2, 2, 64, 500), fp8).permute(0, 3, 1, 2)
for out_dtype in (None, torch.float16):
    o, lse = op.fake(q8, k8, v8, None, False, None, -1, -1, 0.0, True, None, None, None,
                     None, out_dtype)
    print(f"fp8 fake out_dtype={out_dtype}:", o.shape, o.dtype, lse.dtype)
# CHECK-NEXT: fp8 fake out_dtype=None: (2, 300, 4, 64) torch.bfloat16 torch.float32
# CHECK-NEXT: fp8 fake out_dtype=torch.float16: (2, 300, 4, 64) torch.float16 torch.float32
torch_standin.write_kernel(TMP, "fp8_descale", "e4m3", 4, 2, False, False, descale=True)
fa4.torch._directories.clear()   # read once per process: read it again
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "e4m3", 4, 2, 64, descale=True).params]
probes["dispatch modes"] = 1
scales = tensor((2, 2), torch.float32), tensor((2, 2), torch.float32)
for label, kwargs in [("descales", dict(q_descale=scales[0], v_descale=scales[1],
                                        out_dtype=torch.bfloat16)),
                      ("none", {})]:
    out = fa4.torch.attention(q8, k8, v8, kernel_dir=TMP, **kwargs)
    args = op.calls[-1]
    names = {id(scales[0]): "q's", id(scales[1]): "v's"}
    print(f"fp8 through the op, {label}:", len(args), out.dtype,
          [names.get(id(a), a) for a in args[11:]], fake.launches[-1].split(" grid")[0])
probes["dispatch modes"] = 0
# CHECK-NEXT: fp8 through the op, descales: 15 torch.bfloat16 ["q's", None, "v's", None] fp8_descale
# CHECK-NEXT: fp8 through the op, none: 11 torch.bfloat16 [] fp8_descale

# The rotary embedding: its four arguments after the FP8 ones (None where
# the call has none), only where the call has one; the KV cache's op too,
# and the packed sequences' after page_table (None), positions [total_q].
torch_standin.write_kernel(TMP, "gqa_rope", "bf16", 4, 2, True, False, rope=(0, 64, False))
torch_standin.write_kernel(TMP, "gqa_paged_rope", "bf16", 4, 2, True, False, seqused_k=True,
                           page_size=256, rope=(0, 64, False))
torch_standin.write_kernel(TMP, "gqa_packed_rope", "bf16", 4, 2, True, False, varlen=True,
                           rope=(0, 64, False))
fa4.torch._directories.clear()
rope_table, rope_positions = tensor((512, 64), torch.float32), tensor((2, 300), torch.int32)
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True, rope=(0, 64, False)).params]
probes["dispatch modes"] = 1
out = fa4.torch.attention(q, k, v, causal=True, kernel_dir=TMP, rope_cos_sin=rope_table,
                          rope_positions=rope_positions)
args = op.calls[-1]
names = {id(rope_table): "table", id(rope_positions): "positions"}
print("rope through the op:", len(args), [names.get(id(a), a) for a in args[11:]],
      fake.launches[-1].split(" grid")[0])
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True, seqused_k=True, page_size=256, rope=(0, 64, False)).params]
steps = tensor((3, 4), torch.int32)
fa4.torch.attention_with_kvcache(paged_q, paged_k, paged_k, cache_seqlens=1000,
                                 page_table=table, causal=True, kernel_dir=TMP,
                                 rope_cos_sin=rope_table, rope_positions=steps)
args = kvcache_op.calls[-1]
names[id(steps)] = "positions"
print("kvcache rope through the op:", len(args), [names.get(id(a), a) for a in args[14:]],
      fake.launches[-1].split(" grid")[0])
fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
    "bf16", 4, 2, 64, causal=True, varlen=True, rope=(0, 64, False)).params]
packed_positions = tensor((700,), torch.int32)
fa4.torch.attention_varlen(*packed, *tables, causal=True, kernel_dir=TMP,
                           rope_cos_sin=rope_table, rope_positions=packed_positions)
args = varlen_op.calls[-1]
names[id(packed_positions)] = "positions"
print("varlen rope through the op:", len(args), [names.get(id(a), a) for a in args[14:]],
      fake.launches[-1].split(" grid")[0])
o, lse = varlen_op.fake(*args)
print("varlen rope fake:", o.shape, lse.shape)
probes["dispatch modes"] = 0
# CHECK-NEXT: rope through the op: 19 [None, None, None, None, 'table', 'positions', 0, False] gqa_rope
# CHECK-NEXT: kvcache rope through the op: 22 [None, None, None, None, 'table', 'positions', 0, False] gqa_paged_rope
# CHECK-NEXT: varlen rope through the op: 23 [None, None, None, None, None, 'table', 'positions', 0, False] gqa_packed_rope
# CHECK-NEXT: varlen rope fake: (700, 4, 64) (0,)

# p_precision: the ops' last argument, only where a call gives one (the
# trailing arguments before it filled in with the ops' defaults); the
# kernel of that precision, never the other.
for name, options in [("gqa_hilo", {}),
                      ("gqa_paged_hilo", dict(seqused_k=True, page_size=256)),
                      ("gqa_packed_hilo", dict(varlen=True))]:
    torch_standin.write_kernel(TMP, name, "bf16", 4, 2, True, False, p_precision="hi_lo",
                               **options)
fa4.torch._directories.clear()
probes["dispatch modes"] = 1
for precision in ("hi_lo", "single"):
    fake.kinds = [kind for _, kind, _ in runtime.KernelDirectory(TMP).find(
        "bf16", 4, 2, 64, causal=True, p_precision=precision).params]
    fa4.torch.attention(q, k, v, causal=True, kernel_dir=TMP, p_precision=precision)
    args = op.calls[-1]
    print(f"{precision} through the op:", len(args), args[11:],
          fake.launches[-1].split(" grid")[0])
fa4.torch.attention_with_kvcache(paged_q, paged_k, paged_k, cache_seqlens=1000,
                                 page_table=table, causal=True, kernel_dir=TMP,
                                 p_precision="hi_lo")
args = kvcache_op.calls[-1]
print("kvcache hi_lo through the op:", len(args), args[14:],
      fake.launches[-1].split(" grid")[0])
fa4.torch.attention_varlen(*packed, *tables, causal=True, kernel_dir=TMP,
                           p_precision="hi_lo")
args = varlen_op.calls[-1]
print("varlen hi_lo through the op:", len(args), args[14:],
      fake.launches[-1].split(" grid")[0])
o, lse = varlen_op.fake(*args)
print("varlen hi_lo fake:", o.shape, lse.shape)
fa4.torch.attention(q, k, v, causal=True, kernel_dir=TMP)
print("none through the op:", len(op.calls[-1]), fake.launches[-1].split(" grid")[0])
probes["dispatch modes"] = 0
# CHECK-NEXT: hi_lo through the op: 20 (None, None, None, None, None, None, 0, False, 'hi_lo') gqa_hilo
# CHECK-NEXT: single through the op: 20 (None, None, None, None, None, None, 0, False, 'single') gqa_causal
# CHECK-NEXT: kvcache hi_lo through the op: 23 (None, None, None, None, None, None, 0, False, 'hi_lo') gqa_paged_hilo
# CHECK-NEXT: varlen hi_lo through the op: 24 (None, None, None, None, None, None, None, 0, False, 'hi_lo') gqa_packed_hilo
# CHECK-NEXT: varlen hi_lo fake: (700, 4, 64) (0,)
# CHECK-NEXT: none through the op: 11 gqa_causal
runtime.set_driver(None)
