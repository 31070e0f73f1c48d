// RUN: fa4-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{TMEM lanes must be a multiple of 32 in [32, 128], got 256}}
func.func @f(%t: !fa4.tmem<256x128xf32>)

// -----

// expected-error @+1 {{TMEM element type must be f32, i32, f16, bf16 or f8E4M3FN, got 'f64'}}
func.func @f(%t: !fa4.tmem<128x128xf64>)

// -----

// expected-error @+1 {{TMEM elements per lane must fill whole 32-bit columns, got 3 x 16 bits}}
func.func @f(%t: !fa4.tmem<128x3xbf16>)

// -----

// expected-error @+1 {{TMEM region of 1024 columns exceeds the 512 columns of Tensor Memory}}
func.func @f(%t: !fa4.tmem<128x1024xf32>)

// -----

// expected-error @+1 {{expected lanes x elements x type, got 3 dimensions}}
func.func @f(%t: !fa4.tmem<2x128x128xf32>)

// -----

func.func @f(%slot: memref<1xi32, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{allocates a power of two of columns in [32, 512], got 384}}
  fa4.tmem.alloc 384 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @f(%slot: memref<1xi32>) {
  // expected-error @+1 {{TMEM address slot must be in shared memory (#gpu.address_space<workgroup>), got 'memref<1xi32>'}}
  fa4.tmem.alloc 512 columns into %slot : memref<1xi32>
  return
}

// -----

func.func @f(%slot: memref<1xi32, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{result must describe a whole allocation (128 lanes, a power of two of columns in [32, 512]), got '!fa4.tmem<128x384xf32>'}}
  %t = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x384xf32>
  return
}

// -----

func.func @f(%p: !fa4.tmem<128x96xbf16>) {
  // expected-error @+1 {{frees a whole allocation, got '!fa4.tmem<128x96xbf16>'}}
  fa4.tmem.dealloc %p : !fa4.tmem<128x96xbf16>
  return
}

// -----

func.func @f(%t: !fa4.tmem<128x512xf32>) {
  // expected-error @+1 {{view of columns [448, 576) exceeds the 512 columns of its source}}
  %s = fa4.tmem.view %t[448] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  return
}

// -----

func.func @f(%t: !fa4.tmem<128x512xf32>) {
  // expected-error @+1 {{view keeps the lanes of its source (128), got 64}}
  %s = fa4.tmem.view %t[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<64x128xf32>
  return
}

// -----

func.func @f(%s: !fa4.tmem<128x128xf32>) {
  // expected-error @+1 {{fragment must be 1, 2, 4, ..., or 128 32-bit registers, got 24 x 32 bits}}
  %r = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<24xf32>
  return
}

// -----

func.func @f(%s: !fa4.tmem<128x128xf32>) {
  // expected-error @+1 {{elements [112, 144) exceed the 128 elements of a lane}}
  %r = fa4.tmem.load %s[112] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  return
}

// -----

func.func @f(%p: !fa4.tmem<128x128xbf16>) {
  // expected-error @+1 {{loads 32-bit elements, got 'vector<32xbf16>'}}
  %r = fa4.tmem.load %p[0] : !fa4.tmem<128x128xbf16> -> vector<32xbf16>
  return
}

// -----

func.func @f(%p: !fa4.tmem<128x128xbf16>, %v: vector<32xf32>) {
  // expected-error @+1 {{fragment element type 'f32' must have the width of the TMEM element type 'bf16'}}
  fa4.tmem.store %v, %p[0] : vector<32xf32>, !fa4.tmem<128x128xbf16>
  return
}

// -----

func.func @f(%p: !fa4.tmem<128x128xbf16>, %v: vector<32xbf16>) {
  // expected-error @+1 {{offset 3 must start a 32-bit column}}
  fa4.tmem.store %v, %p[3] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
  return
}

// -----

func.func @f(%s: !fa4.tmem<64x128xf32>) {
  // expected-error @+1 {{a warpgroup accesses all 128 lanes, got a region of 64}}
  %r = fa4.tmem.load %s[0] : !fa4.tmem<64x128xf32> -> vector<32xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !tile, %k: !tile, %s: !fa4.tmem<128x128xbf16>, %acc: i1) {
  // expected-error @+1 {{accumulator must be a 128-lane f32 TMEM region, got '!fa4.tmem<128x128xbf16>'}}
  fa4.mma %q, %k, %s, %acc b_major(k) : !tile, !tile, !fa4.tmem<128x128xbf16>
  return
}

// -----

func.func @f(%q: memref<2x128x64xbf16>, %k: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %s: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{a must live in shared memory, got 'memref<2x128x64xbf16>'}}
  fa4.mma %q, %k, %s, %acc b_major(k) : memref<2x128x64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !tile, %k: memref<2x128x32xbf16, #gpu.address_space<workgroup>>, %s: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{b must be a static [atoms, rows, 64] tile of 128-byte swizzle atoms, got 'memref<2x128x32xbf16, #gpu.address_space<workgroup>>'}}
  fa4.mma %q, %k, %s, %acc b_major(k) : !tile, memref<2x128x32xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !tile, %k: memref<2x64x64xbf16, #gpu.address_space<workgroup>>, %s: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{b holds N x K = 64 x 128 but the MMA is M x N x K = 128 x 128 x 128}}
  fa4.mma %q, %k, %s, %acc b_major(k) : !tile, memref<2x64x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

!tile = memref<2x128x64xf16, #gpu.address_space<workgroup>>
func.func @f(%p: !fa4.tmem<128x128xbf16>, %v: !tile, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{a and b element types differ: 'bf16' vs 'f16'}}
  fa4.mma %p, %v, %o, %acc b_major(mn) : !fa4.tmem<128x128xbf16>, !tile, !fa4.tmem<128x128xf32>
  return
}

