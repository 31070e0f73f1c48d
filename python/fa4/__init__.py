"""fa4: FlashAttention kernels compiled with MLIR.

The compiler is reached through the C API library (libFA4CAPI.so) with ctypes;
see `fa4.capi`.
"""

from fa4.capi import Context, MLIRError, load_library

__all__ = ["Context", "MLIRError", "load_library"]
