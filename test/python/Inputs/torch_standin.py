"""fa4.torch without PyTorch or a GPU, for the tests of test/python: a
stand-in `torch` module (the few calls fa4.torch makes), a fake libcuda
that logs each launch with its decoded parameters, and kernel manifests
written without compiling. Not a test itself (lit.local.cfg).

    import torch_standin
    torch = torch_standin.install()      # before importing fa4.torch
    fake = torch_standin.FakeCuda(); fa4.runtime.set_driver(fake)
"""

import contextlib
import ctypes
import json
import sys
import types

from manifest_entries import add_page_table, add_rope, add_table


class DType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class Device:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


_next_address = [0x7f0000000000]


class Tensor:
    def __init__(self, shape, dtype, device, strides=None, ptr=None, requires_grad=False):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self.requires_grad = requires_grad
        contiguous, step = [], 1
        for size in reversed(self.shape):
            contiguous.insert(0, step)
            step *= size
        self._contiguous = tuple(contiguous)
        self._strides = tuple(strides) if strides else self._contiguous
        if ptr is None:
            ptr = _next_address[0]
            _next_address[0] += 1 << 24
        self._ptr = ptr

    is_cuda = property(lambda self: self.device.type == "cuda")

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._strides

    def is_contiguous(self):
        return self._strides == self._contiguous

    def data_ptr(self):
        return self._ptr

    def is_floating_point(self):
        return self.dtype.name.startswith(("float", "bfloat"))

    def permute(self, *dims):
        """A view: the same memory, dimensions (and strides) reordered."""
        return Tensor([self.shape[d] for d in dims], self.dtype, self.device,
                      [self._strides[d] for d in dims], self._ptr, self.requires_grad)

    def as_strided(self, shape, strides):
        return Tensor(shape, self.dtype, self.device, strides, self._ptr)

    # Copies into a tensor on the host side (no data): remembered as `copied`,
    # the source tensor.
    copied = None

    def copy_(self, source):
        self.copied = source
        return self

    def to(self, dtype):
        return self if dtype is self.dtype else Tensor(self.shape, dtype, self.device)

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(self.shape, self.dtype, self.device)

    def new_empty(self, shape, dtype=None):
        return Tensor(shape, dtype or self.dtype, self.device)

    # Writes on the host side (no data): remembered as `filled`.
    filled = None

    def zero_(self):
        self.filled = 0.0
        return self

    def __setitem__(self, index, value):
        self.filled = value if isinstance(value, float) else f"tensor {value!r}"

    def __getitem__(self, index):
        return self


def caching_allocator():
    """Makes torch.empty hand out one address per shape and dtype, as
    PyTorch's caching allocator does when each call's outputs are freed
    before the next (the launches of repeated calls are then the same)."""
    blocks = {}

    def empty(shape, dtype, device):
        key = (tuple(shape), dtype.name, str(device))
        if key not in blocks:
            blocks[key] = Tensor(shape, dtype, device).data_ptr()
        return Tensor(shape, dtype, device, ptr=blocks[key])
    torch.empty = empty


torch = types.ModuleType("torch")
torch.cuda = types.ModuleType("torch.cuda")
torch.bfloat16, torch.float16, torch.float32, torch.float64, torch.int32 = (
    DType(n) for n in ("bfloat16", "float16", "float32", "float64", "int32"))
torch.float8_e4m3fn = DType("float8_e4m3fn")
torch.dtype = DType
torch.Tensor = Tensor
torch.empty = lambda shape, dtype, device: Tensor(shape, dtype, device)


def _full(shape, value, dtype=None, device=None):
    """torch.full: a tensor that remembers its value as `filled`."""
    t = Tensor(shape, dtype, device)
    t.filled = value
    return t


torch.full = _full
torch.ones = lambda shape, dtype=None, device=None: _full(shape, 1.0, dtype, device)
torch.contiguous_format = "contiguous_format"
# Through torch.empty, as it is when called (caching_allocator replaces it).
torch.empty_like = lambda t, memory_format=None: torch.empty(t.shape, t.dtype, t.device)
torch.cuda.capability = (10, 0)
torch.cuda.get_device_capability = lambda device=None: torch.cuda.capability
torch.cuda.sm_count = 148
torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
    multi_processor_count=torch.cuda.sm_count)
torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0x5000)
torch.cuda.device = lambda device: contextlib.nullcontext()
grad_mode = [True]
torch.is_grad_enabled = lambda: grad_mode[0]
cuda0 = Device("cuda", 0)


def install():
    """Makes `import torch` give the stand-in; returns it."""
    sys.modules["torch"] = torch
    sys.modules["torch.cuda"] = torch.cuda
    return torch


def tensor(shape, dtype=torch.bfloat16, device=cuda0, **kwargs):
    return Tensor(shape, dtype, device, **kwargs)


