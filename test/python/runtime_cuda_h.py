# RUN: %python %s %cuda_toolkit | FileCheck %s
# REQUIRES: ptxas
"""fa4.runtime's CUDA constants and driver bindings against the toolkit:
every CU_*/CUDA_* constant equals its cuda.h enumerator, every bound symbol
is the one cuda.h names with the parameter count it declares, and every
Driver call marshals through ctypes into the stub libcuda (which answers
CUDA_ERROR_STUB_LIBRARY to all of them) without an argument error."""

import ctypes
import re
import sys
from pathlib import Path

from fa4 import runtime

toolkit = Path(sys.argv[1])
header = (toolkit / "include" / "cuda.h").read_text()
text = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
text = re.sub(r"//[^\n]*", "", text)
text = re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)

# Enumerator values, implicit ones counted on from the previous.
enumerators = {}
for body in re.findall(r"typedef\s+enum\s+\w*\s*\{(.*?)\}", text, flags=re.S):
    next_value = 0
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, expr = item.partition("=")
        name = name.strip()
        if expr.strip():
            try:
                next_value = eval(expr.strip().rstrip("uUlL"), {}, dict(enumerators))
            except Exception:
                continue
        enumerators[name] = next_value
        next_value += 1
enumerators["CU_TENSOR_MAP_NUM_QWORDS"] = int(
    re.search(r"#define CU_TENSOR_MAP_NUM_QWORDS (\d+)", header).group(1))

constants = sorted(n for n in dir(runtime) if re.fullmatch(r"(CU|CUDA)_[A-Z0-9_]+", n))
bad = [f"{n} = {getattr(runtime, n)}, cuda.h {enumerators.get(n)}" for n in constants
       if enumerators.get(n) != getattr(runtime, n)]
print(f"{len(constants)} constants, mismatches: {bad}")
for name in ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
             "CU_TENSOR_MAP_DATA_TYPE_UINT8", "CU_TENSOR_MAP_SWIZZLE_128B",
             "CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
             "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION",
             "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION",
             "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
             "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"):
    print(f"{name} = {enumerators[name]}")
# CHECK: {{^}}24 constants, mismatches: []
# CHECK-NEXT: CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9{{$}}
# CHECK-NEXT: CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6{{$}}
# CHECK-NEXT: CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0{{$}}
# CHECK-NEXT: CU_TENSOR_MAP_SWIZZLE_128B = 3{{$}}
# CHECK-NEXT: CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2{{$}}
# CHECK-NEXT: CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0{{$}}
# CHECK-NEXT: CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4{{$}}
# CHECK-NEXT: CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6{{$}}
# CHECK-NEXT: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8{{$}}
# CHECK-NEXT: CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16{{$}}

# Symbols: the API name cuda.h declares and the exported name it #defines to.
arity_mismatches = []
for symbol, argtypes in runtime._SIGNATURES.items():
    api = symbol
    for define, target in re.findall(r"#define\s+(cu\w+)\s+(?:__CUDA_API_\w+\()?(cu\w+)\)?",
                                     header):
        if target == symbol:
            api = define
            break
    declaration = re.search(rf"CUresult CUDAAPI {api}\((.*?)\);", text, flags=re.S)
    count = len(declaration.group(1).split(",")) if declaration else None
    print(f"{symbol}: declared as {api}, {count} parameters, bound with {len(argtypes)}")
    if count != len(argtypes):
        arity_mismatches.append(symbol)
print("arity mismatches:", arity_mismatches)
# CHECK: cuGetErrorName: declared as cuGetErrorName, 2 parameters, bound with 2
# CHECK: cuModuleLoadData: declared as cuModuleLoadData, 2 parameters, bound with 2
# CHECK: cuMemAllocAsync: declared as cuMemAllocAsync, 3 parameters, bound with 3
# CHECK: cuMemFreeAsync: declared as cuMemFreeAsync, 2 parameters, bound with 2
# CHECK: cuMemcpyHtoDAsync_v2: declared as cuMemcpyHtoDAsync, 4 parameters, bound with 4
# CHECK: cuLaunchKernelEx: declared as cuLaunchKernelEx, 4 parameters, bound with 4
# CHECK: cuTensorMapEncodeTiled: declared as cuTensorMapEncodeTiled, 12 parameters, bound with 12
# CHECK-NEXT: arity mismatches: []

