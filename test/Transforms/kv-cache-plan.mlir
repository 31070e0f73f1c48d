// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_90a -verify-diagnostics | FileCheck %s
// RUN: not fa4-opt %s -split-input-file --fa4-plan=arch=sm_100a 2>/dev/null | FileCheck %s --check-prefix=BLACKWELL
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a block-n=48" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a block-n=128" 2>&1 | FileCheck %s --check-prefix=SPAN90
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_100a" 2>&1 | FileCheck %s --check-prefix=SPAN100

// A KV block lies in one page or spans whole pages (one TMA box each).
// sm_90a plans blocks of at most two pages (pages of 32 keys: 64-key
// blocks; of 512: the default 128); sm_100a's blocks are 128 keys, over
// four pages of 32. A block-n option that does not divide the page or
// a multiple of it is refused at the op.
// CHECK-LABEL: func.func @small_pages
// CHECK: blockN = 64,
// BLACKWELL-LABEL: func.func @small_pages
// BLACKWELL: blockN = 128,
// The load warp computes every box's page: at most two per block on sm_90a,
// four on sm_100a.
// SPAN90: error: 'fa4.attention' op KV blocks of 128 keys span 4 pages of 32 keys, more than the 2 whose page indices the sm_90a load warp holds; use a block-n of at most 64
// SPAN100: error: 'fa4.attention' op KV blocks of 128 keys span 8 pages of 16 keys, more than the 4 whose page indices the sm_100a load warp holds; use pages of at least 32 keys
// OPTION: error: 'fa4.attention' op plan blockN 48 and the page size 32 must divide one another: a KV block lies in one page or spans whole ones
func.func @small_pages(%q: memref<?x?x8x64xf16>, %k: memref<?x32x2x64xf16>,
                       %v: memref<?x32x2x64xf16>, %o: memref<?x?x8x64xf16>,
                       %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>, memref<?x32x2x64xf16>,
                    memref<?x32x2x64xf16>) outs(%o : memref<?x?x8x64xf16>)
                paged(%pages : memref<?x?xi32>)
  return
}

// -----

// CHECK-LABEL: func.func @large_pages
// CHECK: blockN = 128,
func.func @large_pages(%q: memref<?x?x8x64xf16>, %k: memref<?x512x2x64xf16>,
                       %v: memref<?x512x2x64xf16>, %o: memref<?x?x8x64xf16>,
                       %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>, memref<?x512x2x64xf16>,
                    memref<?x512x2x64xf16>) outs(%o : memref<?x?x8x64xf16>)
                paged(%pages : memref<?x?xi32>)
  return
}

// -----

// The kernel computes a batch's capacity and the table's offsets in 32 bits.
func.func @huge_table(%q: memref<?x?x8x64xf16>, %k: memref<?x512x2x64xf16>,
                      %v: memref<?x512x2x64xf16>, %o: memref<?x?x8x64xf16>,
                      %pages: memref<?x8388608xi32>) {
  // expected-error @+1 {{max_pages x page size = 8388608 x 512 keys exceeds the kernel's 32-bit key positions (2147483647)}}
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>, memref<?x512x2x64xf16>,
                    memref<?x512x2x64xf16>) outs(%o : memref<?x?x8x64xf16>)
                paged(%pages : memref<?x8388608xi32>)
  return
}

// -----

// CHECK-LABEL: func.func @vllm_pages
// CHECK: blockN = 32,
func.func @vllm_pages(%q: memref<?x?x8x64xf16>, %k: memref<?x16x2x64xf16>,
                      %v: memref<?x16x2x64xf16>, %o: memref<?x?x8x64xf16>,
                      %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xf16>, memref<?x16x2x64xf16>,
                    memref<?x16x2x64xf16>) outs(%o : memref<?x?x8x64xf16>)
                paged(%pages : memref<?x?xi32>)
  return
}

// -----

// Packed sequences over a paged cache take the dense batch's blocks: 64
// keys over two pages of 32 on sm_90a, 128 over four on sm_100a.
// CHECK-LABEL: func.func @packed_small_pages
// CHECK: blockN = 64,
// BLACKWELL-LABEL: func.func @packed_small_pages
// BLACKWELL: blockN = 128,
func.func @packed_small_pages(%q: memref<?x8x64xf16>, %k: memref<?x32x2x64xf16>,
                              %v: memref<?x32x2x64xf16>, %o: memref<?x8x64xf16>,
                              %cu_q: memref<?xi32>, %cu_k: memref<?xi32>,
                              %pages: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x64xf16>, memref<?x32x2x64xf16>,
                    memref<?x32x2x64xf16>) outs(%o : memref<?x8x64xf16>)
                varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>)
                paged(%pages : memref<?x?xi32>)
  return
}
