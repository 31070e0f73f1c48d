#!/usr/bin/env bash
# Compares the kernels two fa4-opt binaries build, configuration by
# configuration: the role-level IR after fa4-specialize and the whole
# fa4-compile output (PTX and launch manifest), byte for byte. A change to
# the kernel construction that must not change the kernels is checked with
#
#   scripts/compare-kernels.sh OLD_FA4_OPT NEW_FA4_OPT [WORK_DIR]
#
# It prints one line per configuration and output (same / DIFFERS) and exits
# non-zero if any differ; the outputs stay in WORK_DIR for diffing.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_FA4_OPT NEW_FA4_OPT [WORK_DIR]" >&2
  exit 2
fi
old="$1"
new="$2"
work="${3:-$(mktemp -d -t fa4-compare-XXXXXX)}"
mkdir -p "$work/inputs" "$work/old" "$work/new"

# attention NAME DTYPE HEAD_DIM KV_HEADS RATIO CAUSAL LSE: writes the
# attention module of one configuration (dynamic batch and lengths).
attention() {
  local name=$1 dtype=$2 dim=$3 hkv=$4 ratio=$5 causal=$6 lse=$7
  local hq=$((hkv * ratio))
  local qt="memref<?x?x${hq}x${dim}x${dtype}>"
  local kt="memref<?x?x${hkv}x${dim}x${dtype}>"
  local lt="memref<?x${hq}x?xf32>"
  local lse_arg="" lse_use="" attrs=""
  if [ "$lse" = 1 ]; then
    lse_arg=", %lse: $lt"
    lse_use=" lse(%lse : $lt)"
  fi
  [ "$causal" = 1 ] && attrs=" {causal}"
  cat >"$work/inputs/$name.mlir" <<EOF
func.func @$name(%q: $qt, %k: $kt, %v: $kt, %o: $qt$lse_arg) {
  fa4.attention ins(%q, %k, %v : $qt, $kt, $kt) outs(%o : $qt)$lse_use$attrs
  return
}
EOF
}

# Each case: NAME|INPUT|PLAN OPTIONS (fa4-plan and fa4-compile take the same).
cases=()
for example in examples/*.mlir; do
  base=$(basename "$example" .mlir)
  cp "$example" "$work/inputs/$base.mlir"
  for arch in sm_100a sm_90a; do
    cases+=("${base}_$arch|$base|arch=$arch")
  done
done

# The matrix of scripts/config-matrix.py on both targets (causal ones write
# LSE), head dim 256 on sm_90a.
for arch in sm_100a sm_90a; do
  dims="64 128"
  [ "$arch" = sm_90a ] && dims="64 128 256"
  for causal in 0 1; do
    for dim in $dims; do
      for ratio in 1 4 8; do
        name="c${causal}_bf16_d${dim}_gqa${ratio}"
        attention "$name" bf16 "$dim" 8 "$ratio" "$causal" "$causal"
        cases+=("${name}_$arch|$name|arch=$arch")
      done
    done
  done
done

# Element type, LSE without causal, schedulers, packing and stage overrides.
attention f16_causal f16 128 8 4 1 0
attention lse_full bf16 128 4 2 0 1
attention mha_causal bf16 128 16 1 1 1
attention gqa_causal_d64 bf16 64 2 8 1 1
for arch in sm_100a sm_90a; do
  cases+=("f16_causal_$arch|f16_causal|arch=$arch")
  cases+=("lse_full_$arch|lse_full|arch=$arch")
  for scheduler in linear lpt paired; do
    for input in mha_causal gqa_causal_d64 lse_full; do
      cases+=("${input}_${scheduler}_$arch|$input|arch=$arch scheduler=$scheduler")
    done
  done
  cases+=("gqa_causal_d64_nopack_$arch|gqa_causal_d64|arch=$arch gqa-pack=1")
  cases+=("mha_causal_q1_$arch|mha_causal|arch=$arch q-stages=1")
done
cases+=("mha_causal_bn64_sm_90a|mha_causal|arch=sm_90a block-n=64")
cases+=("mha_causal_kv3_sm_100a|mha_causal|arch=sm_100a kv-stages=3")
cases+=("mha_causal_split_sm_100a|mha_causal|arch=sm_100a pv-split=32 emulated-exp2=4 rescale-threshold=0")

# run BINARY CASE INPUT OPTIONS OUTPUT_DIR: both outputs of one case, with the
# exit status and diagnostics, so that refusals are compared too.
run() {
  local binary=$1 name=$2 input=$3 options=$4 out=$5
  "$binary" "$work/inputs/$input.mlir" "--fa4-plan=$options" --fa4-tile \
    --fa4-specialize >"$out/$name.specialize.mlir" 2>&1
  echo "exit $?" >>"$out/$name.specialize.mlir"
  "$binary" "$work/inputs/$input.mlir" "--fa4-compile=$options" \
    >"$out/$name.compile.mlir" 2>&1
  echo "exit $?" >>"$out/$name.compile.mlir"
  # The one property that differs from run to run: the time the PTX took.
  sed -i 's/LLVMIRToISATimeInMs = [0-9]* : i64, //' "$out/$name.compile.mlir"
}

status=0
for entry in "${cases[@]}"; do
  IFS='|' read -r name input options <<<"$entry"
  run "$old" "$name" "$input" "$options" "$work/old"
  run "$new" "$name" "$input" "$options" "$work/new"
  for stage in specialize compile; do
    if cmp -s "$work/old/$name.$stage.mlir" "$work/new/$name.$stage.mlir"; then
      verdict=same
    else
      verdict=DIFFERS
      status=1
    fi
    printf '%-40s %-10s %s (%s)\n' "$name" "$stage" "$verdict" \
      "$(tail -n1 "$work/new/$name.$stage.mlir")"
  done
done
echo "${#cases[@]} configurations, outputs in $work"
exit $status
