"""ctypes bindings over libFA4CAPI.so (the fa4 C API and the MLIR C API for IR).

The library is found through, in order: the `FA4_CAPI_LIB` environment
variable, then `build/lib/libFA4CAPI.so` of the source tree this package
lives in.
"""

import ctypes
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

_lib = None


class MLIRError(RuntimeError):
    """Parsing or verification failed; `diagnostics` holds every message."""

    def __init__(self, message, diagnostics):
        super().__init__(message + (":\n" + "\n".join(diagnostics) if diagnostics else ""))
        self.diagnostics = diagnostics


# MLIR C API handles are structs holding one pointer.
class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


_StringCallback = ctypes.CFUNCTYPE(None, _StringRef, ctypes.c_void_p)
# MlirLogicalResult is a struct of one int8_t, returned in a register like an
# int8_t; ctypes callbacks cannot return structures.
_DiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, _Handle, ctypes.c_void_p)
_DeleteUserData = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _CompiledKernel(ctypes.Structure):
    _fields_ = [("name", _StringRef), ("arch", _StringRef), ("ptx", _StringRef),
                ("cubin", _StringRef), ("manifest", _StringRef)]


_KernelCallback = ctypes.CFUNCTYPE(None, ctypes.POINTER(_CompiledKernel), ctypes.c_void_p)


def _bytes(ref):
    # Reading the c_char_p field would copy only up to the first NUL (a
    # cubin has many): take its raw address instead.
    if not ref.length:
        return b""
    address = ctypes.c_void_p.from_buffer(ref, _StringRef.data.offset).value
    return ctypes.string_at(address, ref.length)


@dataclass
class CompiledKernel:
    """One kernel of a compilation, in memory: its PTX, its cubin (None when
    no ptxas was found) and its launch manifest (the JSON document
    fa4-emit-kernels writes, parsed)."""
    name: str
    arch: str
    ptx: str
    cubin: bytes
    manifest: dict

    def write(self, directory):
        """Writes <name>.ptx, <name>.cubin (if any) and <name>.json into
        `directory`, as fa4-emit-kernels does; returns the manifest's path."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{self.name}.ptx").write_text(self.ptx)
        if self.cubin:
            (directory / f"{self.name}.cubin").write_bytes(self.cubin)
        path = directory / f"{self.name}.json"
        path.write_text(json.dumps(self.manifest, indent=2) + "\n")
        return path


@dataclass
class Compilation:
    """What `Context.compile` returns: the compiled module's text (`ir`) and
    its kernels."""
    ir: str
    kernels: list = field(default_factory=list)

    def write(self, directory):
        """Writes every kernel's files into `directory`."""
        return [kernel.write(directory) for kernel in self.kernels]


def _default_library_path():
    """FA4_CAPI_LIB when set; else the library an installed wheel carries
    (fa4/_lib, self-contained); else the one of the source tree's build."""
    env = os.environ.get("FA4_CAPI_LIB")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    packaged = here / "_lib" / "libFA4CAPI.so"
    if packaged.exists():
        return packaged
    return here.parents[1] / "build" / "lib" / "libFA4CAPI.so"


def load_library(path=None):
    """Loads libFA4CAPI.so once and declares the signatures used here."""
    global _lib
    if _lib is not None:
        return _lib
    path = Path(path) if path else _default_library_path()
    if not path.exists():
        raise FileNotFoundError(
            f"fa4 C API library not found at {path}; install the package with "
            "`make python` (or build the tree with `make`), or point FA4_CAPI_LIB at it")
    lib = ctypes.CDLL(str(path))
    signatures = {
        "mlirDialectRegistryCreate": ([], _Handle),
        "mlirDialectRegistryDestroy": ([_Handle], None),
        "fa4RegisterAllDialects": ([_Handle], None),
        "mlirContextCreateWithRegistry": ([_Handle, ctypes.c_bool], _Handle),
        "mlirContextDestroy": ([_Handle], None),
        "mlirContextAttachDiagnosticHandler":
            ([_Handle, _DiagnosticHandler, ctypes.c_void_p, _DeleteUserData], ctypes.c_uint64),
        "mlirDiagnosticPrint": ([_Handle, _StringCallback, ctypes.c_void_p], None),
        "mlirModuleCreateParse": ([_Handle, _StringRef], _Handle),
        "mlirModuleDestroy": ([_Handle], None),
        "mlirModuleGetOperation": ([_Handle], _Handle),
        "mlirOperationVerify": ([_Handle], ctypes.c_bool),
        "mlirOperationPrint": ([_Handle, _StringCallback, ctypes.c_void_p], None),
        "fa4CompileModule": ([_Handle, _StringRef], ctypes.c_int8),
        "fa4CompileModuleToKernels":
            ([_Handle, _StringRef, _KernelCallback, ctypes.c_void_p], ctypes.c_int8),
    }
    for name, (argtypes, restype) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    _lib = lib
    return lib


