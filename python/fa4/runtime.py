"""Launches compiled fa4 kernels through the CUDA driver API, in pure Python.

The compiler writes, for each kernel, `<name>.cubin`, `<name>.ptx` and
`<name>.json`, the launch manifest. This module reads manifests, chooses the
kernel of a problem (`KernelDirectory.find`), computes the grid and the
kernel parameters from the manifest (`Kernel.grid`, `Kernel.arguments`),
encodes the TMA descriptors (`tensor_map_args`) and launches the kernel with
ctypes over `libcuda.so.1` (`Kernel.launch`). Nothing is compiled.

libcuda is loaded on first use (`driver()`), so importing this module and
everything up to the launch itself work on a machine with no GPU.
`docs/RUNTIME.md` describes the whole runtime.

Every CUDA constant and structure below is transcribed from the CUDA 13.0
`cuda.h`; the comment next to each names the enumerator or declaration it
comes from (test/python/runtime_cuda_h.py checks them against the header).
"""

import ctypes
import json
import math
import numbers
import os
import re
from collections import OrderedDict, namedtuple
from pathlib import Path

__all__ = [
    "Argument", "CudaError", "Kernel", "KernelDirectory", "ManifestError",
    "Operand", "Rope", "TensorMapArgs", "arch_of_capability", "driver", "effective_window",
    "set_driver", "tensor_map_args",
]

# ---------------------------------------------------------------------------
# cuda.h constants (CUDA 13.0).

CUDA_SUCCESS = 0                                          # CUresult CUDA_SUCCESS
CUDA_ERROR_NOT_SUPPORTED = 801                            # CUresult CUDA_ERROR_NOT_SUPPORTED
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16             # CUdevice_attribute
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75         # CUdevice_attribute
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76         # CUdevice_attribute
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97  # CUdevice_attribute
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8       # CUfunction_attribute
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4                 # CUlaunchAttributeID
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6  # CUlaunchAttributeID

# CUtensorMapDataType: UINT8 = 0, UINT16, UINT32, INT32, UINT64, INT64,
# FLOAT16 (6), FLOAT32, FLOAT64, BFLOAT16 (9), ... (no 8-bit float type: TMA
# copies bytes, so e4m3 is UINT8)
CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0
CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
# CUtensorMapInterleave: NONE = 0, 16B, 32B
CU_TENSOR_MAP_INTERLEAVE_NONE = 0
# CUtensorMapSwizzle: NONE = 0, 32B, 64B, 128B, 128B_ATOM_32B, ...
CU_TENSOR_MAP_SWIZZLE_NONE = 0
CU_TENSOR_MAP_SWIZZLE_32B = 1
CU_TENSOR_MAP_SWIZZLE_64B = 2
CU_TENSOR_MAP_SWIZZLE_128B = 3
# CUtensorMapL2promotion: NONE = 0, L2_64B, L2_128B, L2_256B
CU_TENSOR_MAP_L2_PROMOTION_NONE = 0
CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1
CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
# CUtensorMapFloatOOBfill: NONE = 0 (out-of-bounds elements read as zero),
# NAN_REQUEST_ZERO_FMA
CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1
# #define CU_TENSOR_MAP_NUM_QWORDS 16: a CUtensorMap is 16 u64, 128 bytes.
CU_TENSOR_MAP_NUM_QWORDS = 16
TENSOR_MAP_BYTES = 8 * CU_TENSOR_MAP_NUM_QWORDS
# cuTensorMapEncodeTiled: "tensorMap address must be aligned to 64 bytes".
TENSOR_MAP_ALIGNMENT = 64

# Manifest spellings to enumerators.
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "e4m3": 1}
#: 8-bit floating inputs (FP8): Q, K and V of such a kernel, whose output
#: is 16-bit and which may take descale factors.
EIGHT_BIT_ELEMENTS = ("e4m3",)
#: Packed sequences with a key-major V (FP8): sequence b's keys are V's
#: rows from align16(cu_seqlens_k[b]) + 16 b (so that every TMA box starts
#: 16-byte aligned), and V has at least total_k + 16 B rows.
PACKED_VALUE_ALIGNMENT = 16
# An 8-bit V is read key-major, each KV block of 128 keys one TMA box (its
# keys the box's innermost 128 bytes), which lies in one page: a paged
# 8-bit cache has pages of at least this many keys.
FP8_MIN_PAGE_SIZE = 128
#: Other spellings of an element, as an operand's "element" is MLIR's type
#: (`f8E4M3FN`) where the tensor maps and this runtime say `e4m3`.
ELEMENT_ALIASES = {"f8E4M3FN": "e4m3"}
#: What the tensors score and mask regions read ("captureN") may hold.
CAPTURE_ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i8": 1, "i16": 2, "i32": 4,
                         "i64": 8}
_CAPTURE_NAME = re.compile(r"capture(\d+)")
#: The largest finite float32.
F32_MAX = 3.4028234663852886e38
TENSOR_MAP_DATA_TYPES = {"bf16": CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                         "f16": CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                         "e4m3": CU_TENSOR_MAP_DATA_TYPE_UINT8}
SWIZZLES = {"none": CU_TENSOR_MAP_SWIZZLE_NONE, "32B": CU_TENSOR_MAP_SWIZZLE_32B,
            "64B": CU_TENSOR_MAP_SWIZZLE_64B, "128B": CU_TENSOR_MAP_SWIZZLE_128B}
SWIZZLE_SPAN_BYTES = {"none": None, "32B": 32, "64B": 64, "128B": 128}
L2_PROMOTIONS = {"none": CU_TENSOR_MAP_L2_PROMOTION_NONE,
                 "64B": CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                 "128B": CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                 "256B": CU_TENSOR_MAP_L2_PROMOTION_L2_256B}
OOB_FILLS = {"zero": CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
             "nan": CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA}
# The manifest does not say; 128B is what TMA loads of whole 128-byte rows
# usually take.
DEFAULT_L2_PROMOTION = "128B"

# Above this, a kernel must opt in to its dynamic shared memory with
# cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
DEFAULT_DYNAMIC_SMEM_LIMIT = 48 * 1024

# ---------------------------------------------------------------------------
# cuda.h structures.


class CUtensorMap(ctypes.Structure):
    """`typedef struct CUtensorMap_st { alignas(128) cuuint64_t
    opaque[CU_TENSOR_MAP_NUM_QWORDS]; } CUtensorMap;` (ctypes cannot align
    it, so `Driver.encode_tensor_map` places one in an aligned buffer)."""
    _fields_ = [("opaque", ctypes.c_uint64 * CU_TENSOR_MAP_NUM_QWORDS)]


class _ClusterDim(ctypes.Structure):
    """`struct { unsigned int x; unsigned int y; unsigned int z; } clusterDim;`"""
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class CUlaunchAttributeValue(ctypes.Union):
    """`typedef union CUlaunchAttributeValue_union { char pad[64]; ...
    struct {...} clusterDim; ... int programmaticStreamSerializationAllowed;
    ... } CUlaunchAttributeValue;`

    Only the members used here are spelled out; the union also holds
    pointers (CUevent), which make it 8-byte aligned: `_align` stands for
    them."""
    _fields_ = [("pad", ctypes.c_char * 64),
                ("clusterDim", _ClusterDim),
                ("programmaticStreamSerializationAllowed", ctypes.c_int),
                ("_align", ctypes.c_void_p)]


class CUlaunchAttribute(ctypes.Structure):
    """`typedef struct CUlaunchAttribute_st { CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)]; CUlaunchAttributeValue value;
    } CUlaunchAttribute;`"""
    _fields_ = [("id", ctypes.c_int),
                ("pad", ctypes.c_char * (8 - ctypes.sizeof(ctypes.c_int))),
                ("value", CUlaunchAttributeValue)]


class CUlaunchConfig(ctypes.Structure):
    """`typedef struct CUlaunchConfig_st { unsigned int gridDimX, gridDimY,
    gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes; CUstream
    hStream; CUlaunchAttribute *attrs; unsigned int numAttrs; }
    CUlaunchConfig;`"""
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint),
                ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(CUlaunchAttribute)),
                ("numAttrs", ctypes.c_uint)]


# ---------------------------------------------------------------------------
# Errors.


class CudaError(RuntimeError):
    """A CUDA driver call failed (or libcuda could not be loaded).

    `function` is the driver function, `code` the CUresult (None when
    libcuda itself is missing), `name` and `description` what cuGetErrorName
    and cuGetErrorString say about it."""

    def __init__(self, function, code, name, description, context=""):
        message = f"{function} failed: {name} ({description})"
        if context:
            message += f" {context}"
        super().__init__(message)
        self.function = function
        self.code = code
        self.name = name
        self.description = description


class ManifestError(ValueError):
    """A launch manifest lacks something the runtime needs or says
    something it does not understand."""


# ---------------------------------------------------------------------------
# The driver: libcuda through ctypes, loaded on first use.

_c_void_p_p = ctypes.POINTER(ctypes.c_void_p)
_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_uint64_p = ctypes.POINTER(ctypes.c_uint64)
_c_uint32_p = ctypes.POINTER(ctypes.c_uint32)
_c_char_p_p = ctypes.POINTER(ctypes.c_char_p)

# Exported symbol -> (argtypes, cuda.h declaration). Where cuda.h #defines a
# name to a versioned one (`#define cuMemcpyHtoDAsync
# __CUDA_API_PTSZ(cuMemcpyHtoDAsync_v2)`) the symbol is the versioned one,
# without the per-thread-default-stream suffix (CUDA_API_PER_THREAD_DEFAULT_STREAM
# unset): stream 0 is the legacy default stream, as in PyTorch.
_SIGNATURES = {
    # CUresult cuGetErrorName(CUresult error, const char **pStr)
    "cuGetErrorName": [ctypes.c_int, _c_char_p_p],
    # CUresult cuGetErrorString(CUresult error, const char **pStr)
    "cuGetErrorString": [ctypes.c_int, _c_char_p_p],
    # CUresult cuInit(unsigned int Flags)
    "cuInit": [ctypes.c_uint],
    # CUresult cuDeviceGet(CUdevice *device, int ordinal)
    "cuDeviceGet": [_c_int_p, ctypes.c_int],
    # CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
    "cuDeviceGetAttribute": [_c_int_p, ctypes.c_int, ctypes.c_int],
    # CUresult cuCtxGetCurrent(CUcontext *pctx)
    "cuCtxGetCurrent": [_c_void_p_p],
    # CUresult cuCtxSetCurrent(CUcontext ctx)
    "cuCtxSetCurrent": [ctypes.c_void_p],
    # CUresult cuCtxGetDevice(CUdevice *device)
    "cuCtxGetDevice": [_c_int_p],
    # CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
    "cuDevicePrimaryCtxRetain": [_c_void_p_p, ctypes.c_int],
    # CUresult cuModuleLoadData(CUmodule *module, const void *image)
    "cuModuleLoadData": [_c_void_p_p, ctypes.c_char_p],
    # CUresult cuModuleUnload(CUmodule hmod)
    "cuModuleUnload": [ctypes.c_void_p],
    # CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
    "cuModuleGetFunction": [_c_void_p_p, ctypes.c_void_p, ctypes.c_char_p],
    # CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
    "cuFuncSetAttribute": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
    # CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
    "cuMemAllocAsync": [_c_uint64_p, ctypes.c_size_t, ctypes.c_void_p],
    # CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
    "cuMemFreeAsync": [ctypes.c_uint64, ctypes.c_void_p],
    # CUresult cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
    #                            size_t ByteCount, CUstream hStream)
    "cuMemcpyHtoDAsync_v2": [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t,
                             ctypes.c_void_p],
    # CUresult cuStreamSynchronize(CUstream hStream)
    "cuStreamSynchronize": [ctypes.c_void_p],
    # CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
    #                           void **kernelParams, void **extra)
    "cuLaunchKernelEx": [ctypes.POINTER(CUlaunchConfig), ctypes.c_void_p,
                         _c_void_p_p, _c_void_p_p],
    # CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap,
    #     CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    #     void *globalAddress, const cuuint64_t *globalDim,
    #     const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    #     const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    #     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    #     CUtensorMapFloatOOBfill oobFill)
    "cuTensorMapEncodeTiled": [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                               ctypes.c_void_p, _c_uint64_p, _c_uint64_p,
                               _c_uint32_p, _c_uint32_p, ctypes.c_int,
                               ctypes.c_int, ctypes.c_int, ctypes.c_int],
}