# The stub libcuda: real ctypes marshalling, every call answered with an error.
stub = toolkit / "lib64" / "stubs" / "libcuda.so"
drv = runtime.set_driver(ctypes.CDLL(str(stub)))
kernel = runtime.Kernel({
    "kernel": "k", "arch": "sm_100a", "block": [512, 1, 1], "dynamic_smem_bytes": 1024,
    "grid": {"rule": "persistent", "head_blocks": 1, "query_rows_per_cta": 256},
    "operands": [{"name": n, "element": "bf16", "shape": [-1, -1, 1, 64]}
                 for n in ("query", "key", "value", "output")],
    "params": [], "tensor_maps": [{"operand": "query", "element": "bf16",
                                   "box": [64, 1, 128, 1], "swizzle": "128B"}]})
query_map = runtime.tensor_map_args(kernel.tensor_maps[0], (0x1000, (1, 10, 1, 64), "bf16"))
prepared = runtime.PreparedLaunch(0x10, (4, 1, 1), (512, 1, 1), (2, 1, 1), 100000, 7,
                                  [ctypes.c_uint64(1), ctypes.c_int32(2), ctypes.c_float(3)])
calls = [
    ("context", lambda: drv.context()),
    ("attribute", lambda: drv.attribute(runtime.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0)),
    ("load_module", lambda: drv.load_module(b"\x7fELF")),
    ("function", lambda: drv.function(0x10, "k")),
    ("set_function_attribute", lambda: drv.set_function_attribute(0x10, 8, 100000)),
    ("encode_tensor_map", lambda: drv.encode_tensor_map(query_map)),
    ("alloc_async", lambda: drv.alloc_async(512, 0)),
    ("copy_to_device_async", lambda: drv.copy_to_device_async(0x1000, bytes(512), 7)),
    ("free_async", lambda: drv.free_async(0x1000, 7)),
    ("launch", lambda: drv.launch(0x10, (4, 1, 1), (512, 1, 1), (2, 1, 1), 100000, 7,
                                  [ctypes.c_uint64(1), ctypes.c_int32(2), ctypes.c_float(3)])),
    # A remembered launch's kept config, function and parameter array,
    # passed again as they are.
    ("launch_prepared", lambda: drv.launch_prepared(prepared)),
    ("launch_prepared again", lambda: drv.launch_prepared(prepared)),
    ("current_context", lambda: (setattr(drv, "_initialized", True),
                                 drv.current_context())),
    ("synchronize", lambda: drv.synchronize(7)),
    ("unload_module", lambda: drv.unload_module(0x10)),
]
for label, call in calls:
    try:
        call()
        print(f"{label}: returned")
    except runtime.CudaError as err:
        print(f"{label}: {err.function} -> {err.code}")
# CUDA_ERROR_STUB_LIBRARY
print("stub error:", enumerators["CUDA_ERROR_STUB_LIBRARY"])
# CHECK: context: cuInit -> 34
# CHECK-NEXT: attribute: cuDeviceGetAttribute -> 34
# CHECK-NEXT: load_module: cuModuleLoadData -> 34
# CHECK-NEXT: function: cuModuleGetFunction -> 34
# CHECK-NEXT: set_function_attribute: cuFuncSetAttribute -> 34
# CHECK-NEXT: encode_tensor_map: cuTensorMapEncodeTiled -> 34
# CHECK-NEXT: alloc_async: cuMemAllocAsync -> 34
# CHECK-NEXT: copy_to_device_async: cuMemcpyHtoDAsync_v2 -> 34
# CHECK-NEXT: free_async: cuMemFreeAsync -> 34
# CHECK-NEXT: launch: cuLaunchKernelEx -> 34
# CHECK-NEXT: launch_prepared: cuLaunchKernelEx -> 34
# CHECK-NEXT: launch_prepared again: cuLaunchKernelEx -> 34
# CHECK-NEXT: current_context: cuCtxGetCurrent -> 34
# CHECK-NEXT: synchronize: cuStreamSynchronize -> 34
# CHECK-NEXT: unload_module: cuModuleUnload -> 34
# CHECK-NEXT: stub error: 34{{$}}
runtime.set_driver(None)
