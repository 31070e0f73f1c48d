// fa4.attention on tensors through upstream one-shot-bufferize.
//
// With identity layouts at the function boundary the memref form takes the
// function's buffers as they are: no copy.
// RUN: fa4-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=IDENTITY
// With fully dynamic layouts (the default) nothing says the head dimension
// has unit stride: inputs are copied into contiguous buffers, and O / LSE
// are written to fresh ones and copied into their destinations.
// RUN: fa4-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=DYNAMIC
// The bufferized module is the pipeline's input.
// RUN: fa4-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --fa4-plan=arch=sm_90a --fa4-tile | FileCheck %s --check-prefix=TILED

// IDENTITY-LABEL: func.func @gqa_lse(
// IDENTITY-SAME: %[[Q:.*]]: memref<2x256x8x128xbf16>, %[[K:.*]]: memref<2x300x2x128xbf16>, %[[V:.*]]: memref<2x300x2x128xbf16>, %[[O:.*]]: memref<2x256x8x128xbf16>
// IDENTITY-NOT: memref.copy
// IDENTITY: %[[L:.*]] = memref.alloc() {{.*}} : memref<2x8x256xf32>
// IDENTITY-NOT: memref.copy
// IDENTITY: fa4.attention ins(%[[Q]], %[[K]], %[[V]] : memref<2x256x8x128xbf16>, memref<2x300x2x128xbf16>, memref<2x300x2x128xbf16>) outs(%[[O]] : memref<2x256x8x128xbf16>) lse(%[[L]] : memref<2x8x256xf32>) {causal, scale = 1.250000e-01 : f32}
// IDENTITY-NOT: memref.copy
// IDENTITY: return %[[O]], %[[L]]

// DYNAMIC-LABEL: func.func @gqa_lse(
// DYNAMIC-SAME: %[[Q:[^:]*]]: memref<2x256x8x128xbf16, strided<[?, ?, ?, ?], offset: ?>>
// DYNAMIC-SAME: %[[O:[^:]*]]: memref<2x256x8x128xbf16, strided<[?, ?, ?, ?], offset: ?>>
// DYNAMIC: %[[L:.*]] = memref.alloc() {{.*}} : memref<2x8x256xf32>
// DYNAMIC: %[[QC:.*]] = memref.alloc() {{.*}} : memref<2x256x8x128xbf16>
// DYNAMIC: memref.copy %[[Q]], %[[QC]]
// DYNAMIC: %[[OF:.*]] = memref.alloc() {{.*}} : memref<2x256x8x128xbf16>
// DYNAMIC: fa4.attention ins(%[[QC]], %{{.*}}, %{{.*}} : {{.*}}) outs(%[[OF]] : memref<2x256x8x128xbf16>) lse(%[[L]] : memref<2x8x256xf32>)
// DYNAMIC-NEXT: memref.copy %[[OF]], %[[O]]
// DYNAMIC-NOT: memref.copy
// DYNAMIC: return %[[O]],

// TILED-LABEL: func.func @gqa_lse(
// TILED: fa4.launch @gqa_lse_attention::@gqa_lse_attention
func.func @gqa_lse(%q: tensor<2x256x8x128xbf16>, %k: tensor<2x300x2x128xbf16>,
                   %v: tensor<2x300x2x128xbf16>, %o: tensor<2x256x8x128xbf16>)
    -> (tensor<2x256x8x128xbf16>, tensor<2x8x256xf32>) {
  %l = tensor.empty() : tensor<2x8x256xf32>
  %r:2 = fa4.attention ins(%q, %k, %v : tensor<2x256x8x128xbf16>, tensor<2x300x2x128xbf16>, tensor<2x300x2x128xbf16>)
      outs(%o : tensor<2x256x8x128xbf16>) lse(%l : tensor<2x8x256xf32>) {causal, scale = 0.125 : f32}
      -> tensor<2x256x8x128xbf16>, tensor<2x8x256xf32>
  return %r#0, %r#1 : tensor<2x256x8x128xbf16>, tensor<2x8x256xf32>
}

// -----

