// RUN: fa4-opt %s --fa4-synchronize=arch=sm_90a | %python %S/plant-bug.py set-threads 1 384 \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 | FileCheck %s

// The ping-pong turn of consumer 0 (named barrier 1) counts 384 threads
// where only the two consumer warpgroups (256) take part: consumer 0 never
// gets its turn, consumer 1 never gets its next one.

// CHECK: seed 1: FAIL
// CHECK: deadlock in CTA {{[01]}}: every live thread waits and nothing is in flight
// CHECK-DAG: threads 128-255 (128, role consumer0) at {{.*}}: waits on named barrier 1: 256 of 384 threads arrived
// CHECK-DAG: threads 256-383 (128, role consumer1) at {{.*}}: waits on named barrier 2: 128 of 256 threads arrived

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
