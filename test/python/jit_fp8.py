# RUN: %python %s | FileCheck %s
"""fa4.jit's FP8 (e4m3) problems, without compiling: the fa4.attention text
of docs/ARCHITECTURE.md (the FP8 manifest) (Q, K, V f8E4M3FN, V key-major `strided<[?, 1, ?,
?]>`, O bf16 or f16, the descale clause after lse and sink), the kernel
names, and the problems refused before the compiler is asked. (Compiling
these needs a compiler that accepts them: jit.py's kind of test.)"""

from fa4 import jit

# Causal GQA 32/8 at D 128 with LSE, sinks and descales: the FP8 manifest of docs/ARCHITECTURE.md.
print(jit.module_text("f", "e4m3", 128, 32, 8, True, True, sink=True, descale=True),
      end="")
# CHECK: func.func @f(%q: memref<?x?x32x128xf8E4M3FN>, %k: memref<?x?x8x128xf8E4M3FN>, %v: memref<?x?x8x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x32x128xbf16>, %lse: memref<?x32x?xf32>, %sink: memref<32xf32>, %q_descale: memref<?x8xf32>, %k_descale: memref<?x8xf32>, %v_descale: memref<?x8xf32>) {
# CHECK-NEXT:   fa4.attention ins(%q, %k, %v : memref<?x?x32x128xf8E4M3FN>, memref<?x?x8x128xf8E4M3FN>, memref<?x?x8x128xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>) sink(%sink : memref<32xf32>) descale(%q_descale, %k_descale, %v_descale : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {causal}
# CHECK-NEXT:   return
# CHECK-NEXT: }

# Without descale and with O f16; V's own head dim (Dqk 192, Dv 128) and a
# dense KV cache (seqused_k: the clause after descale's place).
print(jit.module_text("g", "e4m3", 64, 4, 4, False, False, output_element="f16"),
      end="")
print(jit.module_text("h", "e4m3", 192, 16, 2, False, False, head_dim_v=128, descale=True,
                      seqused_k=True, window=(64, 0)), end="")
# CHECK-NEXT: func.func @g(%q: memref<?x?x4x64xf8E4M3FN>, %k: memref<?x?x4x64xf8E4M3FN>, %v: memref<?x?x4x64xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x4x64xf16>) {
# CHECK-NEXT:   fa4.attention ins(%q, %k, %v : memref<?x?x4x64xf8E4M3FN>, memref<?x?x4x64xf8E4M3FN>, memref<?x?x4x64xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x?x4x64xf16>){{$}}
# CHECK: func.func @h(%q: memref<?x?x16x192xf8E4M3FN>, %k: memref<?x?x2x192xf8E4M3FN>, %v: memref<?x?x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>, %o: memref<?x?x16x128xbf16>, %q_descale: memref<?x2xf32>, %k_descale: memref<?x2xf32>, %v_descale: memref<?x2xf32>, %used_k: memref<?xi32>) {
# CHECK-NEXT:   fa4.attention ins({{.*}}) outs(%o : memref<?x?x16x128xbf16>) descale(%q_descale, %k_descale, %v_descale : memref<?x2xf32>, memref<?x2xf32>, memref<?x2xf32>) seqused_k(%used_k : memref<?xi32>) {window = array<i64: 64, 0>}

# A paged cache of 256-key pages.
print(jit.module_text("c", "e4m3", 128, 8, 2, True, False, page_size=256,
                      seqused_k=True).splitlines()[1])
# CHECK:   fa4.attention ins(%q, %k, %v : memref<?x?x8x128xf8E4M3FN>, memref<?x256x2x128xf8E4M3FN>, memref<?x256x2x128xf8E4M3FN, strided<[?, 1, ?, ?]>>) outs(%o : memref<?x?x8x128xbf16>) seqused_k(%used_k : memref<?xi32>) paged(%page_table : memref<?x?xi32>) {causal}

# Packed sequences: V key-major with rows of its own (`strided<[1, ?, ?]>`).
print(jit.module_text("p", "e4m3", 128, 8, 2, True, False, varlen=True,
                      descale=True).splitlines()[1])