class FakeCuda:
    """A libcuda that remembers the tensor maps copied and each launch:
    `launches` holds '<kernel> grid <x> stream <s> params [...]' with the
    parameters decoded by `kinds` (set it to the kernel's param kinds);
    `calls` the name of every driver function called."""

    def __init__(self):
        self.calls = []  # the name of every driver function called, in order
        self.launches, self.maps, self.attributes = [], {}, []
        self.functions = {}  # CUfunction -> kernel name
        self.strides = {}  # global address -> byte strides of its tensor map
        self.dims = {}  # global address -> dimensions of its tensor map
        self.boxes = {}  # global address -> box of its tensor map
        self.data_types = {}  # global address -> CUtensorMapDataType of its map
        self.kinds = []
        # What cuDeviceGetAttribute answers: a B200, unless a test says otherwise.
        self.capability, self.sm_count = (10, 0), 148

    def __getattribute__(self, name):
        if name.startswith("cu"):
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        def call(*args):
            return 0
        return call

    def cuGetErrorName(self, code, out):
        out._obj.value = b"CUDA_ERROR_INVALID_VALUE"
        return 0

    cuGetErrorString = cuGetErrorName

    def cuCtxGetCurrent(self, out):
        out._obj.value = 0xCAFE
        return 0

    def cuCtxGetDevice(self, out):
        out._obj.value = 0
        return 0

    def cuDeviceGet(self, out, ordinal):
        out._obj.value = ordinal.value
        return 0

    def cuDeviceGetAttribute(self, out, attribute, device):
        out._obj.value = {75: self.capability[0], 76: self.capability[1], 16: self.sm_count,
                          97: 232448}[attribute.value]
        return 0

    def cuModuleGetFunction(self, out, module, name):
        out._obj.value = 0x2000 + len(self.functions)
        self.functions[out._obj.value] = name.decode()
        return 0

    def cuTensorMapEncodeTiled(self, out, data_type, rank, address, dims, strides, box,
                               *rest):
        ctypes.memmove(out.value, address.value.to_bytes(8, "little") + bytes(120), 128)
        self.strides[address.value] = list(strides)
        self.dims[address.value] = list(dims)
        self.boxes[address.value] = list(box)
        self.data_types[address.value] = data_type.value
        return 0

    def cuMemAllocAsync(self, out, size, stream):
        # A block per allocation, so that each remembered launch's maps stay
        # its own.
        out._obj.value = 0x7e0000000000 + 0x1000 * len(self.maps)
        return 0

    def cuMemcpyHtoDAsync_v2(self, destination, source, size, stream):
        data = ctypes.string_at(source.value, size.value)
        for i in range(0, len(data), 128):
            self.maps[destination.value + i] = int.from_bytes(data[i:i + 8], "little")
        return 0

    def cuLaunchKernelEx(self, config, function, params, extra):
        c = config._obj
        values = []
        for i, kind in enumerate(self.kinds):
            ctype = {"i32": ctypes.c_int32, "f32": ctypes.c_float}.get(kind, ctypes.c_uint64)
            v = ctype.from_address(params[i]).value
            if kind == "tensor_map":
                v = f"map of {self.maps[v]:#x}"
            elif kind == "pointer":
                v = f"{v:#x}"
            values.append(v)
        self.launches.append(f"{self.functions[function.value]} grid {c.gridDimX} "
                             f"stream {c.hStream:#x} params {values}")
        # The launch attributes: (id, cluster x or the int the id sets).
        self.attributes.append(
            [(c.attrs[i].id, c.attrs[i].value.clusterDim.x if c.attrs[i].id == 4
              else c.attrs[i].value.programmaticStreamSerializationAllowed)
             for i in range(c.numAttrs)])
        return 0


