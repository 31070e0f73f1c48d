"""A directory holding one kernel, for the device checks that compare an
entry point of fa4.torch with a direct launch bit for bit: from the
kernel's own directory the entry point may choose another kernel of the
same problem (a variant such as one Q stage, which fa4.torch prefers for
decode-sized queries on sm_90a, or one compiled on demand)."""

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def kernel_alone(kernel):
    """A temporary directory with links to `kernel`'s manifest and cubin."""
    with tempfile.TemporaryDirectory(prefix="fa4-alone-") as directory:
        manifest = Path(kernel.source).resolve()
        for name in (manifest.name, kernel.manifest["files"]["cubin"]):
            os.symlink(manifest.parent / name, Path(directory) / name)
        yield directory