# CHECK:   fa4.attention ins(%q, %k, %v : memref<?x8x128xf8E4M3FN>, memref<?x2x128xf8E4M3FN>, memref<?x2x128xf8E4M3FN, strided<[1, ?, ?]>>) outs(%o : memref<?x8x128xbf16>) descale(%q_descale, %k_descale, %v_descale : memref<?x2xf32>, memref<?x2xf32>, memref<?x2xf32>) varlen(%cu_q, %cu_k : memref<?xi32>, memref<?xi32>) {causal}

# 16-bit problems are as they were: no strided V, no descale.
print(jit.module_text("b", "bf16", 128, 32, 8, True, True).splitlines()[1])
# CHECK: fa4.attention ins(%q, %k, %v : memref<?x?x32x128xbf16>, memref<?x?x8x128xbf16>, memref<?x?x8x128xbf16>) outs(%o : memref<?x?x32x128xbf16>) lse(%lse : memref<?x32x?xf32>) {causal}

# Names: the descale, and the output where it is not the default (bf16).
for args, kwargs in [(("e4m3", 128, 32, 8, True, True), dict(descale=True)),
                     (("e4m3", 128, 32, 8, True, True), dict(output_element="bf16")),
                     (("e4m3", 64, 4, 4, False, False), dict(output_element="f16")),
                     (("bf16", 128, 32, 8, True, True), {})]:
    print("name:", jit.kernel_name(*args, **kwargs))
# CHECK-NEXT: name: e4m3_d128_h32x8_causal_descale_lse
# CHECK-NEXT: name: e4m3_d128_h32x8_causal_lse
# CHECK-NEXT: name: e4m3of16_d64_h4x4
# CHECK-NEXT: name: bf16_d128_h32x8_causal_lse

# What FP8 problems cannot be: refused by the text and by the cache before
# the compiler (or its library) is reached.
cache = jit.KernelCache("/nonexistent/fa4-cache", library="/nonexistent/libFA4CAPI.so")
for label, call in [
        ("small pages", lambda: jit.module_text("x", "e4m3", 128, 4, 4, False, False,
                                                page_size=64)),
        ("small pages cached", lambda: cache.kernel("e4m3", 4, 4, 128, page_size=16,
                                                    seqused_k=True)),
        ("descale of bf16", lambda: cache.kernel("bf16", 4, 4, 128, descale=True)),
        ("O f32", lambda: cache.kernel("e4m3", 4, 4, 128, output_dtype="f32")),
        ("O f16 of bf16", lambda: jit.module_text("x", "bf16", 128, 4, 4, False, False,
                                                  output_element="f16"))]:
    try:
        call()
        print(f"{label}: accepted")
    except ValueError as err:
        print(f"{label}: {err}")
# CHECK-NEXT: small pages: e4m3 inputs read V key-major in 128-key TMA boxes, each within one page: pages must hold at least 128 keys, got 64
# CHECK-NEXT: small pages cached: e4m3 inputs read V key-major in 128-key TMA boxes, each within one page: pages must hold at least 128 keys, got 16
# CHECK-NEXT: descale of bf16: descale dequantizes 8-bit inputs, not bf16
# CHECK-NEXT: O f32: an e4m3 kernel's output is bf16 or f16, not f32
# CHECK-NEXT: O f16 of bf16: a bf16 kernel's output is bf16, not f16

# The problem an FP8 call keys its cache entry by (without compiling): the
# descale and a non-default output only where set, so that 16-bit problems
# keep their keys.
problems = []
cache.key = lambda problem: problems.append(problem) or "entry"
cache._load_or_compile = lambda key, problem: f"kernel of {key}"
for kwargs in (dict(descale=True), dict(output_dtype="bf16"), dict(output_dtype="f16")):
    cache.kernel("f8E4M3FN", 32, 8, 128, causal=True, arch="sm_90a", **kwargs)
cache.kernel("bf16", 32, 8, 128, causal=True, arch="sm_90a")
for problem in problems:
    print("problem:", {k: v for k, v in problem.items()
                       if k in ("dtype", "descale", "output_dtype")})
# CHECK-NEXT: problem: {'dtype': 'e4m3', 'descale': True}
# CHECK-NEXT: problem: {'dtype': 'e4m3'}
# CHECK-NEXT: problem: {'dtype': 'e4m3', 'output_dtype': 'f16'}
# CHECK-NEXT: problem: {'dtype': 'bf16'}
print("configuration:", jit.KernelCache._configuration(dict(
    problems[2], descale=True))[-3:-1])
# CHECK-NEXT: configuration: (True, 'f16')
