// RUN: fa4-opt %s -split-input-file | FileCheck %s
// Round trip through the generic form too: the custom printer and parser
// must agree with the properties.
// RUN: fa4-opt %s -split-input-file -mlir-print-op-generic | fa4-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @static_mha
// CHECK: fa4.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x1024x16x128xbf16>, memref<2x1024x16x128xbf16>, memref<2x1024x16x128xbf16>) outs(%{{.*}} : memref<2x1024x16x128xbf16>)
// CHECK-NOT: lse
// CHECK-NOT: {
// CHECK-NEXT: return
func.func @static_mha(%q: memref<2x1024x16x128xbf16>, %k: memref<2x1024x16x128xbf16>,
                      %v: memref<2x1024x16x128xbf16>, %o: memref<2x1024x16x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<2x1024x16x128xbf16>, memref<2x1024x16x128xbf16>,
                    memref<2x1024x16x128xbf16>) outs(%o : memref<2x1024x16x128xbf16>)
  return
}

// -----

// Dynamic batch and sequence lengths, GQA (32 query heads over 8 KV heads),
// LSE and every attribute at once.
// CHECK-LABEL: func @dynamic_gqa_all_attributes
// CHECK: fa4.attention
// CHECK-SAME: outs(%{{.*}} : memref<?x?x32x64xf16>)
// CHECK-SAME: lse(%{{.*}} : memref<?x32x?xf32>)
// CHECK-SAME: {causal, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 256, 0>}
func.func @dynamic_gqa_all_attributes(%q: memref<?x?x32x64xf16>, %k: memref<?x?x8x64xf16>,
                                      %v: memref<?x?x8x64xf16>, %o: memref<?x?x32x64xf16>,
                                      %lse: memref<?x32x?xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x32x64xf16>, memref<?x?x8x64xf16>, memref<?x?x8x64xf16>)
                outs(%o : memref<?x?x32x64xf16>) lse(%lse : memref<?x32x?xf32>)
                {causal, window = array<i64: 256, 0>, scale = 0.125 : f32, softcap = 30.0 : f32}
  return
}

// -----

// Multi-query attention, Sq != Skv, a window unbounded on the left, and
// Dv != Dqk.
// CHECK-LABEL: func @mqa_window
// CHECK: fa4.attention
// CHECK-SAME: memref<1x77x8x64xf16>, memref<1x300x1x64xf16>, memref<1x300x1x128xf16>
// CHECK-SAME: {window = array<i64: -1, 16>}
func.func @mqa_window(%q: memref<1x77x8x64xf16>, %k: memref<1x300x1x64xf16>,
                      %v: memref<1x300x1x128xf16>, %o: memref<1x77x8x128xf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x77x8x64xf16>, memref<1x300x1x64xf16>, memref<1x300x1x128xf16>)
                outs(%o : memref<1x77x8x128xf16>) {window = array<i64: -1, 16>}
  return
}

// -----

// A sliding window bounded on both sides, and strided (non-contiguous batch)
// operands whose head dimension is still unit-stride.
// CHECK-LABEL: func @strided_window
// CHECK: fa4.attention
// CHECK-SAME: memref<4x128x2x64xbf16, strided<[65536, 512, 64, 1]>>
// CHECK-SAME: {window = array<i64: 64, 64>}
func.func @strided_window(%q: memref<4x128x2x64xbf16, strided<[65536, 512, 64, 1]>>,
                          %k: memref<4x128x2x64xbf16>, %v: memref<4x128x2x64xbf16>,
                          %o: memref<4x128x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<4x128x2x64xbf16, strided<[65536, 512, 64, 1]>>,
                    memref<4x128x2x64xbf16>, memref<4x128x2x64xbf16>)
                outs(%o : memref<4x128x2x64xbf16>) {window = array<i64: 64, 64>}
  return
}

// -----

// Causal without a window, with only the softcap given.
// CHECK-LABEL: func @causal_softcap
// CHECK: fa4.attention
// CHECK-SAME: {causal, softcap = 5.000000e+01 : f32}
func.func @causal_softcap(%q: memref<1x16x4x128xbf16>, %k: memref<1x16x4x128xbf16>,
                          %v: memref<1x16x4x128xbf16>, %o: memref<1x16x4x128xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<1x16x4x128xbf16>, memref<1x16x4x128xbf16>,
                    memref<1x16x4x128xbf16>) outs(%o : memref<1x16x4x128xbf16>)
                {causal, softcap = 50.0 : f32}
  return
}

// -----

