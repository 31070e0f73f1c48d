# The two commands of the README:
#   make run     install what is missing, build, compile the examples
#   make check   install what is missing, build, run the whole test suite
# Both are idempotent; a second run only rebuilds what changed.

BUILD ?= build
export FA4_BUILD_DIR := $(BUILD)

.PHONY: run check build deps docs static static-capi wheel python clean

run: build
	@scripts/run-examples.sh

check: deps
	@scripts/build.sh check-fa4

build: deps
	@scripts/build.sh

deps:
	@scripts/install-deps.sh

# Regenerates the ODS documentation committed under docs/ (a test fails
# while the committed copy is stale).
docs: build
	@scripts/build.sh mlir-doc
	cp $(BUILD)/docs/Dialects/FA4.md docs/Dialects/FA4.md
	cp $(BUILD)/docs/FA4Passes.md docs/Passes.md
	cp $(BUILD)/docs/FA4ConversionPasses.md docs/ConversionPasses.md

# A portable fa4-opt (static LLVM/MLIR/libstdc++; needs only glibc) in
# build-static/bin/fa4-opt.
static:
	@scripts/install-deps.sh libzstd-dev zlib1g-dev
	@FA4_BUILD_DIR=build-static FA4_CMAKE_ARGS=-DFA4_STATIC_TOOLS=ON scripts/build.sh fa4-opt

# The Python package: a wheel in dist/ carrying a self-contained
# libFA4CAPI.so (static LLVM/MLIR; needs only glibc), and `make python`
# installs it into .venv (or FA4_PYTHON's environment): docs/RUNTIME.md.
static-capi:
	@scripts/install-deps.sh libzstd-dev zlib1g-dev
	@FA4_BUILD_DIR=build-static FA4_CMAKE_ARGS=-DFA4_STATIC_TOOLS=ON scripts/build.sh FA4CAPI

wheel: static-capi
	@scripts/build-wheel.py --library build-static/lib/libFA4CAPI.so --out dist

# install-python.sh packs the wheel itself (once) and installs it.
python: static-capi
	@scripts/install-python.sh

clean:
	rm -rf $(BUILD) build-static dist
