//===- FA4Ops.td - fa4 operations --------------------------*- tablegen -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4OPS_TD
#define FA4_DIALECT_FA4_IR_FA4OPS_TD

include "fa4/Dialect/FA4/IR/FA4Attrs.td"
include "fa4/Dialect/FA4/IR/FA4Interfaces.td"
include "fa4/Dialect/FA4/IR/FA4Types.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Dialect/NVGPU/IR/NVGPUTypes.td"

// Q, K, V and O: [batch, sequence, heads, head_dim] in a 16-bit float type,
// or Q, K and V in FP8 e4m3.
def FA4_ActivationMemRef : MemRefRankOf<[F16, BF16, F8E4M3FN], [4]>;
// The memref types of the tiled program's operands.
def FA4_LseMemRef : MemRefRankOf<[F32], [2, 3]>;
def FA4_SeqLensMemRef : MemRefRankOf<[I32], [1]>;
def FA4_SinkMemRef : MemRefRankOf<[F32], [1]>;
def FA4_DescaleMemRef : MemRefRankOf<[F32], [2]>;
def FA4_PageTableMemRef : MemRefRankOf<[I32], [2]>;
def FA4_CaptureMemRef : MemRefOf<[F16, BF16, F32, I8, I16, I32, I64]>;

// The attention's operands are memrefs, or ranked tensors of the same ranks
// and element types at the tensor level (destination-passing style, before
// bufferization).
class FA4_Shaped<list<Type> elements, list<int> ranks, string summary>
    : AnyTypeOf<[MemRefRankOf<elements, ranks>, TensorRankOf<elements, ranks>],
                summary, "::mlir::ShapedType">;
// Q, K, V and O: [batch, sequence, heads, head_dim], or packed sequences
// [total, heads, head_dim] with variable lengths.
def FA4_AttentionShaped
    : FA4_Shaped<[F16, BF16, F8E4M3FN], [3, 4],
                 "3D/4D memref or tensor of f16, bf16 or f8E4M3FN">;
// LSE: [batch, heads_q, seq_q] in f32 ([heads_q, total_q] with variable
// lengths).
def FA4_LseShaped : FA4_Shaped<[F32], [2, 3], "2D/3D memref or tensor of f32">;
// Sequence starts (B + 1 prefix sums) and lengths of a packed batch.
def FA4_SeqLensShaped : FA4_Shaped<[I32], [1], "1D memref or tensor of i32">;
def FA4_SinkShaped : FA4_Shaped<[F32], [1], "1D memref or tensor of f32">;
// FP8 descale factors: [batch, heads_kv] in f32.
def FA4_DescaleShaped
    : FA4_Shaped<[F32], [2], "2D memref or tensor of f32">;
def FA4_PageTableShaped : FA4_Shaped<[I32], [2], "2D memref or tensor of i32">;
// Rotary embedding: the cos | sin table [positions, R] in f32 and each query
// token's position ([batch, seq_q], or [total_q] with variable lengths).
def FA4_RopeTableShaped : FA4_Shaped<[F32], [2], "2D memref or tensor of f32">;
def FA4_PositionsShaped
    : FA4_Shaped<[I32], [1, 2], "1D/2D memref or tensor of i32">;
// What score and mask regions may read: tables in global memory.
def FA4_CaptureShaped
    : AnyTypeOf<[MemRefOf<[F16, BF16, F32, I8, I16, I32, I64]>,
                 RankedTensorOf<[F16, BF16, F32, I8, I16, I32, I64]>],
                "memref or ranked tensor of f16, bf16, f32 or i8-i64",
                "::mlir::ShapedType">;