// The regions' capture arguments become the captures' buffers, and their
// tensor reads memref reads; the sinks and the tables bufferize as inputs.
// IDENTITY-LABEL: func.func @varlen_region(
// IDENTITY-SAME: %[[T:[^:]*]]: memref<8xf32>)
// IDENTITY: fa4.attention
// IDENTITY-SAME: sink(%{{.*}} : memref<8xf32>) varlen(%{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>) seqused_k(%{{.*}} : memref<?xi32>) captures(%[[T]] : memref<8xf32>) {window = array<i64: 63, 0>} score {
// IDENTITY-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %[[TABLE:[^:]*]]: memref<8xf32>):
// IDENTITY: memref.dim %[[TABLE]], %{{.*}} : memref<8xf32>
// IDENTITY: memref.load %[[TABLE]][%[[H]]] : memref<8xf32>
// IDENTITY: fa4.yield

// DYNAMIC-LABEL: func.func @varlen_region(
// DYNAMIC-SAME: %[[T:[^:]*]]: memref<8xf32, strided<[?], offset: ?>>)
// DYNAMIC: memref.copy %[[T]], %[[TC:[^ ]*]] : memref<8xf32, strided<[?], offset: ?>> to memref<8xf32>
// DYNAMIC: fa4.attention
// DYNAMIC-SAME: captures(%[[TC]] : memref<8xf32>)
// DYNAMIC: ^bb0({{.*}}, %[[TABLE:[^:]*]]: memref<8xf32>):
// DYNAMIC: memref.load %[[TABLE]]

// TILED-LABEL: func.func @varlen_region(
// TILED: fa4.launch @varlen_region_attention::@varlen_region_attention
// TILED-SAME: captures(%{{.*}} : memref<8xf32>)
func.func @varlen_region(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x64xbf16>,
                         %v: tensor<?x8x64xbf16>, %o: tensor<?x8x64xbf16>,
                         %sink: tensor<8xf32>, %cq: tensor<?xi32>,
                         %ck: tensor<?xi32>, %used: tensor<?xi32>,
                         %t: tensor<8xf32>) -> tensor<?x8x64xbf16> {
  %r = fa4.attention ins(%q, %k, %v : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>)
      outs(%o : tensor<?x8x64xbf16>) sink(%sink : tensor<8xf32>)
      varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) seqused_k(%used : tensor<?xi32>)
      captures(%t : tensor<8xf32>) {window = array<i64: 63, 0>} -> tensor<?x8x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %table: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %table, %c0 : tensor<8xf32>
    %slope = tensor.extract %table[%h] : tensor<8xf32>
    %x = arith.addf %s, %slope : f32
    fa4.yield %x : f32
  }
  return %r : tensor<?x8x64xbf16>
}

// -----

// A destination that is also read by a capture cannot be written in place:
// one-shot analysis copies it first.
// IDENTITY-LABEL: func.func @capture_is_destination(
// IDENTITY-SAME: %{{[^:]*}}: memref<2x128x8x64xbf16>, %{{[^:]*}}: memref<2x128x8x64xbf16>, %{{[^:]*}}: memref<2x128x8x64xbf16>, %[[O:[^:]*]]: memref<2x128x8x64xbf16>
// IDENTITY: %[[FRESH:.*]] = memref.alloc() {{.*}} : memref<2x128x8x64xbf16>
// IDENTITY: fa4.attention {{.*}} outs(%[[FRESH]] : memref<2x128x8x64xbf16>) captures(%[[O]] : memref<2x128x8x64xbf16>)
func.func @capture_is_destination(%q: tensor<2x128x8x64xbf16>, %k: tensor<2x128x8x64xbf16>,
                                  %v: tensor<2x128x8x64xbf16>, %o: tensor<2x128x8x64xbf16>)
    -> tensor<2x128x8x64xbf16> {
  %r = fa4.attention ins(%q, %k, %v : tensor<2x128x8x64xbf16>, tensor<2x128x8x64xbf16>, tensor<2x128x8x64xbf16>)
      outs(%o : tensor<2x128x8x64xbf16>) captures(%o : tensor<2x128x8x64xbf16>) -> tensor<2x128x8x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<2x128x8x64xbf16>):
    %c0 = arith.constant 0 : index
    %x = tensor.extract %t[%b, %i, %h, %c0] : tensor<2x128x8x64xbf16>
    %y = arith.extf %x : bf16 to f32
    %z = arith.addf %s, %y : f32
    fa4.yield %z : f32
  }
  return %r : tensor<2x128x8x64xbf16>
}