// -----

func.func @f(%t: !fa4.tmem<128x512xf32>) {
  // expected-error @+1 {{view of columns [-32, 96) exceeds the 512 columns of its source}}
  %s = fa4.tmem.view %t[-32] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  return
}

// -----

func.func @buffer_lanes() {
  // expected-error @+1 {{a buffer spans all 128 lanes, got 64}}
  %b = fa4.tmem.buffer "b" : !fa4.tmem<64x128xf32>
  return
}

// -----

func.func @buffer_name() {
  // expected-error @+1 {{needs a non-empty name}}
  %b = fa4.tmem.buffer "" : !fa4.tmem<128x128xf32>
  return
}

// -----

func.func @buffer_in_role() {
  fa4.warp_specialize warps 4 {
    fa4.role "a" warps [0, 4) registers 64 {
      // expected-error @+1 {{must be declared outside the roles that use it}}
      %b = fa4.tmem.buffer "b" : !fa4.tmem<128x128xf32>
    }
  }
  return
}

// -----

// Offsets near 2^63 must not wrap past the bound.
func.func @f(%t: !fa4.tmem<128x512xf32>) {
  // expected-error @+1 {{view of columns [9223372036854775807, 9223372036854775807 + 128) exceeds the 512 columns of its source}}
  %s = fa4.tmem.view %t[9223372036854775807] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  return
}

// -----

func.func @f(%s: !fa4.tmem<128x128xf32>) {
  // expected-error @+1 {{elements [9223372036854775807, 9223372036854775807 + 32) exceed the 128 elements of a lane}}
  %r = fa4.tmem.load %s[9223372036854775807] : !fa4.tmem<128x128xf32> -> vector<32xf32>
  return
}

// -----

// A base read from the slot describes the columns allocated into it, so
// views of it cannot reach past the allocation.
func.func @f(%slot: memref<1xi32, #gpu.address_space<workgroup>>) {
  // expected-note @+1 {{the allocation}}
  fa4.tmem.alloc 256 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
  // expected-error @+1 {{reads an allocation of 512 columns from a slot that fa4.tmem.alloc fills with 256 columns}}
  %t = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
  %s = fa4.tmem.view %t[384] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
  return
}

// -----

