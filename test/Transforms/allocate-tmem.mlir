// RUN: fa4-opt %s -split-input-file --fa4-allocate-tmem | FileCheck %s
// RUN: fa4-opt %s -split-input-file --fa4-allocate-tmem="alias=false" | FileCheck %s --check-prefix=NOALIAS

// One role reads S to the end (tcgen05.wait <load>) before it writes P, so P
// takes the top of S's columns: 128 + 0 columns, 128 allocated. The kernel
// gets the address slot, allocates in warp 0 between the barriers and frees
// at the end; each role reads the address at its start.
// CHECK-LABEL: gpu.func @sequential
// CHECK-SAME: workgroup(%[[SLOT:.*]] : memref<1xi32, #gpu.address_space<workgroup>> {fa4.name = "tmem_address"})
// CHECK: scf.if
// CHECK-NEXT: fa4.tmem.alloc 128 columns into %[[SLOT]]
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NOT: fa4.tmem.buffer
// CHECK: fa4.role "softmax"
// CHECK-DAG: %[[S:.*]] = fa4.tmem.view %{{.*}}[0] {fa4.name = "s"} : !fa4.tmem<128x128xf32> -> !fa4.tmem<128x128xf32>
// CHECK-DAG: %[[P:.*]] = fa4.tmem.view %{{.*}}[64] {fa4.name = "p"} : !fa4.tmem<128x128xf32> -> !fa4.tmem<128x128xbf16>
// CHECK: fa4.tmem.load %[[S]][0]
// CHECK: fa4.tmem.store %{{.*}}, %[[P]][0]
// CHECK: gpu.barrier
// CHECK: fa4.tmem.dealloc
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// NOALIAS-LABEL: gpu.func @sequential
// NOALIAS: fa4.tmem.alloc 256 columns
// NOALIAS-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s"}
// NOALIAS-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "p"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @sequential() kernel {
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %p = fa4.tmem.buffer "p" : !fa4.tmem<128x128xbf16>
      fa4.warp_specialize warps 4 {
        fa4.role "softmax" warps [0, 4) registers 128 {
          %x = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          %y = arith.truncf %x : vector<32xf32> to vector<32xbf16>
          fa4.tmem.store %y, %p[0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
          nvvm.tcgen05.wait <store>
        }
      }
      gpu.return
    }
  }
}

// -----

// The store to P is issued while the load of S may still be in flight (no
// wait in between): both are live, so P gets columns of its own.
// CHECK-LABEL: gpu.func @in_flight
// CHECK: fa4.tmem.alloc 256 columns
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "p"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @in_flight() kernel {
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %p = fa4.tmem.buffer "p" : !fa4.tmem<128x128xbf16>
      %c = arith.constant dense<1.0> : vector<32xbf16>
      fa4.warp_specialize warps 4 {
        fa4.role "softmax" warps [0, 4) registers 128 {
          %x = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
          fa4.tmem.store %c, %p[0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
          nvvm.tcgen05.wait <load>
          nvvm.tcgen05.wait <store>
        }
      }
      gpu.return
    }
  }
}

// -----

