//===- FA4Ops.td - fa4 operations --------------------------*- tablegen -*-===//

#ifndef FA4_DIALECT_FA4_IR_FA4OPS_TD
#define FA4_DIALECT_FA4_IR_FA4OPS_TD

include "fa4/Dialect/FA4/IR/FA4Attrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Q, K, V and O: [batch, sequence, heads, head_dim] in a 16-bit float type.
def FA4_ActivationMemRef : MemRefRankOf<[F16, BF16], [4]>;
// LSE: [batch, heads_q, seq_q] in f32.
def FA4_LseMemRef : MemRefRankOf<[F32], [3]>;

def FA4_AttentionOp : FA4_Op<"attention"> {
  let summary = "scaled dot-product attention on memrefs (forward)";
  let description = [{
    Computes, for every batch `b`, query head `h`, query row `i` and value
    column `d`:

    ```
    S[j]     = scale * dot(Q[b, i, h, :], K[b, j, h / G, :])      G = Hq / Hkv
    S[j]     = softcap * tanh(S[j] / softcap)                      if softcap
    S[j]     = -inf  where key j is masked for row i
    O[b,i,h,d] = sum_j softmax(S)[j] * V[b, j, h / G, d]
    LSE[b,h,i] = log(sum_j exp(S[j]))                              if lse
    ```

    Operand shapes (`?` allowed only where marked):

    | operand | shape | element type |
    |---|---|---|
    | `query`  | `[B?, Sq?, Hq, Dqk]`  | f16 or bf16 |
    | `key`    | `[B?, Skv?, Hkv, Dqk]` | same as query |
    | `value`  | `[B?, Skv?, Hkv, Dv]`  | same as query |
    | `output` | `[B?, Sq?, Hq, Dv]`   | same as query |
    | `lse` (optional) | `[B?, Hq, Sq?]` | f32 |

    `Hq` must be a multiple of `Hkv` (grouped-query attention; `Hkv = 1` is
    multi-query attention). The head dimension of every operand must have
    unit stride.

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
    - `plan`: the kernel configuration (`#fa4.plan`), set by `fa4-plan`; its
      head dim must match the operands.

    The result is written to `output` (and `lse`); the op has no results.

    Example:

    ```mlir
    fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>,
                      memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>)
                  outs(%o : memref<?x?x32x128xbf16>)
                  lse(%lse : memref<?x32x?xf32>) {causal}
    ```

    Lowering: this op is the input of the kernel pipeline. It does not map to
    a PTX instruction of its own; the pipeline turns it into one
    warp-specialized kernel (tcgen05 MMA and Tensor Memory on sm_100a, wgmma
    on sm_90a) plus a launch manifest.
  }];

  let arguments = (ins
    Arg<FA4_ActivationMemRef, "queries [B, Sq, Hq, Dqk]", [MemRead]>:$query,
    Arg<FA4_ActivationMemRef, "keys [B, Skv, Hkv, Dqk]", [MemRead]>:$key,
    Arg<FA4_ActivationMemRef, "values [B, Skv, Hkv, Dv]", [MemRead]>:$value,
    Arg<FA4_ActivationMemRef, "output [B, Sq, Hq, Dv]", [MemWrite]>:$output,
    Arg<Optional<FA4_LseMemRef>, "log-sum-exp [B, Hq, Sq]", [MemWrite]>:$lse,
    UnitAttr:$causal,
    OptionalAttr<ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>>:$window,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<FA4_PlanAttr>:$plan
  );

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:`
              type($query) `,` type($key) `,` type($value) `)`
    `outs` `(` $output `:` type($output) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    attr-dict
  }];

  let extraClassDeclaration = [{
    static constexpr int64_t kUnboundedWindow = -1;

    int64_t getNumQueryHeads() { return getQuery().getType().getDimSize(2); }
    int64_t getNumKeyValueHeads() { return getKey().getType().getDimSize(2); }
    /// Query heads that share one key/value head.
    int64_t getGroupSize() { return getNumQueryHeads() / getNumKeyValueHeads(); }
    int64_t getHeadDimQK() { return getQuery().getType().getDimSize(3); }
    int64_t getHeadDimV() { return getValue().getType().getDimSize(3); }
    /// The explicit scale, or 1 / sqrt(Dqk).
    double getEffectiveScale();
    /// Left and right window bounds; kUnboundedWindow where unbounded. Causal
    /// attention without a window is (kUnboundedWindow, 0).
    std::pair<int64_t, int64_t> getEffectiveWindow();
  }];

  let hasVerifier = 1;
}

#endif // FA4_DIALECT_FA4_IR_FA4OPS_TD
