#!/usr/bin/env python3
"""Builds the fa4 Python wheel: the package python/fa4 and a C API library
(libFA4CAPI.so) in fa4/_lib, where `fa4.capi` looks for it first.

With the self-contained library of the static build
(build-static/lib/libFA4CAPI.so, `make wheel`) the wheel runs on any x86-64
Linux with the build machine's glibc or newer, without LLVM installed;
with the default build's library it needs LLVM 22 where it was built. The
wheel names no dependencies: PyTorch is needed only by fa4.torch and
fa4.flash_attn, CUDA (libcuda) only to launch, ptxas only for cubins (the
driver compiles the PTX otherwise).

usage: build-wheel.py --library PATH [--out DIR] [--version X.Y.Z]
Prints the wheel's path.
"""

import argparse
import base64
import hashlib
import platform
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def project_version():
    """The version of the CMake project (`project(fa4 VERSION ...)`)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(fa4 VERSION ([0-9.]+)", text).group(1)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def build(library, out, version):
    library = Path(library)
    if not library.is_file():
        sys.exit(f"build-wheel.py: no library at {library}")
    tag = f"py3-none-linux_{platform.machine()}"
    dist_info = f"fa4-{version}.dist-info"
    files = {}
    for source in sorted((ROOT / "python" / "fa4").glob("*.py")):
        files[f"fa4/{source.name}"] = source.read_bytes()
    files["fa4/_lib/libFA4CAPI.so"] = library.read_bytes()
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        "Name: fa4\n"
        f"Version: {version}\n"
        "Summary: FlashAttention kernels for Blackwell and Hopper compiled with MLIR\n"
        "Requires-Python: >=3.9\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\n"
        "Generator: fa4 build-wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n").encode()
    record = [record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"fa4-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # The library keeps its execute bits (a shared object).
            mode = 0o755 if name.endswith(".so") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, data)
    return wheel


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--out", default=str(ROOT / "dist"))
    parser.add_argument("--version", default=None)
    args = parser.parse_args()
    print(build(args.library, args.out, args.version or project_version()))


if __name__ == "__main__":
    main()
