#!/usr/bin/env bash
# The main job: compile every example with fa4-opt and print the result.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${FA4_BUILD_DIR:-build}"

for example in examples/*.mlir; do
  echo "== $example"
  "$build/bin/fa4-opt" "$example"
  echo "== $example: verified"
done
