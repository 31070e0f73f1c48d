#!/usr/bin/env python3
"""Proves python/fa4/runtime.py on a GPU with the sm_90a probe kernel of
test/Integration/sm90a/tma-roundtrip.mlir: every CTA TMA-loads a 128-byte
swizzled box (64 columns x 4 heads x 32 rows) of a [B, S, H, D] bf16 tensor
and TMA-stores it to another tensor at the same coordinates, for the batch a
scalar parameter names. Passing means the runtime's context handling, module
loading, tensor-map encoding (dims, strides, box, swizzle, out-of-bounds
handling), parameter passing and cuLaunchKernelEx all work.

  runtime-check.py PROBE.cubin     (on the GPU machine, with torch)
"""

import sys

import torch

import fa4.runtime as rt

BATCH, ROWS, HEADS, DIM = 2, 100, 8, 128
BOX = [64, 4, 32, 1]          # innermost first, as the manifest writes it
COPIED_BATCH = 1
MAP = {"operand": "probe", "element": "bf16", "box": BOX, "swizzle": "128B",
       "oob_fill": "zero"}


def main():
    cubin = open(sys.argv[1], "rb").read()
    torch.manual_seed(0)
    source = torch.randn(BATCH, ROWS, HEADS, DIM, device="cuda").to(torch.bfloat16)
    poison = -7.0
    target = torch.full_like(source, poison)

    drv = rt.driver()
    context, device = drv.context()
    function = drv.function(drv.load_module(cubin), "tma_roundtrip")
    maps = b"".join(
        drv.encode_tensor_map(rt.tensor_map_args(
            MAP, rt.Operand(t.data_ptr(), list(t.shape), "bf16")))
        for t in (source, target))
    # Tensor maps live in global memory; the kernel takes their addresses.
    descriptors = torch.frombuffer(bytearray(maps), dtype=torch.uint8).to("cuda")
    assert descriptors.data_ptr() % rt.TENSOR_MAP_ALIGNMENT == 0
    import ctypes
    grid = ((ROWS + BOX[2] - 1) // BOX[2], 1, 1)
    stream = torch.cuda.current_stream().cuda_stream
    values = [ctypes.c_uint64(descriptors.data_ptr()),
              ctypes.c_uint64(descriptors.data_ptr() + rt.TENSOR_MAP_BYTES),
              ctypes.c_int32(COPIED_BATCH)]
    drv.launch(function, grid, (128, 1, 1), (1, 1, 1), 16384, stream, values)
    torch.cuda.synchronize()

    inside = (slice(COPIED_BATCH, COPIED_BATCH + 1), slice(None), slice(0, 4),
              slice(64, 128))
    copied = torch.equal(target[inside], source[inside])
    untouched = target.clone()
    untouched[inside] = poison
    rest = bool((untouched == poison).all())
    print(f"device: {torch.cuda.get_device_name()} (sm_{''.join(map(str, torch.cuda.get_device_capability()))})")
    print(f"grid {list(grid)}: box copied exactly: {copied}; "
          f"everything outside the boxes untouched: {rest}")
    if not (copied and rest):
        sys.exit(1)
    print("runtime-check: ok")


if __name__ == "__main__":
    main()