def write_kernel(directory, name, element, heads_q, heads_kv, causal, lse, sink=False,
                 head_dim=64, window=None, softcap=None, varlen=False, seqused_k=False,
                 head_dim_v=None, page_size=None, descale=False, output=None,
                 arch="sm_100a", q_stages=None, query_rows=256, rope=None,
                 p_precision=None, kv_interleave=None):
    """Writes the manifest (and a stand-in cubin) of a kernel named `name`
    as fa4-compile would for that configuration (`varlen`: packed
    sequences, `seqused_k` with the keys each sequence, or each batch of a
    dense KV cache, uses, `page_size` K/V pages [pages, page_size, Hkv, D]
    read through a page table, `head_dim_v` V's and O's head dim where it
    is not `head_dim`). `element` 'e4m3' is FP8 as /work/fp8/SPEC.md has it:
    operands f8E4M3FN, O `output` (bf16 by default), V's map key-major,
    and with `descale` the q/k/v_descale operands and pointers. `q_stages`
    writes a plan with that many Q stages, `p_precision` one with that
    pPrecision ('single' or 'hi_lo') and `kv_interleave` one with that
    kvInterleave (none of them: no plan), `query_rows`
    the grid's query rows per CTA; `rope` (start, columns, output) a
    rotary embedding of Q: the operands cos_sin [?, columns] f32 and
    positions [?, ?] i32 ([?] with `varlen`: a position per packed query
    row) last, their params (cos_sin, rope_positions, positions) after the
    others, the manifest's `rope` entry."""
    rows = [-1] if varlen else [-1, -1]
    # Paged K/V (of a dense batch or packed sequences): [pages, page_size].
    kv_rows = [-1, page_size] if page_size else rows
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    eight_bit = element == "e4m3"
    output = output or ("bf16" if eight_bit else element)
    spelled = "f8E4M3FN" if eight_bit else element
    operands = [{"name": n, "element": e, "shape": r + [h, d]}
                for n, e, r, h, d in (("query", spelled, rows, heads_q, head_dim),
                                      ("key", spelled, kv_rows, heads_kv, head_dim),
                                      ("value", spelled, kv_rows, heads_kv, head_dim_v),
                                      ("output", output, rows, heads_q, head_dim_v))]
    params = [{"kind": "tensor_map", "name": f"m{i}", "source": f"tensor_maps[{i}]"}
              for i in range(4)]
    if varlen:
        params += [{"kind": "i32", "name": "sequence_bounds",
                    "source": "cu_seqlens_q.shape[0]"},
                   {"kind": "i32", "name": "total_q", "source": "query.shape[0]"},
                   {"kind": "i32", "name": "seq_kv", "source": "key.shape[1]"} if page_size
                   else {"kind": "i32", "name": "total_kv", "source": "key.shape[0]"}]
    else:
        params += [{"kind": "i32", "name": "batch", "source": "query.shape[0]"},
                   {"kind": "i32", "name": "seq_q", "source": "query.shape[1]"},
                   {"kind": "i32", "name": "seq_kv", "source": "key.shape[1]"}]
    params.append({"kind": "f32", "name": "scale_log2", "source": "scale_log2"})
    manifest = {
        "kernel": name, "arch": arch, "block": [512, 1, 1], "cluster": [1, 1, 1],
        "dynamic_smem_bytes": 197632, "files": {"cubin": f"{name}.cubin"},
        "grid": {"rule": "persistent_varlen" if varlen else "persistent",
                 "head_blocks": heads_q, "query_rows_per_cta": query_rows},
        "causal": causal, "scale": 1 / head_dim ** 0.5,
        "scale_log2": 1.4426950408889634 / head_dim ** 0.5}
    if q_stages or p_precision or kv_interleave:
        fields = ([f"arch = {arch}"] + ([f"qStages = {q_stages}"] if q_stages else [])
                  + ([f"pPrecision = {p_precision}"] if p_precision else [])
                  + ([f"kvInterleave = {kv_interleave}"] if kv_interleave else []))
        manifest["plan"] = f"#fa4.plan<{', '.join(fields)}>"
    if window:
        manifest["window"] = list(window)
    if softcap:
        manifest["softcap"] = softcap
        manifest["score_cap"] = softcap * head_dim ** 0.5
        params.append({"kind": "f32", "name": "score_cap", "source": "score_cap"})
    if lse:
        operands.append({"name": "lse", "element": "f32",
                         "shape": [heads_q, -1] if varlen else [-1, heads_q, -1]})
        params.append({"kind": "pointer", "name": "lse", "source": "lse.data"})
    if sink:
        operands.append({"name": "sink", "element": "f32", "shape": [heads_q]})
        params.append({"kind": "pointer", "name": "sink", "source": "sink.data"})
    # The kernel's order: after the sinks, before the tables.
    for table in ("q_descale", "k_descale", "v_descale") if descale else ():
        operands.append({"name": table, "element": "f32", "shape": [-1, heads_kv]})
        params.append({"kind": "pointer", "name": table, "source": f"{table}.data"})
    if varlen:
        for table in ("cu_seqlens_q", "cu_seqlens_k"):
            add_table(operands, params, table, [-1])
    if seqused_k:
        add_table(operands, params, "seqused_k", [-1])
    if varlen:
        params.append({"kind": "pointer", "name": "output_rows", "source": "output.data"})
    if page_size:
        add_page_table(operands, params)
    if rope:
        start, columns, rotate_output = rope
        add_rope(operands, params, columns, rows)
        manifest["rope"] = {"start": start, "columns": columns, "output": rotate_output}
    maps = [{"operand": n, "operand_index": i, "element": element,
             "box": [64, 1, 128, 1], "swizzle": "128B", "oob_fill": "zero"}
            for i, n in enumerate(("query", "key", "value", "output"))]
    for entry in maps if varlen else ():
        if not (page_size and entry["operand"] in ("key", "value")):
            entry["varlen"] = True
    if eight_bit:
        # (S, H, D, B) for V, box [block_n, 1, Dv, 1]; O 16-bit.
        maps[2].update(key_major=True, box=[128, 1, head_dim_v, 1])
        maps[3]["element"] = output
    manifest.update(operands=operands, params=params, tensor_maps=maps)
    (directory / f"{name}.json").write_text(json.dumps(manifest))
    (directory / f"{name}.cubin").write_bytes(b"\x7fELF")
