// RUN: fa4-opt %s -split-input-file -verify-diagnostics

// The rotary embedding's rules on fa4.attention and fa4.tile.rope.

// R (the table's columns) must be a multiple of 8.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x12xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{rope rotates dims [rope_start, rope_start + R) of Q: R (cos_sin's dim 1) and rope_start must be multiples of 8 with R > 0 and rope_start + R <= head dim 64, got rope_start = 0, R = 12}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x12xf32>, memref<2x16xi32>)
  return
}

// -----

// The rotated dims must lie within Q's head dim.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x32xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{got rope_start = 40, R = 32}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x32xf32>, memref<2x16xi32>) {rope_start = 40 : i64}
  return
}

// -----

// rope_start must be a multiple of 8 (and not negative).
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x32xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{got rope_start = -8, R = 32}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x32xf32>, memref<2x16xi32>) {rope_start = -8 : i64}
  return
}

// -----

// With rope_output they must lie within O's head dim too.
func.func @f(%q: memref<2x16x8x128xbf16>, %k: memref<2x32x2x128xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x64xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{rope rotates dims [rope_start, rope_start + R) of Q and O: R (cos_sin's dim 1) and rope_start must be multiples of 8 with R > 0 and rope_start + R <= head dim 64, got rope_start = 64, R = 64}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x128xbf16>, memref<2x32x2x128xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x64xf32>, memref<2x16xi32>) {rope_start = 64 : i64, rope_output}
  return
}

// -----

// The table's columns are static.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x?xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{cos_sin dimension 1 (rotary_dims) must be static}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x?xf32>, memref<2x16xi32>)
  return
}

// -----

// One position per query token of each batch.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x64xf32>, %pos: memref<2x15xi32>) {
  // expected-error @+1 {{seq_q mismatch: query dimension 1 is 16 but positions dimension 1 is 15}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x64xf32>, memref<2x15xi32>)
  return
}

// -----

// Packed sequences take [total_q] positions.
func.func @f(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>, %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %cs: memref<100x64xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{positions must be [total_q] with variable lengths, got 'memref<2x16xi32>'}}
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>, memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>) varlen(%cq, %ck : memref<?xi32>, memref<?xi32>) rope(%cs, %pos : memref<100x64xf32>, memref<2x16xi32>)
  return
}

// -----

// The kernel reads the tables through plain pointers.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x64xf32, strided<[128, 1]>>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{cos_sin must be a contiguous tensor in global memory, got 'memref<100x64xf32, strided<[128, 1]>>'}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x64xf32, strided<[128, 1]>>, memref<2x16xi32>)
  return
}

// -----

// FP8 queries are not rotated.
func.func @f(%q: memref<2x16x8x64xf8E4M3FN>, %k: memref<2x32x2x64xf8E4M3FN>, %v: memref<2x32x2x64xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x64xf32>, %pos: memref<2x16xi32>) {
  // expected-error @+1 {{rope rotates 16-bit queries; FP8 operands take their queries rotated}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xf8E4M3FN>, memref<2x32x2x64xf8E4M3FN>, memref<2x32x2x64xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<2x16x8x64xbf16>) rope(%cs, %pos : memref<100x64xf32>, memref<2x16xi32>)
  return
}

// -----

// rope_output without rope.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>) {
  // expected-error @+1 {{rope_output needs rope(%cos_sin, %positions)}}
  fa4.attention ins(%q, %k, %v : memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>) outs(%o : memref<2x16x8x64xbf16>) {rope_output}
  return
}

// -----

// fa4.tile.rope: a 16-bit Q tile forward, O's f32 tile back.
func.func @f(%t: tensor<64x64xf32>, %cs: memref<?x64xf32>, %pos: memref<?x?xi32>, %b: index, %i: index) {
  // expected-error @+1 {{rotates a 16-bit Q tile, got 'tensor<64x64xf32>'}}
  %r = fa4.tile.rope %t, %cs, %pos [%b, %i] heads 1 start 0 : tensor<64x64xf32>, memref<?x64xf32>, memref<?x?xi32>
  return
}

// -----

func.func @f(%t: tensor<64x64xbf16>, %cs: memref<?x32xf32>, %pos: memref<?x?xi32>, %b: index, %i: index) {
  // expected-error @+1 {{rotates columns [start, start + R) of the tile (R the table's dimension 1): R and start must be multiples of 8 with R > 0 and start + R <= 64, got start = 48, R = 32}}
  %r = fa4.tile.rope %t, %cs, %pos [%b, %i] heads 1 start 48 : tensor<64x64xbf16>, memref<?x32xf32>, memref<?x?xi32>
  return
}

// -----

func.func @f(%t: tensor<64x64xbf16>, %cs: memref<?x32xf32>, %pos: memref<?x?xi32>, %b: index, %i: index) {
  // expected-error @+1 {{packs 3 heads per position, which must divide the tile's 64 rows}}
  %r = fa4.tile.rope %t, %cs, %pos [%b, %i] heads 3 start 0 : tensor<64x64xbf16>, memref<?x32xf32>, memref<?x?xi32>
  return
}

// -----

// The table and the positions come together.
func.func @f(%q: memref<2x16x8x64xbf16>, %k: memref<2x32x2x64xbf16>, %v: memref<2x32x2x64xbf16>, %o: memref<2x16x8x64xbf16>, %cs: memref<100x64xf32>) {
  // expected-error @+1 {{takes the rope table and positions together}}
  "fa4.attention"(%q, %k, %v, %o, %cs) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0>}> ({}, {}) : (memref<2x16x8x64xbf16>, memref<2x32x2x64xbf16>, memref<2x32x2x64xbf16>, memref<2x16x8x64xbf16>, memref<100x64xf32>) -> ()
  return
}
