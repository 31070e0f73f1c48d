#!/usr/bin/env bash
# Configures (once) and builds fa4 into build/ (or $FA4_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${FA4_BUILD_DIR:-build}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    ${FA4_CMAKE_ARGS:-}
fi
ninja -C "$build" "$@"
