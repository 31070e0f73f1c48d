// RUN: fa4-opt %s -split-input-file --fa4-emit-kernels="emit-dir=%t" -verify-diagnostics
// RUN: not fa4-opt %s -split-input-file --fa4-emit-kernels 2>&1 | FileCheck %s --check-prefix=NODIR

// NODIR: fa4-emit-kernels: emit-dir is required

// A launch whose kernel was not compiled to a binary.
module attributes {gpu.container_module} {
  gpu.module @missing {
    gpu.func @missing() kernel {
      gpu.return
    }
  }
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{kernel @missing has no gpu.binary; run gpu-module-to-binary first}}
    fa4.launch @missing::@missing(%q, %q, %q, %q) {manifest = {kernel = "missing", arch = "sm_100a"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A binary that holds a cubin instead of PTX.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, bin = "\00">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{needs the PTX of @k (gpu-module-to-binary{format=isa})}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a"}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A manifest without the kernel's name.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest needs 'kernel' (set by fa4-specialize)}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A kernel whose shared memory was never placed: the manifest has no size.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest needs 'dynamic_smem_bytes' (set by fa4-assemble-manifest)}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// The fa4.launch verifier checks every manifest entry present, so that no
// pass reads a malformed one: here the kind, nesting and range of each
// entry fa4-emit-kernels reads.
// An empty block.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'block' must be an array of 3 elements, got []}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A block of strings.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'block[0]' must be an integer, got "a"}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = ["a", 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// Threads that are not whole warps.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'block' must be whole warps in x and at most 1024 threads, got [100, 1, 1]}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [100, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// An empty grid.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'grid' needs 'rule'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A grid without its head blocks.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'grid' needs 'head_blocks'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A grid of zero-row tiles.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'grid.query_rows_per_cta' must be in [1, 2147483647], got 0}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 0 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A role that is not a dictionary.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0]' must be a dictionary, got 3 : i64}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [3 : i64], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A role without warps.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0]' needs 'warps'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A role past the block's 16 warps.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0].warps[1]' must be in [0, 16], got 40}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 40], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// An empty warp range.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0].warps' must be a non-empty range [begin, end), got [4, 2)}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [4, 2], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A register budget setmaxnreg cannot set.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'roles[0].registers' must be a multiple of 8, got 50}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 50 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A kernel name that is not the launched kernel.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'kernel' must name the launched kernel @k, got "other"}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "other", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A kernel name that is no file name of its own.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'kernel' must be a PTX identifier (letters, digits, '_' and '$', not starting with a digit), got "../k"}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "../k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// An architecture ptxas is not run for.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'arch' must be sm_100a or sm_90a, got "sm_80"}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_80", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// Resources beyond one SM.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'tmem_columns' must be 0 or a power of two in [32, 512], got 384}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 384 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----


module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'dynamic_smem_bytes' must be in [0, 232448], got 300000}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 300000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----


module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'mbarriers' must be in [0, 128], got -1}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = -1 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----


module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'named_barriers' must be in [0, 15], got 16}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 16 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// An integer wider than 64 bits.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'mbarriers' must be an integer, got 100000000000000000000 : i128}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 100000000000000000000 : i128, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A plan for another architecture.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'plan' is for sm_90a but 'arch' is sm_100a}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64, plan = #fa4.plan<arch = sm_90a, blockM = 64, blockN = 128, headDim = 128, qStages = 2, kvStages = 4, gqaPack = 1, scheduler = linear, softmaxRegs = 232, correctionRegs = 0, producerRegs = 40, emulatedExp2 = 0, pvSplit = 0, rescaleThreshold = 8>}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// Runtime entries with their fields.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'tensor_maps[0]' needs 'box'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64, tensor_maps = [{operand = "query", operand_index = 0 : i64, element = "bf16", swizzle = "128B"}]}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----


module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'params[0].kind' must be a non-empty string, got 1 : i64}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64, params = [{name = "batch", kind = 1 : i64, source = "query.shape[0]"}]}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----


module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'scale_log2' must be a positive float within f32, got 9.9999999999999994E+38 : f64}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], grid = {rule = "persistent", head_blocks = 1 : i64, query_rows_per_cta = 256 : i64}, roles = [{name = "load", warps = [12, 13], registers = 48 : i64}], mbarriers = 30 : i64, named_barriers = 2 : i64, dynamic_smem_bytes = 200000 : i64, tmem_columns = 512 : i64, scale_log2 = 1.0e39 : f64}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A plan whose head dims are not the operands' (Dv 96 against a value of
// head dim 128).
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x192xf16>, %v: memref<1x128x1x128xf16>) {
    // expected-error @+1 {{manifest plan is for head dim 96 but the value operand has head dim 128}}
    fa4.launch @k::@k(%q, %q, %v, %v) {manifest = {kernel = "k", arch = "sm_100a", plan = #fa4.plan<arch = sm_100a, blockM = 128, blockN = 128, headDim = 192, headDimV = 96, qStages = 1, kvStages = 2, gqaPack = 1, scheduler = linear, softmaxRegs = 200, correctionRegs = 64, producerRegs = 48, emulatedExp2 = 0, pvSplit = 96, rescaleThreshold = 8>}} : memref<1x128x1x192xf16>, memref<1x128x1x192xf16>, memref<1x128x1x128xf16>, memref<1x128x1x128xf16>
    return
  }
}

// -----

// A rope entry whose rotated columns are not whole 16-byte pieces.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'rope.columns' must be a multiple of 8, got 12}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], rope = {start = 0 : i64, columns = 12 : i64, output = false}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}

// -----

// A rope entry without its output flag.
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_100a">, assembly = "">]
  func.func @f(%q: memref<1x128x1x64xf16>) {
    // expected-error @+1 {{manifest entry 'rope' needs 'output'}}
    fa4.launch @k::@k(%q, %q, %q, %q) {manifest = {kernel = "k", arch = "sm_100a", block = [512, 1, 1], rope = {start = 8 : i64, columns = 16 : i64}}} : memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>, memref<1x128x1x64xf16>
    return
  }
}