def FA4_AttentionOp : FA4_Op<"attention", [AttrSizedOperandSegments,
    IsolatedFromAbove, DeclareOpInterfaceMethods<DestinationStyleOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "scaled dot-product attention (forward), on memrefs or tensors";
  let description = [{
    Computes, for every batch `b`, query head `h`, query row `i` and value
    column `d`:

    ```
    S[j]     = scale * dot(Q[b, i, h, :], K[b, j, h / G, :])      G = Hq / Hkv
    S[j]     = softcap * tanh(S[j] / softcap)                      if softcap
    S[j]     = score(S[j], b, h, i, j, captures...)              if score
    S[j]     = -inf  where key j is masked for row i
               (outside the window, or where mask(S[j], b, h, i, j,
               captures...) is false; the mask sees the S before `score`)
    Z          = sum_j exp(S[j])  (+ exp(sink[h])                  if sink)
    O[b,i,h,d] = sum_j exp(S[j]) / Z * V[b, j, h / G, d]
    LSE[b,h,i] = log(Z)                                            if lse
    ```

    Operand shapes (`?` allowed only where marked):

    | operand | shape | element type |
    |---|---|---|
    | `query`  | `[B?, Sq?, Hq, Dqk]`  | f16, bf16 or f8E4M3FN |
    | `key`    | `[B?, Skv?, Hkv, Dqk]` | same as query |
    | `value`  | `[B?, Skv?, Hkv, Dv]`  | same as query |
    | `output` | `[B?, Sq?, Hq, Dv]`   | same as query; f16 or bf16 with f8E4M3FN |
    | `lse` (optional) | `[B?, Hq, Sq?]` | f32 |
    | `sink` (optional) | `[Hq?]` | f32 |
    | `q_descale`, `k_descale`, `v_descale` (optional, `descale`) | `[B?, Hkv]` | f32 |
    | `cu_seqlens_q`, `cu_seqlens_k` (`varlen`) | `[B+1?]` | i32 |
    | `seqused_k` (optional) | `[B?]` | i32 |
    | `page_table` (optional, `paged`) | `[B?, pages?]` | i32 |
    | `cos_sin` (optional, `rope`) | `[P?, R]` | f32 |
    | `positions` (with `cos_sin`) | `[B?, Sq?]` (`[Tq?]` with `varlen`) | i32 |
    | `captures` (any number) | any, contiguous | f16, bf16, f32, i8-i64 |

    Variable-length batches (`varlen(%cu_seqlens_q, %cu_seqlens_k)`): Q and
    O are packed `[Tq?, Hq, D]`, K and V `[Tkv?, Hkv, D]`, LSE `[Hq, Tq?]`.
    Sequence `b` holds query rows `[cu_seqlens_q[b], cu_seqlens_q[b+1])`
    and keys `[cu_seqlens_k[b], cu_seqlens_k[b+1])`, or only the first
    `seqused_k[b]` of those keys when `seqused_k` is given; both tables are
    nondecreasing prefix sums within the packed tensors (lengths may be 0).
    Everything above then holds per sequence, with `i` and `j` counted from
    the sequence's start (causal and the window bottom-right aligned to each
    sequence's own lengths) and `b` the sequence. The kernel clamps a table
    that breaks these rules into the tensors rather than reading or writing
    outside them, but its result is then unspecified.

    KV caches: `seqused_k(%used)` on a dense batch limits batch `b` to its
    first `seqused_k[b]` keys (clamped to `[0, Skv]`); causal and the window
    are then aligned to that length. `paged(%page_table)` reads K and V
    through a page table: they are `[num_pages, P, Hkv, D]` with a static
    page size `P` (a power of two, at least 16), `page_table` is `[B,
    max_pages]`, and
    key `j` of batch `b` is `K[page_table[b, j / P], j mod P]`; batch `b`
    has `max_pages * P` keys, or its `seqused_k[b]` (clamped) when given.
    Page entries past a batch's keys are never read. Paged KV takes a dense
    query (no `varlen`).

    FP8 (`f8E4M3FN` Q, K and V, FlashAttention-3's e4m3 forward): O is f16
    or bf16, and `descale(%qd, %kd, %vd)` optionally gives float32 factors
    per batch (sequence, with `varlen`) and KV head: `S[j]` above is
    multiplied by `qd[b, h / G] * kd[b, h / G]` before anything else, and O
    by `vd[b, h / G]` (the LSE is of the descaled scores). An FP8 `value`
    may have unit stride in its sequence dimension instead of its head dim
    (keys contiguous: sm_90a's wgmma reads 8-bit B operands K-major only, so
    its kernels need that layout). Packed (`varlen`), such a V has rows of
    its own: sequence `b`'s keys are its rows from `align16(cu_seqlens_k[b])
    + 16 b` (every TMA box of V then starts 16-byte aligned), so it has at
    least `total_kv + 16 B` rows; rows outside every sequence are read
    under masked keys and must hold finite values.

    `Hq` must be a multiple of `Hkv` (grouped-query attention; `Hkv = 1` is
    multi-query attention). The head dimension of every operand must have
    unit stride (an FP8 value's may not, above).

    Attributes:
    - `causal`: key `j` is visible from query row `i` only if
      `j <= i + Skv - Sq` (aligned to the bottom-right corner, so the last
      query sees every key). Rows that see no key produce `O = 0` and
      `LSE = -inf`.
    - `window = array<i64: left, right>`: key `j` is visible from row `i` only
      if `i + Skv - Sq - left <= j <= i + Skv - Sq + right`; `-1` leaves that
      side unbounded. With `causal`, `right` must be 0.
    - `scale`: the softmax scale, default `1 / sqrt(Dqk)`; positive.
    - `softcap`: caps the scores with `softcap * tanh(S / softcap)`; positive.
    - `sink` (operand): an attention sink per query head: a logit, in the
      units of `S` (scaled, not capped), that joins every row's softmax
      denominator and nothing else; the LSE includes it. A row that sees no
      key then outputs 0 with `LSE = sink[h]`; `-inf` is no sink.
    - `plan`: the kernel configuration (`#fa4.plan`), set by `fa4-plan`; its
      head dim must match the operands.
    - `captures` (operands): the tensors the score and mask regions read
      (ALiBi slopes, a bias table, document ids), in row-major order.
    Rotary position embedding (`rope(%cos_sin, %positions)`, the RoPE of
    GPT-J: adjacent pairs): before `S` is formed, the `R` dimensions of Q
    from `rope_start` (default 0) are rotated by the angles of each query
    token's position `p = positions[b, i]`: with `c = cos_sin[p, k]` and
    `s = cos_sin[p, R / 2 + k]`, pair `(x, y)` = columns `(rope_start + 2k,
    rope_start + 2k + 1)` becomes `(x c - y s, y c + x s)`, computed in f32
    and rounded to Q's element type (K is taken as already rotated, as a KV
    cache holds it). With `rope_output`, the same columns of O are rotated
    back (`(x c + y s, y c - x s)`): MLA's latent V carries the rotated
    dimensions of K. `R` is static, a multiple of 8, and `rope_start` a
    multiple of 8 with `rope_start + R` within Dqk (and Dv with
    `rope_output`); positions outside `[0, P)` are clamped into the table.
    Not with FP8 operands.
    Score and mask regions (optional, each one block, isolated from above):
    both take `(%score: f32, %batch: index, %head: index, %query: index,
    %key: index)` followed by one argument per captured operand, and end in
    `fa4.yield`: the score region yields the new score (f32), the mask
    region whether the key is kept (i1). They may hold `arith` ops, the
    `math` ops the kernels lower (absf, absi, ceil, floor, round, exp,
    exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt, tanh, sin, cos, erf,
    copysign, powf, fma) and `memref.load` / `memref.dim` of the captured
    operands, nothing else (no nested regions, no writes). They are evaluated only at valid
    coordinates (`batch < B`, `head < Hq`, `query < Sq`, `key < Skv`), and
    must read the captures in bounds there.
    Skipping: KV blocks outside the window (and past the causal diagonal)
    are skipped; a mask region masks per element in every block visited.
    Rows that the mask leaves no key produce `O = 0` and `LSE = -inf`.

    On memrefs the result is written to `output` (and `lse`) and the op has
    no results. On tensors (every operand a ranked tensor of the same shape
    rules) the op is in destination-passing style: `output` and `lse` are
    the inits, never read, and the op returns the values written into them,
    O and then LSE. Score and mask regions then take their captures as
    tensors and read them with `tensor.extract` / `tensor.dim`. Upstream
    `one-shot-bufferize` turns the tensor form into the memref form (see
    `BufferizableOpInterfaceImpl.h`): with identity layouts at the function
    boundary the kernel gets the function's buffers, without copies.

    Example:

    ```mlir
    fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                      memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                  outs(%o : memref<?x?x32x128xbf16>)
                  lse(%lse : memref<?x32x?xf32>) {causal}
    fa4.attention ins(%q, %k, %v : memref<?x?x64x64xbf16>,
                      memref<?x?x8x64xbf16>, memref<?x?x8x64xbf16>)
                  outs(%o : memref<?x?x64x64xbf16>)
                  sink(%sinks : memref<64xf32>) {window = array<i64: 127, 0>}
    // Packed sequences of variable lengths, causal within each.
    fa4.attention ins(%q, %k, %v : memref<?x32x128xbf16>,
                      memref<?x8x128xbf16>, memref<?x8x128xbf16>)
                  outs(%o : memref<?x32x128xbf16>)
                  lse(%lse : memref<32x?xf32>)
                  varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) {causal}
    // Decode against a paged KV cache of 256-key pages: 4 new tokens per
    // sequence, each sequence's cache length in %lens.
    fa4.attention ins(%q, %kc, %vc : memref<?x4x32x128xbf16>,
                      memref<?x256x8x128xbf16>, memref<?x256x8x128xbf16>)
                  outs(%o : memref<?x4x32x128xbf16>)
                  seqused_k(%lens : memref<?xi32>)
                  paged(%pages : memref<?x?xi32>) {causal}
    // ALiBi: each head's slope times the key's distance from the query.
    fa4.attention ins(%q, %k, %v : memref<?x?x8x128xbf16>,
                      memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                  outs(%o : memref<?x?x8x128xbf16>)
                  captures(%slopes : memref<8xf32>) {causal} score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
         %slope_table: memref<8xf32>):
      %slope = memref.load %slope_table[%h] : memref<8xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %slope, %df : f32
      %t = arith.addf %s, %bias : f32
      fa4.yield %t : f32
    }
    // Decode with RoPE on Q at each new token's position (all 128 dims).
    fa4.attention ins(%q, %kc, %vc : memref<?x1x32x128xbf16>,
                      memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                  outs(%o : memref<?x1x32x128xbf16>)
                  seqused_k(%lens : memref<?xi32>)
                  rope(%cos_sin, %pos : memref<?x128xf32>, memref<?x1xi32>)
    // FP8 Q, K and a key-major V with descale factors; O in bf16.
    fa4.attention ins(%q8, %k8, %v8 : memref<?x?x32x128xf8E4M3FN>,
                      memref<?x?x8x128xf8E4M3FN>,
                      memref<?x?x8x128xf8E4M3FN, strided<[?, 1, ?, ?]>>)
                  outs(%o : memref<?x?x32x128xbf16>)
                  descale(%qd, %kd, %vd : memref<?x8xf32>, memref<?x8xf32>,
                          memref<?x8xf32>) {causal}
    // The tensor form, before bufferization.
    %o2, %lse2 = fa4.attention ins(%qt, %kt, %vt : tensor<2x1024x32x128xbf16>,
                     tensor<2x1024x8x128xbf16>, tensor<2x1024x8x128xbf16>)
                   outs(%init : tensor<2x1024x32x128xbf16>)
                   lse(%lse_init : tensor<2x32x1024xf32>) {causal}
                   -> tensor<2x1024x32x128xbf16>, tensor<2x32x1024xf32>
    ```

    Lowering: this op (on memrefs) is the input of the kernel pipeline. It
    does not map to a PTX instruction of its own; the pipeline turns it into one
    warp-specialized kernel (tcgen05 MMA and Tensor Memory on sm_100a, wgmma
    on sm_90a) plus a launch manifest.
  }];

  let arguments = (ins
    Arg<FA4_AttentionShaped, "queries [B, Sq, Hq, Dqk]">:$query,
    Arg<FA4_AttentionShaped, "keys [B, Skv, Hkv, Dqk]">:$key,
    Arg<FA4_AttentionShaped, "values [B, Skv, Hkv, Dv]">:$value,
    Arg<FA4_AttentionShaped, "output [B, Sq, Hq, Dv]">:$output,
    Arg<Optional<FA4_LseShaped>, "log-sum-exp [B, Hq, Sq]">:$lse,
    Arg<Optional<FA4_SinkShaped>, "sink logits [Hq]">:$sink,
    Arg<Optional<FA4_DescaleShaped>, "FP8 query descale [B, Hkv]">:$qDescale,
    Arg<Optional<FA4_DescaleShaped>, "FP8 key descale [B, Hkv]">:$kDescale,
    Arg<Optional<FA4_DescaleShaped>, "FP8 value descale [B, Hkv]">:$vDescale,
    Arg<Optional<FA4_SeqLensShaped>, "query sequence starts [B + 1]">
        :$cuSeqlensQ,
    Arg<Optional<FA4_SeqLensShaped>, "key sequence starts [B + 1]">
        :$cuSeqlensK,
    Arg<Optional<FA4_SeqLensShaped>, "keys used per sequence [B]">:$sequsedK,
    Arg<Optional<FA4_PageTableShaped>, "KV pages per sequence [B, pages]">
        :$pageTable,
    Arg<Optional<FA4_RopeTableShaped>, "RoPE cos | sin per position [P, R]">
        :$cosSin,
    Arg<Optional<FA4_PositionsShaped>, "each query token's position [B, Sq]">
        :$positions,
    Arg<Variadic<FA4_CaptureShaped>, "what the regions read">:$captures,
    UnitAttr:$causal,
    OptionalAttr<ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>>:$window,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<I64Attr>:$rope_start,
    UnitAttr:$rope_output,
    OptionalAttr<FA4_PlanAttr>:$plan
  );
  // The tensor form's results: O, then LSE when present (the values written
  // into `output` and `lse`).
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region AnyRegion:$scoreMod, AnyRegion:$maskMod);

  let builders = [
    // Equal-length sequences ([B, S, H, D]): no sequence tables.
    OpBuilder<(ins "Value":$query, "Value":$key, "Value":$value,
                   "Value":$output, "Value":$lse, "Value":$sink,
                   "ValueRange":$captures, "bool":$causal,
                   "DenseI64ArrayAttr":$window, "FloatAttr":$scale,
                   "FloatAttr":$softcap, "PlanAttr":$plan), [{
      build($_builder, $_state, /*results=*/TypeRange(), query, key, value,
            output, lse, sink, /*qDescale=*/Value(), /*kDescale=*/Value(),
            /*vDescale=*/Value(), /*cuSeqlensQ=*/Value(), /*cuSeqlensK=*/Value(),
            /*sequsedK=*/Value(), /*pageTable=*/Value(), /*cosSin=*/Value(),
            /*positions=*/Value(), captures, causal, window, scale, softcap,
            /*rope_start=*/IntegerAttr(), /*rope_output=*/false, plan);
    }]>
  ];

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:`
              type($query) `,` type($key) `,` type($value) `)`
    `outs` `(` $output `:` type($output) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    (`descale` `(` $qDescale^ `,` $kDescale `,` $vDescale `:`
                   type($qDescale) `,` type($kDescale) `,` type($vDescale) `)`)?
    (`varlen` `(` $cuSeqlensQ^ `,` $cuSeqlensK `:` type($cuSeqlensQ) `,`
                  type($cuSeqlensK) `)`)?
    (`seqused_k` `(` $sequsedK^ `:` type($sequsedK) `)`)?
    (`paged` `(` $pageTable^ `:` type($pageTable) `)`)?
    (`rope` `(` $cosSin^ `,` $positions `:` type($cosSin) `,`
                type($positions) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    attr-dict
    (`->` type($results)^)?
    (`score` $scoreMod^)?
    (`mask` $maskMod^)?
  }];

  let extraClassDeclaration = [{
    static constexpr int64_t kUnboundedWindow = -1;

    /// Whether the operands are tensors (the form before bufferization).
    bool isTensorForm() { return isa<TensorType>(getQuery().getType()); }

    /// Whether the batch is packed sequences of variable lengths.
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
    /// Whether K and V are read through a page table.
    bool isPaged() { return static_cast<bool>(getPageTable()); }
    /// Whether Q is rotated by a rotary position embedding.
    bool hasRope() { return static_cast<bool>(getCosSin()); }
    /// The rotated dimensions: the first and how many (R of cos_sin).
    std::pair<int64_t, int64_t> getRopeDims() {
      if (!hasRope())
        return {0, 0};
      return {getRopeStartAttr() ? getRopeStartAttr().getInt() : 0,
              cast<ShapedType>(getCosSin().getType()).getDimSize(1)};
    }
    /// The keys of one KV page (paged K/V's dimension 1).
    int64_t getPageSize() {
      return isPaged() ? getKey().getType().getDimSize(1) : 0;
    }
    /// The dimension of Q, K, V and O that holds the sequence: 1 of
    /// [B, S, H, D], 0 of the packed [total, H, D]; heads and head dim follow.
    unsigned getSequenceDim() { return isVarlen() ? 0 : 1; }
    /// The sequence dimension of K and V: a paged cache's is the page's
    /// (1 of [pages, P, H, D]) even where the queries are packed.
    unsigned getKeySequenceDim() { return isPaged() ? 1 : getSequenceDim(); }
    int64_t getNumQueryHeads() {
      return getQuery().getType().getDimSize(getSequenceDim() + 1);
    }
    int64_t getNumKeyValueHeads() {
      return getKey().getType().getDimSize(getKeySequenceDim() + 1);
    }
    /// Query heads that share one key/value head.
    int64_t getGroupSize() { return getNumQueryHeads() / getNumKeyValueHeads(); }
    /// Whether Q, K and V are FP8 (e4m3); O is then 16-bit.
    bool isFp8() {
      return isa<Float8E4M3FNType>(getQuery().getType().getElementType());
    }
    /// Whether V (a memref) has unit stride in its sequence dimension rather
    /// than its head dim: keys contiguous, as sm_90a's FP8 PV wgmma reads it.
    bool isValueKeyMajor();
    int64_t getHeadDimQK() {
      return getQuery().getType().getDimSize(getSequenceDim() + 2);
    }
    int64_t getHeadDimV() {
      return getValue().getType().getDimSize(getKeySequenceDim() + 2);
    }
    /// The explicit scale, or 1 / sqrt(Dqk).
    double getEffectiveScale();
    /// Left and right window bounds; kUnboundedWindow where unbounded. Causal
    /// attention without a window is (kUnboundedWindow, 0).
    std::pair<int64_t, int64_t> getEffectiveWindow();
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tiled program (level 3)
//===----------------------------------------------------------------------===//
//
// One sequential program per kernel over whole tiles, as `fa4-tile` writes
// it and `fa4-specialize` splits it into roles. Tiles are values (builtin
// tensors); rows of a query tile are `heads` query heads of each of
// `rows / heads` consecutive positions, heads innermost (GQA packing).

// The tiles of Q, K, V, P and O: 16-bit, or FP8 (e4m3) for Q, K, V and P.
def FA4_Tile16 : RankedTensorOf<[F16, BF16, F8E4M3FN]>;
def FA4_TileF32 : RankedTensorOf<[F32]>;

def FA4_TileCoordsOp : FA4_Op<"tile.coords", [Pure]> {
  let summary = "the coordinates of a work tile in the scheduler's order";
  let description = [{
    Work tile `tile` (of `batch x head_blocks x tiles_per_head`) covers
    batch `batch_index`, query heads `[first_head, first_head + heads)` and
    query positions `[position, position + positions)`.

    - `linear`: query block fastest, then head block, then batch.
    - `lpt`: (batch, head block) pairs in groups of 8; within a group the
      pairs alternate fastest and the query blocks go from the last (the
      longest when causal) to the first, so that concurrent tiles share the
      K/V of few heads in L2.

    ```mlir
    %b, %h, %pos = fa4.tile.coords %t of (%tiles_per_head, %batch)
        scheduler lpt head_blocks 8 heads 4 positions 64
    ```

    PTX: none; `fa4-specialize` computes the same integers in every role.
  }];
  let arguments = (ins Index:$tile, Index:$tilesPerHead, Index:$batch,
                       FA4_SchedulerAttr:$scheduler, I64Attr:$headBlocks,
                       I64Attr:$heads, I64Attr:$positions);
  let results = (outs Index:$batchIndex, Index:$firstHead, Index:$position);
  let assemblyFormat = [{
    $tile `of` ` ` `(` $tilesPerHead `,` $batch `)` `scheduler` `` $scheduler
    `head_blocks` $headBlocks `heads` $heads `positions` $positions attr-dict
  }];
  let hasVerifier = 1;
}

def FA4_TileSequenceOp : FA4_Op<"tile.sequence", [AttrSizedOperandSegments]> {
  let summary = "one sequence of a packed batch, as a batch of one";
  let description = [{
    Views sequence `sequence` of packed tensors of variable lengths as
    tensors of batch 1, so that the tiled program of a dense attention runs
    on it unchanged:

    - `query` and `output` (`[Tq, H, D]`): rows `[cu_seqlens_q[b],
      cu_seqlens_q[b + 1])` as `[1, Sq_b, H, D]`;
    - `key` and `value` (`[Tkv, H, D]`): rows from `cu_seqlens_k[b]`, the
      first `seqused_k[b]` of them when given, else up to
      `cu_seqlens_k[b + 1]`, as `[1, Skv_b, H, D]`;
    - `lse` (optional, `[H, Tq]`): columns `[cu_seqlens_q[b],
      cu_seqlens_q[b + 1])` as `[1, H, Sq_b]`;
    - `positions` (optional, a rotary embedding's `[Tq]` i32, after LSE):
      entries `[cu_seqlens_q[b], cu_seqlens_q[b + 1])` as `[1, Sq_b]`;
    - a paged `key` and `value` (`[pages, P, H, D]`, shared by the
      sequences): unchanged; `fa4.tile.keys` counts the sequence's keys and
      `fa4.tile.load` reads them through the page table.

    Entries are clamped into the packed tensors and lengths to 0 and above,
    as the kernels do.

    ```mlir
    %qs, %ks, %vs, %os = fa4.tile.sequence %b of %cu_q, %cu_k
        : memref<?xi32>, memref<?xi32> (%q, %k, %v, %o : memref<?x8x128xbf16>,
        memref<?x2x128xbf16>, memref<?x2x128xbf16>, memref<?x8x128xbf16>)
        -> memref<1x?x8x128xbf16, strided<[?, 1024, 128, 1], offset: ?>>, ...
    ```

    PTX: none; `fa4-specialize` turns the loop over sequences into the
    variable-length work schedule, whose roles read the tables
    (`ld.global`) and address each sequence's rows in the tensor maps of
    the packed tensors.
  }];
  let arguments = (ins Index:$sequence,
                       Arg<FA4_SeqLensMemRef, "", [MemRead]>:$cuSeqlensQ,
                       Arg<FA4_SeqLensMemRef, "", [MemRead]>:$cuSeqlensK,
                       Arg<Optional<FA4_SeqLensMemRef>, "", [MemRead]>:$sequsedK,
                       Variadic<AnyMemRef>:$tensors);
  let results = (outs Variadic<AnyMemRef>:$views);
  let assemblyFormat = [{
    $sequence `of` $cuSeqlensQ `,` $cuSeqlensK `:` type($cuSeqlensQ) `,`
    type($cuSeqlensK)
    (`seqused_k` $sequsedK^ `:` type($sequsedK))?
    ` ` `(` $tensors `:` type($tensors) `)` attr-dict `->` type($views)
  }];
  let builders = [
    OpBuilder<(ins "Value":$sequence, "Value":$cuSeqlensQ,
                   "Value":$cuSeqlensK, "Value":$sequsedK,
                   "ValueRange":$tensors)>
  ];
  let extraClassDeclaration = [{
    /// The view type of packed `tensor` (row-major strides kept, the batch
    /// of one and the sequence length dynamic); `lse` for [H, Tq].
    static MemRefType getViewType(MemRefType tensor, bool lse);
    /// Whether tensor `index` of `tensors` is LSE (the f32 one after O; the
    /// others are Q, K, V, O and the positions).
    static bool isLse(TypeRange tensors, unsigned index);
  }];
  let hasVerifier = 1;
}

def FA4_TileKeysOp : FA4_Op<"tile.keys", [AttrSizedOperandSegments]> {
  let summary = "the keys one batch of a KV cache holds";
  let description = [{
    The number of keys batch `batch` attends to: the capacity of `key`
    (`Skv` of a dense `[B, Skv, H, D]` tensor; `max_pages * P` of a paged
    `[pages, P, H, D]` tensor read through `page_table` `[B, max_pages]`),
    or `seqused_k[batch]` clamped to `[0, capacity]` when given. With
    `cu_seqlens_k` (packed sequences over a paged cache; `batch` is the
    sequence) the capacity is `cu_seqlens_k[batch + 1] -
    cu_seqlens_k[batch]` (0 if negative) clamped to `max_pages * P`, and
    `seqused_k` is clamped to it. The tiled program bounds the KV loop and
    the mask with it.

    ```mlir
    %n = fa4.tile.keys %key[%b] seqused_k %lens : memref<?xi32>
        pages %table : memref<?x?xi32> : memref<?x256x8x128xbf16>
    %m = fa4.tile.keys %key[%s] pages %table : memref<?x?xi32>
        cu_seqlens_k %cu_k : memref<?xi32> : memref<?x256x8x128xbf16>
    ```

    PTX: after `fa4-specialize`, one `ld.global.b32` of `seqused_k` (two of
    `cu_seqlens_k`) per work tile and role, a `min`/`max` clamp.
  }];
  let arguments = (ins Arg<FA4_ActivationMemRef, "", [MemRead]>:$key,
                       Index:$batch,
                       Arg<Optional<FA4_SeqLensMemRef>, "", [MemRead]>
                           :$sequsedK,
                       Arg<Optional<FA4_PageTableMemRef>, "", [MemRead]>
                           :$pageTable,
                       Arg<Optional<FA4_SeqLensMemRef>, "", [MemRead]>
                           :$cuSeqlensK);
  let results = (outs Index:$keys);
  let assemblyFormat = [{
    $key `[` $batch `]`
    (`seqused_k` $sequsedK^ `:` type($sequsedK))?
    (`pages` $pageTable^ `:` type($pageTable))?
    (`cu_seqlens_k` $cuSeqlensK^ `:` type($cuSeqlensK))?
    `:` type($key) attr-dict
  }];
  let hasVerifier = 1;
}

def FA4_TileLoadOp : FA4_Op<"tile.load"> {
  let summary = "read a tile of rows from a [B, S, H, D] tensor";
  let description = [{
    Row `r` of the result is `source[batch, position + r / heads, head + r
    mod heads, :]`: `heads` consecutive heads of each position (1 for K and
    V). Positions past the sequence read as zeros. With `pages`, `source`
    is a paged KV cache `[pages, P, H, D]` and row `r` is
    `source[table[batch, p / P], p mod P, head, :]` for `p = position + r`
    (the tile lies in one page or spans whole pages: `P` and its rows
    divide one another, and `position` is a multiple of the smaller);
    positions past `max_pages * P`, and pages outside the cache, read as
    zeros.

    ```mlir
    %q = fa4.tile.load %query[%b, %pos, %h] heads 4
        : memref<?x?x32x128xbf16> -> tensor<128x128xbf16>
    %k = fa4.tile.load %key[%b, %pos, %kvh] heads 1
        pages %table : memref<?x?xi32>
        : memref<?x256x8x128xbf16> -> tensor<128x128xbf16>
    ```

    PTX: after `fa4-specialize`, one TMA load per 64-column atom into a
    shared-memory stage (`cp.async.bulk.tensor.4d`); paged, one per atom
    and page, each page's index read first (`ld.global.b32`) as the box's
    outer coordinate.
  }];
  let arguments = (ins Arg<FA4_ActivationMemRef, "", [MemRead]>:$source,
                       Index:$batch, Index:$position, Index:$head,
                       I64Attr:$heads,
                       Arg<Optional<FA4_PageTableMemRef>, "", [MemRead]>
                           :$pageTable);
  let results = (outs FA4_Tile16:$tile);
  let assemblyFormat = [{
    $source `[` $batch `,` $position `,` $head `]` `heads` $heads
    (`pages` $pageTable^ `:` type($pageTable))?
    attr-dict `:` type($source) `->` type($tile)
  }];
  let builders = [
    OpBuilder<(ins "Type":$tile, "Value":$source, "Value":$batch,
                   "Value":$position, "Value":$head, "int64_t":$heads), [{
      build($_builder, $_state, tile, source, batch, position, head, heads,
            /*pageTable=*/Value());
    }]>
  ];
  let hasVerifier = 1;
}

def FA4_TileMatmulOp : FA4_Op<"tile.matmul", [Pure, AttrSizedOperandSegments,
    OptionalTypesMatchWith<"the accumulator has the result type", "result",
                           "acc", "$_self">]> {
  let summary = "tile matrix product with f32 accumulation";
  let description = [{
    `result = acc + scale * (a x b)` (`b` transposed with `transpose_b`),
    products and sums in f32; without `acc` the sum starts from zero,
    without `scale` the factor is 1. The operands share one element type
    (f16, bf16 or FP8 e4m3); `scale` is an FP8 product's descale factor.

    ```mlir
    %s = fa4.tile.matmul %q, %k transpose_b
        : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    %o1 = fa4.tile.matmul %p, %v acc %o
        : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    %s8 = fa4.tile.matmul %q8, %k8 scale %qk transpose_b
        : tensor<64x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>
          -> tensor<64x128xf32>
    ```

    PTX: after `fa4-specialize`, `tcgen05.mma.cta_group::1.kind::f16` steps
    issued by the MMA warp, accumulating in Tensor Memory (sm_90a:
    `wgmma.mma_async` of the consumer warpgroups, `.e4m3` with FP8); a
    scale is folded into the softmax's scale (Q K^T) or the normalization
    (P V).
  }];
  let arguments = (ins FA4_Tile16:$a, FA4_Tile16:$b,
                       Optional<FA4_TileF32>:$acc, Optional<F32>:$scale,
                       UnitAttr:$transpose_b);
  let results = (outs FA4_TileF32:$result);
  let assemblyFormat = [{
    $a `,` $b (`acc` $acc^)? (`scale` $scale^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FA4_TileDescaleOp : FA4_Op<"tile.descale"> {
  let summary = "the FP8 descale factors of a batch and KV head";
  let description = [{
    Reads the descale factors of batch (or sequence) `batch` and KV head
    `head` from the `[B, Hkv]` tensors: `scores` is `q_descale[batch, head]
    * k_descale[batch, head]`, the factor of Q K^T, and `values` is
    `v_descale[batch, head]`, the factor of P V.

    ```mlir
    %qk, %vs = fa4.tile.descale %qd, %kd, %vd [%b, %kvh]
        : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
    ```

    PTX: after `fa4-specialize`, three `ld.global.f32` and a `mul.f32` per
    work tile in each consumer warpgroup.
  }];
  let arguments = (ins Arg<FA4_DescaleMemRef, "", [MemRead]>:$queryDescale,
                       Arg<FA4_DescaleMemRef, "", [MemRead]>:$keyDescale,
                       Arg<FA4_DescaleMemRef, "", [MemRead]>:$valueDescale,
                       Index:$batch, Index:$head);
  let results = (outs F32:$scores, F32:$values);
  let assemblyFormat = [{
    $queryDescale `,` $keyDescale `,` $valueDescale `[` $batch `,` $head `]`
    attr-dict `:` type($queryDescale) `,` type($keyDescale) `,`
    type($valueDescale)
  }];
}

def FA4_TileSoftcapOp : FA4_Op<"tile.softcap", [Pure,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "cap the scores with c tanh(s / c)";
  let description = [{
    `result = cap * tanh(scores / cap)` per element, in the units of the raw
    scores Q K^T: the attention's softcap over its scale, so that the
    softmax's `scale_log2` still applies (`scale_log2 * result` is the
    capped score `softcap * tanh(scale * s / softcap)` in log2 units).

    `polynomial` (0 to 16, default 0; the plan's `polynomialTanh`) is how
    many of every 16 scores take tanh from an FMA polynomial (relative
    error 2^-13, below the hardware approximation's 2^-11) where every
    `|scores / cap|` of the warp's fragments is at most 1; elsewhere, and
    for the other scores, the kernel uses the hardware approximation. The
    polynomial moves work from the MUFU unit, which the softmax's
    exponentials already load, to the FMA pipe.

    `ceiling` (0 to 48, default 0: never; the plan's `softcapCeiling`) lets
    the softmax after it take the cap in log2 units, `B = scale_log2 * cap`
    (both launch arguments), as every row's exponent reference wherever `B
    <= ceiling`: no capped score exceeds `B`, so no row maximum is taken
    per KV block and O is never rescaled; past it the kernel keeps the
    running maximum. P then lies in [2^-2B, 1], which the ceiling keeps a
    normal number of P's type (bf16 48, f16 7).

    ```mlir
    %c = fa4.tile.softcap %s cap 566.0 : tensor<128x128xf32>
    %d = fa4.tile.softcap %s cap 566.0 polynomial 8 : tensor<128x128xf32>
    %e = fa4.tile.softcap %s cap 339.4 ceiling 48 : tensor<64x128xf32>
    ```

    PTX: after `fa4-specialize`, `tanh.approx.f32` between two multiplies
    per score in the softmax warpgroup; with `polynomial`, the fragment's
    `max.f32`/`min.f32`, a `vote.sync.any` and, in warps within the cap,
    `y + y^3 p(y^2)` in `mul.f32`/`fma.rn.f32` for those scores. With
    `ceiling`, one `setp.le.f32` of `B` per warpgroup and a branch between
    two copies of the KV loop, the one under the ceiling without the row
    maximum's `max.f32`/`shfl.sync.bfly` and O's rescale.
  }];
  let arguments = (ins FA4_TileF32:$scores, F64Attr:$cap,
                       DefaultValuedAttr<I64Attr, "0">:$polynomial,
                       DefaultValuedAttr<I64Attr, "0">:$ceiling);
  let results = (outs FA4_TileF32:$result);
  let assemblyFormat = [{
    $scores `cap` $cap (`polynomial` $polynomial^)? (`ceiling` $ceiling^)?
    attr-dict `:` type($scores)
  }];
  let hasVerifier = 1;
}

def FA4_TileModifyOp : FA4_Op<"tile.modify", [IsolatedFromAbove,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "apply the attention's score and mask regions to a tile";
  let description = [{
    For row `r` (query position `i = position + r / heads`, head `h = head +
    r mod heads`) and column `c` (key `j = key + c`), with `s = scale *
    scores[r, c]` (the attention's units): `result[r, c] = score(s, batch, h,
    i, j, captures...)`, or `s` without a score region, and `-inf` where the
    mask region yields false. The result is in the attention's units: the
    softmax after it scales by log2(e) only. Elements past Sq or Skv are
    evaluated at clamped coordinates (the kernel never evaluates a region
    outside the tensors); fa4.tile.mask masks them afterwards.
    Score and mask regions (optional, each one block, isolated from above):
    both take `(%score: f32, %batch: index, %head: index, %query: index,
    %key: index)` followed by one argument per captured operand, and end in
    `fa4.yield`: the score region yields the new score (f32), the mask
    region whether the key is kept (i1). They may hold `arith` ops, the
    `math` ops the kernels lower (absf, absi, ceil, floor, round, exp,
    exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt, tanh, sin, cos, erf,
    copysign, powf, fma) and `memref.load` / `memref.dim` of the captured
    operands, nothing else (no nested regions, no writes). They are evaluated only at valid
    coordinates (`batch < B`, `head < Hq`, `query < Sq`, `key < Skv`), and
    must read the captures in bounds there.
    ```mlir
    %m = fa4.tile.modify %s at [%b, %h, %pos, %key] heads 2 scale 0.125
        captures(%slopes : memref<8xf32>) score {
    ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index,
         %t: memref<8xf32>):
      %slope = memref.load %t[%h] : memref<8xf32>
      %y = arith.mulf %x, %slope : f32
      fa4.yield %y : f32
    } : tensor<128x128xf32>
    ```

    PTX: after `fa4-specialize`, the regions inlined once per score element
    in the softmax warpgroup (sm_100a) or the consumer (sm_90a): their
    arith/math ops, `ld.global` for the capture loads, a `selp` to -inf for
    the mask.
  }];
  let arguments = (ins FA4_TileF32:$scores, Index:$batch, Index:$head,
                       Index:$position, Index:$key, I64Attr:$heads,
                       F64Attr:$scale,
                       Arg<Variadic<FA4_CaptureMemRef>, "", [MemRead]>:$captures);
  let results = (outs FA4_TileF32:$result);
  let regions = (region AnyRegion:$scoreMod, AnyRegion:$maskMod);
  let assemblyFormat = [{
    $scores `at` ` ` `[` $batch `,` $head `,` $position `,` $key `]`
    `heads` $heads `scale` $scale
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    (`score` $scoreMod^)? (`mask` $maskMod^)? attr-dict `:` type($scores)
  }];
  let hasVerifier = 1;
}

def FA4_YieldOp : FA4_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "TileModifyOp", "LaunchOp"]>]> {
  let summary = "the result of a score or mask region";
  let description = [{
    Ends a score region (an f32: the new score) or a mask region (an i1:
    whether the key is kept).

    ```mlir
    fa4.yield %t : f32
    ```

    PTX: none; the regions are inlined.
  }];
  let arguments = (ins AnyTypeOf<[F32, I1]>:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def FA4_TileMaskOp : FA4_Op<"tile.mask", [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "set the scores of keys a query row may not see to -inf";
  let description = [{
    Row `r` is query position `i = position + r / heads`; column `c` is key
    `j = key + c`; `d = i + Skv - Sq` is the row's diagonal (bottom-right
    aligned). The score is -inf where `j >= Skv`; with `causal` where
    `j > d`; with `window = array<i64: left, right>` where `j < d - left` or
    `j > d + right` (a bound of -1 is unbounded). With `causal`, `right` is
    0. Bounds are below 2^31 - 256: larger ones are unbounded for every
    sequence the kernel's 32-bit coordinates reach, and fa4-tile writes
    them as -1.

    ```mlir
    %m = fa4.tile.mask %s rows %pos keys %key lengths(%sq, %skv) heads 4 causal
        : tensor<128x128xf32>
    %w = fa4.tile.mask %s rows %pos keys %key lengths(%sq, %skv) heads 1
        causal window [4095, 0] : tensor<128x128xf32>
    ```

    PTX: after `fa4-specialize`, integer compares and selects in the softmax
    warpgroup, one row per thread, in the KV blocks that hold masked keys
    (blocks wholly outside every row's window are not visited).
  }];
  let arguments = (ins FA4_TileF32:$scores, Index:$position, Index:$key,
                       Index:$seqQ, Index:$seqKv, I64Attr:$heads,
                       UnitAttr:$causal,
                       OptionalAttr<DenseI64ArrayAttr>:$window);
  let results = (outs FA4_TileF32:$result);
  let assemblyFormat = [{
    $scores `rows` $position `keys` $key `lengths` ` ` `(` $seqQ `,` $seqKv `)`
    `heads` $heads (`causal` $causal^)? (`window` $window^)? attr-dict `:`
    type($scores)
  }];
  let extraClassDeclaration = [{
    /// The largest bounded window side.
    static constexpr int64_t kMaxWindowBound = (int64_t(1) << 31) - 257;
    /// Left and right bounds, -1 where unbounded; causal makes right 0.
    std::pair<int64_t, int64_t> getEffectiveWindow();
  }];
  let hasVerifier = 1;
}

def FA4_TileSoftmaxOp : FA4_Op<"tile.softmax", [Pure,
    AllTypesMatch<["max", "sum", "newMax", "newSum", "correction"]>]> {
  let summary = "one online-softmax step in base 2 with conditional rescale";
  let description = [{
    Per row, with `x = scores * scale_log2` (log2 units): `m = max(max,
    rowmax(x))`; the reference moves to `m` only if `m - max > threshold`
    (always from -inf), else stays `max`; `correction = 2^(max - ref)` when
    it moves, else 1; `probabilities = 2^(x - ref)` (a row that has seen no
    key uses 0 as reference) computed with `fa4.exp2`'s split of `emulated`
    of 16 and rounded to the result type; `newSum = sum * correction +
    rowsum` of the f32 exponentials; `newMax = ref`. Since `correction`
    applies to the output accumulated so far, the result is exact for any
    threshold; the threshold only bounds how far exponentials may grow
    (2^threshold) between rescales.

    ```mlir
    %p, %m1, %l1, %c = fa4.tile.softmax %s, %m0, %l0 scale_log2 0.1275
        threshold 8 emulated 3
        : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
    ```

    PTX: after `fa4-specialize`, the softmax warpgroup's row reductions,
    `ex2.approx.ftz.f32` and the FMA polynomial, `tcgen05.st` of P.
  }];
  let arguments = (ins FA4_TileF32:$scores, FA4_TileF32:$max,
                       FA4_TileF32:$sum, F64Attr:$scaleLog2,
                       I64Attr:$threshold, I64Attr:$emulated);
  let results = (outs FA4_Tile16:$probabilities, FA4_TileF32:$newMax,
                      FA4_TileF32:$newSum, FA4_TileF32:$correction);
  let assemblyFormat = [{
    $scores `,` $max `,` $sum `scale_log2` $scaleLog2 `threshold` $threshold
    `emulated` $emulated attr-dict `:` type($scores) `,` type($max) `->`
    type($probabilities)
  }];
  let hasVerifier = 1;
}

def FA4_TileRescaleOp : FA4_Op<"tile.rescale", [Pure,
    AllTypesMatch<["tile", "result"]>]> {
  let summary = "multiply each row of a tile by its factor";
  let description = [{
    `result[r, :] = tile[r, :] * factors[r]`.

    ```mlir
    %o1 = fa4.tile.rescale %o by %c : tensor<128x128xf32>, tensor<128xf32>
    ```

    PTX: after `fa4-specialize`, the correction warpgroup's `tcgen05.ld`,
    `mul.f32`, `tcgen05.st` on O, skipped by warps whose 32 factors are
    all 1.
  }];
  let arguments = (ins FA4_TileF32:$tile, FA4_TileF32:$factors);
  let results = (outs FA4_TileF32:$result);
  let assemblyFormat = [{
    $tile `by` $factors attr-dict `:` type($tile) `,` type($factors)
  }];
  let hasVerifier = 1;
}

def FA4_TileSinkOp : FA4_Op<"tile.sink", [
    AllTypesMatch<["tile", "result"]>,
    AllTypesMatch<["max", "sum", "newMax", "newSum"]>]> {
  let summary = "join each row's attention sink to its softmax";
  let description = [{
    After the KV loop, adds one more term to each row's softmax: the sink
    logit of its head, which has no value row. For row `r` (head `head + r
    mod heads`), with `x = sinks[head + r mod heads] * log2(e)` (the logit in
    the softmax's log2 units) and `m = max(max[r], x)` (0 where that is
    -inf): `newMax = max(max[r], x)`, `result[r, :] = tile[r, :] *
    2^(max[r] - m)`, `newSum = sum[r] * 2^(max[r] - m) + 2^(x - m)`. A row
    that saw no key gets `newSum = 1` and `newMax = x`: it normalizes to 0
    and its LSE is the sink.

    ```mlir
    %o1, %m1, %l1 = fa4.tile.sink %sinks[%h] to %o, %m, %l heads 2
        : memref<32xf32>, tensor<128x128xf32>, tensor<128xf32>
    ```

    PTX: after `fa4-specialize`, one `ld.global.f32` of the row's sink and
    two `ex2.approx.f32` per row in the epilogue (the correction warpgroup
    on sm_100a, the consumer on sm_90a), folded into the normalization.
  }];
  let arguments = (ins Arg<FA4_SinkMemRef, "", [MemRead]>:$sinks,
                       Index:$head, FA4_TileF32:$tile, FA4_TileF32:$max,
                       FA4_TileF32:$sum, I64Attr:$heads);
  let results = (outs FA4_TileF32:$result, FA4_TileF32:$newMax,
                      FA4_TileF32:$newSum);
  let assemblyFormat = [{
    $sinks `[` $head `]` `to` $tile `,` $max `,` $sum `heads` $heads attr-dict
    `:` type($sinks) `,` type($tile) `,` type($max)
  }];
  let hasVerifier = 1;
}

def FA4_TileRopeOp : FA4_Op<"tile.rope", [
    AllTypesMatch<["tile", "result"]>]> {
  let summary = "rotate a tile's rows by their positions' rotary angles";
  let description = [{
    The rotary position embedding of a tile of Q (or, `inverse`, of O) in
    GPT-J pairs. Row `r` is query position `i = position + r / heads` of
    batch `batch`, at position `p = positions[batch, i]` (clamped into
    `[0, P)` of the `[P, R]` table); with `c = cos_sin[p, k]` and `s =
    cos_sin[p, R / 2 + k]`, columns `(x, y) = (start + 2k, start + 2k + 1)`
    for `k < R / 2` become `(x c - y s, y c + x s)`, or `(x c + y s, y c -
    x s)` with `inverse`, computed in f32 and rounded to the tile's element
    type. Rows past Q's sequence and the other columns are unchanged.

    ```mlir
    %qr = fa4.tile.rope %q, %cos_sin, %pos [%b, %i] heads 4 start 0
        : tensor<128x128xbf16>, memref<?x128xf32>, memref<?x?xi32>
    %or = fa4.tile.rope %o, %cos_sin, %pos [%b, %i] heads 4 start 448 inverse
        : tensor<128x512xf32>, memref<?x64xf32>, memref<?x?xi32>
    ```

    PTX: after `fa4-specialize`, Q is rotated in shared memory once its TMA
    load has landed: per 16-byte piece of a row's rotated columns an
    `ld.shared.v4.b32`, two `ld.global.v4.f32` of the table, the `fma.rn.f32`
    rotation and an `st.shared.v4.b32`, then `fence.proxy.async.shared::cta`
    and a barrier of the warps that rotated before the MMA reads Q; O's
    inverse is applied to its f32 fragments in registers in the epilogue.
  }];
  let arguments = (ins AnyTypeOf<[FA4_Tile16, FA4_TileF32]>:$tile,
                       Arg<MemRefRankOf<[F32], [2]>, "", [MemRead]>:$cosSin,
                       Arg<MemRefRankOf<[I32], [2]>, "", [MemRead]>:$positions,
                       Index:$batch, Index:$position, I64Attr:$heads,
                       I64Attr:$start, UnitAttr:$inverse);
  let results = (outs AnyTypeOf<[FA4_Tile16, FA4_TileF32]>:$result);
  let assemblyFormat = [{
    $tile `,` $cosSin `,` $positions `[` $batch `,` $position `]`
    `heads` $heads `start` $start (`inverse` $inverse^)? attr-dict
    `:` type($tile) `,` type($cosSin) `,` type($positions)
  }];
  let extraClassDeclaration = [{
    /// R: the rotated columns (the table's dimension 1).
    int64_t getRotatedColumns() {
      return getCosSin().getType().getDimSize(1);
    }
  }];
  let hasVerifier = 1;
}

def FA4_TileNormalizeOp : FA4_Op<"tile.normalize", [Pure]> {
  let summary = "divide each row by its sum, in the output type";
  let description = [{
    `result[r, :] = tile[r, :] / sums[r]` rounded to the result type; rows
    whose sum is 0 (no visible key) are 0.

    ```mlir
    %out = fa4.tile.normalize %o by %l
        : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xbf16>
    ```

    PTX: after `fa4-specialize`, the correction warpgroup's epilogue
    (`tcgen05.ld`, `mul.f32`, `cvt.rn.bf16x2.f32`, `st.shared` into the
    swizzled staging tile).
  }];
  let arguments = (ins FA4_TileF32:$tile, FA4_TileF32:$sums);
  let results = (outs FA4_Tile16:$result);
  let assemblyFormat = [{
    $tile `by` $sums attr-dict `:` type($tile) `,` type($sums) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def FA4_TileStoreOp : FA4_Op<"tile.store"> {
  let summary = "write a tile of rows to a [B, S, H, D] tensor";
  let description = [{
    The inverse of `fa4.tile.load`: row `r` goes to `dest[batch, position +
    r / heads, head + r mod heads, :]`; rows past the sequence are dropped.

    ```mlir
    fa4.tile.store %out, %output[%b, %pos, %h] heads 4
        : tensor<128x128xbf16> -> memref<?x?x32x128xbf16>
    ```

    PTX: after `fa4-specialize`, TMA stores from the staging tile
    (`cp.async.bulk.tensor.4d.global.shared::cta`).
  }];
  let arguments = (ins FA4_Tile16:$tile,
                       Arg<FA4_ActivationMemRef, "", [MemWrite]>:$dest,
                       Index:$batch, Index:$position, Index:$head,
                       I64Attr:$heads);
  let assemblyFormat = [{
    $tile `,` $dest `[` $batch `,` $position `,` $head `]` `heads` $heads
    attr-dict `:` type($tile) `->` type($dest)
  }];
  let hasVerifier = 1;
}

def FA4_TileStoreLseOp : FA4_Op<"tile.store_lse",
    [AllTypesMatch<["max", "sum"]>]> {
  let summary = "write the log-sum-exp of each row";
  let description = [{
    For row `r` (query position `position + r / heads`, head `head + r mod
    heads`): `lse[batch, head, position] = (max[r] + log2(sum[r])) * ln 2`,
    the natural log of the row's sum of `exp(scale * score)`, with `max` in
    the softmax's log2 units; -inf where `sum[r]` is 0. Rows past the
    sequence are dropped.

    ```mlir
    fa4.tile.store_lse %m, %l, %lse[%b, %h, %pos] heads 4
        : tensor<128xf32> -> memref<?x32x?xf32>
    ```

    PTX: after `fa4-specialize`, `lg2.approx.f32` and a global store per row
    in the correction warpgroup.
  }];
  let arguments = (ins FA4_TileF32:$max, FA4_TileF32:$sum,
                       Arg<FA4_LseMemRef, "", [MemWrite]>:$dest,
                       Index:$batch, Index:$head, Index:$position,
                       I64Attr:$heads);
  let assemblyFormat = [{
    $max `,` $sum `,` $dest `[` $batch `,` $head `,` $position `]` `heads`
    $heads attr-dict `:` type($max) `->` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor Memory and tcgen05 (kernel level, sm_100a)
//===----------------------------------------------------------------------===//

def FA4_TmemSlot : MemRefRankOf<[I32], [1]>;
def FA4_Tcgen05Vector : VectorOfRankAndType<[1], [F32, I32, F16, BF16, F8E4M3FN]>;

def FA4_TmemAllocOp : FA4_Op<"tmem.alloc",
    [MemoryEffects<[MemAlloc<FA4_TensorMemory>]>]> {
  let summary = "allocate the CTA's Tensor Memory";
  let description = [{
    Executed by all 32 threads of one warp: allocates `columns` 32-bit TMEM
    columns (a power of two in [32, 512]) for the CTA and writes the TMEM
    address of the allocation to `slot` in shared memory. The warp then
    gives up its right to allocate again, since a kernel allocates once.
    Other threads read the address with `fa4.tmem.base` after a barrier.

    ```mlir
    fa4.tmem.alloc 512 columns into %slot : memref<1xi32, #gpu.address_space<workgroup>>
    ```

    PTX:
    ```
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 512;
    tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
    ```
  }];
  let arguments = (ins Arg<FA4_TmemSlot, "TMEM address slot", [MemWrite]>:$slot,
                       I64Attr:$columns);
  let assemblyFormat = "$columns `columns` `into` $slot attr-dict `:` type($slot)";
  let hasVerifier = 1;
}

def FA4_TmemBaseOp : FA4_Op<"tmem.base"> {
  let summary = "read the TMEM address written by fa4.tmem.alloc";
  let description = [{
    Reads the address of the CTA's TMEM allocation from `slot`. The result
    type states the whole allocation: 128 lanes by its columns, which are
    those of every `fa4.tmem.alloc` of the function into the same slot (the
    same value, or a view of the dynamic shared memory at the same offset),
    so that views of the base stay inside the allocated columns.

    ```mlir
    %tmem = fa4.tmem.base %slot : memref<1xi32, #gpu.address_space<workgroup>> -> !fa4.tmem<128x512xf32>
    ```

    PTX: `ld.shared.b32 %r, [slot];`
  }];
  let arguments = (ins Arg<FA4_TmemSlot, "TMEM address slot", [MemRead]>:$slot);
  let results = (outs FA4_TmemType:$tmem);
  let assemblyFormat = "$slot attr-dict `:` type($slot) `->` qualified(type($tmem))";
  let hasVerifier = 1;
}

def FA4_TmemDeallocOp : FA4_Op<"tmem.dealloc"> {
  let summary = "free the CTA's Tensor Memory";
  let description = [{
    Executed by the warp that allocated: frees the whole allocation `tmem`
    (a value produced by `fa4.tmem.base`).

    ```mlir
    fa4.tmem.dealloc %tmem : !fa4.tmem<128x512xf32>
    ```

    PTX: `tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, 512;`
  }];
  let arguments = (ins Arg<FA4_TmemType, "", [MemFree<FA4_TensorMemory>]>:$tmem);
  let assemblyFormat = "$tmem attr-dict `:` qualified(type($tmem))";
  let hasVerifier = 1;
}

def FA4_TmemViewOp : FA4_Op<"tmem.view", [Pure]> {
  let summary = "a sub-region of Tensor Memory, possibly reinterpreted";
  let description = [{
    The region of `source` that starts `column` 32-bit columns after its
    first column, seen with the result's element type. Views alias: P is a
    16-bit view over the upper half of S.

    ```mlir
    %s0 = fa4.tmem.view %tmem[0] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xf32>
    %p0 = fa4.tmem.view %tmem[64] : !fa4.tmem<128x512xf32> -> !fa4.tmem<128x128xbf16>
    ```

    PTX: none; the TMEM address advances by `column`.
  }];
  let arguments = (ins FA4_TmemType:$source, I64Attr:$column);
  let results = (outs FA4_TmemType:$result);
  let assemblyFormat = "$source `[` $column `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def FA4_TmemBufferOp : FA4_Op<"tmem.buffer"> {
  let summary = "a Tensor Memory buffer of the kernel, not yet placed";
  let description = [{
    Declares a region of the CTA's Tensor Memory by its shape only: 128
    lanes by the result's elements. Roles access it (and views of it) like
    any TMEM region; `fa4-allocate-tmem` later chooses its columns, lets
    buffers that are never live together share columns (P over S), and
    replaces it with a `fa4.tmem.view` of the allocation. Declared in the
    kernel body, outside the roles, like a channel. `name` identifies the
    buffer in diagnostics and in the placed IR.

    ```mlir
    %s0 = fa4.tmem.buffer "s0" : !fa4.tmem<128x128xf32>
    %p0 = fa4.tmem.buffer "p0" : !fa4.tmem<128x128xbf16>
    ```

    PTX: none; after allocation, the TMEM address of its first column.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Res<FA4_TmemType, "", [MemAlloc<FA4_TensorMemory>]>:$buffer);
  let assemblyFormat = "$name attr-dict `:` qualified(type($buffer))";
  let hasVerifier = 1;
}

def FA4_TmemLoadOp : FA4_Op<"tmem.load",
    [DeclareOpInterfaceMethods<FA4_AsyncAccessOpInterface>]> {
  let summary = "load one row fragment per thread from Tensor Memory";
  let description = [{
    Executed by a whole warpgroup: thread `t` reads lane `t` of `source`,
    elements `[offset, offset + N)` where `N` is the result length. The load
    is asynchronous; the values may be used only after
    `nvvm.tcgen05.wait <load>`. 32-bit elements only; `N` is a power of two up
    to 128.

    ```mlir
    %row = fa4.tmem.load %s0[32] : !fa4.tmem<128x128xf32> -> vector<32xf32>
    ```

    PTX (warp `w` of the warpgroup addresses lanes `32w .. 32w + 31`):
    `tcgen05.ld.sync.aligned.32x32b.x32.b32 {r0, ..., r31}, [taddr];`
  }];
  let arguments = (ins Arg<FA4_TmemType, "", [MemRead<FA4_TensorMemory>]>:$source,
                       I64Attr:$offset);
  let results = (outs FA4_Tcgen05Vector:$result);
  let assemblyFormat = "$source `[` $offset `]` attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def FA4_TmemStoreOp : FA4_Op<"tmem.store",
    [DeclareOpInterfaceMethods<FA4_AsyncAccessOpInterface>,
     DeclareOpInterfaceMethods<FA4_BufferDefinitionOpInterface>]> {
  let summary = "store one row fragment per thread to Tensor Memory";
  let description = [{
    Executed by a whole warpgroup: thread `t` writes `value` to lane `t` of
    `dest`, elements `[offset, offset + N)`. 16-bit values are packed two
    per 32-bit column, e4m3 four (the first in the low bits). The store is
    asynchronous; `nvvm.tcgen05.wait <store>` orders it before anything that
    signals its completion.

    ```mlir
    fa4.tmem.store %p, %p0[0] : vector<64xbf16>, !fa4.tmem<128x128xbf16>
    fa4.tmem.store %p8, %p1[32] : vector<32xf8E4M3FN>, !fa4.tmem<128x128xf8E4M3FN>
    ```

    PTX: `tcgen05.st.sync.aligned.32x32b.x32.b32 [taddr], {r0, ..., r31};`
  }];
  let arguments = (ins FA4_Tcgen05Vector:$value,
                       Arg<FA4_TmemType, "", [MemWrite<FA4_TensorMemory>]>:$dest,
                       I64Attr:$offset);
  let assemblyFormat = "$value `,` $dest `[` $offset `]` attr-dict `:` type($value) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

// A shared-memory MMA operand as 128-byte-swizzled TMA loads lay it out:
// [atoms, rows, 128 bytes of elements] (64 16-bit or 128 e4m3 per atom row).
def FA4_SmemTile : MemRefRankOf<[F16, BF16, F8E4M3FN], [3]>;

def FA4_MmaOp : FA4_Op<"mma",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
     DeclareOpInterfaceMethods<FA4_AsyncAccessOpInterface>,
     DeclareOpInterfaceMethods<FA4_BufferDefinitionOpInterface>]> {
  let summary = "issue a tcgen05 MMA into Tensor Memory";
  let description = [{
    Issued by one thread: `d (+)= a x b` on the Tensor Core, asynchronously.
    `d` is a 128 x N f32 Tensor Memory region; when `accumulate` is false
    the product overwrites it. The operands are f16 or bf16 (`kind::f16`)
    or e4m3, `f8E4M3FN` (`kind::f8f6f4`), both of one type.

    Shared-memory operands have the layout a 128-byte-swizzled TMA load
    writes, as rank-3 memrefs `[atoms, rows, W]`: the contiguous dimension
    is cut into atoms of W elements, 128 bytes per row (W = 64 16-bit or 128
    e4m3 elements), each atom a block of `rows x 128` bytes, atoms one after
    another, the whole tile 1024-byte aligned. Element (r, c) of the logical
    tile is `[c / W, r, c mod W]`, so a row range of a tile is an ordinary
    subview.

    - `a` (M x K, M = 128): a K-major tile `[K/W, 128, W]` (Q), or a Tensor
      Memory region of K elements per lane (P: 16-bit two per column, e4m3
      four); with `a_major(mn)` an MN-major 16-bit tile `[M/W, K, W]` (the
      decode family's V^T: V's keys x head-dim columns read as head dim x
      keys).
    - `b`: with `b_major = k` an N x K tile `[K/W, N, W]` (K of QK^T: keys x
      head dim; an FP8 V read key-major: head dim x keys); with `b_major =
      mn` a K x N tile `[N/W, K, W]` (16-bit V of PV: keys x head dim). An
      8-bit `b` is K-major. A K-major `b` may also be a K window of one
      atom, `[1, N, K]` with K < W at a column offset (a subview of a tile
      along its columns: the two PV MMAs of a split P read keys [0, split)
      and [split, blockN) of a key-major V).

    A head dim that is not a multiple of W fills its last atom in part
    (TMA zero-fills the columns past the tensor): a K-major contraction then
    names its `depth`, the K the MMA reads (a multiple of the K step within
    the last atom; by default all of a's atoms), and an MN-major `b` may
    hold more atoms' columns than N, up to the atom N ends in.

    `ws(M)` (M = 32 or 64) issues the weight-stationary MMA,
    `tcgen05.mma.ws`: `a` has M rows (shared memory), N is 64, 128 or 256,
    and the M x N product is folded over the 128 lanes of `d`, which holds
    N M / 128 columns: element (i, j) of the product is in lane
    `i + M floor(j / (N M / 128))`, column `j mod (N M / 128)`. Lane t of
    such a region thus holds row `t mod M` of the `t / M`-th of `128 / M`
    equal column shares, and a warp reads its share through its own 32
    lanes.

    Completion is observed only through `fa4.mma.commit`.

    ```mlir
    fa4.mma %q, %k, %s, %false b_major(k)
        : memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          !fa4.tmem<128x128xf32>
    // Head dim 96: two atoms, K = 96.
    fa4.mma %q, %k, %s, %false b_major(k) depth(96)
        : memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          !fa4.tmem<128x128xf32>
    // Weight-stationary M = 32: 32 query rows against 128 keys, each warp's
    // lanes holding 32 of the keys (32 columns).
    fa4.mma %q32, %k, %s32, %false b_major(k) ws(32)
        : memref<2x32x64xbf16, #gpu.address_space<workgroup>>,
          memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          !fa4.tmem<128x32xf32>
    // Swap-AB decode: O^T (128 of Dv x 16 query rows) += V^T P^T, V read
    // MN-major as A, P^T (16 rows x 128 keys) K-major as B.
    fa4.mma %v, %pt, %ot, %true a_major(mn) b_major(k)
        : memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          memref<2x16x64xbf16, #gpu.address_space<workgroup>>,
          !fa4.tmem<128x16xf32>
    // FP8: P (96 keys of e4m3 in TMEM) times keys [0, 96) of a key-major V.
    fa4.mma %p, %v, %o, %true b_major(k)
        : !fa4.tmem<128x96xf8E4M3FN>,
          memref<1x128x96xf8E4M3FN, strided<[16384, 128, 1]>, #gpu.address_space<workgroup>>,
          !fa4.tmem<128x128xf32>
    ```

    PTX: one instruction per K step of 32 bytes (16 16-bit or 32 e4m3
    elements), the first with `accumulate`, the others accumulating:
    ```
    tcgen05.mma.cta_group::1.kind::f16 [d], adesc, bdesc, idesc, p;     // a in SMEM
    tcgen05.mma.cta_group::1.kind::f16 [d], [a], bdesc, idesc, p;       // a in TMEM
    tcgen05.mma.cta_group::1.kind::f8f6f4 [d], [a], bdesc, idesc, p;    // e4m3
    tcgen05.mma.ws.cta_group::1.kind::f16 [d], adesc, bdesc, idesc, p;  // ws(M)
    ```
    An MN-major `a` sets the instruction descriptor's transpose-A bit (15)
    and its shared-memory descriptor takes the atom stride as the leading
    byte offset, as an MN-major `b`'s does.
  }];
  let arguments = (ins
    AnyTypeOf<[FA4_SmemTile, FA4_TmemType]>:$a,
    FA4_SmemTile:$b,
    FA4_TmemType:$d,
    I1:$accumulate,
    FA4_OperandMajor:$b_major,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$depth,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$ws,
    OptionalAttr<FA4_OperandMajor>:$a_major);
  let assemblyFormat = [{
    $a `,` $b `,` $d `,` $accumulate (`a_major` `(` $a_major^ `)`)? `b_major` `(` $b_major `)` (`depth` `(` $depth^ `)`)? (`ws` `(` $ws^ `)`)? attr-dict `:` qualified(type($a)) `,` type($b) `,` qualified(type($d))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// M: 128, or a weight-stationary MMA's 32 or 64.
    int64_t getM() { return getWs() ? static_cast<int64_t>(*getWs()) : 128; }
    /// TMEM columns of `d`: N M / 128 (the product folded over the lanes).
    int64_t getDColumns() { return getD().getType().getElements(); }
    int64_t getN() { return getDColumns() * 128 / getM(); }
    int64_t getK();
    /// Whether `a` is an MN-major shared-memory tile.
    bool isAMnMajor() { return getAMajor() == OperandMajor::mn; }
  }];
}

def FA4_MmaCommitOp : FA4_Op<"mma.commit"> {
  let summary = "arrive on an mbarrier when this thread's MMAs complete";
  let description = [{
    Makes `barriers[index]` receive one arrival once every tcgen05 MMA this
    thread issued before has completed (and with it every read of the
    MMAs' operands).

    ```mlir
    fa4.mma.commit %s_ready[%stage] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
    ```

    PTX: `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];`
  }];
  let arguments = (ins NVGPU_MBarrierGroup:$barriers, Index:$index);
  let assemblyFormat = "$barriers `[` $index `]` attr-dict `:` qualified(type($barriers))";
}

//===----------------------------------------------------------------------===//
// Warpgroup MMA (kernel level, sm_90a)
//===----------------------------------------------------------------------===//

// A per-thread fragment of a wgmma accumulator (f32) or register A operand
// (16- or 8-bit), in the order of the PTX fragment registers.
def FA4_WgmmaAccumulator : VectorOfRankAndType<[1], [F32]>;
def FA4_WgmmaFragment : VectorOfRankAndType<[1], [F16, BF16, F8E4M3FN]>;

def FA4_WgmmaOp : FA4_Op<"wgmma", [MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<FA4_AsyncAccessOpInterface>]> {
  let summary = "issue an asynchronous warpgroup MMA (sm_90a)";
  let description = [{
    Executed by the 128 threads of a warpgroup together: `result = a x b`,
    plus `acc` when given, on the Tensor Core. M is 64. The result is this
    thread's fragment of the 64 x N f32 product and may be read only after
    an `nvvm.wgmma.commit.group.sync.aligned` and the `fa4.wgmma.wait` that returns it.

    Fragments are vectors in PTX register order. Thread t of the warpgroup
    holds, in element i of an accumulator (N / 2 elements), row
    `16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2)` and column
    `8 * (i / 4) + 2 * (t % 4) + i % 2`. A register A operand (K / 2
    elements) of 16-bit elements holds the same rows and columns for its K
    columns, so a 16-bit truncation of an accumulator is an A operand; an
    8-bit one (e4m3, k32 steps) holds four consecutive columns per
    register, which `fa4.wgmma.quantize` produces from an accumulator.

    - `a` (64 x K): a K-major shared-memory tile `[K/E, 64, E]` (Q; E the
      elements of a 128-byte atom row: 64 16-bit, 128 8-bit) or a register
      fragment (P).
    - `b`: as in `fa4.mma`, an N x K tile with `b_major = k`, a K x N tile
      with `b_major = mn`; `depth` and partly filled last atoms as there.
      8-bit B is K-major only (wgmma has no transposed 8-bit operands).

    ```mlir
    %s = fa4.wgmma %q, %k b_major(k)
        : memref<2x64x64xbf16, #gpu.address_space<workgroup>>,
          memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<64xf32>
    %o2 = fa4.wgmma %p, %v, %o b_major(mn)
        : vector<64xbf16>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>,
          vector<64xf32> -> vector<64xf32>
    %o8 = fa4.wgmma %p8, %vt, %o b_major(k)
        : vector<64xf8E4M3FN>, memref<1x128x128xf8E4M3FN, #gpu.address_space<workgroup>>,
          vector<64xf32> -> vector<64xf32>
    ```

    PTX: `wgmma.fence.sync.aligned;`, then one instruction per 32 bytes of
    K (16 16-bit or 32 8-bit elements), the first without the accumulator
    when `acc` is absent:
    ```
    wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {d...}, adesc, bdesc, p, 1, 1, 0, 0;
    wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {d...}, {a0, a1, a2, a3}, bdesc, p, 1, 1, 1;
    wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {d...}, {a0, a1, a2, a3}, bdesc, p, 1, 1;
    ```
  }];
  let arguments = (ins
    AnyTypeOf<[FA4_SmemTile, FA4_WgmmaFragment]>:$a,
    FA4_SmemTile:$b,
    Optional<FA4_WgmmaAccumulator>:$acc,
    FA4_OperandMajor:$b_major,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$depth);
  let results = (outs FA4_WgmmaAccumulator:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $acc^)? `b_major` `(` $b_major `)` (`depth` `(` $depth^ `)`)? attr-dict `:` type($a) `,` type($b) (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kM = 64;
    int64_t getN() { return getResult().getType().getNumElements() * 2; }
    int64_t getK();
  }];
}

def FA4_WgmmaQuantizeOp : FA4_Op<"wgmma.quantize", [Pure]> {
  let summary = "round an accumulator fragment to an e4m3 register A operand";
  let description = [{
    Executed by each warp of a warpgroup together: rounds the 64 x K
    matrix whose accumulator fragments the threads hold (`source`, f32, in
    the layout `fa4.wgmma` describes for accumulators, K / 2 elements) to
    e4m3 (to nearest, saturating to the largest finite value) and returns
    each thread's fragment of it as a register A operand of 8-bit elements.
    The two layouts hold the same rows in the same thread but different
    columns: a thread's accumulator holds column pairs `8j + 2q, 8j + 2q + 1`
    (q its position in its quad), its operand the runs `4q .. 4q + 3` and
    `16 + 4q .. 16 + 4q + 3` of each 32; the quad's threads exchange them.
    K is a multiple of 32.

    ```mlir
    %p8 = fa4.wgmma.quantize %p : vector<64xf32> -> vector<64xf8E4M3FN>
    ```

    PTX, per 32 columns and row of the thread: four
    `cvt.rn.satfinite.e4m3x2.f32` pack its column pairs; two
    `shfl.sync.idx.b32` within the quad each bring one half of a
    neighbour's pairs, and two `prmt.b32` assemble the operand's two
    registers of the row.
  }];
  let arguments = (ins FA4_WgmmaAccumulator:$source);
  let results = (outs FA4_WgmmaFragment:$result);
  let assemblyFormat = [{
    $source attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FA4_WgmmaWaitOp : FA4_Op<"wgmma.wait",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>,
     DeclareOpInterfaceMethods<FA4_AsyncWaitOpInterface>]> {
  let summary = "wait until at most `pending` wgmma groups are in flight";
  let description = [{
    Blocks the warpgroup until no more than `pending` (>= 0) committed wgmma
    groups are incomplete, and returns `fragments` unchanged: the results of the
    wgmmas waited for are read through this op, so no use of them can move
    above the wait, and register A operands passed through it stay in their
    registers until the wgmmas that read them are done.

    ```mlir
    %s1 = fa4.wgmma.wait 1, %s : vector<64xf32>
    %o1, %p1 = fa4.wgmma.wait 0, %o, %p : vector<64xf32>, vector<64xbf16>
    ```

    PTX: `wgmma.wait_group.sync.aligned 0;` with the fragments' registers
    as its operands.
  }];
  let arguments = (ins I32Attr:$pending,
      Variadic<AnyTypeOf<[FA4_WgmmaAccumulator, FA4_WgmmaFragment]>>:$fragments);
  let results = (outs
      Variadic<AnyTypeOf<[FA4_WgmmaAccumulator, FA4_WgmmaFragment]>>:$results);
  let assemblyFormat = [{
    $pending (`,` $fragments^ `:` type($fragments))? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Thread-level synchronization and per-thread math (kernel level)
//===----------------------------------------------------------------------===//
//
// Kernels use the upstream NVVM ops where one instruction is all there is
// to say: nvvm.elect.sync, nvvm.vote.sync, nvvm.fence.proxy,
// nvvm.cp.async.bulk.commit.group/wait_group, nvvm.tcgen05.wait/fence and
// nvvm.wgmma.commit.group.sync.aligned. Named barriers stay fa4 ops: their
// id and thread count are attributes that the verifier checks against
// every other use of the id in the function (nvvm.barrier takes them as
// values), which is what keeps a hand-edited protocol from pairing 128
// arrivals with a 256-thread sync.

def FA4_NamedBarrierSyncOp : FA4_Op<"named_barrier.sync"> {
  let summary = "wait at a named barrier until `threads` threads arrived";
  let description = [{
    The executing warp arrives at hardware barrier `id` (1..15; 0 belongs to
    `gpu.barrier`) and waits until `threads` threads (a multiple of 32) have
    arrived or synced on it in the current phase. A barrier's phase ends
    when the count is reached; it is then reused. Every
    `fa4.named_barrier` op of a function on one barrier counts the same
    threads.

    ```mlir
    fa4.named_barrier.sync 2, 256 threads
    ```

    PTX: `bar.sync 2, 256;`
  }];
  let arguments = (ins I32Attr:$id, I32Attr:$threads);
  let assemblyFormat = "$id `,` $threads `threads` attr-dict";
  let hasVerifier = 1;
}

def FA4_NamedBarrierArriveOp : FA4_Op<"named_barrier.arrive"> {
  let summary = "arrive at a named barrier without waiting";
  let description = [{
    Counts the executing warp's threads towards barrier `id`'s current phase
    of `threads` threads and continues: the producer side of a hand-off
    whose consumer uses `fa4.named_barrier.sync`.

    ```mlir
    fa4.named_barrier.arrive 2, 256 threads
    ```

    PTX: `bar.arrive 2, 256;`
  }];
  let arguments = (ins I32Attr:$id, I32Attr:$threads);
  let assemblyFormat = "$id `,` $threads `threads` attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Thread-block clusters
//===----------------------------------------------------------------------===//
//
// The CTAs of a cluster read and write each other's shared memory and
// arrive on each other's mbarriers. Every CTA runs the same kernel, so a
// buffer or barrier has the same offset in each: these ops name the local
// one and the CTA (its rank in the cluster, `gpu.cluster_block_id x` for
// the [n, 1, 1] clusters fa4 launches) whose copy they reach.

def FA4_ClusterArriveOp : FA4_Op<"mbarrier.arrive_cluster"> {
  let summary = "arrive on an mbarrier in every CTA of the cluster";
  let description = [{
    One arrival on barrier `index` of the group in each of the `ctas` CTAs
    of the executing thread's cluster (this CTA's included), each with
    release semantics at cluster scope: what the thread wrote or observed
    before it is visible to a thread of any of those CTAs that waits for
    the phase this arrival completes (and then fences at cluster scope).
    `fa4-insert-barriers` emits it for a `#fa4.endpoint<cluster = N>`
    signal.

    ```mlir
    fa4.mbarrier.arrive_cluster %full[%slot], 4 ctas
        : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1>
    ```

    PTX, per CTA rank r: `mapa.shared::cluster.u32 %a, %barrier, r;`
    `mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%a];`
  }];
  let arguments = (ins NVGPU_MBarrierGroup:$barriers, Index:$index,
                       I64Attr:$ctas);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $ctas `ctas` attr-dict `:` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def FA4_DsmemLoadOp : FA4_Op<"dsmem.load"> {
  let summary = "read consecutive elements of another CTA's shared memory";
  let description = [{
    Reads the vector's elements from `buffer[indices]` onward (the last
    index running) in the shared memory of CTA `rank` of the cluster
    (distributed shared memory; this CTA's own rank reads locally). The
    elements lie within the buffer's innermost dimension and at the
    vector's natural alignment. The access is an ordinary load: a release
    by the owning CTA (an `fa4.mbarrier.arrive_cluster` the reader's wait
    observed) orders it after the owner's writes.

    ```mlir
    %v = fa4.dsmem.load %partials[%row, %column], rank %r
        : memref<64x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    ```

    PTX: `mapa.shared::cluster.u32 %a, %address, %r;`
    `ld.shared::cluster.v4.f32 {...}, [%a];`
  }];
  let arguments = (ins
    Arg<MemRefRankOf<[F16, BF16, F32, I32], [1, 2, 3]>, "", [MemRead]>:$buffer,
    Variadic<Index>:$indices, Index:$rank);
  let results = (outs VectorOfRankAndType<[1], [F16, BF16, F32, I32]>:$result);
  let assemblyFormat = [{
    $buffer `[` $indices `]` `,` `rank` $rank attr-dict `:` type($buffer) `,` type($result)
  }];
  let hasVerifier = 1;
}

def FA4_DsmemStoreOp : FA4_Op<"dsmem.store"> {
  let summary = "write consecutive elements of another CTA's shared memory";
  let description = [{
    Writes the vector's elements to `buffer[indices]` onward (the last
    index running) in the shared memory of CTA `rank` of the cluster, with
    the alignment and bounds of `fa4.dsmem.load`. An ordinary store: the
    writer's later `fa4.mbarrier.arrive_cluster` publishes it to the
    owner.

    ```mlir
    fa4.dsmem.store %v, %staging[%atom, %row, %column], rank %c0
        : vector<4xbf16>, memref<2x64x64xbf16, #gpu.address_space<workgroup>>
    ```

    PTX: `mapa.shared::cluster.u32 %a, %address, %r;`
    `st.shared::cluster.v2.b32 [%a], {...};`
  }];
  let arguments = (ins
    VectorOfRankAndType<[1], [F16, BF16, F32, I32]>:$value,
    Arg<MemRefRankOf<[F16, BF16, F32, I32], [1, 2, 3]>, "", [MemWrite]>:$buffer,
    Variadic<Index>:$indices, Index:$rank);
  let assemblyFormat = [{
    $value `,` $buffer `[` $indices `]` `,` `rank` $rank attr-dict `:` type($value) `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def FA4_Exp2Op : FA4_Op<"exp2", [Pure, SameOperandsAndResultType]> {
  let summary = "2^x per element, split between MUFU and an FMA polynomial";
  let description = [{
    Computes `2^x[i]`. Of every 16 consecutive elements, the first
    `emulated` are computed on the FMA pipe: `2^x = 2^floor(x) * p(x -
    floor(x))` with the cubic `p(f) = 1 + f (c1 + f (c2 + f c3))`
    (coefficients in `fa4/Dialect/FA4/IR/Exp2.h`, relative error below
    9e-5) and the exponent added into the float's bits; the others use the
    special-function unit. Splitting the exponentials keeps the MUFU unit
    from bounding the softmax. Inputs are clamped to -127 first, where both
    paths give 0 or a denormal that flush-to-zero arithmetic turns into 0.

    ```mlir
    %p = fa4.exp2 %s emulated 3 : vector<32xf32>
    ```

    The floor is taken on the FMA pipe too: `x + 1.5 * 2^23` rounded down
    holds `floor(x)` in its low mantissa bits, which shifted left by 23 are
    the exponent to add (a float-to-integer conversion or `cvt.rmi` would
    issue to the unit the MUFU exponentials share).

    PTX: `ex2.approx.ftz.f32` for the MUFU elements; `max.f32`,
    `add.rm.f32`, `sub.f32`, `fma.rn.f32`, `shl.b32`, `add.s32` for the
    others.
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$x, I64Attr:$emulated);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = "$x `emulated` $emulated attr-dict `:` type($x)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Warp roles (kernel level)
//===----------------------------------------------------------------------===//

def FA4_WarpSpecializeOp : FA4_Op<"warp_specialize",
    [SingleBlock, NoTerminator]> {
  let summary = "split the CTA's warps into roles";
  let description = [{
    The CTA has `warps` warps (its block size / 32). The region holds
    `fa4.role` ops only; each names a half-open range of warps, a register
    budget and the program those warps run. Every warp runs at most one
    role. All warps of a warpgroup (4 consecutive warps from a multiple of
    4) share one register budget, since `setmaxnreg` applies to a whole
    warpgroup; the budgets of all warpgroups must fit the registers the CTA
    is launched with (65536 / threads per thread, rounded down to 8:
    `setmaxnreg.inc` only takes registers another warpgroup released).

    ```mlir
    fa4.warp_specialize warps 16 {
      fa4.role "softmax0" warps [0, 4) registers 200 { ... }
      fa4.role "softmax1" warps [4, 8) registers 200 { ... }
      fa4.role "correction" warps [8, 12) registers 64 { ... }
      fa4.role "mma" warps [12, 13) registers 48 { ... }
      fa4.role "load" warps [13, 14) registers 48 { ... }
    }
    ```

    PTX (after `fa4-lower-warp-specialize`): a `setmaxnreg.inc` or
    `setmaxnreg.dec` per warpgroup, then one branch per role on
    `%tid.x / 32`.
  }];
  let arguments = (ins I64Attr:$warps);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`warps` $warps attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Registers per thread a CTA of `warps` warps has before setmaxnreg.
    int64_t getDefaultRegisters();
    /// The budget of each warpgroup: its roles', or the default.
    SmallVector<int64_t> getWarpgroupRegisters();
  }];
}

def FA4_RoleOp : FA4_Op<"role", [SingleBlock, NoTerminator,
    HasParent<"WarpSpecializeOp">]> {
  let summary = "the program one group of warps runs";
  let description = [{
    Warps `[warpBegin, warpEnd)` of the CTA run the region with `registers`
    registers per thread. Roles talk only through shared memory, Tensor
    Memory and barriers.

    ```mlir
    fa4.role "load" warps [13, 14) registers 48 {
      ...
    }
    ```

    PTX: a branch on the warp index (see `fa4.warp_specialize`).
  }];
  let arguments = (ins StrAttr:$role, I64Attr:$warpBegin, I64Attr:$warpEnd,
                       I64Attr:$registers);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $role `warps` ` ` `[` $warpBegin `,` $warpEnd `)` `registers` $registers
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Channels (role level)
//===----------------------------------------------------------------------===//

def FA4_ChannelOp : FA4_Op<"channel"> {
  let summary = "declare a producer/consumer channel between roles";
  let description = [{
    A ring of `stages` slots (the result type) through which one role hands
    data to another. `producer` and `consumer` say how each side signals
    (`#fa4.endpoint`); they determine the barriers `fa4-insert-barriers`
    builds: every slot gets a full mbarrier that completes after the
    producer's arrivals (1 for TMA and MMA, N for N threads) and an empty
    mbarrier that completes after the consumer's.

    Declared in the kernel body, outside the roles that use it.

    With `named_barrier = id` (a single-slot channel between two thread
    endpoints) the full direction is the hardware named barrier `id` instead
    of an mbarrier: the producer arrives on it, the consumer syncs on it,
    both counting all threads of both sides. Named barriers have no phase;
    the empty mbarrier keeps the producer a round behind. A named barrier
    serves one channel of its function.

    ```mlir
    %kv = fa4.channel "kv" : !fa4.channel<3> producer <tma> consumer <mma>
    %st = fa4.channel "stats" : !fa4.channel<1> producer <threads = 128>
              consumer <threads = 128> {named_barrier = 1 : i32}
    ```

    PTX (after barrier insertion): `mbarrier.init.shared.b64` for every slot
    (the empty one only, with a named barrier).
  }];
  let arguments = (ins StrAttr:$name, FA4_EndpointAttr:$producer,
                       FA4_EndpointAttr:$consumer,
                       OptionalAttr<I32Attr>:$named_barrier);
  let results = (outs FA4_ChannelType:$channel);
  let assemblyFormat = [{
    $name `:` qualified(type($channel)) `producer` $producer `consumer` $consumer attr-dict
  }];
  let hasVerifier = 1;
}

class FA4_ChannelStepOp<string mnemonic, string side, string what,
                        string ptx, bit blocking>
    : FA4_Op<mnemonic, [FA4_ChannelStepOpInterface]> {
  let summary = "the " # side # " " # what;
  let description = [{
    Hand-off number `iteration` of the channel uses slot `iteration mod
    stages`, in round `iteration / stages`. See `fa4.channel`.

    ```mlir
    fa4.}] # mnemonic # [{ %kv[%i] : !fa4.channel<3>
    ```

    After `fa4-insert-barriers`: }] # ptx;
  let arguments = (ins FA4_ChannelType:$channel, Index:$iteration);
  let assemblyFormat = "$channel `[` $iteration `]` attr-dict `:` qualified(type($channel))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isProducerStep() { return }] # !if(!eq(side, "producer"), "true", "false") # [{; }
    bool isBlocking() { return }] # !if(blocking, "true", "false") # [{; }
  }];
}

def FA4_ChannelAcquireOp : FA4_ChannelStepOp<"channel.acquire", "producer",
    "waits until the slot is free (the consumer released its previous round)",
    "a wait on the slot's empty mbarrier for the parity of the previous round "
    "(which succeeds at once in round 0).", /*blocking=*/1>;
def FA4_ChannelCommitOp : FA4_ChannelStepOp<"channel.commit", "producer",
    "marks the slot full",
    "the producer's signal on the full mbarrier: `mbarrier.arrive.expect_tx` "
    "with the bytes of the slot's TMA loads (placed before them), "
    "`tcgen05.commit`, or one `mbarrier.arrive` per thread.", /*blocking=*/0>;
def FA4_ChannelWaitOp : FA4_ChannelStepOp<"channel.wait", "consumer",
    "waits until the slot is full",
    "a wait on the slot's full mbarrier for the parity of this round.",
    /*blocking=*/1>;
def FA4_ChannelReleaseOp : FA4_ChannelStepOp<"channel.release", "consumer",
    "marks the slot free again",
    "`tcgen05.commit` or one `mbarrier.arrive` per thread on the empty "
    "mbarrier.", /*blocking=*/0>;

def FA4_TmaLoadOp : FA4_Op<"tma.load",
    [DeclareOpInterfaceMethods<FA4_AsyncAccessOpInterface>]> {
  let summary = "a TMA load that fills a channel slot";
  let description = [{
    Issued by one thread: copies the box at `coordinates` of the tensor
    behind `descriptor` into `buffer`, asynchronously; the copy completes
    slot `iteration mod stages` of `channel` (whose producer is
    `#fa4.endpoint<tma>`). The channel's commit announces the bytes.
    Out-of-bounds elements of the box read as zero.

    ```mlir
    fa4.tma.load %k_desc[%c0, %row, %head, %batch] into %k_stage for %kv[%i]
        : !k_desc, memref<128x64xbf16, #gpu.address_space<workgroup>>, !fa4.channel<3>
    ```

    PTX (after `fa4-insert-barriers`):
    `cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], [desc, {c0, c1, c2, c3} ], [full];`
  }];
  let arguments = (ins NVGPU_TensorMapDescriptor:$descriptor,
                       Variadic<Index>:$coordinates,
                       Arg<AnyMemRef, "", [MemWrite]>:$buffer,
                       FA4_ChannelType:$channel, Index:$iteration);
  let assemblyFormat = [{
    $descriptor `[` $coordinates `]` `into` $buffer `for` $channel `[` $iteration `]`
    attr-dict `:` qualified(type($descriptor)) `,` type($buffer) `,` qualified(type($channel))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

def FA4_LaunchOp : FA4_Op<"launch",
    [AttrSizedOperandSegments, IsolatedFromAbove,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a compiled attention kernel on memrefs";
  let description = [{
    What remains of an `fa4.attention` once `fa4-specialize` has built its
    kernel: the kernel (`@module::@kernel`) and the operands, in the order
    the op had them (query, key, value, output, then LSE if any). The launch
    configuration, the TMA descriptors and the scalar arguments are derived
    from these operands as the kernel's launch manifest (`manifest`, written
    as JSON by `fa4-emit-kernels`) describes; the Python runtime performs
    exactly that. The kernel must be a `gpu.func` kernel of a `gpu.module`
    (checked against the symbol table), and the operands are the four
    attention operands and optionally LSE and the sinks, then the attention's
    other optional operands in its order (with `rope`, the last two tensors
    are `cos_sin` and `positions`); the attention's
    captured operands follow as `captures` (named `capture0`, `capture1`,
    ... in the manifest), and its score and mask regions stay on the launch
    as the kernel's semantics (fa4-sim's reference evaluates them; the
    kernel has them inlined).

    fa4-specialize writes the entries that follow from the attention's
    shape and plan; the facts that later passes decide (`tmem_columns`,
    `dynamic_smem_bytes`, `mbarriers`, `named_barriers`, `roles`) are
    recorded on the kernel as `fa4.*` attributes and copied here by
    `fa4-assemble-manifest` before the kernels are serialized.

    The verifier checks the structure of every manifest entry present:
    `kernel` names the launched kernel,
    `arch` is sm_100a or sm_90a (the plan's), the `plan`'s head dims are the
    operands' (query and key Dqk, value and output Dv), `block` is whole warps of at
    most 1024 threads, `grid` has its rule and positive counts, each of
    `roles` a name, a warp range inside the block and a register budget,
    `mbarriers`, `named_barriers`, `dynamic_smem_bytes` and `tmem_columns`
    are within one SM (128 mbarriers in the barrier reserve, 15 named
    barriers, 227 KB, 0 or a power of two of at most 512 columns), and
    `params`, `operands` and `tensor_maps` have the fields the runtimes
    read. The params are the kernel's arguments, in order: one per
    argument of the `gpu.func` (or the `llvm.func` it becomes), each of a
    kind that argument takes (`tensor_map` a TMA descriptor, `pointer` a
    memref, `i32` an i32 or index, `f32` an f32).

    ```mlir
    fa4.launch @fa4_kernels::@attention_0(%q, %k, %v, %o)
        : memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>,
          memref<?x?x16x128xbf16>, memref<?x?x16x128xbf16>
    ```

    PTX: none (host side).
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Variadic<AnyMemRef>:$tensors,
                       Variadic<FA4_CaptureMemRef>:$captures,
                       UnitAttr:$rope,
                       OptionalAttr<DictionaryAttr>:$manifest);
  let regions = (region AnyRegion:$scoreMod, AnyRegion:$maskMod);
  let assemblyFormat = [{
    $kernel `(` $tensors `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    attr-dict `:` type($tensors)
    (`score` $scoreMod^)? (`mask` $maskMod^)?
  }];
  let extraClassDeclaration = [{
    /// The kernel facts: the manifest entries that the passes after
    /// fa4-specialize record on the kernel as `fa4.<key>` attributes and
    /// fa4-assemble-manifest copies into the manifests; `second` names the
    /// pass that records each.
    static ArrayRef<std::pair<StringLiteral, StringLiteral>> getKernelFacts();
    /// Checks the value of kernel fact `key` by the manifest's rules for
    /// that entry; diagnostics name it `fa4.<key>`.
    static LogicalResult
    verifyKernelFact(StringRef key, Attribute value,
                     function_ref<InFlightDiagnostic()> emitError);
    /// The name manifests give operand `index` ("query", "key", "value",
    /// "output", then "lse" and "sink" where present, then "capture<n>"), or
    /// "" past them.
    std::string getOperandName(unsigned index);
    /// Checks the structure of a launch manifest of kernel `kernelName`:
    /// each entry present has its kind, its nested fields and their ranges;
    /// with `complete`, every entry fa4-emit-kernels reads is present.
    static LogicalResult
    verifyManifest(DictionaryAttr manifest, StringRef kernelName,
                   function_ref<InFlightDiagnostic()> emitError,
                   bool complete);
  }];
  let hasVerifier = 1;
}

#endif // FA4_DIALECT_FA4_IR_FA4OPS_TD
