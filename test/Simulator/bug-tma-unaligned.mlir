// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py shift-tma-column load 4 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The load warp's first TMA load (Q) starts 4 bf16 columns (8 bytes) into
// the tensor: a box whose innermost coordinate is not 16-byte aligned,
// which the hardware refuses (an H100 raises an illegal instruction; found
// with FP8 over packed sequences, whose key-major V boxes started at any
// key). fa4-sim must refuse it at the load.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK: nvgpu.tma.async.load: the TMA load's innermost coordinate 4 is not 16-byte aligned (2-byte elements)

func.func @attention(%q: memref<1x256x2x64xbf16>, %k: memref<1x384x2x64xbf16>, %v: memref<1x384x2x64xbf16>, %o: memref<1x256x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x256x2x64xbf16>, memref<1x384x2x64xbf16>, memref<1x384x2x64xbf16>) outs(%o : memref<1x256x2x64xbf16>)
  return
}
