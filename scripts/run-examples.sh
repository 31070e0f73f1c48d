#!/usr/bin/env bash
# The main job: compile every example to sm_100a and to sm_90a PTX (and cubin
# when ptxas is found) with its launch manifest, printing each kernel's
# resource report.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${FA4_BUILD_DIR:-build}"

for example in examples/*.mlir; do
  for arch in sm_100a sm_90a; do
    out="$build/examples/$(basename "$example" .mlir)/$arch"
    echo "== $example ($arch) -> $out"
    "$build/bin/fa4-opt" "$example" --fa4-compile="arch=$arch emit-dir=$out" -o /dev/null
  done
done