// Attention sinks with LSE (a run-time head count) and without.
// CHECK-LABEL: func @sinks
// CHECK: fa4.attention
// CHECK-SAME: lse(%{{.*}} : memref<?x8x?xf32>) sink(%{{.*}} : memref<?xf32>) {causal}
// CHECK: fa4.attention
// CHECK-SAME: outs(%{{.*}} : memref<?x?x8x64xbf16>) sink(%{{.*}} : memref<8xf32>) {window = array<i64: 127, 0>}
func.func @sinks(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                 %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>,
                 %lse: memref<?x8x?xf32>, %s: memref<?xf32>, %s8: memref<8xf32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>)
                lse(%lse : memref<?x8x?xf32>) sink(%s : memref<?xf32>) {causal}
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>)
                sink(%s8 : memref<8xf32>) {window = array<i64: 127, 0>}
  return
}

// -----

// Score and mask regions with captured operands (ALiBi slopes, document
// ids) round-trip, block arguments and all.
// CHECK-LABEL: func @regions
// CHECK: fa4.attention
// CHECK-SAME: captures(%{{.*}}, %{{.*}} : memref<8xf32>, memref<?x?xi32>) {causal} score {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[SLOPES:.*]]: memref<8xf32>, %{{.*}}: memref<?x?xi32>):
// CHECK: memref.load %[[SLOPES]][%[[H]]] : memref<8xf32>
// CHECK: fa4.yield %{{.*}} : f32
// CHECK: } mask {
// CHECK: fa4.yield %{{.*}} : i1
// CHECK: fa4.attention
// CHECK-SAME: outs(%{{.*}} : memref<?x?x8x64xbf16>) mask {
func.func @regions(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                   %v: memref<?x?x2x64xbf16>, %o: memref<?x?x8x64xbf16>,
                   %slopes: memref<8xf32>, %docs: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>)
                captures(%slopes, %docs : memref<8xf32>, memref<?x?xi32>)
                {causal} score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %t = arith.mulf %s, %slope : f32
    fa4.yield %t : f32
  } mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %n = arith.constant 1 : index
    %len = memref.dim %d, %n : memref<?x?xi32>
    %qd = memref.load %d[%b, %i] : memref<?x?xi32>
    %kd = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %qd, %kd : i32
    fa4.yield %same : i1
  }
  fa4.attention ins(%q, %k, %v : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>) mask {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    fa4.yield %keep : i1
  }
  return
}

// -----

// Packed sequences of variable lengths: [total, heads, head_dim] with the
// int32 prefix sums of the query and key lengths, keys used per sequence,
// and LSE [heads_q, total_q].
// CHECK-LABEL: func @varlen
// CHECK: fa4.attention
// CHECK-SAME: lse(%{{.*}} : memref<8x?xf32>) varlen(%{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>) {causal}
// CHECK: fa4.attention
// CHECK-SAME: varlen(%{{.*}}, %{{.*}} : memref<5xi32>, memref<5xi32>) seqused_k(%{{.*}} : memref<4xi32>) {window = array<i64: 255, 0>}
func.func @varlen(%q: memref<?x8x64xbf16>, %k: memref<?x2x64xbf16>,
                  %v: memref<?x2x64xbf16>, %o: memref<?x8x64xbf16>,
                  %lse: memref<8x?xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>,
                  %cq5: memref<5xi32>, %ck5: memref<5xi32>, %u: memref<4xi32>) {
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>,
                    memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>)
                lse(%lse : memref<8x?xf32>)
                varlen(%cq, %ck : memref<?xi32>, memref<?xi32>) {causal}
  fa4.attention ins(%q, %k, %v : memref<?x8x64xbf16>, memref<?x2x64xbf16>,
                    memref<?x2x64xbf16>) outs(%o : memref<?x8x64xbf16>)
                varlen(%cq5, %ck5 : memref<5xi32>, memref<5xi32>)
                seqused_k(%u : memref<4xi32>) {window = array<i64: 255, 0>}
  return
}

// -----

// Packed FP8 sequences: V key-major with rows of its own, sequence b's from
// align16(cu_seqlens_k[b]) + 16 b (4 sequences: at least 300 + 64 rows).
// CHECK-LABEL: func @varlen_fp8
// CHECK: fa4.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<100x8x64xf8E4M3FN>, memref<300x2x64xf8E4M3FN>, memref<364x2x64xf8E4M3FN, strided<[1, 64, 1]>>)
func.func @varlen_fp8(%q: memref<100x8x64xf8E4M3FN>, %k: memref<300x2x64xf8E4M3FN>,
                      %v: memref<364x2x64xf8E4M3FN, strided<[1, 64, 1]>>,
                      %o: memref<100x8x64xbf16>, %cu: memref<5xi32>) {
  fa4.attention ins(%q, %k, %v : memref<100x8x64xf8E4M3FN>, memref<300x2x64xf8E4M3FN>,
                    memref<364x2x64xf8E4M3FN, strided<[1, 64, 1]>>)
                outs(%o : memref<100x8x64xbf16>)
                varlen(%cu, %cu : memref<5xi32>, memref<5xi32>)
  return
}

