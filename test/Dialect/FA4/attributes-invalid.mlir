// RUN: fa4-opt %s -split-input-file -verify-diagnostics

// The discardable attributes passes exchange are declared on the dialect
// and checked where they appear; the kernel symbol of fa4.launch is checked
// against the symbol table.

// expected-error @+1 {{'fa4.plan' belongs on a gpu.func kernel}}
func.func @plan_on_func() attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
  return
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.plan' must be a #fa4.plan, got 3 : i64}}
  gpu.func @k() kernel attributes {fa4.plan = 3 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.plan' belongs on a gpu.func kernel}}
  gpu.func @not_a_kernel() attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{workgroup attribution #0: 'fa4.alignment' must be a power of two in [1, 1024] bytes, got 48}}
  gpu.func @k() workgroup(%a : memref<64xi8, #gpu.address_space<workgroup>> {fa4.alignment = 48 : i64}) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{workgroup attribution #1: 'fa4.name' must be a non-empty string, got ""}}
  gpu.func @k() workgroup(%a : memref<64xi8, #gpu.address_space<workgroup>>, %b : memref<64xi8, #gpu.address_space<workgroup>> {fa4.name = ""}) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{workgroup attribution #0: unknown fa4 attribute 'fa4.align'}}
  gpu.func @k() workgroup(%a : memref<64xi8, #gpu.address_space<workgroup>> {fa4.align = 16 : i64}) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

func.func @name_not_string() {
  // expected-error @+1 {{'fa4.name' must be a non-empty string, got 7 : i64}}
  %c = arith.constant {fa4.name = 7 : i64} 0 : index
  return
}

// -----

// expected-error @+1 {{'fa4.shared_alignment' belongs on a gpu.module}}
module attributes {fa4.shared_alignment = 1024 : i64} {
}

// -----

// expected-error @+1 {{'fa4.shared_alignment' must be a power of two in [1, 1024] bytes, got 0}}
gpu.module @m attributes {fa4.shared_alignment = 0 : i64} {
}

// -----

func.func @alignment_on_op() {
  // expected-error @+1 {{'fa4.alignment' belongs on a workgroup attribution of an fa4 kernel}}
  %c = arith.constant {fa4.alignment = 16 : i64} 0 : index
  return
}

// -----

// expected-error @+1 {{unknown fa4 attribute 'fa4.tmem_cols'}}
func.func @unknown() attributes {fa4.tmem_cols = 3 : i64} {
  return
}

// -----

func.func @arg_attr(%x: index {fa4.name = "x"}) {
  return
}
// expected-error @-3 {{unknown fa4 argument attribute 'fa4.name' on argument #0}}

// -----

module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{kernel @m::@missing is not a function of its gpu.module}}
    fa4.launch @m::@missing(%q, %q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{kernel @m::@helper is a gpu.func without the kernel attribute}}
    fa4.launch @m::@helper(%q, %q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    gpu.func @helper() {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{takes query, key, value, output and optionally lse and sink, got 3 operands}}
    fa4.launch @m::@k(%q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// The sinks follow LSE.
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>, %l: memref<1x1x128xf32>, %s: memref<1xf32>) {
    // expected-error @+1 {{takes query, key, value, output and optionally lse (f32 [B, Hq, Sq] or [Hq, total_q]), sink (f32 [Hq]), q_descale, k_descale, v_descale (f32 [B, Hkv]), cu_seqlens_q, cu_seqlens_k (i32 [B + 1]), seqused_k (i32 [B]), page_table (i32 [B, pages]) and, with rope, cos_sin and positions, in this order; operand #5 is 'memref<1x1x128xf32>'}}
    fa4.launch @m::@k(%q, %q, %q, %q, %s, %l) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1xf32>, memref<1x1x128xf32>
    return
  }
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// Nothing but LSE and the sinks after O.
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{operand #4 is 'memref<1x128x1x64xf16>'}}
    fa4.launch @m::@k(%q, %q, %q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

func.func @host(%q: memref<1x128x1x64xf16>) {
  // expected-error @+1 {{kernel @nowhere::@k names no gpu.module or gpu.binary}}
  fa4.launch @nowhere::@k(%q, %q, %q, %q) : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
  return
}

// -----

// The launch manifest is checked wherever the op is verified, before any
// pass reads it (test/Transforms/emit-kernels-invalid.mlir has every rule).
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0]' needs 'warps'}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", roles = [{name = "load", registers = 48 : i64}]}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// The manifest's params are the kernel's arguments, in order: a pointer
// param cannot bind a TMA descriptor (fa4-sim and the runtimes would read
// a pointer as a tensor map).
!map = !nvgpu.tensormap.descriptor<tensor = memref<1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest param #1 of kind 'pointer' cannot bind kernel argument #1 of type '!nvgpu.tensormap.descriptor<tensor = memref<1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>'}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", params = [{kind = "tensor_map", name = "query_map", source = "tensor_maps[0]"}, {kind = "pointer", name = "lse", source = "lse.data"}, {kind = "i32", name = "batch", source = "query.shape[0]"}]}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    gpu.func @k(%a: !map, %b: !map, %n: index) kernel {
      gpu.return
    }
  }
}

// -----

// One param per kernel argument.
module attributes {gpu.container_module} {
  func.func @host(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest lists 1 params for kernel @m::@k of 2 arguments}}
    fa4.launch @m::@k(%q, %q, %q, %q) {manifest = {kernel = "k", params = [{kind = "f32", name = "scale_log2", source = "scale_log2"}]}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
  gpu.module @m {
    llvm.func @k(%x: f32, %n: i32) attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// The shared-memory buffers of an fa4 kernel hold 1 byte to 227 KB, their
// sizes computed without overflow.
gpu.module @m {
  // expected-error @+1 {{workgroup attribution #0: 'memref<4611686018427387904xi32, #gpu.address_space<workgroup>>' needs more than 2^63 bytes, more than the 232448 bytes of shared memory a CTA can use}}
  gpu.func @k() workgroup(%a : memref<4611686018427387904xi32, #gpu.address_space<workgroup>> {fa4.name = "big"}) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{workgroup attribution #0: 'memref<4294967296x4294967296xi8, #gpu.address_space<workgroup>>' needs more than 2^63 bytes}}
  gpu.func @k() workgroup(%a : memref<4294967296x4294967296xi8, #gpu.address_space<workgroup>>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{workgroup attribution #1: 'memref<240000xi8, #gpu.address_space<workgroup>>' needs 240000 bytes, more than the 232448 bytes of shared memory a CTA can use}}
  gpu.func @k() workgroup(%a : memref<64xi8, #gpu.address_space<workgroup>>, %b : memref<240000xi8, #gpu.address_space<workgroup>>) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

// A zero-byte statistics buffer.
gpu.module @m {
  // expected-error @+1 {{workgroup attribution #0: 'memref<0xi8, #gpu.address_space<workgroup>>' holds no bytes}}
  gpu.func @k() workgroup(%a : memref<0xi8, #gpu.address_space<workgroup>> {fa4.name = "statistics", fa4.alignment = 16 : i64}) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

// The kernel facts that passes record for the launch manifest belong on a
// kernel and follow the manifest's rules for their entries.

// expected-error @+1 {{'fa4.mbarriers' belongs on a gpu.func kernel}}
func.func @fact_on_func() attributes {fa4.mbarriers = 4 : i64} {
  return
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.mbarriers' must be in [0, 128], got 129}}
  gpu.func @k() kernel attributes {fa4.mbarriers = 129 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.named_barriers' must be in [0, 15], got 16}}
  gpu.func @k() kernel attributes {fa4.named_barriers = 16 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.dynamic_smem_bytes' must be an integer, got "big"}}
  gpu.func @k() kernel attributes {fa4.dynamic_smem_bytes = "big"} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.tmem_columns' must be 0 or a power of two in [32, 512], got 96}}
  gpu.func @k() kernel attributes {fa4.tmem_columns = 96 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.roles[0].warps' must be a non-empty range [begin, end), got [4, 4)}}
  gpu.func @k() kernel attributes {fa4.roles = [{name = "mma", warps = [4, 4], registers = 48 : i64}]} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'fa4.roles[0]' needs 'registers'}}
  gpu.func @k() kernel attributes {fa4.roles = [{name = "mma", warps = [4, 5]}]} {
    gpu.return
  }
}

// -----

// The plan's check of the workgroup attributions runs only on a gpu.func
// that verifies: one that counts more attributions than it has block
// arguments is reported by gpu.func.
gpu.module @m {
  // expected-error @+1 {{expected at least 65536 arguments to body region}}
  "gpu.func"() <{function_type = () -> ()}> ({
    "gpu.return"() : () -> ()
  }) {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>, gpu.kernel, sym_name = "k", workgroup_attributions = 65536 : i64} : () -> ()
}

// -----

// gpu.func's verifier would read a negative count as a huge one.
"gpu.module"() <{sym_name = "m"}> ({
  // expected-error @+1 {{'gpu.func' op declares -1 workgroup attributions}}
  "gpu.func"() <{function_type = (i32) -> ()}> ({
  ^bb0(%arg0: i32):
    "gpu.return"() : () -> ()
  }) {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>, gpu.kernel, sym_name = "k", workgroup_attributions = -1 : i64} : () -> ()
}) : () -> ()

// -----

// A value no thread can hold: lowering it would allocate without bound.
gpu.module @m {
  gpu.func @k(%x: f32) kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    // expected-error @+1 {{'vector.broadcast' op result #0 of type 'vector<9223372036854775807xf32>' holds more than 2^64 bits, more than a thread's 255 32-bit registers (8160 bits)}}
    %0 = vector.broadcast %x : f32 to vector<9223372036854775807xf32>
    gpu.return
  }
}

// -----

// The same check on the llvm.func the GPU-to-NVVM conversion makes.
gpu.module @m {
  // expected-error @+1 {{'llvm.func' op block argument #0 of type 'vector<256xi32>' holds 8192 bits}}
  llvm.func @k(%x: vector<256xi32>) attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>, nvvm.kernel} {
    llvm.return
  }
}

// -----

// The plan's chip is the chip the kernel's gpu.module compiles it for.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{'gpu.func' op is planned for sm_100a but its gpu.module targets "sm_90a"}}
  gpu.func @k() kernel attributes {fa4.plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 128, qStages = 2, kvStages = 3, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 3, pvSplit = 96, rescaleThreshold = 8>} {
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  // expected-error @+1 {{'llvm.func' op is planned for sm_90a but its gpu.module targets "sm_100a"}}
  llvm.func @k() attributes {fa4.plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 1, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 240, correctionRegs = 0, producerRegs = 24, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>, nvvm.kernel} {
    llvm.return
  }
}
