# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %fa4_src_root/scripts/build-wheel.py --library %fa4_lib_dir/libFA4CAPI.so --out %t/dist > %t/wheel-path
# RUN: %python -m zipfile -l `cat %t/wheel-path` | FileCheck %s --check-prefix=CONTENTS
# RUN: %python -m venv %t/venv
# RUN: %t/venv/bin/python -m pip install -q --no-index --no-deps `cat %t/wheel-path`
# RUN: cd %t && env -u PYTHONPATH -u FA4_CAPI_LIB FA4_CACHE_DIR=%t/cache %t/venv/bin/python %s %t | FileCheck %s
# REQUIRES: capi
"""The wheel of scripts/build-wheel.py (what `make python` installs): in a
fresh virtual environment, with neither PYTHONPATH nor FA4_CAPI_LIB,
`import fa4` finds the package and the library it carries, and compiles a
kernel on demand."""

# CONTENTS-DAG: fa4/__init__.py
# CONTENTS-DAG: fa4/capi.py
# CONTENTS-DAG: fa4/jit.py
# CONTENTS-DAG: fa4/runtime.py
# CONTENTS-DAG: fa4/torch.py
# CONTENTS-DAG: fa4/flash_attn.py
# CONTENTS-DAG: fa4/_lib/libFA4CAPI.so
# CONTENTS-DAG: fa4-{{[0-9.]+}}.dist-info/METADATA
# CONTENTS-DAG: fa4-{{[0-9.]+}}.dist-info/WHEEL
# CONTENTS-DAG: fa4-{{[0-9.]+}}.dist-info/RECORD

import sys
from pathlib import Path

import fa4
from fa4 import capi, jit

root = Path(sys.argv[1]).resolve()
package = Path(fa4.__file__).resolve().parent
print("package in the venv:", package.is_relative_to(root / "venv"),
      "library:", capi._default_library_path().resolve().relative_to(package))
# CHECK: package in the venv: True library: _lib/libFA4CAPI.so

context = fa4.Context()
print("verify:", "fa4.attention" in context.verify(
    "func.func @f(%q: memref<1x64x2x64xbf16>, %o: memref<1x64x2x64xbf16>) {\n"
    "  fa4.attention ins(%q, %q, %q : memref<1x64x2x64xbf16>, memref<1x64x2x64xbf16>,"
    " memref<1x64x2x64xbf16>) outs(%o : memref<1x64x2x64xbf16>)\n  return\n}\n"))
# CHECK-NEXT: verify: True

# The cache directory comes from FA4_CACHE_DIR.
kernel = jit.KernelCache().kernel("bf16", 4, 2, 64, causal=True, arch="sm_90a")
print(kernel.name, kernel.arch, "cached under FA4_CACHE_DIR:",
      Path(kernel.directory).resolve().is_relative_to(root / "cache"))
# CHECK-NEXT: bf16_d64_h4x2_causal_attention sm_90a cached under FA4_CACHE_DIR: True
