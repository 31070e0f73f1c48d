"""fa4: FlashAttention kernels compiled with MLIR.

The compiler is reached through the C API library (libFA4CAPI.so) with ctypes;
see `fa4.capi`. Compiled kernels are launched with `fa4.runtime` (ctypes over
libcuda) and, for PyTorch tensors, `fa4.torch.attention`,
`fa4.torch.attention_varlen` (packed sequences),
`fa4.torch.attention_with_kvcache` (a KV cache, paged or not) and
flash-attn 2's entry points `fa4.flash_attn_func`,
`fa4.flash_attn_varlen_func` and `fa4.flash_attn_with_kvcache`
(`fa4.flash_attn`). Those names are imported on first use, so `import fa4`
needs neither CUDA nor PyTorch.
"""

import importlib

from fa4.capi import Compilation, CompiledKernel, Context, MLIRError, load_library

__all__ = ["Compilation", "CompiledKernel", "Context", "MLIRError", "load_library",
           "CudaError", "Kernel", "KernelDirectory"]

# name -> (module, attribute or None for the module itself), imported lazily.
_LAZY = {
    "runtime": ("fa4.runtime", None),
    "CudaError": ("fa4.runtime", "CudaError"),
    "Kernel": ("fa4.runtime", "Kernel"),
    "KernelDirectory": ("fa4.runtime", "KernelDirectory"),
    # These import PyTorch.
    "torch": ("fa4.torch", None),
    "attention": ("fa4.torch", "attention"),
    "attention_varlen": ("fa4.torch", "attention_varlen"),
    "attention_with_kvcache": ("fa4.torch", "attention_with_kvcache"),
    "flash_attn": ("fa4.flash_attn", None),
    "flash_attn_func": ("fa4.flash_attn", "flash_attn_func"),
    "flash_attn_varlen_func": ("fa4.flash_attn", "flash_attn_varlen_func"),
    "flash_attn_with_kvcache": ("fa4.flash_attn", "flash_attn_with_kvcache"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'fa4' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
