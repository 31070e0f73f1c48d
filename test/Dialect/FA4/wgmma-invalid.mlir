// RUN: fa4-opt %s -split-input-file -verify-diagnostics


func.func @a_rows(%q: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op a must have M = 64 rows, got 128}}
  %s = fa4.wgmma %q, %k b_major(k) : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
  return
}

// -----

func.func @n_mismatch(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op b holds N x K = 128 x 128 but the MMA is M x N x K = 64 x 64 x 128}}
  %s = fa4.wgmma %q, %k b_major(k) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<32xf32>
  return
}

// -----

func.func @n_range(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op N (twice the result's elements) must be a multiple of 16 in [16, 256], got 12}}
  %s = fa4.wgmma %q, %k b_major(k) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<6xf32>
  return
}

// -----

func.func @k_mismatch(%p: vector<32xbf16>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op b holds K x N = 128 x 128 but the MMA is M x N x K = 64 x 128 x 64}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) : vector<32xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
  return
}

// -----

func.func @element_mismatch(%p: vector<64xf16>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op a and b element types differ: 'f16' vs 'bf16'}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
  return
}

// -----

func.func @acc_mismatch(%p: vector<64xbf16>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: vector<32xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op accumulator 'vector<32xf32>' and result 'vector<64xf32>' differ}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<32xf32> -> vector<64xf32>
  return
}

// -----

func.func @global_b(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16>) {
  // expected-error @+1 {{'fa4.wgmma' op b must live in shared memory, got 'memref<2x128x64xbf16>'}}
  %s = fa4.wgmma %q, %k b_major(k) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16> -> vector<64xf32>
  return
}

// -----

func.func @f(%s: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma.wait' op pending wgmma groups must be >= 0, got -1}}
  %r = fa4.wgmma.wait -1, %s : vector<64xf32>
  return
}
