// RUN: fa4-opt %s -split-input-file --fa4-plan=arch=sm_90a -verify-diagnostics | FileCheck %s
// RUN: not fa4-opt %s -split-input-file --fa4-plan=arch=sm_100a 2>&1 | FileCheck %s --check-prefix=BLACKWELL
// RUN: not fa4-opt %s -split-input-file --fa4-plan="arch=sm_90a block-n=64" 2>&1 | FileCheck %s --check-prefix=OPTION

// A KV block lies in one page. sm_90a plans blocks that divide the page
// (pages of 32 keys: 32-key blocks; of 512: the default 128); a block-n
// option that does not divide it is refused. sm_100a reads 128-key blocks
// and refuses smaller pages.
// CHECK-LABEL: func.func @small_pages
// CHECK: blockN = 32,
// BLACKWELL: error: 'fa4.attention' op pages of 32 keys cannot hold whole KV blocks of 128 keys on sm_100a: sm_100a reads 128-key blocks, so pages must be multiples of 128 keys
// OPTION: error: 'fa4.attention' op pages of 32 keys cannot hold whole KV blocks of 64 keys on sm_90a: pages of at least 16 keys take blocks that divide them
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
