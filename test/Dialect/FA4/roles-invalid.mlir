// RUN: fa4-opt %s -split-input-file -verify-diagnostics

func.func @f() {
  // expected-error @+1 {{warps must be whole warpgroups, 4 to 32, got 6}}
  fa4.warp_specialize warps 6 {
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 8 {
    // expected-error @+1 {{warp range [4, 4) is empty}}
    fa4.role "a" warps [4, 4) registers 64 {
    }
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 8 {
    // expected-error @+1 {{registers must be a multiple of 8 in [24, 256], got 100}}
    fa4.role "a" warps [0, 4) registers 100 {
    }
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 8 {
    // expected-error @+1 {{warps up to 12 exceed the CTA's 8}}
    fa4.role "a" warps [4, 12) registers 64 {
    }
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 8 {
    fa4.role "a" warps [0, 4) registers 64 {
    }
    // expected-error @+1 {{warp 3 already runs role 'a'}}
    fa4.role "b" warps [3, 5) registers 64 {
    }
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 16 {
    fa4.role "mma" warps [12, 13) registers 48 {
    }
    // expected-error @+1 {{asks for 56 registers but warpgroup 3 already has 48; a warpgroup has one budget}}
    fa4.role "load" warps [13, 14) registers 56 {
    }
  }
  return
}

// -----

// Three warpgroups are launched with 168 registers a thread: 64512, not 65536.
func.func @f() {
  // expected-error @+1 {{register budgets need 65536 registers, more than the 64512 a CTA of 12 warps is launched with (168 per thread; setmaxnreg only moves them between warpgroups)}}
  fa4.warp_specialize warps 12 {
    fa4.role "producer" warps [0, 4) registers 32 {
    }
    fa4.role "consumer0" warps [4, 8) registers 240 {
    }
    fa4.role "consumer1" warps [8, 12) registers 240 {
    }
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{register budgets need 75776 registers, more than the 65536 a CTA of 16 warps is launched with (128 per thread; setmaxnreg only moves them between warpgroups)}}
  fa4.warp_specialize warps 16 {
    fa4.role "softmax0" warps [0, 4) registers 240 {
    }
    fa4.role "softmax1" warps [4, 8) registers 240 {
    }
    fa4.role "correction" warps [8, 12) registers 64 {
    }
    fa4.role "mma" warps [12, 13) registers 48 {
    }
  }
  return
}

// -----

func.func @f() {
  fa4.warp_specialize warps 4 {
    // expected-error @+1 {{is not a role; fa4.warp_specialize holds fa4.role ops only}}
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'fa4.role' op expects parent op 'fa4.warp_specialize'}}
  fa4.role "a" warps [0, 4) registers 64 {
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{named barrier id must be in [1, 15] (0 is gpu.barrier's), got 0}}
  fa4.named_barrier.sync 0, 128 threads
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{thread count must be a multiple of 32 in [32, 1024], got 100}}
  fa4.named_barrier.arrive 3, 100 threads
  return
}

// -----

func.func @f(%x: vector<16xf32>) {
  // expected-error @+1 {{emulated must be in [0, 16] (elements of every 16), got 20}}
  %e = fa4.exp2 %x emulated 20 : vector<16xf32>
  return
}

// -----

// A negative first warp is refused before the warps are indexed.
func.func @negative_warp() {
  fa4.warp_specialize warps 4 {
    // expected-error @+1 {{warp range [-1, 4) is empty}}
    fa4.role "a" warps [-1, 4) registers 128 {
    }
  }
  return
}

// -----

// The roles are checked against each other only once each has verified: a
// role without its first warp is reported as such.
func.func @role_without_warp_begin() {
  fa4.warp_specialize warps 4 {
    // expected-error @+1 {{requires attribute 'warpBegin'}}
    "fa4.role"() <{registers = 64 : i64, role = "a", warpEnd = 4 : i64}> ({
    ^bb0:
    }) : () -> ()
  }
  return
}