// The same through views of the dynamic shared memory, as fa4-allocate-smem
// leaves the slot.
func.func @f() {
  %c0 = arith.constant 0 : index
  %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  %slot = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1xi32, #gpu.address_space<workgroup>>
  // expected-note @+1 {{the allocation}}
  fa4.tmem.alloc 128 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
  %smem2 = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
  %c0b = arith.constant 0 : index
  %slot2 = memref.view %smem2[%c0b][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1xi32, #gpu.address_space<workgroup>>
  // expected-error @+1 {{reads an allocation of 512 columns from a slot that fa4.tmem.alloc fills with 128 columns}}
  %t = fa4.tmem.base %slot2 : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !tile, %k: !tile, %s: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op depth 144 must end in a's last atom (a has 2 atoms of 64: depth in [80, 128])}}
  fa4.mma %q, %k, %s, %acc b_major(k) depth(144) : !tile, !tile, !fa4.tmem<128x128xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%p: !fa4.tmem<128x128xbf16>, %v: !tile, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op depth applies to a shared-memory a only; a register or Tensor Memory a has its K as its size}}
  fa4.mma %p, %v, %o, %acc b_major(mn) depth(128) : !fa4.tmem<128x128xbf16>, !tile, !fa4.tmem<128x128xf32>
  return
}

// -----

// kind::f8f6f4 steps 32 e4m3 elements: K = 48 is not a whole step.
func.func @fp8_k(%p: !fa4.tmem<128x48xf8E4M3FN>, %v: memref<1x128x48xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op K must be a multiple of 32 for 'f8E4M3FN', got 48}}
  fa4.mma %p, %v, %o, %acc b_major(k) : !fa4.tmem<128x48xf8E4M3FN>, memref<1x128x48xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// One type for both operands.
func.func @fp8_mixed(%p: !fa4.tmem<128x128xf8E4M3FN>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op a and b element types differ: 'f8E4M3FN' vs 'bf16'}}
  fa4.mma %p, %v, %o, %acc b_major(mn) : !fa4.tmem<128x128xf8E4M3FN>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// An 8-bit b is K-major.
func.func @fp8_mn(%p: !fa4.tmem<128x128xf8E4M3FN>, %v: memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op an 8-bit b must be K-major (wgmma has no transposed 8-bit operand, and fa4's 8-bit tiles are K-major on both targets)}}
  fa4.mma %p, %v, %o, %acc b_major(mn) : !fa4.tmem<128x128xf8E4M3FN>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// A K window stays inside its atom: columns [96, 160) of a 128-column atom
// do not.
func.func @window_crosses(%p: !fa4.tmem<128x64xf8E4M3FN>, %v: memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1], offset: 96>, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op b columns [c, c + 64) of one 128-column atom must start at and span multiples of 32 inside the atom, rows one atom row apart, got 'memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1], offset: 96>, #gpu.address_space<workgroup>>'}}
  fa4.mma %p, %v, %o, %acc b_major(k) : !fa4.tmem<128x64xf8E4M3FN>, memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1], offset: 96>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// A K window's K is the MMA's: 64 columns against a 32-element a.
func.func @window_k(%p: !fa4.tmem<128x32xf8E4M3FN>, %v: memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op b holds N x K = 128 x 64 but the MMA is M x N x K = 128 x 128 x 32}}
  fa4.mma %p, %v, %o, %acc b_major(k) : !fa4.tmem<128x32xf8E4M3FN>, memref<1x128x64xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// A window's rows are atom rows of the tile: a row stride of 256 is not.
func.func @window_rows(%p: !fa4.tmem<128x64xf8E4M3FN>, %v: memref<1x128x64xf8E4M3FN, strided<[32768, 256, 1]>, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op b columns [c, c + 64) of one 128-column atom must start at and span multiples of 32 inside the atom, rows one atom row apart}}
  fa4.mma %p, %v, %o, %acc b_major(k) : !fa4.tmem<128x64xf8E4M3FN>, memref<1x128x64xf8E4M3FN, strided<[32768, 256, 1]>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

// A K window starts at a K step: column 16 is half of one.
func.func @window_start(%p: !fa4.tmem<128x32xf8E4M3FN>, %v: memref<1x128x32xf8E4M3FN, strided<[16384, 128, 1], offset: 16>, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{'fa4.mma' op b columns [c, c + 32) of one 128-column atom must start at and span multiples of 32 inside the atom, rows one atom row apart}}
  fa4.mma %p, %v, %o, %acc b_major(k) : !fa4.tmem<128x32xf8E4M3FN>, memref<1x128x32xf8E4M3FN, strided<[16384, 128, 1], offset: 16>, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}

// -----