// The FA4 hand-off in miniature. Each iteration of "softmax" waits for S,
// reads it, then writes P; each iteration of "mma" waits for P, reads it,
// then overwrites S. Every first access in an iteration follows a wait on a
// channel the other role commits, so neither value crosses the back edge: P
// shares S. O is used by a third role as well and keeps its own columns.
// 128 + 64 columns: 256 allocated.
// CHECK-LABEL: gpu.func @loop
// CHECK: fa4.tmem.alloc 256 columns
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "o"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "p"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @loop(%n: index) kernel {
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %o = fa4.tmem.buffer "o" : !fa4.tmem<128x64xf32>
      %p = fa4.tmem.buffer "p" : !fa4.tmem<128x64xf32>
      %s_ready = fa4.channel "s_ready" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %p_ready = fa4.channel "p_ready" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %x = arith.constant dense<1.0> : vector<32xf32>
      fa4.warp_specialize warps 12 {
        fa4.role "softmax" warps [0, 4) registers 128 {
          scf.for %i = %c0 to %n step %c1 {
            fa4.channel.wait %s_ready[%i] : !fa4.channel<1>
            %row = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            nvvm.tcgen05.wait <load>
            fa4.channel.release %s_ready[%i] : !fa4.channel<1>
            fa4.channel.acquire %p_ready[%i] : !fa4.channel<1>
            fa4.tmem.store %row, %p[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
            nvvm.tcgen05.wait <store>
            fa4.channel.commit %p_ready[%i] : !fa4.channel<1>
          }
        }
        fa4.role "mma" warps [4, 8) registers 128 {
          scf.for %i = %c0 to %n step %c1 {
            fa4.channel.wait %p_ready[%i] : !fa4.channel<1>
            %z = fa4.tmem.load %p[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
            nvvm.tcgen05.wait <load>
            fa4.channel.release %p_ready[%i] : !fa4.channel<1>
            fa4.channel.acquire %s_ready[%i] : !fa4.channel<1>
            fa4.tmem.store %x, %s[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
            nvvm.tcgen05.wait <store>
            fa4.channel.commit %s_ready[%i] : !fa4.channel<1>
            %w = fa4.tmem.load %o[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
            nvvm.tcgen05.wait <load>
          }
        }
        fa4.role "correction" warps [8, 12) registers 128 {
          %w = fa4.tmem.load %o[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
        }
      }
      gpu.return
    }
  }
}

// -----

// A value that crosses the back edge: every iteration reads "a", written
// before the loop, so "a" is live through the body and "b" cannot share it.
// CHECK-LABEL: gpu.func @carried
// CHECK: fa4.tmem.alloc 256 columns
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @carried(%n: index) kernel {
      %a = fa4.tmem.buffer "a" : !fa4.tmem<128x128xf32>
      %b = fa4.tmem.buffer "b" : !fa4.tmem<128x128xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %init = arith.constant dense<1.0> : vector<32xf32>
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          fa4.tmem.store %init, %a[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
          nvvm.tcgen05.wait <store>
          scf.for %i = %c0 to %n step %c1 {
            %x = fa4.tmem.load %a[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
            nvvm.tcgen05.wait <load>
            fa4.tmem.store %x, %b[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
            nvvm.tcgen05.wait <store>
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// An MMA into "s" is still running when the role stores to "o": only MMAs
// issued later are ordered after it, so "o" gets columns of its own.
// CHECK-LABEL: gpu.func @mma_in_flight
// CHECK: fa4.tmem.alloc 256 columns
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @mma_in_flight(%q: memref<2x128x64xbf16, #gpu.address_space<workgroup>>) kernel {
      %false = arith.constant false
      %v = arith.constant dense<1.0> : vector<32xf32>
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %o = fa4.tmem.buffer "o" : !fa4.tmem<128x128xf32>
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          fa4.mma %q, %q, %s, %false b_major(k) : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, memref<2x128x64xbf16, #gpu.address_space<workgroup>>, !fa4.tmem<128x128xf32>
          fa4.tmem.store %v, %o[0] : vector<32xf32>, !fa4.tmem<128x128xf32>
          nvvm.tcgen05.wait <store>
        }
      }
      gpu.return
    }
  }
}

// -----

// S is written in one role and P in another: they may run at the same time.
// CHECK-LABEL: gpu.func @two_roles
// CHECK: fa4.tmem.alloc 256 columns
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "s"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[128] {fa4.name = "p"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @two_roles() kernel {
      %s = fa4.tmem.buffer "s" : !fa4.tmem<128x128xf32>
      %p = fa4.tmem.buffer "p" : !fa4.tmem<128x128xbf16>
      %c = arith.constant dense<1.0> : vector<32xbf16>
      fa4.warp_specialize warps 8 {
        fa4.role "a" warps [0, 4) registers 128 {
          %x = fa4.tmem.load %s[0] : !fa4.tmem<128x128xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
        }
        fa4.role "b" warps [4, 8) registers 128 {
          fa4.tmem.store %c, %p[0] : vector<32xbf16>, !fa4.tmem<128x128xbf16>
          nvvm.tcgen05.wait <store>
        }
      }
      gpu.return
    }
  }
}

// -----

// Columns [32, 64) of "x" keep their first value while "y" is written and
// are read at the end: a store of half of "x" replaces nothing, so "x" and
// "y" do not share.
// CHECK-LABEL: gpu.func @partial
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "x"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "y"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @partial() kernel {
      %x = fa4.tmem.buffer "x" : !fa4.tmem<128x64xf32>
      %y = fa4.tmem.buffer "y" : !fa4.tmem<128x64xf32>
      %c = arith.constant dense<1.0> : vector<32xf32>
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          fa4.tmem.store %c, %x[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          fa4.tmem.store %c, %x[32] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          fa4.tmem.store %c, %y[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          fa4.tmem.store %c, %y[32] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          %r = fa4.tmem.load %y[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          fa4.tmem.store %r, %x[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          %s = fa4.tmem.load %x[32] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
        }
      }
      gpu.return
    }
  }
}

// -----

// A TMEM load of "x" issued at the end of an iteration is still in flight
// when the next iteration stores to "y": they do not share.
// CHECK-LABEL: gpu.func @backedge
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "x"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "y"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @backedge(%n: index) kernel {
      %x = fa4.tmem.buffer "x" : !fa4.tmem<128x64xf32>
      %y = fa4.tmem.buffer "y" : !fa4.tmem<128x64xf32>
      %c = arith.constant dense<1.0> : vector<32xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      fa4.warp_specialize warps 4 {
        fa4.role "r" warps [0, 4) registers 128 {
          %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c) -> (vector<32xf32>) {
            fa4.tmem.store %a, %y[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
            nvvm.tcgen05.wait <store>
            fa4.tmem.store %a, %x[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
            nvvm.tcgen05.wait <store>
            %v = fa4.tmem.load %x[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
            scf.yield %v : vector<32xf32>
          }
          nvvm.tcgen05.wait <load>
        }
      }
      gpu.return
    }
  }
}

// -----

// A role of eight warps: warps w and w + 4 use the same lanes, so one
// warp's program order does not order the other's accesses.
// CHECK-LABEL: gpu.func @eight
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "x"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "y"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @eight() kernel {
      %x = fa4.tmem.buffer "x" : !fa4.tmem<128x64xf32>
      %y = fa4.tmem.buffer "y" : !fa4.tmem<128x64xf32>
      %c = arith.constant dense<1.0> : vector<32xf32>
      fa4.warp_specialize warps 8 {
        fa4.role "r" warps [0, 8) registers 128 {
          fa4.tmem.store %c, %x[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          %v = fa4.tmem.load %x[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          fa4.tmem.store %v, %y[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
        }
      }
      gpu.return
    }
  }
}

// -----

// "r" reads "x" again after a wait on a channel that "q" commits, but "q"
// only reads "x": the wait hands over nothing, and "r" still needs its own
// value of "x" after writing "y".
// CHECK-LABEL: gpu.func @delivers2
// CHECK-DAG: fa4.tmem.view %{{.*}}[0] {fa4.name = "x"}
// CHECK-DAG: fa4.tmem.view %{{.*}}[64] {fa4.name = "y"}
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_100a">] {
    gpu.func @delivers2() kernel {
      %x = fa4.tmem.buffer "x" : !fa4.tmem<128x64xf32>
      %y = fa4.tmem.buffer "y" : !fa4.tmem<128x64xf32>
      %a = fa4.channel "a" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %b = fa4.channel "b" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %c = fa4.channel "c" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %d = fa4.channel "d" : !fa4.channel<1> producer <threads = 128> consumer <threads = 128>
      %v = arith.constant dense<1.0> : vector<32xf32>
      %c0 = arith.constant 0 : index
      fa4.warp_specialize warps 8 {
        fa4.role "r" warps [0, 4) registers 128 {
          fa4.channel.acquire %a[%c0] : !fa4.channel<1>
          fa4.tmem.store %v, %x[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          fa4.channel.commit %a[%c0] : !fa4.channel<1>
          fa4.channel.wait %b[%c0] : !fa4.channel<1>
          fa4.channel.release %b[%c0] : !fa4.channel<1>
          fa4.channel.acquire %d[%c0] : !fa4.channel<1>
          fa4.tmem.store %v, %y[0] : vector<32xf32>, !fa4.tmem<128x64xf32>
          nvvm.tcgen05.wait <store>
          fa4.channel.commit %d[%c0] : !fa4.channel<1>
          fa4.channel.wait %c[%c0] : !fa4.channel<1>
          %r = fa4.tmem.load %x[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          fa4.channel.release %c[%c0] : !fa4.channel<1>
        }
        fa4.role "q" warps [4, 8) registers 128 {
          fa4.channel.wait %a[%c0] : !fa4.channel<1>
          %w = fa4.tmem.load %x[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          fa4.channel.release %a[%c0] : !fa4.channel<1>
          fa4.channel.acquire %b[%c0] : !fa4.channel<1>
          fa4.channel.commit %b[%c0] : !fa4.channel<1>
          fa4.channel.wait %d[%c0] : !fa4.channel<1>
          %u = fa4.tmem.load %y[0] : !fa4.tmem<128x64xf32> -> vector<32xf32>
          nvvm.tcgen05.wait <load>
          fa4.channel.release %d[%c0] : !fa4.channel<1>
          fa4.channel.acquire %c[%c0] : !fa4.channel<1>
          fa4.channel.commit %c[%c0] : !fa4.channel<1>
        }
      }
      gpu.return
    }
  }
}
