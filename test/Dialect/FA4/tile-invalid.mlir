// RUN: fa4-opt %s -split-input-file -verify-diagnostics

func.func @coords(%t: index) {
  // expected-error @+1 {{head_blocks, heads and positions must be positive}}
  %b, %h, %p = fa4.tile.coords %t of (%t, %t) scheduler linear head_blocks 0 heads 1 positions 128
  return
}

// -----

func.func @load_type(%q: memref<?x?x8x64xf16>, %i: index) {
  // expected-error @+1 {{tile element type 'bf16' differs from the tensor's 'f16'}}
  %t = fa4.tile.load %q[%i, %i, %i] heads 1 : memref<?x?x8x64xf16> -> tensor<128x64xbf16>
  return
}

// -----

func.func @load_columns(%q: memref<?x?x8x64xf16>, %i: index) {
  // expected-error @+1 {{tile has 128 columns, the tensor's head dim is 64}}
  %t = fa4.tile.load %q[%i, %i, %i] heads 1 : memref<?x?x8x64xf16> -> tensor<128x128xf16>
  return
}

// -----

func.func @load_rank(%q: memref<?x?x8x64xf16>, %i: index) {
  // expected-error @+1 {{needs a static 2-D tile, got 'tensor<128xf16>'}}
  %t = fa4.tile.load %q[%i, %i, %i] heads 1 : memref<?x?x8x64xf16> -> tensor<128xf16>
  return
}

// -----

func.func @load_rows(%q: memref<?x?x8x64xf16>, %i: index) {
  // expected-error @+1 {{packs 3 heads per position, which must divide the tile's 128 rows}}
  %t = fa4.tile.load %q[%i, %i, %i] heads 3 : memref<?x?x8x64xf16> -> tensor<128x64xf16>
  return
}

// -----

func.func @load_heads(%q: memref<?x?x2x64xf16>, %i: index) {
  // expected-error @+1 {{packs 4 heads per position, which must divide the 2 heads of the tensor}}
  %t = fa4.tile.load %q[%i, %i, %i] heads 4 : memref<?x?x2x64xf16> -> tensor<128x64xf16>
  return
}

// -----

func.func @store_columns(%o: memref<?x?x8x64xf16>, %t: tensor<128x32xf16>, %i: index) {
  // expected-error @+1 {{tile has 32 columns, the tensor's head dim is 64}}
  fa4.tile.store %t, %o[%i, %i, %i] heads 1 : tensor<128x32xf16> -> memref<?x?x8x64xf16>
  return
}

// -----

func.func @matmul_k(%a: tensor<128x64xf16>, %b: tensor<128x32xf16>) {
  // expected-error @+1 {{reduces over 64 columns of a but 32 columns of b}}
  %s = fa4.tile.matmul %a, %b transpose_b : tensor<128x64xf16>, tensor<128x32xf16> -> tensor<128x128xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<128x64xf16>, %b: tensor<128x64xf16>) {
  // expected-error @+1 {{result must be 128x128, got 'tensor<128x64xf32>'}}
  %s = fa4.tile.matmul %a, %b transpose_b : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
  return
}

// -----

func.func @matmul_types(%a: tensor<128x64xf16>, %b: tensor<128x64xbf16>) {
  // expected-error @+1 {{operands have different element types, 'f16' and 'bf16'}}
  %s = fa4.tile.matmul %a, %b transpose_b : tensor<128x64xf16>, tensor<128x64xbf16> -> tensor<128x128xf32>
  return
}

// -----

func.func @mask_heads(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{packs 3 heads per position, which must divide the tile's 128 rows}}
  %m = fa4.tile.mask %s rows %i keys %i lengths (%i, %i) heads 3 : tensor<128x128xf32>
  return
}

// -----

func.func @mask_window_size(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{window must be [left, right], got 3 bounds}}
  %m = fa4.tile.mask %s rows %i keys %i lengths (%i, %i) heads 1 window [1, 2, 3] : tensor<128x128xf32>
  return
}

// -----

func.func @mask_window_bound(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{window left bound must be -1 (unbounded) or in [0, 2147483391], got -2}}
  %m = fa4.tile.mask %s rows %i keys %i lengths (%i, %i) heads 1 window [-2, 0] : tensor<128x128xf32>
  return
}

// -----

func.func @mask_window_huge(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{window right bound must be -1 (unbounded) or in [0, 2147483391], got 2147483392}}
  %m = fa4.tile.mask %s rows %i keys %i lengths (%i, %i) heads 1 window [5, 2147483392] : tensor<128x128xf32>
  return
}

// -----