!rows32 = memref<2x32x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !rows32, %k: !tile, %s: !fa4.tmem<128x32xf32>, %acc: i1) {
  // expected-error @+1 {{ws(M) takes M = 32 or 64, got 48}}
  fa4.mma %q, %k, %s, %acc b_major(k) ws(48) : !rows32, !tile, !fa4.tmem<128x32xf32>
  return
}

// -----

!rows32 = memref<2x32x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !rows32, %k: !tile, %s: !fa4.tmem<128x24xf32>, %acc: i1) {
  // expected-error @+1 {{a ws(32) accumulator of 24 columns holds N = 24 x 128 / 32; N must be 64, 128 or 256 (16, 32 or 64 columns)}}
  fa4.mma %q, %k, %s, %acc b_major(k) ws(32) : !rows32, !tile, !fa4.tmem<128x24xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%p: !fa4.tmem<128x128xbf16>, %v: !tile, %o: !fa4.tmem<128x32xf32>, %acc: i1) {
  // expected-error @+1 {{ws(32) reads a from shared memory only (a Tensor Memory a of the folded layout is not built)}}
  fa4.mma %p, %v, %o, %acc b_major(mn) ws(32) : !fa4.tmem<128x128xbf16>, !tile, !fa4.tmem<128x32xf32>
  return
}

// -----

!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !tile, %k: !tile, %s: !fa4.tmem<128x32xf32>, %acc: i1) {
  // expected-error @+1 {{a must have M = 32 rows, got 128}}
  fa4.mma %q, %k, %s, %acc b_major(k) ws(32) : !tile, !tile, !fa4.tmem<128x32xf32>
  return
}

// -----

!rows32 = memref<2x32x64xbf16, #gpu.address_space<workgroup>>
!keys64 = memref<2x64x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !rows32, %k: !keys64, %s: !fa4.tmem<128x32xf32>, %acc: i1) {
  // expected-error @+1 {{b holds N x K = 64 x 128 but the MMA is M x N x K = 32 x 128 x 128}}
  fa4.mma %q, %k, %s, %acc b_major(k) ws(32) : !rows32, !keys64, !fa4.tmem<128x32xf32>
  return
}

// -----

// An MN-major a (the decode family's V^T) holds M along its atoms.
!rows16 = memref<2x16x64xbf16, #gpu.address_space<workgroup>>
!narrow = memref<1x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%v: !narrow, %p: !rows16, %o: !fa4.tmem<128x16xf32>, %acc: i1) {
  // expected-error @+1 {{an MN-major a must hold M = 128 columns in its atoms, got 64}}
  fa4.mma %v, %p, %o, %acc a_major(mn) b_major(k) : !narrow, !rows16, !fa4.tmem<128x16xf32>
  return
}

// -----

!rows16 = memref<1x16x128xf8E4M3FN, #gpu.address_space<workgroup>>
!v8 = memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
func.func @f(%v: !v8, %p: !rows16, %o: !fa4.tmem<128x16xf32>, %acc: i1) {
  // expected-error @+1 {{an MN-major a must be 16-bit (8-bit MMA operands are K-major), got 'f8E4M3FN'}}
  fa4.mma %v, %p, %o, %acc a_major(mn) b_major(k) : !v8, !rows16, !fa4.tmem<128x16xf32>
  return
}

// -----

!rows32 = memref<2x32x64xbf16, #gpu.address_space<workgroup>>
!tile = memref<2x128x64xbf16, #gpu.address_space<workgroup>>
func.func @f(%q: !rows32, %k: !tile, %s: !fa4.tmem<128x32xf32>, %acc: i1) {
  // expected-error @+1 {{an MN-major a takes neither ws nor depth}}
  fa4.mma %q, %k, %s, %acc a_major(mn) b_major(k) ws(32) : !rows32, !tile, !fa4.tmem<128x32xf32>
  return
}

// -----

func.func @f(%p: !fa4.tmem<128x64xbf16>, %v: memref<2x128x64xbf16, #gpu.address_space<workgroup>>, %o: !fa4.tmem<128x128xf32>, %acc: i1) {
  // expected-error @+1 {{a_major applies to a shared-memory a only}}
  fa4.mma %p, %v, %o, %acc a_major(mn) b_major(mn) : !fa4.tmem<128x64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
  return
}