def _to_string(lib, print_fn, handle):
    chunks = []
    callback = _StringCallback(lambda s, _: chunks.append(ctypes.string_at(s.data, s.length)))
    print_fn(handle, callback, None)
    return b"".join(chunks).decode()


class Context:
    """An MLIR context with fa4 and the dialects of its pipeline registered."""

    def __init__(self, library=None):
        self._lib = load_library(library)
        registry = self._lib.mlirDialectRegistryCreate()
        self._lib.fa4RegisterAllDialects(registry)
        self._ctx = self._lib.mlirContextCreateWithRegistry(registry, False)
        self._lib.mlirDialectRegistryDestroy(registry)
        self._diagnostics = []

        def on_diagnostic(diagnostic, _):
            self._diagnostics.append(_to_string(self._lib, self._lib.mlirDiagnosticPrint, diagnostic))
            return 1  # handled

        # Kept alive as long as the context: the C side holds the pointer.
        self._handler = _DiagnosticHandler(on_diagnostic)
        self._lib.mlirContextAttachDiagnosticHandler(
            self._ctx, self._handler, None, ctypes.cast(None, _DeleteUserData))

    def close(self):
        if self._ctx is not None:
            self._lib.mlirContextDestroy(self._ctx)
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _parse(self, source):
        self._diagnostics.clear()
        data = source.encode()
        module = self._lib.mlirModuleCreateParse(self._ctx, _StringRef(data, len(data)))
        if not module.ptr:
            raise MLIRError("failed to parse", list(self._diagnostics))
        return module

    def verify(self, source):
        """Parses and verifies `source`; returns its printed form or raises MLIRError."""
        module = self._parse(source)
        try:
            op = self._lib.mlirModuleGetOperation(module)
            if not self._lib.mlirOperationVerify(op):
                raise MLIRError("failed to verify", list(self._diagnostics))
            return _to_string(self._lib, self._lib.mlirOperationPrint, op)
        finally:
            self._lib.mlirModuleDestroy(module)

    def compile(self, source, options=""):
        """Runs the fa4-compile pipeline on `source` with fa4-opt's option
        string (e.g. "kv-stages=4 ptxas=/usr/local/cuda/bin/ptxas") and
        returns a `Compilation`: the compiled module's text and each
        kernel's PTX, cubin and manifest in memory (`emit-dir` is ignored;
        `Compilation.write` writes the files). Raises MLIRError."""
        module = self._parse(source)
        kernels = []

        def on_kernel(kernel, _):
            k = kernel.contents
            kernels.append(CompiledKernel(
                name=_bytes(k.name).decode(), arch=_bytes(k.arch).decode(),
                ptx=_bytes(k.ptx).decode(), cubin=_bytes(k.cubin) or None,
                manifest=json.loads(_bytes(k.manifest))))

        callback = _KernelCallback(on_kernel)
        try:
            data = options.encode()
            if not self._lib.fa4CompileModuleToKernels(
                    module, _StringRef(data, len(data)), callback, None):
                raise MLIRError("fa4-compile failed", list(self._diagnostics))
            op = self._lib.mlirModuleGetOperation(module)
            return Compilation(_to_string(self._lib, self._lib.mlirOperationPrint, op), kernels)
        finally:
            self._lib.mlirModuleDestroy(module)