func.func @mask_window_causal(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{causal masking requires window right bound 0, got 3}}
  %m = fa4.tile.mask %s rows %i keys %i lengths (%i, %i) heads 1 causal window [5, 3] : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_cap(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{cap must be positive and finite as an f32, got -1.000000e+00}}
  %c = fa4.tile.softcap %s cap -1.0 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_wide(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{cap must be positive and finite as an f32, got 1.000000e+40}}
  %c = fa4.tile.softcap %s cap 1.0e40 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_polynomial(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{polynomial must be in [0, 16] (scores of every 16), got 17}}
  %c = fa4.tile.softcap %s cap 30.0 polynomial 17 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_polynomial_negative(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{polynomial must be in [0, 16] (scores of every 16), got -1}}
  %c = fa4.tile.softcap %s cap 30.0 polynomial -1 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_ceiling(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{ceiling must be in [0, 48] (log2 units; 0: never), got 49}}
  %c = fa4.tile.softcap %s cap 30.0 ceiling 49 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_ceiling_negative(%s: tensor<128x128xf32>) {
  // expected-error @+1 {{ceiling must be in [0, 48] (log2 units; 0: never), got -1}}
  %c = fa4.tile.softcap %s cap 30.0 ceiling -1 : tensor<128x128xf32>
  return
}

// -----

func.func @softcap_rank(%s: tensor<128xf32>) {
  // expected-error @+1 {{scores must be a static 2-D tile, got 'tensor<128xf32>'}}
  %c = fa4.tile.softcap %s cap 1.0 : tensor<128xf32>
  return
}

// -----

func.func @softmax_rows(%s: tensor<128x128xf32>, %m: tensor<64xf32>) {
  // expected-error @+1 {{max must be one value per row (tensor<128xf32>), got 'tensor<64xf32>'}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.125 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<64xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @softmax_shape(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{probabilities must have the shape of the scores, got 'tensor<128x64xf16>'}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.125 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x64xf16>
  return
}

// -----