DeviceInfo = namedtuple("DeviceInfo", "capability sm_count smem_optin")


def _stream_handle(stream):
    """A CUstream from an int handle, None, or an object with `cuda_stream`
    (a torch.cuda.Stream)."""
    if stream is None:
        return 0
    stream = getattr(stream, "cuda_stream", stream)
    if not isinstance(stream, int) or stream < 0:
        raise TypeError(f"stream must be an int CUstream handle, got {stream!r}")
    return stream


class Driver:
    """The driver calls the runtime makes, each checked.

    `lib` is a `ctypes.CDLL` of libcuda (its signatures are declared here) or
    any object with the same functions (the tests' fake driver)."""

    def __init__(self, lib):
        self._lib = lib
        if isinstance(lib, ctypes.CDLL):
            for name, argtypes in _SIGNATURES.items():
                try:
                    fn = getattr(lib, name)
                except AttributeError:
                    raise CudaError(name, None, "missing symbol",
                                    "libcuda does not export it; the driver "
                                    "is older than CUDA 12") from None
                fn.argtypes = argtypes
                fn.restype = ctypes.c_int
        self._initialized = False
        self._primary = {}   # device -> retained primary context
        self._devices = {}   # device -> DeviceInfo

    def _error_text(self, code):
        texts = []
        for getter in ("cuGetErrorName", "cuGetErrorString"):
            text = ctypes.c_char_p()
            rc = getattr(self._lib, getter)(code, ctypes.byref(text))
            texts.append(text.value.decode() if rc == CUDA_SUCCESS and text.value
                         else f"unknown CUresult {code}")
        return texts

    def call(self, function, *args, context=""):
        """Calls `function` and raises CudaError unless it returns CUDA_SUCCESS."""
        rc = getattr(self._lib, function)(*args)
        if rc != CUDA_SUCCESS:
            name, description = self._error_text(rc)
            raise CudaError(function, rc, name, description, context)

    def _init(self):
        if not self._initialized:
            self.call("cuInit", ctypes.c_uint(0))
            self._initialized = True

    def context(self, device=None, current=None):
        """The context to launch in and its device: the current context when
        there is one (on `device`, when given), else `device`'s primary
        context (device 0 by default), retained and made current. `current`
        is the current context when the caller has just asked for it."""
        self._init()
        if current is None:
            current = self.current_context()
        wanted = None
        if device is not None:
            handle = ctypes.c_int()
            self.call("cuDeviceGet", ctypes.byref(handle), ctypes.c_int(device))
            wanted = handle.value
        if current:
            on = ctypes.c_int()
            self.call("cuCtxGetDevice", ctypes.byref(on))
            if wanted is None or on.value == wanted:
                return current, on.value
        if wanted is None:
            handle = ctypes.c_int()
            self.call("cuDeviceGet", ctypes.byref(handle), ctypes.c_int(0))
            wanted = handle.value
        if wanted not in self._primary:
            primary = ctypes.c_void_p()
            self.call("cuDevicePrimaryCtxRetain", ctypes.byref(primary),
                      ctypes.c_int(wanted))
            self._primary[wanted] = primary.value
        self.call("cuCtxSetCurrent", ctypes.c_void_p(self._primary[wanted]))
        return self._primary[wanted], wanted

    def attribute(self, attribute, device):
        value = ctypes.c_int()
        self.call("cuDeviceGetAttribute", ctypes.byref(value),
                  ctypes.c_int(attribute), ctypes.c_int(device))
        return value.value

    def device_info(self, device):
        """Compute capability, SM count and opt-in shared memory per block."""
        if device not in self._devices:
            self._devices[device] = DeviceInfo(
                (self.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                 self.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)),
                self.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                self.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                               device))
        return self._devices[device]

    def load_module(self, image, context=""):
        module = ctypes.c_void_p()
        self.call("cuModuleLoadData", ctypes.byref(module), image, context=context)
        return module.value

    def unload_module(self, module):
        self.call("cuModuleUnload", ctypes.c_void_p(module))

    def function(self, module, name):
        function = ctypes.c_void_p()
        self.call("cuModuleGetFunction", ctypes.byref(function),
                  ctypes.c_void_p(module), name.encode(), context=f"for '{name}'")
        return function.value

    def set_function_attribute(self, function, attribute, value):
        self.call("cuFuncSetAttribute", ctypes.c_void_p(function),
                  ctypes.c_int(attribute), ctypes.c_int(value))

    def encode_tensor_map(self, args):
        """cuTensorMapEncodeTiled of a TensorMapArgs; the 128 descriptor bytes."""
        storage = ctypes.create_string_buffer(TENSOR_MAP_BYTES + TENSOR_MAP_ALIGNMENT)
        address = -(-ctypes.addressof(storage) // TENSOR_MAP_ALIGNMENT) * TENSOR_MAP_ALIGNMENT
        rank = args.rank
        self.call("cuTensorMapEncodeTiled", ctypes.c_void_p(address),
                  ctypes.c_int(args.data_type), ctypes.c_uint32(rank),
                  ctypes.c_void_p(args.global_address),
                  (ctypes.c_uint64 * rank)(*args.global_dim),
                  (ctypes.c_uint64 * (rank - 1))(*args.global_strides),
                  (ctypes.c_uint32 * rank)(*args.box_dim),
                  (ctypes.c_uint32 * rank)(*args.element_strides),
                  ctypes.c_int(args.interleave), ctypes.c_int(args.swizzle),
                  ctypes.c_int(args.l2_promotion), ctypes.c_int(args.oob_fill),
                  context=f"for the tensor map of '{args.operand}' ({args.describe()})")
        return ctypes.string_at(address, TENSOR_MAP_BYTES)

    def alloc_async(self, size, stream):
        pointer = ctypes.c_uint64()
        self.call("cuMemAllocAsync", ctypes.byref(pointer), ctypes.c_size_t(size),
                  ctypes.c_void_p(stream))
        return pointer.value

    def free_async(self, pointer, stream):
        self.call("cuMemFreeAsync", ctypes.c_uint64(pointer), ctypes.c_void_p(stream))

    def copy_to_device_async(self, destination, data, stream):
        # From pageable memory the copy is staged before the call returns, so
        # `data` may go away afterwards.
        source = ctypes.create_string_buffer(data, len(data))
        self.call("cuMemcpyHtoDAsync_v2", ctypes.c_uint64(destination),
                  ctypes.cast(source, ctypes.c_void_p), ctypes.c_size_t(len(data)),
                  ctypes.c_void_p(stream))

    def synchronize(self, stream=0):
        self.call("cuStreamSynchronize", ctypes.c_void_p(_stream_handle(stream)))

    def launch(self, function, grid, block, cluster, shared_bytes, stream, values,
               context="", programmatic=False):
        """cuLaunchKernelEx; `values` are the ctypes objects of the
        parameters, in order (kernelParams points at each)."""
        self.launch_prepared(PreparedLaunch(function, grid, block, cluster, shared_bytes,
                                            stream, values, programmatic), context)

    def launch_prepared(self, prepared, context=""):
        """cuLaunchKernelEx of a PreparedLaunch, as it was built: the one
        driver call of a remembered launch. `context` (a string, or a
        callable giving one, built only on failure) ends the error."""
        rc = self._lib.cuLaunchKernelEx(prepared.config_ref, prepared.function,
                                        prepared.params, None)
        if rc != CUDA_SUCCESS:
            name, description = self._error_text(rc)
            raise CudaError("cuLaunchKernelEx", rc, name, description,
                            context() if callable(context) else context)

    def current_context(self):
        """The calling thread's current CUcontext (0 for none): one
        cuCtxGetCurrent, the context query of a remembered launch."""
        if not self._initialized:
            self._init()
        current = ctypes.c_void_p()
        # Not a reused c_void_p: ctypes drops the GIL during the call, and
        # another thread's answer must not land in this one's.
        rc = self._lib.cuCtxGetCurrent(ctypes.byref(current))
        if rc != CUDA_SUCCESS:
            name, description = self._error_text(rc)
            raise CudaError("cuCtxGetCurrent", rc, name, description)
        return current.value or 0


class PreparedLaunch:
    """Everything cuLaunchKernelEx takes for one launch, built once: the
    CUlaunchConfig (with its cluster attribute, and with `programmatic` the
    programmatic stream serialization one: the kernel may start while the
    previous kernel of the stream finishes, and waits for it with
    griddepcontrol.wait before it reads global memory), the function and
    the kernelParams array. The config points at `attributes` and the array at
    each of `values`, so this object keeps all of them alive; whatever the
    values address on the device (a tensor-map block) its owner keeps."""

    __slots__ = ("values", "attributes", "config", "config_ref", "function", "params")

    def __init__(self, function, grid, block, cluster, shared_bytes, stream, values,
                 programmatic=False):
        self.values = tuple(values)
        self.attributes = (CUlaunchAttribute * 2)()
        count = 0
        if tuple(cluster) != (1, 1, 1):
            attribute = self.attributes[count]
            attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attribute.value.clusterDim.x = cluster[0]
            attribute.value.clusterDim.y = cluster[1]
            attribute.value.clusterDim.z = cluster[2]
            count += 1
        if programmatic:
            attribute = self.attributes[count]
            attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attribute.value.programmaticStreamSerializationAllowed = 1
            count += 1
        self.config = CUlaunchConfig(
            gridDimX=grid[0], gridDimY=grid[1], gridDimZ=grid[2],
            blockDimX=block[0], blockDimY=block[1], blockDimZ=block[2],
            sharedMemBytes=shared_bytes, hStream=stream,
            attrs=self.attributes if count else None, numAttrs=count)
        self.config_ref = ctypes.byref(self.config)
        self.function = ctypes.c_void_p(function)
        self.params = (ctypes.c_void_p * len(self.values))(
            *[ctypes.addressof(value) for value in self.values])


_driver = None


def default_library_path():
    """libcuda's path: `FA4_LIBCUDA`, else the loader's `libcuda.so.1`."""
    return os.environ.get("FA4_LIBCUDA") or "libcuda.so.1"


def driver():
    """The process-wide Driver; loads libcuda on the first call."""
    global _driver
    if _driver is None:
        path = default_library_path()
        try:
            lib = ctypes.CDLL(path)
        except OSError as err:
            raise CudaError(f"dlopen({path})", None, "OSError",
                            f"{err}; is the NVIDIA driver installed? "
                            "FA4_LIBCUDA names another libcuda") from None
        _driver = Driver(lib)
    return _driver


def set_driver(lib):
    """Uses `lib` (a CDLL of libcuda, or a fake with its functions) for all
    later launches; None goes back to loading libcuda on first use. Returns
    the Driver (or None)."""
    global _driver
    _driver = Driver(lib) if lib is not None else None
    return _driver


# ---------------------------------------------------------------------------
# Operands and tensor maps (pure).

Operand = namedtuple("Operand", "ptr shape element strides", defaults=(None,))
# A remembered launch: its grid, the tensor-map block (0: none) and the
# stream it was allocated on, and the PreparedLaunch whose values address it.
_Launch = namedtuple("_Launch", "grid block stream call workspace", defaults=(0,))
Operand.__doc__ = """A launch operand: device address, shape (outermost
first), element type ('bf16', 'f16', 'f32', 'e4m3', 'i32') and strides in
elements (outermost first; None for contiguous)."""

#: The sequence tables of packed (variable-length) batches: int32 vectors.
TABLES = ("cu_seqlens_q", "cu_seqlens_k", "seqused_k")
#: The tables of a KV cache that a dense batch reads: the keys each batch
#: uses (int32 [B]) and, for paged K/V, the page table (int32 [B, max_pages]).
KV_TABLES = ("seqused_k", "page_table")
# Every int32 table: read through a plain pointer, row-major.
_INT_TABLES = TABLES + ("page_table",)
_ACTIVATIONS = ("query", "key", "value", "output")
#: The dequantization factors of an FP8 kernel compiled with descale: f32
#: [B, Hkv] each (flash-attn 3's q_descale, k_descale, v_descale).
DESCALES = ("q_descale", "k_descale", "v_descale")
#: The operands of a rotary embedding (RoPE) fused into a dense batch's
#: kernel: the table cos_sin f32 [P, R] (row p: the R / 2 cosines, then the
#: R / 2 sines of position p) and each query row's position, i32 [B, Sq]
#: (clamped into [0, P) by the kernel).
ROPE = ("cos_sin", "positions")
#: The kernel reads the table in 16-byte pieces (four cosines, four sines).
ROPE_TABLE_ALIGNMENT = 16
#: Pairs are rotated four at a time (a 16-byte piece of a 16-bit Q row):
#: the first rotated column and the rotated columns are multiples of this.
ROPE_GRANULE = 8
Rope = namedtuple("Rope", "start columns output")
Rope.__doc__ = """A kernel's rotary embedding: Q's column pairs (start + 2k,
start + 2k + 1), k < columns / 2, rotated by each query row's angles
(`columns` is cos_sin's dimension 1, R); with `output` O's same pairs
rotated back."""


def canonical_element(element):
    """The runtime's spelling of an element: 'f8E4M3FN' (MLIR's, as
    operands are written) is 'e4m3'; others as they are."""
    return ELEMENT_ALIASES.get(element, element)


def _dimension_names(name, varlen, paged=False):
    """What the dimensions of operand `name` are, outermost first (None
    for the tensors score and mask regions read, of any rank); `paged`: K
    and V are pages [pages, page_size, H, D]."""
    if name in _ACTIVATIONS:
        if paged and name in ("key", "value"):
            return ("pages", "page_size", "heads", "head_dim")
        if varlen:
            return ("total", "heads", "head_dim")
        return ("batch", "seq", "heads", "head_dim")
    if name == "lse":
        return ("heads_q", "total_q") if varlen else ("batch", "heads", "seq_q")
    if name == "sink":
        return ("heads_q",)
    if name == "seqused_k":
        return ("batch",)
    if name == "page_table":
        return ("batch", "max_pages")
    if name in DESCALES:
        return ("batch", "heads_kv")
    if name == "cos_sin":
        return ("positions", "rotary_dims")
    if name == "positions":
        return ("total_q",) if varlen else ("batch", "seq_q")
    if name in TABLES:
        return ("batch + 1",)
    return None


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


class TensorMapArgs(namedtuple("TensorMapArgs", [
        "operand", "data_type", "rank", "global_address", "global_dim",
        "global_strides", "box_dim", "element_strides", "interleave",
        "swizzle", "l2_promotion", "oob_fill"])):
    """The arguments of one cuTensorMapEncodeTiled call, innermost
    dimension first as the driver takes them; strides in bytes."""

    def describe(self):
        return (f"dims {list(self.global_dim)}, strides {list(self.global_strides)} B, "
                f"box {list(self.box_dim)}, address {self.global_address:#x}")


_Encoding = namedtuple("_Encoding",
                       "element esize box swizzle l2_promotion oob_fill key_major")


def _tensor_map_encoding(entry, name):
    """What a `tensor_maps` entry fixes, checked; raises ManifestError."""
    where = f"tensor map of '{name}'"
    element = entry.get("element")
    if element not in TENSOR_MAP_DATA_TYPES:
        raise ManifestError(f"{where}: element {element!r} is not one of "
                            f"{sorted(TENSOR_MAP_DATA_TYPES)}")
    esize = ELEMENT_BYTES[element]
    box = entry.get("box")
    if (not isinstance(box, list) or not 1 <= len(box) <= 5
            or not all(isinstance(b, int) and 1 <= b <= 256 for b in box)):
        raise ManifestError(f"{where}: box {box!r} must be 1 to 5 sizes in [1, 256]")
    swizzle = entry.get("swizzle")
    if swizzle not in SWIZZLES:
        raise ManifestError(f"{where}: swizzle {swizzle!r} is not one of {sorted(SWIZZLES)}")
    inner_bytes = box[0] * esize
    span = SWIZZLE_SPAN_BYTES[swizzle]
    if inner_bytes % 16 or (span is not None and inner_bytes > span):
        raise ManifestError(f"{where}: the inner box of {inner_bytes} bytes must be a "
                            f"multiple of 16 and fit the {swizzle} swizzle")
    oob = entry.get("oob_fill", "zero")
    if oob not in OOB_FILLS:
        raise ManifestError(f"{where}: oob_fill {oob!r} is not one of {sorted(OOB_FILLS)}")
    l2 = entry.get("l2_promotion", DEFAULT_L2_PROMOTION)
    if l2 not in L2_PROMOTIONS:
        raise ManifestError(f"{where}: l2_promotion {l2!r} is not one of "
                            f"{sorted(L2_PROMOTIONS)}")
    key_major = entry.get("key_major", False)
    if not isinstance(key_major, bool):
        raise ManifestError(f"{where}: key_major must be a boolean, got {key_major!r}")
    if key_major and len(box) != 4:
        raise ManifestError(f"{where}: a key-major map is over a [B, S, H, D] tensor (or a "
                            f"packed [T, H, D] one), a box of 4 sizes, got box {box!r}")
    return _Encoding(element, esize, tuple(box), SWIZZLES[swizzle], L2_PROMOTIONS[l2],
                     OOB_FILLS[oob], key_major)


def tensor_map_args(entry, operand, name=None):
    """The cuTensorMapEncodeTiled arguments for a manifest `tensor_maps`
    entry over `operand` (an Operand of layout [B, S, H, D], or [T, H, D]
    for a map marked `varlen`); raises
    ValueError when TMA cannot address the tensor (ManifestError when the
    entry itself is unusable). A map marked `key_major` (an FP8 V)
    has the dimensions (S, H, D, B), innermost first: S must have unit
    stride."""
    operand = Operand(*operand)
    operand = operand._replace(element=canonical_element(operand.element))
    name = name or entry.get("operand", "operand")
    encoding = _tensor_map_encoding(entry, name)
    if operand.element != encoding.element:
        raise ValueError(f"{name}: element {operand.element}, the tensor map wants "
                         f"{encoding.element}")
    esize, box = encoding.esize, encoding.box
    shape = tuple(int(s) for s in operand.shape)
    rank = len(shape)
    strides = (tuple(int(s) for s in operand.strides) if operand.strides is not None
               else _contiguous_strides(shape))
    if len(strides) != rank:
        raise ValueError(f"{name}: {len(strides)} strides for shape {list(shape)}")

    varlen = bool(entry.get("varlen", False))
    # A packed [T, H, D] tensor's map has one more dimension, of size 1 (see
    # below), as the dense [B, S, H, D] one.
    if len(box) != rank + varlen:
        raise ValueError(f"{name}: a rank-{len(box)} tensor map box {list(box)} over a "
                         f"rank-{rank} {'packed ' if varlen else ''}operand of shape "
                         f"{list(shape)}")

    # The operand's dimensions (outermost first) in the map's order, innermost
    # first: (D, H, S, B) for [B, S, H, D]; key-major (S, H, D, B), or packed
    # (T, H, D), since the PV MMA reads an 8-bit B operand (V of P V) only
    # K-major, K being the keys.
    if encoding.key_major:
        order = (0, 1, 2) if varlen else (1, 2, 3, 0)
    else:
        order = tuple(reversed(range(rank)))
    dims = tuple(shape[d] for d in order)
    inner_first = tuple(strides[d] for d in order)
    # A dimension of size 1 has no stride that matters.
    if inner_first[0] != 1 and dims[0] != 1:
        if encoding.key_major:
            layout = ("dimension 0 of [T, H, D]: memory laid out [H, D, T]" if varlen
                      else "dimension 1 of [B, S, H, D]: memory laid out [B, H, D, S]")
            raise ValueError(f"{name}: a key-major tensor map needs unit stride in the "
                             f"sequence dimension ({layout}), got strides {list(strides)} "
                             f"for shape {list(shape)}")
        raise ValueError(f"{name}: the innermost dimension must be contiguous (stride 1) "
                         f"for TMA, got strides {list(strides)}")
    byte_strides = tuple(s * esize for s in inner_first[1:])
    if varlen:
        # (D, H, T rows, 1), key-major (T, H, D, 1): the kernel addresses row
        # j of a sequence starting at packed row s as row s + j.
        dims += (1,)
        byte_strides += (byte_strides[-1],)
    if not all(1 <= size <= 2 ** 32 for size in dims):
        raise ValueError(f"{name}: TMA needs every dimension in [1, 2^32], got "
                         f"shape {list(shape)}")
    if operand.ptr % 16:
        raise ValueError(f"{name}: TMA needs a 16-byte aligned global address, got "
                         f"{operand.ptr:#x} ({operand.ptr % 16} bytes past a 16-byte "
                         f"boundary)")
    for i, stride in enumerate(byte_strides[:rank - 1]):
        if stride % 16 or not 0 < stride < 2 ** 40:
            raise ValueError(f"{name}: TMA needs byte strides that are positive multiples "
                             f"of 16 below 2^40, got {stride} bytes for dimension "
                             f"{order[i + 1]} (strides {list(strides)} elements of "
                             f"{esize} byte{'s' if esize > 1 else ''}"
                             f"{'; a key-major map' if encoding.key_major else ''})")
    return TensorMapArgs(
        operand=name, data_type=TENSOR_MAP_DATA_TYPES[encoding.element],
        rank=len(box), global_address=operand.ptr, global_dim=dims,
        global_strides=byte_strides, box_dim=box, element_strides=(1,) * len(box),
        interleave=CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle=encoding.swizzle,
        l2_promotion=encoding.l2_promotion, oob_fill=encoding.oob_fill)


# ---------------------------------------------------------------------------
# Manifests and kernels.

# Window sides past this reach no key of a sequence the kernels' 32-bit
# coordinates hold: they are unbounded (fa4-tile writes them as -1).
MAX_WINDOW_BOUND = (1 << 31) - 257


def _is_int(value):
    """An integer that is not a bool (numpy's too)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def kv_splits_for(sm_count, tiles, kv_blocks):
    """The planner's split-KV rule (fa4::splitsFor) for sizes known at run
    time, on a device of `sm_count` SMs: more than one split only where
    `tiles` work tiles fill at most a quarter of the SMs and each has at
    least 8 KV blocks; then as many as fit one wave of the SMs (tiles x splits <=
    SMs) with at least 4 blocks each, at most 64."""
    if tiles <= 0 or 4 * tiles > sm_count or kv_blocks < 8:
        return 1
    return max(1, min(sm_count // tiles, kv_blocks // 4, 64))


def effective_window(window, causal=False):
    """(left, right) as kernels record it: -1 for an unbounded side (any
    negative bound, or one past MAX_WINDOW_BOUND), right 0 when causal.
    Raises ValueError for a window that is not two integers or a causal
    one with a right bound other than 0 or -1."""
    if (not isinstance(window, (tuple, list)) or len(window) != 2
            or not all(_is_int(bound) for bound in window)):
        raise ValueError(f"window must be (left, right) integers, got {window!r}")
    left, right = (int(bound) for bound in window)
    left, right = (-1 if b < 0 or b > MAX_WINDOW_BOUND else b for b in (left, right))
    if causal:
        if right > 0:
            raise ValueError(f"causal attention needs window right bound 0 or -1, "
                             f"got {right}")
        right = 0
    return (left, right)


Argument = namedtuple("Argument", "name kind value")
Argument.__doc__ = """One kernel parameter: `value` is an int (i32, pointer),
a float (f32) or a TensorMapArgs (tensor_map)."""

_TENSOR_MAP_SOURCE = re.compile(r"tensor_maps\[(\d+)\]")
_SHAPE_SOURCE = re.compile(r"(\w+)\.shape\[(\d+)\]")
_DATA_SOURCE = re.compile(r"(\w+)\.data")
# Split-KV's workspace, which the runtime allocates per launch.
_WORKSPACE_SOURCES = ("workspace.partials", "workspace.counters")
_ARCH = re.compile(r"sm_(\d+)(\d)([af]?)")


def arch_of_capability(capability):
    """The arch-specific target of a compute capability: (10, 0) -> 'sm_100a'."""
    major, minor = capability
    return f"sm_{major}{minor}a"


def _capability_of_arch(arch):
    match = _ARCH.fullmatch(arch)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _rope_problem(rope):
    """A problem's rotary embedding as kernels record it: None for none
    (None, False, ()), else Rope(start, columns, output) from a Rope or a
    (start, columns, output) sequence; raises ValueError for another."""
    if rope is None or rope is False or (isinstance(rope, tuple) and not rope):
        return None
    if (not isinstance(rope, (tuple, list)) or len(rope) != 3
            or not _is_int(rope[0]) or not _is_int(rope[1])
            or not isinstance(rope[2], (bool, numbers.Integral))):
        raise ValueError(f"rope must be (start, columns, output) (integers and a bool) or "
                         f"None, got {rope!r}")
    return Rope(int(rope[0]), int(rope[1]), bool(rope[2]))


def _rope_text(rope):
    """A rotary embedding as messages say it: 'none', or 'start S columns
    R' (and 'output' where O is rotated back)."""
    if not rope:
        return "none"
    return f"start {rope.start} columns {rope.columns}{' output' if rope.output else ''}"


def _ints(value, what, length=None):
    if (not isinstance(value, list) or (length and len(value) != length)
            or not all(_is_int(v) for v in value)):
        raise ManifestError(f"'{what}' must be a list of{f' {length}' if length else ''} "
                            f"integers, got {value!r}")
    return tuple(value)


class Kernel:
    """One compiled kernel: its manifest and, once launched, its module.

    Reading and checking the manifest, choosing, the grid and the parameters
    need no GPU; `launch` loads libcuda."""

    def __init__(self, manifest, directory=".", source=None):
        self.manifest = manifest
        self.directory = Path(directory)
        self.source = source or "<manifest>"
        self._functions = {}   # context -> (module, function)
        # (context, stream, operands) -> _Launch, least recently used first.
        self._launches = OrderedDict()
        self._workspaces = {}  # split-KV: (context, stream) -> (address, counters, partials)
        try:
            self._parse()
        except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as err:
            if isinstance(err, ManifestError):
                raise
            raise ManifestError(f"malformed manifest: {type(err).__name__}: {err}") from None

    @classmethod
    def load(cls, json_path):
        """Reads `<name>.json`; the cubin and PTX are found next to it."""
        path = Path(json_path)
        try:
            manifest = json.loads(path.read_text())
        except (ValueError, RecursionError) as err:
            # JSONDecodeError and UnicodeDecodeError are ValueErrors.
            raise ManifestError(f"{path}: not JSON: {err}") from None
        if not isinstance(manifest, dict):
            raise ManifestError(f"{path}: not a launch manifest (a JSON object)")
        try:
            return cls(manifest, path.parent, str(path))
        except ManifestError as err:
            raise ManifestError(f"{path}: {err}") from None

    # -- the manifest ------------------------------------------------------

    def _parse(self):
        m = self.manifest
        missing = [key for key in ("kernel", "arch", "block", "dynamic_smem_bytes",
                                   "grid", "operands", "params", "tensor_maps")
                   if key not in m]
        if missing:
            raise ManifestError(f"not a launch manifest: missing {', '.join(missing)}")
        for key in ("kernel", "arch"):
            if not isinstance(m[key], str) or not m[key]:
                raise ManifestError(f"'{key}' must be a non-empty string, got {m[key]!r}")
        self.name = m["kernel"]
        self.arch = m["arch"]
        self.block = _ints(m["block"], "block", 3)
        if not all(1 <= n <= 1024 for n in self.block):
            raise ManifestError(f"block {list(self.block)}: each size must lie in [1, 1024]")
        files = m.get("files", {})
        if not isinstance(files, dict) or not all(isinstance(f, str)
                                                  for f in files.values()):
            raise ManifestError(f"'files' must map kinds to file names, got {files!r}")
        window = m.get("window", [-1, -1])
        if (not isinstance(window, list) or len(window) != 2
                or not all(_is_int(b) and b >= -1 for b in window)):
            raise ManifestError(f"'window' must be [left, right] integers >= -1, got "
                                f"{window!r}")
        for key in ("scale", "softcap"):
            value = m.get(key)
            if value is not None and not (isinstance(value, (int, float))
                                          and not isinstance(value, bool)
                                          and math.isfinite(value) and value > 0):
                raise ManifestError(f"'{key}' must be a positive, finite number, got "
                                    f"{value!r}")
        self.cluster = _ints(m.get("cluster", [1, 1, 1]), "cluster", 3)
        #: Whether the kernel waits for its prerequisite grid before it
        #: reads global memory (griddepcontrol): launched with programmatic
        #: stream serialization unless FA4_PDL=0.
        self.programmatic_launch = m.get("programmatic_launch", False)
        if not isinstance(self.programmatic_launch, bool):
            raise ManifestError(f"'programmatic_launch' must be a boolean, got "
                                f"{self.programmatic_launch!r}")
        if self.cluster[1:] != (1, 1) or self.cluster[0] < 1:
            raise ManifestError(f"cluster {list(self.cluster)}: the grid is 1-D, so only "
                                "[n, 1, 1] clusters can divide it")
        self.dynamic_smem_bytes = int(m["dynamic_smem_bytes"])
        self.static_smem_bytes = int(m.get("ptxas", {}).get("static_smem_bytes", 0))
        if not 0 <= self.dynamic_smem_bytes < 2 ** 31 or not 0 <= self.static_smem_bytes < 2 ** 31:
            raise ManifestError(f"shared memory of {self.dynamic_smem_bytes} dynamic and "
                                f"{self.static_smem_bytes} static bytes is out of range")
        grid = m["grid"]
        if grid.get("rule") not in ("persistent", "persistent_varlen"):
            raise ManifestError(f"grid rule {grid.get('rule')!r} is unknown (the runtime "
                                "knows 'persistent' and 'persistent_varlen')")
        #: Whether the kernel takes packed sequences of variable lengths.
        self.varlen = grid["rule"] == "persistent_varlen"
        for key in ("head_blocks", "query_rows_per_cta"):
            if not _is_int(grid.get(key)) or grid[key] < 1:
                raise ManifestError(f"the {grid['rule']} grid rule needs a positive '{key}'")
        self.head_blocks = grid["head_blocks"]
        self.query_rows_per_cta = grid["query_rows_per_cta"]
        #: Q tiles in flight per CTA (the plan's qStages; None where the
        #: manifest's plan does not say): each holds query_rows_per_cta /
        #: q_stages rows.
        stages = re.search(r"\bqStages = (\d+)", str(m.get("plan", "")))
        self.q_stages = int(stages.group(1)) if stages else None
        #: How the PV product takes P (the plan's pPrecision): 'single' (P
        #: rounded once) or 'hi_lo' (P and its rounding residual, more
        #: precise and slower).
        precision = re.search(r"\bpPrecision = (\w+)", str(m.get("plan", "")))
        self.p_precision = precision.group(1) if precision else "single"
        #: sm_100a: softmax warpgroups sharing each Q tile, each over every
        #: other KV block (the plan's kvInterleave; 1 where the plan does not
        #: say): 2 with one Q stage, a work tile of query_rows_per_cta rows.
        interleave = re.search(r"\bkvInterleave = (\d+)", str(m.get("plan", "")))
        self.kv_interleave = int(interleave.group(1)) if interleave else 1
        #: sm_100a: threads of a softmax warpgroup sharing each query row,
        #: each over its share of a KV block's keys (the plan's sharedKey;
        #: 1 where the plan does not say): Q stages of 128 / shared_key rows.
        shares = re.search(r"\bsharedKey = (\d+)", str(m.get("plan", "")))
        self.shared_key = int(shares.group(1)) if shares else 1
        #: The kernel family (the plan's family): 'prefill', or 'decode'
        #: (sm_100a swap-AB: Q tiles of 16 or 32 rows as the MMAs' N).
        family = re.search(r"\bfamily = (\w+)", str(m.get("plan", "")))
        self.family = family.group(1) if family else "prefill"
        #: Split-KV: CTAs per work tile (1: none) and the workspace per work
        #: tile (f32 partial-row words, i32 counters that start at 0). A
        #: cluster split (its splits are one cluster's CTAs) has none.
        self.kv_splits, self.split_words, self.split_counters = 1, 0, 0
        if "split_kv" in m:
            split = m["split_kv"]
            fields = ("splits", "partial_words_per_tile", "counters_per_tile")
            in_cluster = self.cluster[0] > 1
            if (not isinstance(split, dict)
                    or not all(_is_int(split.get(f)) for f in fields)
                    or split["splits"] < 2 or self.varlen
                    or (in_cluster and (split["splits"] != self.cluster[0]
                                        or split["partial_words_per_tile"] != 0
                                        or split["counters_per_tile"] != 0))
                    or (not in_cluster and (split["partial_words_per_tile"] < 1
                                            or split["counters_per_tile"] < 1))):
                raise ManifestError(f"split_kv {split!r}: needs {', '.join(fields)} "
                                    "(splits at least 2; a workspace, or with a cluster "
                                    "of the splits none) and a dense batch")
            self.kv_splits, self.split_words, self.split_counters = (
                split[f] for f in fields)

        self.operands = {}
        # K and V are pages when there is a page table (named before or
        # after them).
        paged = any(isinstance(entry, dict) and entry.get("name") == "page_table"
                    for entry in m["operands"])
        for entry in m["operands"]:
            name = entry["name"]
            # The captures of score and mask regions: any rank, integers too.
            capture = _CAPTURE_NAME.fullmatch(name) is not None
            elements = (CAPTURE_ELEMENT_BYTES if capture
                        else {"i32": 4} if name in _INT_TABLES + ROPE[1:]
                        else {"f32": 4} if name in DESCALES + ROPE[:1] else ELEMENT_BYTES)
            element = canonical_element(entry.get("element"))
            if element not in elements:
                raise ManifestError(f"operand '{name}': element {entry.get('element')!r} "
                                    f"is not one of {sorted(elements)}")
            shape = _ints(entry["shape"], f"operands.{name}.shape")
            dims = _dimension_names(name, self.varlen, paged)
            if not capture and dims is None:
                raise ManifestError(f"operand '{name}' is not one the runtime knows")
            if dims is not None and len(shape) != len(dims):
                raise ManifestError(f"operand '{name}' must have rank {len(dims)} "
                                    f"([{', '.join(dims)}]), got {len(shape)}")
            self.operands[name] = (element, shape)
        needed = _ACTIVATIONS + (TABLES[:2] if self.varlen else ())
        missing = [name for name in needed if name not in self.operands]
        if missing:
            raise ManifestError(f"needs operand{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(n) for n in missing)}")
        # seqused_k is also a dense KV cache's (the keys each batch uses).
        if not self.varlen and any(name in self.operands for name in TABLES[:2]):
            raise ManifestError("sequence tables (cu_seqlens_q, ...) belong to the "
                                "persistent_varlen grid rule, the manifest's is persistent")
        self._check_elements()
        self._rope = self._parse_rope(m)
        if paged:
            page_size = self.operands["key"][1][1]
            if page_size < 1 or page_size & (page_size - 1):
                raise ManifestError(f"paged K/V needs a static power-of-two page size as "
                                    f"key dimension 1 (page_size), got {page_size}")
            if self.operands["value"][1][1] != page_size:
                raise ManifestError(f"value's page size {self.operands['value'][1][1]} is "
                                    f"not key's, {page_size}")

        self.tensor_maps = list(m["tensor_maps"])
        for index, entry in enumerate(self.tensor_maps):
            operand = entry.get("operand")
            if operand not in self.operands:
                raise ManifestError(f"tensor_maps[{index}] names operand {operand!r} the "
                                    "manifest does not list")
            encoding = _tensor_map_encoding(entry, operand)
            # Packed sequences' maps are packed, but for a paged K or V.
            packed = self.varlen and not (paged and operand in ("key", "value"))
            if len(encoding.box) != len(self.operands[operand][1]) + packed:
                raise ManifestError(f"tensor_maps[{index}]: box {list(encoding.box)} does "
                                    f"not match the rank of '{operand}'")
            if encoding.element != self.operands[operand][0]:
                raise ManifestError(f"tensor_maps[{index}]: element {encoding.element}, "
                                    f"operand '{operand}' is {self.operands[operand][0]}")
            if entry.get("varlen", False) and operand not in _ACTIVATIONS:
                raise ManifestError(f"tensor_maps[{index}]: a packed map over '{operand}', "
                                    "which is not a packed [T, H, D] tensor")
            if bool(entry.get("varlen", False)) != packed:
                raise ManifestError(f"tensor_maps[{index}]: "
                                    f"{'a packed' if entry.get('varlen') else 'a dense'} map "
                                    f"over '{operand}' under the {m['grid']['rule']} grid "
                                    f"rule{' (paged K/V)' if paged else ''}")
            if encoding.key_major and operand != "value":
                raise ManifestError(f"tensor_maps[{index}]: a key-major map over "
                                    f"'{operand}'; only V's (the B operand of P V) is")

        # Each param resolved once: (name, kind, how to get its value).
        self.params = []
        self._float_sources = {}  # f32 param name -> manifest source
        for param in m["params"]:
            name, kind, source = param.get("name"), param.get("kind"), param.get("source", "")
            if kind == "tensor_map" and (match := _TENSOR_MAP_SOURCE.fullmatch(source)):
                ref = int(match.group(1))
                if ref >= len(self.tensor_maps):
                    raise ManifestError(f"param '{name}': {source} is past the "
                                        f"{len(self.tensor_maps)} tensor maps")
            elif kind == "i32" and (match := _SHAPE_SOURCE.fullmatch(source)):
                ref = (match.group(1), int(match.group(2)))
                if (ref[0] not in self.operands
                        or ref[1] >= len(self.operands[ref[0]][1])):
                    raise ManifestError(f"param '{name}': no operand dimension {source}")
            elif kind == "f32" and source in m:
                if not isinstance(m[source], (int, float)) or isinstance(m[source], bool):
                    raise ManifestError(f"param '{name}': manifest key '{source}' is not "
                                        "a number")
                ref = float(m[source])
                self._float_sources[name] = source
            elif kind == "pointer" and (match := _DATA_SOURCE.fullmatch(source)):
                ref = match.group(1)
                if ref not in self.operands:
                    raise ManifestError(f"param '{name}': no operand '{ref}'")
            elif kind == "pointer" and source in _WORKSPACE_SOURCES and self.kv_splits > 1:
                kind, ref = "workspace", source
            else:
                raise ManifestError(f"param '{name}': cannot resolve kind {kind!r} from "
                                    f"source {source!r}")
            self.params.append((name, kind, ref))

    def _check_elements(self):
        """Q, K and V share an element; O has it too, or for 8-bit inputs
        a 16-bit one; descales come in threes, of 8-bit kernels only."""
        element = self.operands["query"][0]
        for name in ("key", "value"):
            if self.operands[name][0] != element:
                raise ManifestError(f"operand '{name}' is {self.operands[name][0]}, query "
                                    f"{element}: Q, K and V share an element")
        output = self.operands["output"][0]
        eight_bit = element in EIGHT_BIT_ELEMENTS
        if output not in (("bf16", "f16") if eight_bit else (element,)):
            raise ManifestError(f"operand 'output' is {output}, query {element}: the output "
                                "is the inputs' element, bf16 or f16 for 8-bit inputs")
        given = [name for name in DESCALES if name in self.operands]
        if given and not eight_bit:
            raise ManifestError(f"descale operands ({', '.join(given)}) dequantize 8-bit "
                                f"inputs; the query is {element}")
        if given and len(given) != len(DESCALES):
            missing = [name for name in DESCALES if name not in given]
            raise ManifestError(f"descale operands: {', '.join(given)} without "
                                f"{', '.join(missing)} (a kernel takes all three or none)")

    def _parse_rope(self, m):
        """The manifest's `rope` entry, checked against the operands
        cos_sin [P, R] and positions [B, Sq] (all three or none): a Rope,
        or None."""
        given = [name for name in ROPE if name in self.operands]
        rope = m.get("rope")
        if rope is None:
            if given:
                raise ManifestError(f"operand{'s' if len(given) > 1 else ''} "
                                    f"{', '.join(repr(n) for n in given)} without a 'rope' "
                                    "entry (start, columns, output)")
            return None
        if (not isinstance(rope, dict) or not _is_int(rope.get("start"))
                or not _is_int(rope.get("columns"))
                or not isinstance(rope.get("output"), bool)):
            raise ManifestError(f"'rope' must be {{start, columns: integers, output: a "
                                f"boolean}}, got {rope!r}")
        if len(given) != len(ROPE):
            raise ManifestError(f"'rope' needs operands 'cos_sin' [positions, rotary_dims] "
                                f"and 'positions' [batch, seq_q] ([total_q] packed); the "
                                f"manifest lists "
                                f"{' and '.join(repr(n) for n in given) or 'neither'}")
        start, columns, output = rope["start"], rope["columns"], rope["output"]
        table = self.operands["cos_sin"][1][1]
        if columns != table:
            raise ManifestError(f"rope columns {columns} is not cos_sin's dimension 1 "
                                f"(rotary_dims), {table}")
        granule = ROPE_GRANULE
        if columns < granule or columns % granule or start < 0 or start % granule:
            raise ManifestError(f"rope start {start} and columns {columns} must be "
                                f"multiples of {granule}, columns positive (pairs are "
                                "rotated four at a time)")
        for name in ("query",) + (("output",) if output else ()):
            depth = self.operands[name][1][-1]
            if depth != -1 and start + columns > depth:
                raise ManifestError(f"rope rotates columns [{start}, {start + columns}) of "
                                    f"{name}, whose head dim is {depth}")
        if self.element in EIGHT_BIT_ELEMENTS:
            raise ManifestError(f"rope rotates 16-bit queries; the query is {self.element}")
        return Rope(start, columns, output)

    # What the kernel computes, for choosing it.

    @property
    def element(self):
        """The inputs' (Q, K, V) element: 'bf16', 'f16' or 'e4m3'."""
        return self.operands["query"][0]

    @property
    def output_element(self):
        """O's element: the inputs' for 16-bit ones, 'bf16' or 'f16' for
        8-bit ones."""
        return self.operands["output"][0]

    @property
    def descale(self):
        """Whether the kernel takes the FP8 dequantization factors q_descale,
        k_descale and v_descale (f32 [B, Hkv] each)."""
        return "q_descale" in self.operands

    @property
    def key_major(self):
        """Whether V's tensor map is key-major: V [B, Skv, Hkv, Dv] with a
        unit-stride Skv (memory [B, Hkv, Dv, Skv]), as FP8 kernels on
        sm_90a read it."""
        return any(entry.get("key_major", False) for entry in self.tensor_maps
                   if entry.get("operand") == "value")

    @property
    def heads_q(self):
        return self.operands["query"][1][-2]

    @property
    def heads_kv(self):
        return self.operands["key"][1][-2]

    @property
    def head_dim(self):
        """Q's and K's head dim (Dqk)."""
        return self.operands["query"][1][-1]

    @property
    def head_dim_v(self):
        """V's and O's head dim (Dv): the head dim unless the kernel was
        compiled for a narrower or wider V (e.g. Dqk 192, Dv 128)."""
        return self.operands["value"][1][-1]

    @property
    def seqused_k(self):
        """Whether the kernel takes the keys each sequence (varlen) or each
        batch (a dense KV cache) uses."""
        return "seqused_k" in self.operands

    @property
    def paged(self):
        """Whether the kernel reads K and V [pages, page_size, Hkv, D]
        through a page table [B, max_pages]."""
        return "page_table" in self.operands

    @property
    def page_size(self):
        """The keys of one KV page (K's dimension 1) of a paged kernel, else
        None."""
        return self.operands["key"][1][1] if self.paged else None

    @property
    def kvcache(self):
        """Whether the kernel reads a KV cache for a dense batch: paged K/V
        or a dense one with seqused_k (`fa4.torch.attention_with_kvcache`)."""
        return not self.varlen and (self.seqused_k or self.paged)

    @property
    def causal(self):
        return bool(self.manifest.get("causal", False))

    @property
    def scale(self):
        return self.manifest.get("scale")

    @property
    def window(self):
        """(left, right) keys around the bottom-right diagonal a query row
        sees, -1 where unbounded; causal is (-1 or left, 0)."""
        left, right = self.manifest.get("window", (-1, -1))
        return (left, 0 if self.causal else right)

    @property
    def softcap(self):
        """The softcap (scores become softcap * tanh(s / softcap)), or None."""
        return self.manifest.get("softcap")

    @property
    def lse(self):
        return "lse" in self.operands

    @property
    def captures(self):
        """The names of the tensors the kernel's score and mask regions
        read ('capture0', ...), in order; empty without regions."""
        return sorted((n for n in self.operands if _CAPTURE_NAME.fullmatch(n)),
                      key=lambda n: int(n[len("capture"):]))

    @property
    def regions(self):
        """Which of the attention's regions ('score', 'mask') the kernel
        inlines; a kernel with regions computes only its own problem."""
        return tuple(self.manifest.get("regions", ()))

    @property
    def sink(self):
        """Whether the kernel takes attention sinks (a logit per query head
        joining each row's softmax denominator)."""
        return "sink" in self.operands

    @property
    def rope(self):
        """The rotary embedding the kernel applies to Q (and, with
        `output`, undoes on O): None, or Rope(start, columns, output) from
        the manifest's `rope` entry. It takes the operands cos_sin f32
        [P, columns] and positions i32 [B, Sq] (packed sequences: [Tq])."""
        return self._rope

    def __repr__(self):
        output = ("" if self.output_element == self.element
                  else f" output {self.output_element}")
        return (f"<fa4 kernel {self.name} {self.arch} {self.element}{output} heads "
                f"{self.heads_q}/{self.heads_kv} head_dim {self.head_dim}"
                f"{'' if self.head_dim_v == self.head_dim else f' head_dim_v {self.head_dim_v}'}"
                f" causal "
                f"{self.causal}{self._masking_repr()} scale {self.scale} lse {self.lse}>")

    def _masking_repr(self):
        window = "" if self.window in ((-1, -1), (-1, 0)) else f" window {self.window}"
        return (window + (f" softcap {self.softcap}" if self.softcap else "")
                + (" sink" if self.sink else "")
                + (" descale" if self.descale else "")
                + (" key-major V" if self.key_major else "")
                + (" varlen" if self.varlen else "")
                + (" seqused_k" if self.seqused_k else "")
                + (f" paged {self.page_size}" if self.paged else "")
                + (f" rope {_rope_text(self.rope)}" if self.rope else ""))

    def mismatches(self, dtype=None, heads_q=None, heads_kv=None, head_dim=None,
                   causal=None, scale=None, lse=None, arch=None, window=None,
                   softcap=None, sink=None, varlen=None, seqused_k=None, head_dim_v=None,
                   page_size=None, kv_splits=None, descale=None, output_dtype=None,
                   q_stages=None, rope=None, p_precision=None, kv_interleave=None):
        """Why this kernel does not compute the problem: a list of reasons,
        empty when it does. Arguments left None are not compared; -1 in the
        manifest accepts any size; any scale matches and softcap only
        whether there is one (0 is none): the kernel takes their values as
        arguments (`scalars`); window is (left, right) with -1 unbounded,
        compared with causal folded in (see `effective_window`); sink
        whether it takes attention sinks; varlen whether the batch is packed
        sequences of variable lengths and seqused_k whether it gives the keys
        each sequence (or, dense, each batch) uses; head_dim_v is V's head
        dim (None: head_dim's, when head_dim is given); page_size the keys
        of a KV page when K and V are read through a page table (0 or False:
        not paged); kv_splits the CTAs that share each work tile's KV
        blocks (1: no split-KV); dtype is the inputs' element ('e4m3' for
        FP8) and output_dtype O's (the inputs' for 16-bit ones); descale
        whether the kernel takes FP8 dequantization factors; q_stages the
        Q tiles in flight per CTA (a choice of speed: any computes the
        problem); rope the rotary embedding of Q (and O), compared
        exactly: False for none, else (start, columns, output) (a Rope);
        p_precision how the PV product takes P ('single' or 'hi_lo', a
        choice of precision); kv_interleave the softmax warpgroups sharing
        each Q tile (sm_100a's 2, else 1; a choice of speed like q_stages);
        arch is the device's ('sm_100a' for 10.0), which the
        kernel's arch must run on (`runs_on`)."""
        reasons = []

        def compare(what, have, want):
            if want is not None and have != -1 and have != want:
                reasons.append(f"{what} is {have}, not {want}")

        compare("dtype", self.element, None if dtype is None else canonical_element(dtype))
        compare("output_dtype", self.output_element, output_dtype)
        compare("descale", self.descale, None if descale is None else bool(descale))
        compare("heads_q", self.heads_q, heads_q)
        compare("heads_kv", self.heads_kv, heads_kv)
        compare("head_dim", self.head_dim, head_dim)
        # Unless given, V's head dim is the problem's head dim: said only for
        # a kernel whose V has its own (the head_dim reason covers the rest).
        if head_dim_v is not None or self.head_dim_v != self.head_dim:
            compare("head_dim_v", self.head_dim_v,
                    head_dim if head_dim_v is None else head_dim_v)
        compare("causal", self.causal, None if causal is None else bool(causal))
        compare("lse", self.lse, None if lse is None else bool(lse))
        compare("sink", self.sink, None if sink is None else bool(sink))
        compare("varlen", self.varlen, None if varlen is None else bool(varlen))
        compare("seqused_k", self.seqused_k, None if seqused_k is None else bool(seqused_k))
        compare("kv_splits", self.kv_splits, None if kv_splits is None else int(kv_splits))
        compare("q_stages", self.q_stages, None if q_stages is None else int(q_stages))
        compare("p_precision", self.p_precision, p_precision)
        compare("kv_interleave", self.kv_interleave,
                None if kv_interleave is None else int(kv_interleave))
        if page_size is not None:
            have, want = self.page_size or 0, int(page_size or 0)
            if bool(have) != bool(want):
                reasons.append(f"paged is {bool(have)}, not {bool(want)}")
            elif have != want:
                reasons.append(f"page_size is {have}, not {want}")
        if window is not None:
            causal_matches = causal is None or bool(causal) == self.causal
            wanted = effective_window(window, self.causal if causal is None else causal)
            # A causal mismatch is reported above; its right bound with it.
            if self.window != wanted and (causal_matches or self.window[0] != wanted[0]):
                reasons.append(f"window is {self.window}, not {wanted}")
        if softcap is not None and bool(self.softcap) != bool(softcap):
            reasons.append("it has a softcap" if self.softcap else "it has no softcap")
        if rope is not None:
            wanted = _rope_problem(rope)
            if self.rope != wanted:
                reasons.append(f"rope is {_rope_text(self.rope)}, not {_rope_text(wanted)}")
        # A problem given by these arguments has no score or mask regions.
        if self.regions:
            reasons.append(f"it inlines {' and '.join(self.regions)} regions")
        if arch is not None and arch != self.arch:
            capability = _capability_of_arch(arch)
            if capability is None or not self.runs_on(capability):
                reasons.append(f"arch is {self.arch}, not {arch}")
        return reasons

    def matches(self, **problem):
        """Whether the kernel computes `problem` (the arguments of `mismatches`)."""
        return not self.mismatches(**problem)

    # -- launch arithmetic (pure) -------------------------------------------

    def grid(self, batch, seq_q, sm_count=None):
        """The persistent grid: min(tiles, SMs) CTAs with tiles = batch *
        head_blocks * ceil(seq_q / query_rows_per_cta), rounded down to
        whole clusters. (0, 1, 1) when there is nothing to compute.
        `sm_count` None asks the driver about the current device.

        For a varlen kernel `batch` is the number of sequences and `seq_q`
        their total query rows: tiles is the bound head_blocks *
        (ceil(seq_q / query_rows_per_cta) + batch), since the sequence
        lengths are on the device (each sequence adds at most one partial
        tile); the kernel's CTAs walk the real tiles."""
        if sm_count is None:
            drv = driver()
            sm_count = drv.device_info(drv.context()[1]).sm_count
        for what, value in (("batch", batch), ("seq_q", seq_q), ("sm_count", sm_count)):
            if not _is_int(value) or value < (what == "sm_count"):
                raise ValueError(f"grid: {what} must be a non-negative integer"
                                 f"{' (positive)' if what == 'sm_count' else ''}, got "
                                 f"{value!r}")
        blocks = -(-seq_q // self.query_rows_per_cta)
        if self.varlen:
            tiles = self.head_blocks * (blocks + batch) if batch and seq_q else 0
        else:
            tiles = batch * self.head_blocks * blocks * self.kv_splits
        ctas = min(tiles, sm_count)
        if ctas and self.cluster[0] > 1:
            ctas = max(self.cluster[0], ctas // self.cluster[0] * self.cluster[0])
        return (ctas, 1, 1)

    def check_operands(self, operands):
        """Normalizes `operands` (name -> Operand or tuple) and checks them
        against the manifest and each other; raises ValueError."""
        given = {}
        for name, value in operands.items():
            op = Operand(*value)
            given[name] = op._replace(element=canonical_element(op.element))
        for name in self.operands:
            if name not in given:
                extra = {"lse": " (it was compiled with LSE)",
                         "sink": " (it was compiled with attention sinks)",
                         **{d: " (it was compiled with descale: FP8 dequantization "
                               "factors, f32 [batch, heads_kv]; ones for none)"
                            for d in DESCALES},
                         "seqused_k": " (it was compiled with seqused_k, the keys each "
                                      f"{'sequence' if self.varlen else 'batch'} uses)",
                         "page_table": " (it reads K and V through a page table)",
                         **{r: " (it was compiled with a rotary embedding: cos_sin f32 "
                               f"[positions, {self.rope.columns}] and positions i32 "
                               f"{'[total_q]' if self.varlen else '[batch, seq_q]'})"
                            for r in ROPE if self.rope}}.get(
                             name, " (a tensor its score or mask regions read)"
                             if _CAPTURE_NAME.fullmatch(name) else "")
                raise ValueError(f"kernel {self.name} needs operand '{name}'{extra}")
        for name in given:
            if name not in self.operands:
                raise ValueError(f"kernel {self.name} has no operand '{name}' (it takes "
                                 f"{', '.join(self.operands)})")
        for name, (element, shape) in self.operands.items():
            op = given[name]
            if op.element != element:
                raise ValueError(f"{name}: element {op.element}, kernel {self.name} takes "
                                 f"{element}")
            if len(op.shape) != len(shape):
                raise ValueError(f"{name}: rank {len(op.shape)} (shape {list(op.shape)}), "
                                 f"kernel {self.name} takes rank {len(shape)}")
            if not _is_int(op.ptr) or not 0 <= op.ptr < 2 ** 64:
                raise ValueError(f"{name}: the device address must be an int in [0, 2^64), "
                                 f"got {op.ptr!r}")
            if not all(_is_int(n) for n in op.shape) or (
                    op.strides is not None and not all(_is_int(n) for n in op.strides)):
                raise ValueError(f"{name}: shape {list(op.shape)} and strides "
                                 f"{op.strides if op.strides is None else list(op.strides)}"
                                 " must be integers")
            names = _dimension_names(name, self.varlen, self.paged)
            for i, (have, want) in enumerate(zip(op.shape, shape)):
                if have < 0 or (want != -1 and have != want):
                    what = names[i] if names else f"of {len(shape)}"
                    raise ValueError(
                        f"{name}: dimension {i} ({what}) is "
                        f"{have}, kernel {self.name} takes "
                        f"{'any size' if want == -1 else want}")
            if _CAPTURE_NAME.fullmatch(name) or name in _INT_TABLES + DESCALES + ROPE:
                # Read through a plain pointer at row-major offsets.
                if op.strides is not None and tuple(op.strides) != _contiguous_strides(
                        op.shape):
                    raise ValueError(f"{name}: must be contiguous, got strides "
                                     f"{list(op.strides)}")
                if name == "cos_sin" and op.ptr % ROPE_TABLE_ALIGNMENT:
                    raise ValueError(f"cos_sin: address {op.ptr:#x} is not "
                                     f"{ROPE_TABLE_ALIGNMENT}-byte aligned (the kernel "
                                     "reads the table in 16-byte pieces)")
                if op.ptr % CAPTURE_ELEMENT_BYTES[element]:
                    raise ValueError(f"{name}: address {op.ptr:#x} is not "
                                     f"{CAPTURE_ELEMENT_BYTES[element]}-byte aligned")
        q, k, v, o = (tuple(given[n].shape) for n in ("query", "key", "value", "output"))
        # V and O may have their own head dim (the kernel's shapes say which).
        # A packed key-major V has rows of its own (PACKED_VALUE_ALIGNMENT).
        padded_value = self.varlen and self.key_major and not self.paged
        if k[1 if padded_value else 0:-1] != v[1 if padded_value else 0:-1]:
            raise ValueError(f"key shape {list(k)} and value shape {list(v)} differ")
        if padded_value and "cu_seqlens_k" in given:
            sequences = max(given["cu_seqlens_k"].shape[0] - 1, 0)
            needed = k[0] + PACKED_VALUE_ALIGNMENT * sequences
            if v[0] < needed:
                raise ValueError(
                    f"value: {v[0]} rows; packed sequences read a key-major V from row "
                    f"align16(cu_seqlens_k[b]) + 16 b, so it needs at least total_k + 16 "
                    f"sequences = {needed} rows")
            if v[0] > 2 ** 31 - 1:
                raise ValueError(f"value: {v[0]} rows are more than the kernel's 32-bit "
                                 "key positions hold")
        if o != q[:-1] + v[-1:]:
            raise ValueError(f"output shape {list(o)} is not the query shape with the "
                             f"value head dim, {list(q[:-1] + v[-1:])}")
        # Paged K and V are [pages, page_size, Hkv, D]: no batch.
        if not self.varlen and not self.paged and k[0] != q[0]:
            raise ValueError(f"batch: query has {q[0]}, key {k[0]}")
        if k[-1] != q[-1]:
            raise ValueError(f"head_dim: query has {q[-1]}, key {k[-1]}")
        if k[-2] == 0 or q[-2] % k[-2]:
            raise ValueError(f"query heads ({q[-2]}) must be a multiple of the key/value "
                             f"heads ({k[-2]})")
        if not self.varlen and (self.seqused_k or self.paged):
            self._check_cache(given, q[0])
        if self.varlen and self.paged:
            # Packed sequences over a paged cache: a page-table row each.
            self._check_cache({"page_table": given["page_table"]},
                              given["cu_seqlens_q"].shape[0] - 1, "sequences")
        if self.kv_splits > 1:
            # The workspace numbers every row of every work tile, and the
            # units (tile, split), in 32 bits.
            tiles = q[0] * self.head_blocks * -(-q[1] // self.query_rows_per_cta)
            rows = tiles * self.split_words // (self.kv_splits * self.head_dim_v
                                                + -(-self.kv_splits // 4) * 4)
            if rows > 2 ** 31 - 1 or tiles * self.kv_splits > 2 ** 31 - 1:
                raise ValueError(f"split-KV over {self.kv_splits} CTAs: {tiles} work tiles "
                                 "number more rows or units than the kernel's 32 bits hold")
        if self.varlen:
            self._check_tables(given)
            # The rows of a sequence's last Q stage are stored through a
            # plain pointer at row-major offsets.
            out = given["output"]
            if out.strides is not None and tuple(out.strides) != _contiguous_strides(o):
                raise ValueError(f"output: a packed output must be contiguous, got "
                                 f"strides {list(out.strides)}")
        if "lse" in given:
            lse = given["lse"]
            expected, layout = (((q[1], q[0]), "[heads_q, total_q]") if self.varlen
                                else ((q[0], q[2], q[1]), "[batch, heads_q, seq_q]"))
            if tuple(lse.shape) != expected:
                raise ValueError(f"lse: shape {list(lse.shape)}, expected {layout} = "
                                 f"{list(expected)}")
            if (lse.strides is not None
                    and tuple(lse.strides) != _contiguous_strides(lse.shape)):
                raise ValueError(f"lse: must be contiguous, got strides {list(lse.strides)}")
            if lse.ptr % ELEMENT_BYTES[lse.element]:
                raise ValueError(f"lse: address {lse.ptr:#x} is not "
                                 f"{ELEMENT_BYTES[lse.element]}-byte aligned")
        # The descales' batch: q's, or the sequences of packed ones.
        batch = (given["cu_seqlens_q"].shape[0] - 1 if self.varlen
                 and "cu_seqlens_q" in given else q[0])
        for name in DESCALES:
            if name in given and tuple(given[name].shape) != (batch, k[-2]):
                raise ValueError(f"{name}: shape {list(given[name].shape)}, expected "
                                 f"[batch, heads_kv] = {[batch, k[-2]]}"
                                 + (" (batch: the sequences)" if self.varlen else ""))
        if self.rope:
            self._check_rope(given, q, self.varlen)
        if "sink" in given:
            sink = given["sink"]
            if tuple(sink.shape) != (q[-2],):
                raise ValueError(f"sink: shape {list(sink.shape)}, expected [heads_q] = "
                                 f"{[q[-2]]}")
            if sink.strides is not None and tuple(sink.strides) != (1,):
                raise ValueError(f"sink: must be contiguous, got strides "
                                 f"{list(sink.strides)}")
            if sink.ptr % ELEMENT_BYTES[sink.element]:
                raise ValueError(f"sink: address {sink.ptr:#x} is not "
                                 f"{ELEMENT_BYTES[sink.element]}-byte aligned")
        return given

    @staticmethod
    def _check_rope(given, q, varlen):
        """The rotary embedding's operands: a table of at least one row
        (cos_sin [P, R]; its columns are checked against the manifest's)
        and a position per query row (positions [B, Sq], the query's B and
        Sq; packed sequences [Tq], a token's). The positions stay on the
        device: the kernel clamps each into [0, P)."""
        table, positions = given["cos_sin"].shape, given["positions"].shape
        if table[0] < 1:
            raise ValueError(f"cos_sin: shape {list(table)} has no rows; the kernel reads "
                             "row clamp(position, 0, P - 1), so P must be at least 1")
        if varlen and tuple(positions) != (q[0],):
            raise ValueError(f"positions: shape {list(positions)}, expected [total_q] = "
                             f"{[q[0]]} (a position per packed query token)")
        if not varlen and tuple(positions) != tuple(q[:2]):
            raise ValueError(f"positions: shape {list(positions)}, expected [batch, seq_q] = "
                             f"{list(q[:2])} (query dimensions 0 and 1)")

    @staticmethod
    def _check_tables(given):
        """The sequence tables agree in length: B + 1 prefix sums each (and
        B used-key counts). Their contents are on the device: the kernel
        clamps them into the packed tensors."""
        bounds_q, bounds_k = (given[n].shape[0] for n in TABLES[:2])
        if bounds_q < 1 or bounds_k != bounds_q:
            raise ValueError(f"cu_seqlens_q and cu_seqlens_k must both hold batch + 1 >= 1 "
                             f"prefix sums, got {bounds_q} and {bounds_k} entries")
        if bounds_q > 2 ** 31 - 1:
            raise ValueError(f"cu_seqlens_q: {bounds_q} entries do not fit an i32")
        if "seqused_k" in given and given["seqused_k"].shape[0] != bounds_q - 1:
            raise ValueError(f"seqused_k: {given['seqused_k'].shape[0]} entries for "
                             f"{bounds_q - 1} sequences")

    def _check_cache(self, given, batch, what="batch"):
        """A KV cache's tables: seqused_k [B] and the page table [B,
        max_pages], one row per batch of the query (`what` "sequences": per
        packed sequence). Their contents are on the device: the kernel
        clamps seqused_k[b] to [0, capacity] and reads no page entry past a
        batch's keys."""
        if "seqused_k" in given and given["seqused_k"].shape[0] != batch:
            raise ValueError(f"seqused_k: {given['seqused_k'].shape[0]} entries for a batch "
                             f"of {batch} (query dimension 0)")
        if self.paged:
            rows, pages = given["page_table"].shape
            if rows != batch:
                if what == "sequences":
                    raise ValueError(f"page_table: {rows} rows for {batch} sequences "
                                     "(cu_seqlens_q's entries less one); it must be "
                                     "[sequences, max_pages]")
                raise ValueError(f"page_table: {rows} rows for a batch of {batch} (query "
                                 "dimension 0); it must be [batch, max_pages]")
            if pages * self.page_size > 2 ** 31 - 1:
                raise ValueError(f"page_table: {pages} pages of {self.page_size} keys are "
                                 "more keys than the kernel's 32-bit positions hold")
            if rows * pages > 2 ** 31 - 1:
                raise ValueError(f"page_table: {rows} x {pages} entries are more than the "
                                 "kernel's 32-bit table offsets reach")

    def extent(self, operands):
        """(batch, query rows) of a launch, what `grid` takes: for a varlen
        kernel, the sequences (cu_seqlens_q's entries less one) and the
        packed query rows."""
        query = Operand(*operands["query"]).shape
        if self.varlen:
            return Operand(*operands["cu_seqlens_q"]).shape[0] - 1, query[0]
        return query[0], query[1]

    def scalars(self, scale=None, softcap=None):
        """The f32 parameters the call chooses, by manifest source: the
        softmax scale times log2(e) (`scale_log2`) and, with a softcap, the
        softcap over the scale (`score_cap`), from `scale` and `softcap`
        (None: the values the kernel was compiled with). Raises ValueError
        for a scale or softcap that is not positive and finite, or whose
        kernel argument overflows an f32."""
        for what, value in (("scale", scale), ("softcap", softcap)):
            if value is not None and (not isinstance(value, numbers.Real)
                                      or isinstance(value, bool)):
                raise ValueError(f"{what} must be a real number, got {value!r}")
        scale = self.scale if scale is None else float(scale)
        if scale is None or not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be positive and finite, got {scale}")
        values = {"scale_log2": scale * math.log2(math.e)}
        if self.softcap:
            softcap = self.softcap if softcap is None else float(softcap)
            if not (math.isfinite(softcap) and softcap > 0):
                raise ValueError(f"kernel {self.name} takes a positive, finite softcap, "
                                 f"got {softcap}")
            values["score_cap"] = softcap / scale
        elif softcap:
            raise ValueError(f"kernel {self.name} has no softcap")
        for source, value in values.items():
            if not value <= F32_MAX or ctypes.c_float(value).value == 0.0:
                raise ValueError(f"{source} = {value:g} (scale {scale}"
                                 f"{f', softcap {softcap}' if self.softcap else ''}) "
                                 f"{'overflows' if value > 1 else 'underflows'} the "
                                 "kernel's f32 argument")
        return values

    def arguments(self, operands, scale=None, softcap=None):
        """The kernel parameters, in order, for `operands` (checked first),
        `scale` and `softcap` (see `scalars`)."""
        given = self.check_operands(operands)
        return self._arguments(given, self._tensor_maps(given),
                               self.scalars(scale, softcap))

    def _tensor_maps(self, given):
        return [tensor_map_args(entry, given[entry["operand"]], entry["operand"])
                for entry in self.tensor_maps]

    def workspace_bytes(self, batch, seq_q):
        """Split-KV's workspace for `batch` x `seq_q`: (partial-row bytes,
        counter bytes); (0, 0) without a split."""
        if self.kv_splits == 1:
            return 0, 0
        tiles = batch * self.head_blocks * -(-seq_q // self.query_rows_per_cta)
        return tiles * self.split_words * 4, tiles * self.split_counters * 4

    def _arguments(self, given, maps, scalars, workspace=(0, 0)):
        """The params' values; `workspace` is split-KV's (partial rows,
        counters) addresses."""
        args = []
        for name, kind, ref in self.params:
            if kind == "workspace":
                value = workspace[0] if ref == "workspace.partials" else workspace[1]
                args.append(Argument(name, "pointer", value))
                continue
            if kind == "tensor_map":
                value = maps[ref]
            elif kind == "i32":
                value = int(given[ref[0]].shape[ref[1]])
                if value >= 2 ** 31:
                    raise ValueError(f"param '{name}' = {value} does not fit an i32")
            elif kind == "f32":
                # A float the call chooses, else the manifest's.
                value = scalars.get(self._float_sources[name], ref)
            else:
                value = given[ref].ptr
            args.append(Argument(name, kind, value))
        return args

    # -- launching -----------------------------------------------------------

    def image_path(self):
        """The cubin when it exists, else the PTX (JIT-compiled by the driver)."""
        files = self.manifest.get("files", {})
        candidates = [self.directory / files.get(kind, f"{self.name}.{kind}")
                      for kind in ("cubin", "ptx")]
        for path in candidates:
            if path.exists():
                return path
        raise FileNotFoundError(f"kernel {self.name}: neither {candidates[0]} nor "
                                f"{candidates[1]} exists")

    def _function(self, drv, context):
        if context not in self._functions:
            path = self.image_path()
            image = path.read_bytes()
            if path.suffix == ".ptx" and not image.endswith(b"\0"):
                image += b"\0"
            module = drv.load_module(image, context=f"loading {path}")
            function = drv.function(module, self.name)
            if self.dynamic_smem_bytes > DEFAULT_DYNAMIC_SMEM_LIMIT:
                drv.set_function_attribute(function,
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           self.dynamic_smem_bytes)
            self._functions[context] = (module, function)
        return self._functions[context][1]

    def runs_on(self, capability):
        """Whether the kernel's arch runs on a device of `capability`:
        'sm_100a' only on 10.0, 'sm_100f' on 10.x from 10.0, 'sm_100' on
        10.0 and later (unknown spellings are left to the driver)."""
        match = _ARCH.fullmatch(self.arch)
        if not match:
            return True
        want = (int(match.group(1)), int(match.group(2)))
        if match.group(3) == "a":
            return capability == want
        if match.group(3) == "f":
            return capability[0] == want[0] and capability >= want
        return tuple(capability) >= want

    def _check_device(self, info):
        want = _capability_of_arch(self.arch)
        if not self.runs_on(info.capability):
            raise RuntimeError(
                f"kernel {self.name} is compiled for {self.arch} (compute capability "
                f"{want[0]}.{want[1]}) but the device is "
                f"{arch_of_capability(info.capability)} ({info.capability[0]}."
                f"{info.capability[1]})")
        smem = self.dynamic_smem_bytes + self.static_smem_bytes
        if smem > info.smem_optin:
            raise RuntimeError(f"kernel {self.name} needs {smem} bytes of shared memory per "
                               f"CTA, the device allows {info.smem_optin}")

    #: Launches remembered per kernel (see `launch`).
    LAUNCH_CACHE_SIZE = 64

    def launch(self, operands, stream=0, device=None, scale=None, softcap=None):
        """Launches the kernel on `stream` (an int CUstream, 0 for the legacy
        default stream) in the current context (or `device`'s primary one).

        `operands`: name -> (device address, shape, element[, strides]) for
        every operand of the manifest; `scale` and `softcap` the values of
        this call (None: the kernel's own; see `scalars`). Asynchronous:
        returns once enqueued.

        The tensor maps live in a stream-ordered allocation on `stream`. A
        launch is remembered, keyed by everything it is made of: the
        driver, the context it ran in, the stream, `device`, `scale` and
        `softcap` (values and types) and the operands as given (names in
        order, addresses, shapes, elements, strides). A call whose key
        equals a remembered one (the current context included) skips the
        checks, which passed for those same values, and is one
        cuLaunchKernelEx of the kept config and parameters. The
        LAUNCH_CACHE_SIZE most recently used are kept; a forgotten one's
        maps are freed on its stream after its kernels (so a stream must
        outlive the launches remembered on it, or be destroyed only after
        `close()`)."""
        if stream.__class__ is not int or stream < 0:
            stream = _stream_handle(stream)
        drv = driver()
        current = prepared = None
        if self._launches:
            current = drv.current_context()
            try:
                key = (drv, current, stream, device, scale, scale.__class__, softcap,
                       softcap.__class__, *operands.items())
                prepared = self._launches.get(key)
            except TypeError:
                # An operand that cannot be part of a key as given (a list
                # shape): found after the checks, below.
                pass
        if prepared is None:
            prepared, key = self._launch_miss(drv, operands, stream, device, scale, softcap,
                                              current)
            if prepared is None:
                return (0, 1, 1)
        else:
            self._launches.move_to_end(key)
        try:
            drv.launch_prepared(prepared.call, lambda: (
                f"of {self.name} with grid {list(prepared.grid)}, block "
                f"{list(self.block)}, {self.dynamic_smem_bytes} bytes of dynamic shared "
                "memory"))
        except CudaError:
            self._forget(drv, self._launches.pop(key, prepared))
            raise
        return prepared.grid

    def _launch_miss(self, drv, operands, stream, device, scale, softcap, current):
        """The checks and the preparation of a launch not found by its key
        as given; returns it, remembered, and its key, or (None, None) when
        the grid is empty. `current` is the current context, or None when
        not yet asked."""
        given = self.check_operands(operands)
        scalars = self.scalars(scale, softcap)
        context, dev = drv.context(device, current)
        # The context resolved (made current when it was not): the one a
        # later call finds current.
        key = (drv, context, stream, device, scale, scale.__class__, softcap,
               softcap.__class__)
        try:
            as_given = key + tuple(operands.items())
            hash(as_given)
            key = as_given
        except TypeError:
            # Operands that cannot be a key as given (a list shape): keyed
            # as checked, so that the same call finds this launch after its
            # checks.
            key += tuple((name, Operand(op.ptr, tuple(op.shape), op.element,
                                        None if op.strides is None else tuple(op.strides)))
                         for name, op in given.items())
        prepared = self._launches.get(key)
        if prepared is not None:
            self._launches.move_to_end(key)
            return prepared, key
        info = drv.device_info(dev)
        self._check_device(info)
        grid = self.grid(*self.extent(given), info.sm_count)
        if grid[0] == 0:
            return None, None
        prepared = self._prepare(drv, context, given, scalars, stream, grid)
        self._launches[key] = prepared
        while len(self._launches) > self.LAUNCH_CACHE_SIZE:
            self._forget(drv, self._launches.popitem(last=False)[1])
        return prepared, key

    def _prepare(self, drv, context, operands, scalars, stream, grid):
        """The function, parameter values and tensor maps of a launch; the
        maps are copied to a stream-ordered allocation on `stream`."""
        maps = self._tensor_maps(operands)
        workspace, addresses = self._workspace(drv, context, stream, operands)
        args = self._arguments(operands, maps, scalars, addresses)
        function = self._function(drv, context)
        descriptors = b"".join(drv.encode_tensor_map(m) for m in maps)
        block = 0
        if descriptors:
            block = drv.alloc_async(len(descriptors), stream)
            if block % TENSOR_MAP_ALIGNMENT:
                drv.free_async(block, stream)
                raise RuntimeError(f"cuMemAllocAsync returned {block:#x}, not "
                                   f"{TENSOR_MAP_ALIGNMENT}-byte aligned for CUtensorMap")
            try:
                drv.copy_to_device_async(block, descriptors, stream)
            except CudaError:
                drv.free_async(block, stream)
                raise
        values = []
        for (name, kind, ref), arg in zip(self.params, args):
            if kind == "tensor_map":
                values.append(ctypes.c_uint64(block + ref * TENSOR_MAP_BYTES))
            elif kind == "i32":
                values.append(ctypes.c_int32(arg.value))
            elif kind == "f32":
                values.append(ctypes.c_float(arg.value))
            else:
                values.append(ctypes.c_uint64(arg.value))
        call = PreparedLaunch(function, grid, self.block, self.cluster,
                              self.dynamic_smem_bytes, stream, values,
                              self.programmatic_launch
                              and os.environ.get("FA4_PDL", "1") != "0")
        return _Launch(grid, block, stream, call, workspace)

    def _workspace(self, drv, context, stream, operands):
        """Split-KV's workspace for a launch on `stream`: (the allocation,
        (partial rows, counters) addresses); (0, (0, 0)) without a split.
        One allocation per (context, stream), shared by the launches
        remembered there (a stream runs them one after another, and each
        leaves the counters 0): the counters first, zeroed once, then the
        partial rows. It grows to the largest launch; the launches that
        used the smaller one are forgotten, and it is freed after them."""
        partials, counters = self.workspace_bytes(*self.extent(operands))
        if not partials:
            return 0, (0, 0)
        key = (context, stream)
        current = self._workspaces.get(key)
        if current is None or current[1] < counters or current[2] < partials:
            if current is not None:
                for launch_key, launch in list(self._launches.items()):
                    if launch.workspace == current[0]:
                        self._forget(drv, self._launches.pop(launch_key))
                del self._workspaces[key]
                drv.free_async(current[0], stream)
                counters = max(counters, current[1])
                partials = max(partials, current[2])
            counters = -(-counters // 256) * 256
            pointer = drv.alloc_async(counters + partials, stream)
            try:
                drv.copy_to_device_async(pointer, bytes(counters), stream)
            except CudaError:
                drv.free_async(pointer, stream)
                raise
            current = self._workspaces[key] = (pointer, counters, partials)
        return current[0], (current[0] + current[1], current[0])

    @staticmethod
    def _forget(drv, launch):
        """Frees a forgotten launch's maps after the kernels queued on its
        stream (a split-KV workspace is the kernel's: `close`)."""
        if launch.block:
            drv.free_async(launch.block, launch.stream)

    def close(self):
        """Unloads the kernel's modules and frees the remembered launches'
        tensor maps and the split-KV workspaces (launches must have
        finished)."""
        launches, self._launches = self._launches, OrderedDict()
        for launch in launches.values():
            self._forget(driver(), launch)
        workspaces, self._workspaces = self._workspaces, {}
        for (_, stream), (pointer, _, _) in workspaces.items():
            driver().free_async(pointer, stream)
        functions, self._functions = self._functions, {}
        for module, _ in functions.values():
            driver().unload_module(module)


class KernelDirectory:
    """Every kernel manifest (`*.json`) of a directory."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"kernel directory {self.path} does not exist")
        self.kernels = []
        self.errors = []   # (file name, why it is not a usable manifest)
        for file in sorted(self.path.glob("*.json")):
            try:
                self.kernels.append(Kernel.load(file))
            except (ManifestError, OSError) as err:
                self.errors.append((file.name, str(err).replace(f"{file}: ", "")))

    def __iter__(self):
        return iter(self.kernels)

    def __len__(self):
        return len(self.kernels)

    def find(self, dtype, heads_q, heads_kv, head_dim, causal=False, scale=None,
             lse=False, arch=None, window=(-1, -1), softcap=0.0, sink=False,
             varlen=False, seqused_k=False, head_dim_v=None, page_size=None, kv_splits=1,
             descale=False, output_dtype=None, q_stages=None, rope=None,
             p_precision=None, kv_interleave=None):
        """The first kernel (by file name) that computes the problem; scale
        None means 1/sqrt(head_dim), arch None any arch, window (-1, -1) and
        softcap 0 none, sink whether it takes attention sinks, varlen whether
        the batch is packed sequences (cu_seqlens_q/k), seqused_k whether it
        also gives the keys each sequence (or, with a dense batch, each
        batch of a KV cache) uses, head_dim_v V's head dim (None: head_dim),
        page_size the keys of a KV page when K and V are read through a
        page table (None or 0: not paged; a dense batch or packed sequences),
        kv_splits the CTAs sharing each work tile's KV blocks (1: a kernel
        without split-KV; None: any), descale whether it takes FP8
        dequantization factors (None: either; a kernel that takes them
        computes a problem without them given ones), output_dtype O's
        element (None: any; a 16-bit kernel's is its inputs'), q_stages
        the Q tiles in flight per CTA (None: any), rope the rotary
        embedding of Q (None or False: none; else (start, columns, output),
        columns being the table's R: only a kernel of exactly that rope),
        p_precision 'single' or 'hi_lo' (P as its rounded value plus the
        rounding residual; None: either), kv_interleave the softmax
        warpgroups sharing each Q tile (sm_100a: 2 for both over one Q
        tile, each taking every other KV block; 1 for none; None: any).
        Raises LookupError saying why each kernel was rejected."""
        if scale is None:
            scale = 1.0 / math.sqrt(head_dim)
        # Every kernel takes any scale and softcap value (`scalars`); they
        # are part of the problem for the message.
        problem = dict(dtype=dtype, heads_q=heads_q, heads_kv=heads_kv,
                       head_dim=head_dim, causal=bool(causal), scale=scale,
                       lse=bool(lse), arch=arch,
                       window=effective_window(window, causal),
                       softcap=float(softcap or 0.0), sink=bool(sink),
                       varlen=bool(varlen), seqused_k=bool(seqused_k),
                       page_size=int(page_size or 0),
                       head_dim_v=None if head_dim_v == head_dim else head_dim_v,
                       kv_splits=None if kv_splits is None else int(kv_splits),
                       descale=None if descale is None else bool(descale),
                       output_dtype=output_dtype,
                       q_stages=None if q_stages is None else int(q_stages),
                       rope=_rope_problem(rope) or False,
                       p_precision=p_precision,
                       kv_interleave=None if kv_interleave is None else int(kv_interleave))
        rejected = []
        for kernel in self.kernels:
            reasons = kernel.mismatches(**problem)
            if not reasons:
                return kernel
            rejected.append(f"  {kernel.name} ({Path(kernel.source).name}): "
                            + "; ".join(reasons))
        rejected += [f"  {name}: not a usable manifest: {why}" for name, why in self.errors]
        # The packing, the KV cache and FP8's options are said only where the
        # problem has them.
        wanted = " ".join(f"{key}={value}" for key, value in problem.items()
                          if (value or key not in ("varlen", "seqused_k", "page_size",
                                                   "descale", "rope"))
                          and (key not in ("head_dim_v", "output_dtype", "q_stages",
                                           "p_precision", "kv_interleave")
                               or value is not None)
                          and (key != "kv_splits" or value not in (None, 1)))
        if not rejected:
            raise LookupError(f"no fa4 kernel for {wanted}: {self.path} has no kernel "
                              "manifests (*.json)")
        raise LookupError(f"no fa4 kernel in {self.path} for {wanted}; candidates:\n"
                          + "\n".join(rejected))