// -----

// KV caches: a dense batch limited to each batch's keys, and a paged cache
// [pages, 256, Hkv, D] read through a page table [B, max_pages].
// CHECK-LABEL: func @kv_cache
// CHECK: fa4.attention
// CHECK-SAME: outs(%{{.*}} : memref<?x?x8x64xbf16>) seqused_k(%{{.*}} : memref<?xi32>){{$}}
// CHECK: fa4.attention
// CHECK-SAME: lse(%{{.*}} : memref<?x8x4xf32>) seqused_k(%{{.*}} : memref<?xi32>) paged(%{{.*}} : memref<?x?xi32>) {causal}
func.func @kv_cache(%q: memref<?x?x8x64xbf16>, %k: memref<?x?x2x64xbf16>,
                    %o: memref<?x?x8x64xbf16>, %qd: memref<?x4x8x64xbf16>,
                    %kp: memref<?x256x2x64xbf16>, %od: memref<?x4x8x64xbf16>,
                    %lse: memref<?x8x4xf32>, %u: memref<?xi32>,
                    %t: memref<?x?xi32>) {
  fa4.attention ins(%q, %k, %k : memref<?x?x8x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>) outs(%o : memref<?x?x8x64xbf16>)
                seqused_k(%u : memref<?xi32>)
  fa4.attention ins(%qd, %kp, %kp : memref<?x4x8x64xbf16>,
                    memref<?x256x2x64xbf16>, memref<?x256x2x64xbf16>)
                outs(%od : memref<?x4x8x64xbf16>) lse(%lse : memref<?x8x4xf32>)
                seqused_k(%u : memref<?xi32>) paged(%t : memref<?x?xi32>)
                {causal}
  return
}

// -----

// The tensor form: destination-passing style, O and LSE returned.
// CHECK-LABEL: func @tensor_form
// CHECK: %{{.*}}:2 = fa4.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x256x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>) outs(%{{.*}} : tensor<2x256x8x64xbf16>) lse(%{{.*}} : tensor<2x8x256xf32>) sink(%{{.*}} : tensor<8xf32>) {causal} -> tensor<2x256x8x64xbf16>, tensor<2x8x256xf32>
func.func @tensor_form(%q: tensor<2x256x8x64xbf16>, %k: tensor<2x256x2x64xbf16>,
                       %v: tensor<2x256x2x64xbf16>, %o: tensor<2x256x8x64xbf16>,
                       %l: tensor<2x8x256xf32>, %s: tensor<8xf32>)
    -> (tensor<2x256x8x64xbf16>, tensor<2x8x256xf32>) {
  %r:2 = fa4.attention ins(%q, %k, %v : tensor<2x256x8x64xbf16>, tensor<2x256x2x64xbf16>, tensor<2x256x2x64xbf16>)
      outs(%o : tensor<2x256x8x64xbf16>) lse(%l : tensor<2x8x256xf32>) sink(%s : tensor<8xf32>) {causal}
      -> tensor<2x256x8x64xbf16>, tensor<2x8x256xf32>
  return %r#0, %r#1 : tensor<2x256x8x64xbf16>, tensor<2x8x256xf32>
}

// -----

// Packed sequences and a score region reading a captured tensor.
// CHECK-LABEL: func @tensor_varlen_region
// CHECK: fa4.attention
// CHECK-SAME: varlen(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>) captures(%{{.*}} : tensor<8xf32>) -> tensor<?x8x64xbf16> score {
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<8xf32>
func.func @tensor_varlen_region(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x64xbf16>,
                                %v: tensor<?x8x64xbf16>, %o: tensor<?x8x64xbf16>,
                                %cq: tensor<?xi32>, %ck: tensor<?xi32>, %t: tensor<8xf32>)
    -> tensor<?x8x64xbf16> {
  %r = fa4.attention ins(%q, %k, %v : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>)
      outs(%o : tensor<?x8x64xbf16>) varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
      captures(%t : tensor<8xf32>) -> tensor<?x8x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %table: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %table, %c0 : tensor<8xf32>
    %slope = tensor.extract %table[%h] : tensor<8xf32>
    %x = arith.mulf %s, %slope : f32
    fa4.yield %x : f32
  }
  return %r : tensor<?x8x64xbf16>
}