func.func @softmax_scale(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{scale_log2 must be positive and finite}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.0 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @softmax_threshold(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{threshold must be non-negative, got -1}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.125 threshold -1 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @softmax_scale_f32(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{scale_log2 1.000000e+39 exceeds the largest f32 (3.402823e+38)}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 1.0e39 threshold 8 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  return
}

// -----

// P grows to 2^threshold between rescales: an f16 holds at most 2^15.
func.func @softmax_threshold_f16(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{threshold 16 lets f16 probabilities reach 2^16, past the largest f16 (65504); at most 15}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.125 threshold 16 emulated 3 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @softmax_emulated(%s: tensor<128x128xf32>, %m: tensor<128xf32>) {
  // expected-error @+1 {{emulates 17 of 16 exponentials; expected 0 to 16}}
  %p, %m1, %l1, %c = fa4.tile.softmax %s, %m, %m scale_log2 0.125 threshold 8 emulated 17 : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @rescale_rows(%o: tensor<128x64xf32>, %c: tensor<64xf32>) {
  // expected-error @+1 {{factors must be one value per row (tensor<128xf32>), got 'tensor<64xf32>'}}
  %r = fa4.tile.rescale %o by %c : tensor<128x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @normalize_shape(%o: tensor<128x64xf32>, %l: tensor<128xf32>) {
  // expected-error @+1 {{result must have the shape of the tile, got 'tensor<128x32xf16>'}}
  %r = fa4.tile.normalize %o by %l : tensor<128x64xf32>, tensor<128xf32> -> tensor<128x32xf16>
  return
}

// -----

func.func @lse_heads(%m: tensor<128xf32>, %lse: memref<?x2x?xf32>, %i: index) {
  // expected-error @+1 {{packs 4 heads per position, which must divide the 2 heads of the tensor}}
  fa4.tile.store_lse %m, %m, %lse[%i, %i, %i] heads 4 : tensor<128xf32> -> memref<?x2x?xf32>
  return
}

// -----

func.func @sink_heads(%s: memref<6xf32>, %o: tensor<128x64xf32>, %m: tensor<128xf32>, %h: index) {
  // expected-error @+1 {{packs 4 heads per position, which must divide the 6 heads of the tensor}}
  %o1, %m1, %l1 = fa4.tile.sink %s[%h] to %o, %m, %m heads 4 : memref<6xf32>, tensor<128x64xf32>, tensor<128xf32>
  return
}

// -----

func.func @sink_rows(%s: memref<8xf32>, %o: tensor<128x64xf32>, %m: tensor<64xf32>, %h: index) {
  // expected-error @+1 {{max must be one value per row (tensor<128xf32>), got 'tensor<64xf32>'}}
  %o1, %m1, %l1 = fa4.tile.sink %s[%h] to %o, %m, %m heads 1 : memref<8xf32>, tensor<128x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @modify_no_region(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{needs a score or a mask region}}
  %m = fa4.tile.modify %s at [%i, %i, %i, %i] heads 1 scale 0.125 : tensor<128x128xf32>
  return
}

// -----

func.func @modify_scale(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{scale must be positive and finite in f32, got -1}}
  %m = fa4.tile.modify %s at [%i, %i, %i, %i] heads 1 scale -1.0 mask {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    %keep = arith.cmpi sle, %k, %q : index
    fa4.yield %keep : i1
  } : tensor<128x128xf32>
  return
}

// -----

func.func @modify_packing(%s: tensor<128x128xf32>, %i: index) {
  // expected-error @+1 {{heads}}
  %m = fa4.tile.modify %s at [%i, %i, %i, %i] heads 3 scale 0.125 mask {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    %keep = arith.cmpi sle, %k, %q : index
    fa4.yield %keep : i1
  } : tensor<128x128xf32>
  return
}

// -----

func.func @modify_yield(%s: tensor<128x128xf32>, %i: index) {
  %m = fa4.tile.modify %s at [%i, %i, %i, %i] heads 1 scale 0.125 score {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    %keep = arith.cmpi sle, %k, %q : index
    // expected-error @+1 {{of the score region must yield 'f32', got 'i1'}}
    fa4.yield %keep : i1
  } : tensor<128x128xf32>
  return
}

// -----

func.func @sequence_count(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>) {
  // expected-error @+1 {{views Q, K, V, O and optionally LSE and the positions, got 2 tensors}}
  %v:2 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %q : memref<?x8x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>
  return
}

// -----

func.func @sequence_rank(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>, %k: memref<?x64xf16>) {
  // expected-error @+1 {{tensor #1 must be [T, H, D] or a paged [pages, P, H, D] in Q's element type, got 'memref<?x64xf16>'}}
  %v:4 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %k, %q, %q : memref<?x8x64xf16>, memref<?x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x64xf16>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>
  return
}

// -----

// A paged K is viewed as itself: the sequences share the cache.
func.func @sequence_paged_view(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>, %k: memref<?x64x2x64xf16>) {
  // expected-error @+1 {{view #1 must be 'memref<?x64x2x64xf16>', got 'memref<1x?x64x2x64xf16>'}}
  %v:4 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %k, %k, %q : memref<?x8x64xf16>, memref<?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x64x2x64xf16>, memref<?x64x2x64xf16>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>
  return
}

// -----

func.func @sequence_view(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>) {
  // expected-error @+1 {{view #3 must be 'memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>', got 'memref<1x?x8x64xf16>'}}
  %v:4 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %q, %q, %q : memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16>
  return
}

// -----

// The positions of a rotary embedding: [Tq] in i32, after LSE.
func.func @sequence_positions(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>, %p: memref<?xf16>) {
  // expected-error @+1 {{tensor #4 must be the positions [Tq] in i32, got 'memref<?xf16>'}}
  %v:5 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %q, %q, %q, %p : memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?xf16>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?xf16, strided<[?, 1], offset: ?>>
  return
}

// -----

func.func @sequence_positions_order(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>, %p: memref<?xi32>, %l: memref<8x?xf32>) {
  // expected-error @+1 {{views at most one tensor after LSE (the positions)}}
  %v:6 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %q, %q, %q, %p, %l : memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?xi32>, memref<8x?xf32>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?xi32, strided<[?, 1], offset: ?>>, memref<1x8x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}

// -----

func.func @sequence_lse(%b: index, %c: memref<?xi32>, %q: memref<?x8x64xf16>, %l: memref<1x8x?xf32>) {
  // expected-error @+1 {{tensor #4 must be [H, Tq] in f32, got 'memref<1x8x?xf32>'}}
  %v:5 = fa4.tile.sequence %b of %c, %c : memref<?xi32>, memref<?xi32> (%q, %q, %q, %q, %l : memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<?x8x64xf16>, memref<1x8x?xf32>) -> memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x?x8x64xf16, strided<[?, 512, 64, 1], offset: ?>>, memref<1x1x8x?xf32>
  return
}

// -----

// A paged tile lies in one page or spans whole ones.
func.func @paged_tile(%k: memref<?x64x2x64xf16>, %t: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{reads tiles of 48 keys, which must fill pages of 64 keys whole or span whole ones}}
  %kt = fa4.tile.load %k[%i, %i, %i] heads 1 pages %t : memref<?x?xi32> : memref<?x64x2x64xf16> -> tensor<48x64xf16>
  return
}

// -----

// Pages of K and V hold one head per row.
func.func @paged_heads(%k: memref<?x128x2x64xf16>, %t: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{reads pages of K or V, one head per row; got 2 heads}}
  %kt = fa4.tile.load %k[%i, %i, %i] heads 2 pages %t : memref<?x?xi32> : memref<?x128x2x64xf16> -> tensor<128x64xf16>
  return
}

// -----

// A paged cache has a static power-of-two page size.
func.func @paged_keys(%k: memref<?x?x2x64xf16>, %t: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{reads a paged KV cache [pages, P, heads, head_dim] whose page size P must be a static power of two of at least 8, got 'memref<?x?x2x64xf16>'}}
  %n = fa4.tile.keys %k[%i] pages %t : memref<?x?xi32> : memref<?x?x2x64xf16>
  return
}

// -----

// cu_seqlens_k counts keys only in a paged cache.
func.func @keys_cu_without_pages(%k: memref<?x?x2x64xf16>, %c: memref<?xi32>, %i: index) {
  // expected-error @+1 {{counts a packed sequence's keys from cu_seqlens_k only in a paged cache (packed K and V are counted by fa4.tile.sequence)}}
  %n = fa4.tile.keys %k[%i] cu_seqlens_k %c : memref<?xi32> : memref<?x?x2x64xf16>
  return
}
