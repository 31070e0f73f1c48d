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

// -----

// A depth must end in a's last atom: 2 atoms hold K in [80, 128].
func.func @depth_short(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op depth 48 must end in a's last atom (a has 2 atoms of 64: depth in [80, 128])}}
  %s = fa4.wgmma %q, %k b_major(k) depth(48) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
  return
}

// -----

func.func @depth_register_a(%p: vector<32xbf16>, %v: memref<1x64x64xbf16, #gpu.address_space<workgroup>>, %o: vector<32xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op depth applies to a shared-memory a only; a register or Tensor Memory a has its K as its size}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) depth(64) : vector<32xbf16>, memref<1x64x64xbf16, #gpu.address_space<workgroup>>, vector<32xf32> -> vector<32xf32>
  return
}

// -----

// An MN-major b must hold the atoms N ends in, no more: N = 48 in 2 atoms.
func.func @n_atoms(%p: vector<64xbf16>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: vector<24xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op b holds K x N = 128 x 128 but the MMA is M x N x K = 64 x 48 x 128}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<24xf32> -> vector<24xf32>
  return
}

// -----

// The depth must be a multiple of the K step.
func.func @depth_step(%q: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op K must be a multiple of 16 for 'bf16', got 100}}
  %s = fa4.wgmma %q, %k b_major(k) depth(100) : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
  return
}

// -----

// An 8-bit B must be K-major: wgmma has no transposed 8-bit operand.
func.func @fp8_mn_major(%p: vector<64xf8E4M3FN>, %v: memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, %o: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op an 8-bit b must be K-major (wgmma has no transposed 8-bit operand, and fa4's 8-bit tiles are K-major on both targets)}}
  %r = fa4.wgmma %p, %v, %o b_major(mn) : vector<64xf8E4M3FN>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
  return
}

// -----

// 8-bit tiles hold 128 elements per 128-byte atom row.
func.func @fp8_atom(%q: memref<2x64x64xf8E4M3FN, #gpu.address_space<workgroup>>, %k: memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op a must be a static [atoms, rows, 128] tile of 128-byte swizzle atoms, got 'memref<2x64x64xf8E4M3FN, #gpu.address_space<workgroup>>'}}
  %s = fa4.wgmma %q, %k b_major(k) : memref<2x64x64xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> -> vector<64xf32>
  return
}

// -----

// An 8-bit K steps by 32.
func.func @fp8_depth(%q: memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, %k: memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa4.wgmma' op K must be a multiple of 32 for 'f8E4M3FN', got 48}}
  %s = fa4.wgmma %q, %k b_major(k) depth(48) : memref<1x64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>> -> vector<64xf32>
  return
}

// -----

// A and B must agree on the element type.
func.func @fp8_mixed(%p: vector<64xbf16>, %v: memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, %o: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma' op a and b element types differ: 'bf16' vs 'f8E4M3FN'}}
  %r = fa4.wgmma %p, %v, %o b_major(k) : vector<64xbf16>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, vector<64xf32> -> vector<64xf32>
  return
}

// -----

func.func @quantize_type(%s: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma.quantize' op rounds to e4m3 (f8E4M3FN) operands, got 'bf16'}}
  %p = fa4.wgmma.quantize %s : vector<64xf32> -> vector<64xbf16>
  return
}

// -----

func.func @quantize_size(%s: vector<64xf32>) {
  // expected-error @+1 {{'fa4.wgmma.quantize' op source and result fragments differ in size: 64 vs 32}}
  %p = fa4.wgmma.quantize %s : vector<64xf32> -> vector<32xf8E4M3FN>
  return
}

// -----

func.func @quantize_steps(%s: vector<24xf32>) {
  // expected-error @+1 {{'fa4.wgmma.quantize' op fragment of 24 elements is not whole k32 steps (a multiple of 16: K = 2 x elements)}}
  %p = fa4.wgmma.quantize %s : vector<24xf32> -> vector<24xf8E4M3FN>
  return
}
